"""Starting layouts against the pbmserv help (seed 001) and DESIGN.md 3.4."""

from __future__ import annotations

import re

import pytest
from rules_helpers import CELLS, STANDARD_START

from abalone_pbm.rules import (
    CELL_NAMES,
    Board,
    Rules,
    get_layout,
    layout_names,
    starting_position,
)
from abalone_pbm.rules.layouts import NAMED

# The diagrams as printed by pbmserv's ``help abalone``, side by side, copied verbatim.
SEED_STANDARD = """
            1 1 1 1 1          1 1 1 1 1          1 1 1 1 .
           1 1 1 1 1 1        1 1 1 1 1 1        1 1 1 1 . 2
          . . 1 1 1 . .      . . . . . . .      . . . . . 2 2
         . . . . . . . .    3 . . . . . . 2    4 . . . . . 2 2
        . . . . . . . . .  3 3 . . . . . 2 2  4 4 . . . . . 2 2
         . . . . . . . .    3 3 . . . . 2 2    4 4 . . . . . 2
          . . 2 2 2 . .      3 3 . . . 2 2      4 4 . . . . .
           2 2 2 2 2 2        3 3 . . 2 2        4 . 3 3 3 3
            2 2 2 2 2          3 3 . 2 2          . 3 3 3 3
"""
SEED_STANDARD_56 = """
            1 1 1 1 .          . 1 1 1 .
           1 1 1 1 . 2        6 . 1 1 . 2
          . . . . . 2 2      6 6 . 1 . 2 2
         4 . . 5 5 . 2 2    6 6 6 . . 2 2 2
        4 4 . 5 5 5 . 2 2  . . . . . . . . .
         4 4 . 5 5 . . 2    5 5 5 . . 3 3 3
          4 4 . . . . .      5 5 . 4 . 3 3
           4 . 3 3 3 3        5 . 4 4 . 3
            . 3 3 3 3          . 4 4 4 .
"""
SEED_BOWL = """
            1 1 . 2 2          1 1 . 2 2          1 1 . 2 2
           1 1 1 2 2 2        1 1 . . 2 2        1 1 1 2 2 2
          . 1 1 . 2 2 .      . . 1 . 2 . .      . 1 1 . 2 2 .
         . . . . . . . .    3 . . . . . . 3    . . . . . . . .
        . . . . . . . . .  3 3 3 . . . 3 3 3  . . . . . . . . .
         . . . . . . . .    3 . . . . . . 3    . . . . . . . .
          . 2 2 . 1 1 .      . . 2 . 1 . .      . 3 3 . 4 4 .
           2 2 2 1 1 1        2 2 . . 1 1        3 3 3 4 4 4
            2 2 . 1 1          2 2 . 1 1          3 3 . 4 4
"""
SEED_BOWL_56 = """
            4 4 . 3 3          1 1 . 2 2
           4 4 4 3 3 3        1 1 1 2 2 2
          . 4 4 . 3 3 .      . 1 . . . 2 .
         . . . . . . 1 1    6 6 . . . . 3 3
        . . . . . . 1 1 1  6 6 . . . . . 3 3
         . . . . . . 1 1    6 6 . . . . 3 3
          . 5 5 . 2 2 .      . 5 . . . 4 .
           5 5 5 2 2 2        5 5 5 4 4 4
            5 5 . 2 2          5 5 . 4 4
"""


def _columns(block: str) -> list[tuple[str, ...]]:
    """Split side-by-side diagrams into one tuple of row strings each."""
    lines = [line.strip() for line in block.strip("\n").splitlines()]
    split = [re.split(r"\s{2,}", line) for line in lines]
    return [tuple(row[k].replace(" ", "") for row in split) for k in range(len(split[0]))]


SEED_DIAGRAMS = {
    "standard": dict(zip((2, 3, 4, 5, 6), _columns(SEED_STANDARD) + _columns(SEED_STANDARD_56))),
    "bowl": dict(zip((2, 3, 4, 5, 6), _columns(SEED_BOWL) + _columns(SEED_BOWL_56))),
}


@pytest.mark.parametrize("name", ["standard", "bowl"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_layout_is_the_seed_diagram(name: str, players: int) -> None:
    layout = get_layout(name, players)
    assert layout.players == players
    assert layout.rows == SEED_DIAGRAMS[name][players]


# Marbles per player, read off the pbmserv diagrams.
COUNTS = {
    "standard": {2: [14] * 2, 3: [11] * 3, 4: [8] * 4, 5: [8, 8, 8, 8, 7], 6: [6] * 6},
    "bowl": {2: [14] * 2, 3: [10] * 3, 4: [7] * 4, 5: [7] * 5, 6: [6] * 6},
}


@pytest.mark.parametrize("name", ["standard", "bowl"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_marble_counts(name: str, players: int) -> None:
    layout = get_layout(name, players)
    counts = [len(layout.cells_of(p)) for p in range(1, players + 1)]
    assert counts == COUNTS[name][players]
    # Nothing but '.' and the players' digits; every cell used at most once.
    flat = "".join(layout.rows)
    assert len(flat) == 61
    assert set(flat) <= {".", *(str(p) for p in range(1, players + 1))}
    all_cells = [c for p in range(1, players + 1) for c in layout.cells_of(p)]
    assert len(all_cells) == len(set(all_cells)) == sum(counts)
    board = Board.from_layout(name, Rules(players=players))
    assert [board.marble_count(p) for p in range(1, players + 1)] == counts
    assert board.turn == 1 and board.ejected_counts == (0,) * players


def test_standard_two_player_start_text() -> None:
    assert starting_position(get_layout()) == STANDARD_START
    assert Board().position() == STANDARD_START
    assert Board.from_layout().position() == STANDARD_START


# DESIGN.md 3.4: the named two-player layouts, player 1's cells / player 2's cells.
NAMED_CELLS = {
    "belgian-daisy": (
        "A1 A2 B1 B2 B3 C2 C3 G7 G8 H7 H8 H9 I8 I9",
        "A4 A5 B4 B5 B6 C5 C6 G4 G5 H4 H5 H6 I5 I6",
    ),
    "german-daisy": (
        "B1 B2 C1 C2 C3 D2 D3 F7 F8 G7 G8 G9 H8 H9",
        "B5 B6 C5 C6 C7 D6 D7 F3 F4 G3 G4 G5 H4 H5",
    ),
    "dutch-daisy": (
        "A1 A2 B1 B3 B5 C2 C3 G7 G8 H5 H7 H9 I8 I9",
        "A4 A5 B2 B4 B6 C5 C6 G4 G5 H4 H6 H8 I5 I6",
    ),
    "swiss-daisy": (
        "B1 B2 C1 C3 C6 D2 D3 F7 F8 G4 G7 G9 H8 H9",
        "B5 B6 C2 C5 C7 D6 D7 F3 F4 G3 G5 G8 H4 H5",
    ),
    "domination": (
        "B1 C1 C2 D1 D2 D3 E4 E6 F7 F8 F9 G8 G9 H9",
        "B6 C6 C7 D5 D6 D7 D8 F2 F3 F4 F5 G3 G4 H4",
    ),
    "pyramid": (
        "A5 B5 B6 C5 C6 C7 D5 D6 D7 D8 E6 E7 E8 E9",
        "E1 E2 E3 E4 F2 F3 F4 F5 G3 G4 G5 H4 H5 I5",
    ),
    "the-wall": (
        "A3 C2 C3 C4 C5 C6 D1 D2 D3 D4 D5 D6 D7 D8",
        "F2 F3 F4 F5 F6 F7 F8 F9 G4 G5 G6 G7 G8 I7",
    ),
    "snakes": (
        "D2 D3 E2 E4 F2 F5 F6 G3 H4 I5 I6 I7 I8 I9",
        "A1 A2 A3 A4 A5 B6 C7 D4 D5 D8 E6 E8 F7 F8",
    ),
    "alien-attack": (
        "B3 B4 C3 C5 F5 F6 G4 G6 G8 H5 H8 I5 I7 I9",
        "A1 A3 A5 B2 B5 C2 C4 C6 D4 D5 G5 G7 H6 H7",
    ),
}


def test_layout_names() -> None:
    assert layout_names() == ["standard", "bowl", *NAMED_CELLS]
    assert set(NAMED) == set(NAMED_CELLS)


@pytest.mark.parametrize("name", list(NAMED_CELLS))
def test_named_layout_cells(name: str) -> None:
    layout = get_layout(name)
    first, second = (cells.lower().split() for cells in NAMED_CELLS[name])
    # The lists themselves: 14 distinct board cells each, no cell claimed twice.
    assert len(first) == len(second) == 14
    assert len(set(first) | set(second)) == 28
    assert set(first) | set(second) <= set(CELLS)
    assert sorted(CELL_NAMES[c] for c in layout.cells_of(1)) == sorted(first)
    assert sorted(CELL_NAMES[c] for c in layout.cells_of(2)) == sorted(second)
    assert "".join(layout.rows).count(".") == 61 - 28


# DESIGN.md 3.4: legal moves for player 1 at the start of each layout.
START_MOVES = {
    "standard": 44,
    "belgian-daisy": 52,
    "german-daisy": 80,
    "dutch-daisy": 44,
    "swiss-daisy": 64,
    "domination": 80,
    "pyramid": 58,
    "the-wall": 102,
    "snakes": 78,
}


@pytest.mark.parametrize(("name", "count"), list(START_MOVES.items()))
def test_move_count_at_the_start(name: str, count: int) -> None:
    board = Board.from_layout(name)
    assert board.count_legal_moves() == count
    assert len(board.legal_moves) == count
    assert len(set(board.generate_legal_moves())) == count


@pytest.mark.parametrize(
    "alias",
    ["Belgian Daisy", "belgian_daisy", " BELGIAN-DAISY "],
)
def test_layout_name_spellings(alias: str) -> None:
    assert get_layout(alias) == get_layout("belgian-daisy")


@pytest.mark.parametrize("alias", ["default", "classic", "Standard"])
def test_standard_aliases(alias: str) -> None:
    assert get_layout(alias, 3).rows == get_layout("standard", 3).rows


def test_layout_errors() -> None:
    with pytest.raises(ValueError, match="unknown layout"):
        get_layout("hexagon")
    with pytest.raises(ValueError, match="for two players"):
        get_layout("belgian-daisy", 3)
    with pytest.raises(ValueError, match="2 to 6 players"):
        get_layout("standard", 7)
    with pytest.raises(ValueError, match="2 to 6 players"):
        get_layout("bowl", 1)
