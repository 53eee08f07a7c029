"""Starting layouts: the pbmserv diagrams for 2-6 players and the named two-player setups.

Each layout is stored the way it is drawn, one string per row (A at the top), cells
in increasing diagonal order, ``.`` for empty and a digit for that player's marble.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .geometry import CELL_BY_NAME, CELLS

ROW_LENGTHS: Final = (5, 6, 7, 8, 9, 8, 7, 6, 5)


@dataclass(frozen=True)
class Layout:
    """A named starting layout: which player's marble stands on which cell."""

    name: str
    players: int
    #: One string per row A-I, each character a cell: ``.`` or a player digit.
    rows: tuple[str, ...]
    description: str = ""

    def cells_of(self, player: int) -> list[int]:
        digit = str(player)
        flat = "".join(self.rows)
        return [cell for cell, char in zip(CELLS, flat) if char == digit]

    def position_rows(self) -> str:
        return "/".join(self.rows)


def _diagram(text: str) -> tuple[str, ...]:
    rows = tuple(line.replace(" ", "") for line in text.strip().splitlines())
    if tuple(len(r) for r in rows) != ROW_LENGTHS:
        raise ValueError(f"bad layout diagram: {rows}")
    return rows


def _from_cells(first: str, second: str) -> tuple[str, ...]:
    owner: dict[int, str] = {}
    for digit, names in (("1", first), ("2", second)):
        for name in names.split():
            owner[CELL_BY_NAME[name.lower()]] = digit
    flat = [owner.get(cell, ".") for cell in CELLS]
    rows = []
    start = 0
    for length in ROW_LENGTHS:
        rows.append("".join(flat[start : start + length]))
        start += length
    return tuple(rows)


# The standard boards of the pbmserv help (seed 001), one per number of players.
STANDARD: Final = {
    2: _diagram("""
        1 1 1 1 1
        1 1 1 1 1 1
        . . 1 1 1 . .
        . . . . . . . .
        . . . . . . . . .
        . . . . . . . .
        . . 2 2 2 . .
        2 2 2 2 2 2
        2 2 2 2 2"""),
    3: _diagram("""
        1 1 1 1 1
        1 1 1 1 1 1
        . . . . . . .
        3 . . . . . . 2
        3 3 . . . . . 2 2
        3 3 . . . . 2 2
        3 3 . . . 2 2
        3 3 . . 2 2
        3 3 . 2 2"""),
    4: _diagram("""
        1 1 1 1 .
        1 1 1 1 . 2
        . . . . . 2 2
        4 . . . . . 2 2
        4 4 . . . . . 2 2
        4 4 . . . . . 2
        4 4 . . . . .
        4 . 3 3 3 3
        . 3 3 3 3"""),
    5: _diagram("""
        1 1 1 1 .
        1 1 1 1 . 2
        . . . . . 2 2
        4 . . 5 5 . 2 2
        4 4 . 5 5 5 . 2 2
        4 4 . 5 5 . . 2
        4 4 . . . . .
        4 . 3 3 3 3
        . 3 3 3 3"""),
    6: _diagram("""
        . 1 1 1 .
        6 . 1 1 . 2
        6 6 . 1 . 2 2
        6 6 6 . . 2 2 2
        . . . . . . . . .
        5 5 5 . . 3 3 3
        5 5 . 4 . 3 3
        5 . 4 4 . 3
        . 4 4 4 ."""),
}

# The bowl setups of the pbmserv help (seed 001).
BOWL: Final = {
    2: _diagram("""
        1 1 . 2 2
        1 1 1 2 2 2
        . 1 1 . 2 2 .
        . . . . . . . .
        . . . . . . . . .
        . . . . . . . .
        . 2 2 . 1 1 .
        2 2 2 1 1 1
        2 2 . 1 1"""),
    3: _diagram("""
        1 1 . 2 2
        1 1 . . 2 2
        . . 1 . 2 . .
        3 . . . . . . 3
        3 3 3 . . . 3 3 3
        3 . . . . . . 3
        . . 2 . 1 . .
        2 2 . . 1 1
        2 2 . 1 1"""),
    4: _diagram("""
        1 1 . 2 2
        1 1 1 2 2 2
        . 1 1 . 2 2 .
        . . . . . . . .
        . . . . . . . . .
        . . . . . . . .
        . 3 3 . 4 4 .
        3 3 3 4 4 4
        3 3 . 4 4"""),
    5: _diagram("""
        4 4 . 3 3
        4 4 4 3 3 3
        . 4 4 . 3 3 .
        . . . . . . 1 1
        . . . . . . 1 1 1
        . . . . . . 1 1
        . 5 5 . 2 2 .
        5 5 5 2 2 2
        5 5 . 2 2"""),
    6: _diagram("""
        1 1 . 2 2
        1 1 1 2 2 2
        . 1 . . . 2 .
        6 6 . . . . 3 3
        6 6 . . . . . 3 3
        6 6 . . . . 3 3
        . 5 . . . 4 .
        5 5 5 4 4 4
        5 5 . 4 4"""),
}

# Named two-player layouts: player 1's cells / player 2's cells.
_NAMED_CELLS: Final = {
    "belgian-daisy": (
        "A1 A2 B1 B2 B3 C2 C3 G7 G8 H7 H8 H9 I8 I9",
        "A4 A5 B4 B5 B6 C5 C6 G4 G5 H4 H5 H6 I5 I6",
        "Two daisies per player, split across the board.",
    ),
    "german-daisy": (
        "B1 B2 C1 C2 C3 D2 D3 F7 F8 G7 G8 G9 H8 H9",
        "B5 B6 C5 C6 C7 D6 D7 F3 F4 G3 G4 G5 H4 H5",
        "Daisies set one row further in than the Belgian one.",
    ),
    "dutch-daisy": (
        "A1 A2 B1 B3 B5 C2 C3 G7 G8 H5 H7 H9 I8 I9",
        "A4 A5 B2 B4 B6 C5 C6 G4 G5 H4 H6 H8 I5 I6",
        "Belgian Daisy with each daisy's centre marble swapped.",
    ),
    "swiss-daisy": (
        "B1 B2 C1 C3 C6 D2 D3 F7 F8 G4 G7 G9 H8 H9",
        "B5 B6 C2 C5 C7 D6 D7 F3 F4 G3 G5 G8 H4 H5",
        "German Daisy with each daisy's centre marble swapped.",
    ),
    "domination": (
        "B1 C1 C2 D1 D2 D3 E4 E6 F7 F8 F9 G8 G9 H9",
        "B6 C6 C7 D5 D6 D7 D8 F2 F3 F4 F5 G3 G4 H4",
        "Triangles facing each other across the centre.",
    ),
    "pyramid": (
        "A5 B5 B6 C5 C6 C7 D5 D6 D7 D8 E6 E7 E8 E9",
        "E1 E2 E3 E4 F2 F3 F4 F5 G3 G4 G5 H4 H5 I5",
        "Each army in one pyramid on its own side.",
    ),
    "the-wall": (
        "A3 C2 C3 C4 C5 C6 D1 D2 D3 D4 D5 D6 D7 D8",
        "F2 F3 F4 F5 F6 F7 F8 F9 G4 G5 G6 G7 G8 I7",
        "Two walls facing each other.",
    ),
    "snakes": (
        "D2 D3 E2 E4 F2 F5 F6 G3 H4 I5 I6 I7 I8 I9",
        "A1 A2 A3 A4 A5 B6 C7 D4 D5 D8 E6 E8 F7 F8",
        "Long thin snakes winding through the board.",
    ),
    "alien-attack": (
        "B3 B4 C3 C5 F5 F6 G4 G6 G8 H5 H8 I5 I7 I9",
        "A1 A3 A5 B2 B5 C2 C4 C6 D4 D5 G5 G7 H6 H7",
        "Scattered invaders in each other's camp.",
    ),
}

NAMED: Final = {
    name: Layout(name, 2, _from_cells(first, second), description)
    for name, (first, second, description) in _NAMED_CELLS.items()
}

STANDARD_NAMES: Final = ("standard", "default", "classic")


def get_layout(name: str = "standard", players: int = 2) -> Layout:
    """Look up a layout by name (``standard``, ``bowl`` or a two-player name)."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    if key in STANDARD_NAMES or key == "bowl":
        table = BOWL if key == "bowl" else STANDARD
        if players not in table:
            raise ValueError(f"the {key} layout is for 2 to 6 players, not {players}")
        return Layout("bowl" if key == "bowl" else "standard", players, table[players])
    if key in NAMED:
        if players != 2:
            raise ValueError(f"the {key} layout is for two players, not {players}")
        return NAMED[key]
    raise ValueError(f"unknown layout {name!r}; known layouts: {', '.join(layout_names())}")


def layout_names() -> list[str]:
    return ["standard", "bowl", *NAMED]
