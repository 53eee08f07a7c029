"""The neutral-marble variants: ``-pillar``, ``-princess``, ``-soccer`` and ``-thief``.

Like python-chess's variants, each variant is a small subclass of :class:`Variant`;
``VARIANTS`` maps the option names to the classes.  A board plays a variant when its
``Rules(variant=NAME)`` says so; the board calls the hooks below and nothing else
knows about the variants:

* :meth:`Variant.special_cells` -- the special marbles of a starting layout (and
  whether the variant makes sense on it);
* :attr:`Variant.pushable` -- whether the neutral marbles may be pushed;
* :meth:`Variant.on_eject` -- called when a special marble leaves the board; it
  returns the *event* that decides the game (or None);
* :meth:`Variant.result` -- the winners and the reason for an event.

The variants
------------
``pillar``
    An immovable marble on e5.  Nothing moves onto it and nothing is pushed onto
    it: a push whose marbles would have to enter e5 is blocked ("the push is
    blocked by the pillar on e5").  It is never part of a moving line and can never
    be pushed, so it never leaves the board; it adds no way of winning.
``princess``
    A neutral marble on e5.  Every player may push it exactly like an opponent
    marble (it counts as one opponent marble in the sumito: 2 push 1, 3 push 2 with
    the princess and an opponent marble, ...); it is never part of a moving line and
    never moves in a side-step.  Whoever pushes it off the board wins (with
    ``-teams``, that player's team).
``soccer``
    Two players only.  A neutral ball on e5, pushed like the princess when it leads
    the pushed marbles (the ball first, then an opponent marble: three push the two,
    an ordinary push); lying behind an opponent marble it is an obstacle, as the
    Abafoot rules have it: the push is blocked, as if by the edge of a wall.  The six sides
    of the board are split between two halves: player 1 (who starts at the top)
    defends the *top* (a1-a5), *upper-left* (a1-e1) and *upper-right* (a5-e9)
    sides, player 2 the *bottom* (i5-i9), *lower-left* (e1-i5) and *lower-right*
    (e9-i9) sides.  A ball pushed off across a side of the opponent's half is a goal:
    the pusher wins.  A ball pushed off across a side of one's own half is an own
    goal: the pusher loses (the opponent wins).  The halves are the same whatever
    the layout (in snakes, player 1 starts at the bottom and still defends the top).
    Which side a ball crosses: a ball leaving an edge cell in direction D crosses
    every side that the cell lies on and that D points out of (each side has two
    outward directions; top: up-left and up-right, upper-right: up-right and right,
    lower-right: right and down-right, bottom: down-right and down-left,
    lower-left: down-left and left, upper-left: left and up-left).  Off a corner
    cell in the direction between its two sides the ball crosses both.  Only at the
    two ends of the middle row, e1 (going left) and e9 (going right), do those two
    sides belong to different halves; there the ball has crossed an opponent's side
    and it counts as a goal for the pusher.
``thief``
    Each player's middle back-row marble is a treasure.  A treasure is an ordinary
    marble of its player in every way (it moves, pushes and is pushed like the
    player's others, and counts towards the six); pushing an *opponent's* treasure
    off the board wins (with ``-teams``, for the pusher's team).  A player can never
    push off their own treasure (own marbles are never pushed, nor are a partner's
    by their team), so that case cannot arise.
    The back row of a player in a layout is the side of the board that holds the
    most of that player's marbles; the treasure is the middle one of them.  The
    variant needs every player to have one such side (no tie) holding an unbroken,
    odd-length run of their marbles: the standard layouts for 2, 3 and 6 players,
    pyramid and snakes.  In the standard two-player game the treasures are a3
    (player 1) and i7 (player 2).

In every variant the normal rule stays: the first to push off six (``-target``)
opponent marbles wins too.  The neutral marbles are nobody's: pushing one off
is not counted as a marble pushed off.

Position text
-------------
The variants add characters to the position text (DESIGN.md 3.2):

* ``*`` -- the neutral marble: the pillar, the princess or the ball, as the game's
  variant says;
* ``a`` ... ``f`` -- the treasure of player 1 ... 6 (thief): ``a`` is a marble of
  player 1 that is their treasure.

A board reads them only with a variant that has such marbles
(``Board(text, Rules(variant="thief"))``); otherwise they are a ``PositionError``.

When a variant has decided the game, the position text has a fourth field, the
*event*: ``*N`` -- player N pushed off the princess; ``*N+`` / ``*N-`` -- player N
pushed the ball off across the opponent's / their own half (soccer); ``xN`` --
player N pushed off the treasure ``x`` (``b1``: player 1 pushed off player 2's
treasure).  For example, after player 1 has pushed the princess off at e9:
``11111/111111/....1../......../.......11/......../..222../222222/22222 2 0,0 *1``.
"""

from __future__ import annotations

import re
from typing import ClassVar, Final, Iterable, Protocol

from .geometry import CELL_NAMES, CENTRE, DIAGONAL_OF, ROW_OF
from .layouts import Layout, get_layout


class Seating(Protocol):
    """Who plays with whom: what a variant's result needs of ``board.Rules``."""

    @property
    def players(self) -> int: ...

    def side_of(self, seat: int) -> int: ...

    def seats_of_side(self, side: int) -> tuple[int, ...]: ...

#: The position-text character of the neutral marble.
NEUTRAL_CHAR: Final = "*"
#: The position-text characters of the treasures of players 1..6.
TREASURE_CHARS: Final = "abcdef"

# ----------------------------------------------------------- the six sides
#: Direction numbers as in ``geometry``: right, down-right, down-left, left, up-left, up-right.
_RIGHT, _DOWN_RIGHT, _DOWN_LEFT, _LEFT, _UP_LEFT, _UP_RIGHT = range(6)


def _on_side(side: str, cell: int) -> bool:
    row, diagonal = ROW_OF[cell], DIAGONAL_OF[cell]
    return {
        "top": row == 0,
        "upper-right": row <= 4 and diagonal == row + 5,
        "lower-right": row >= 4 and diagonal == 9,
        "bottom": row == 8,
        "lower-left": row >= 4 and diagonal == row - 3,
        "upper-left": row <= 4 and diagonal == 1,
    }[side]


#: The six sides, clockwise from the top, with the two directions that point out of each.
SIDES: Final = {
    "top": (_UP_LEFT, _UP_RIGHT),
    "upper-right": (_UP_RIGHT, _RIGHT),
    "lower-right": (_RIGHT, _DOWN_RIGHT),
    "bottom": (_DOWN_RIGHT, _DOWN_LEFT),
    "lower-left": (_DOWN_LEFT, _LEFT),
    "upper-left": (_LEFT, _UP_LEFT),
}
#: The cells of each side, in reading order.
SIDE_CELLS: Final = {
    side: tuple(c for c in sorted(CELL_NAMES) if _on_side(side, c)) for side in SIDES
}
#: Soccer: the sides each player defends (player 1 starts at the top).
HALVES: Final = {
    1: ("top", "upper-left", "upper-right"),
    2: ("bottom", "lower-left", "lower-right"),
}


def sides_crossed(cell: int, direction: int) -> tuple[str, ...]:
    """The sides of the board a marble crosses when it leaves ``cell`` in ``direction``.

    Empty if that step stays on the board; two sides off a corner in the direction
    between them.
    """
    return tuple(
        side for side, outward in SIDES.items() if direction in outward and cell in SIDE_CELLS[side]
    )


# ------------------------------------------------------------- the variants
class Variant:
    """The base class: no special marbles, nothing changes."""

    #: The option name (``-pillar`` is ``pillar``).
    name: ClassVar[str] = ""
    #: What the neutral marble ``*`` is called ("the princess"); empty without one.
    neutral: ClassVar[str] = ""
    #: Whether the neutral marbles may be pushed (like an opponent marble, by anyone).
    pushable: ClassVar[bool] = True
    #: Whether a neutral marble is pushed only as the first of the pushed marbles; behind
    #: an opponent marble it blocks the push (the soccer ball, by the Abafoot rules).
    neutral_pushed_only_first: ClassVar[bool] = False
    #: Whether the players have treasure marbles.
    treasures: ClassVar[bool] = False
    #: One sentence for the players.
    summary: ClassVar[str] = ""

    def check_players(self, players: int, teams: bool) -> None:
        """Raise ValueError if the variant cannot be played by this many players."""

    def special_cells(self, layout: Layout) -> dict[int, str]:
        """The special marbles on ``layout`` as {cell: position character}.

        Raise ValueError, with a sentence for the players, if the variant makes no
        sense on that layout.
        """
        return {}

    def on_eject(
        self, seat: int, owner: int, cell: int, direction: int, treasure: bool
    ) -> str | None:
        """A marble of ``owner`` (0: a neutral marble; ``treasure``: it was a treasure)
        left ``cell`` in ``direction``, pushed by ``seat``: the event, or None."""
        return None

    def check_event(self, event: str, players: int) -> None:
        """Raise ValueError unless ``event`` is one this variant writes."""
        raise ValueError(f"the {self.name or 'standard'} game has no event {event!r}")

    def result(self, event: str, rules: Seating) -> tuple[tuple[int, ...], str]:
        """(winning seats, reason) for an event of :meth:`on_eject`."""
        raise ValueError(f"the {self.name or 'standard'} game has no event {event!r}")


class _CentreMarble(Variant):
    """A neutral marble that starts on e5."""

    def special_cells(self, layout: Layout) -> dict[int, str]:
        if any(CENTRE in layout.cells_of(seat) for seat in range(1, layout.players + 1)):
            raise ValueError(
                f"-{self.name} puts {self.neutral} on e5, but the {layout.name} layout for "
                f"{layout.players} players has a marble there"
            )
        return {CENTRE: NEUTRAL_CHAR}


def _side_winners(seat: int, rules: Seating) -> tuple[int, ...]:
    return rules.seats_of_side(rules.side_of(seat))


class Pillar(_CentreMarble):
    name = "pillar"
    neutral = "the pillar"
    pushable = False
    summary = "an immovable marble on e5: nothing can move onto it, push it or be pushed onto it"


class Princess(_CentreMarble):
    name = "princess"
    neutral = "the princess"
    summary = "a neutral marble on e5 that anyone may push; whoever pushes it off wins"
    _EVENT = re.compile(r"\*([1-6])")

    def on_eject(
        self, seat: int, owner: int, cell: int, direction: int, treasure: bool
    ) -> str | None:
        return f"{NEUTRAL_CHAR}{seat}" if owner == 0 else None

    def check_event(self, event: str, players: int) -> None:
        match = self._EVENT.fullmatch(event)
        if not match or int(match.group(1)) > players:
            raise ValueError(f"{event!r} is not a princess event; write *N (player N pushed it off)")

    def result(self, event: str, rules: Seating) -> tuple[tuple[int, ...], str]:
        return _side_winners(int(event[1]), rules), "pushed off the princess"


class Soccer(_CentreMarble):
    name = "soccer"
    neutral = "the ball"
    neutral_pushed_only_first = True
    summary = (
        "a neutral ball on e5; push it off an edge of your opponent's half to win, "
        "off an edge of your own half and you lose"
    )
    _EVENT = re.compile(r"\*([12])([+-])")

    def check_players(self, players: int, teams: bool) -> None:
        if players != 2:
            raise ValueError(
                f"-soccer is a game for two players (the board has two halves), not {players}"
            )

    def on_eject(
        self, seat: int, owner: int, cell: int, direction: int, treasure: bool
    ) -> str | None:
        if owner != 0:
            return None
        own = set(HALVES[seat])
        goal = any(side not in own for side in sides_crossed(cell, direction))
        return f"{NEUTRAL_CHAR}{seat}{'+' if goal else '-'}"

    def check_event(self, event: str, players: int) -> None:
        if not self._EVENT.fullmatch(event):
            raise ValueError(
                f"{event!r} is not a soccer event; write *N+ (player N scored) "
                "or *N- (player N scored an own goal)"
            )

    def result(self, event: str, rules: Seating) -> tuple[tuple[int, ...], str]:
        seat, kind = int(event[1]), event[2]
        if kind == "+":
            return (seat,), "pushed the ball off an edge of the opponent's half"
        return (3 - seat,), f"own goal: player {seat} pushed the ball off an edge of their own half"


class Thief(Variant):
    name = "thief"
    treasures = True
    summary = (
        "each player's middle back-row marble is a treasure; "
        "push off an opponent's treasure to win"
    )
    _EVENT = re.compile(r"([a-f])([1-6])")

    def special_cells(self, layout: Layout) -> dict[int, str]:
        out = {}
        for seat in range(1, layout.players + 1):
            out[back_row_middle(layout, seat)] = TREASURE_CHARS[seat - 1]
        return out

    def on_eject(
        self, seat: int, owner: int, cell: int, direction: int, treasure: bool
    ) -> str | None:
        if treasure and owner not in (0, seat):
            return f"{TREASURE_CHARS[owner - 1]}{seat}"
        return None

    def check_event(self, event: str, players: int) -> None:
        match = self._EVENT.fullmatch(event)
        if (
            not match
            or TREASURE_CHARS.index(match.group(1)) + 1 > players
            or int(match.group(2)) > players
            or TREASURE_CHARS.index(match.group(1)) + 1 == int(match.group(2))
        ):
            raise ValueError(
                f"{event!r} is not a thief event; write the treasure and the player who "
                "pushed it off (b1: player 1 pushed off player 2's treasure)"
            )

    def result(self, event: str, rules: Seating) -> tuple[tuple[int, ...], str]:
        owner, seat = TREASURE_CHARS.index(event[0]) + 1, int(event[1])
        whose = "the opponent's" if rules.players == 2 else f"player {owner}'s"
        return _side_winners(seat, rules), f"pushed off {whose} treasure"


def back_row_middle(layout: Layout, seat: int) -> int:
    """The cell of ``seat``'s treasure on ``layout``: the middle of its back row.

    The back row is the side of the board holding the most of the player's marbles;
    it must be the only such side and hold an unbroken, odd-length run of them.
    """
    mine = set(layout.cells_of(seat))
    where = f"in the {layout.name} layout for {layout.players} players"
    counts = {side: [c for c in SIDE_CELLS[side] if c in mine] for side in SIDES}
    most = max(len(cells) for cells in counts.values())
    best = [side for side, cells in counts.items() if len(cells) == most]
    if most == 0 or len(best) > 1:
        raise ValueError(
            f"-thief needs a back row for every player, and {where} player {seat} "
            "has none (no single side of the board holds most of their marbles)"
        )
    side = best[0]
    cells = counts[side]
    run = SIDE_CELLS[side]
    first = run.index(cells[0])
    if list(run[first : first + len(cells)]) != cells or len(cells) % 2 == 0:
        names = " ".join(CELL_NAMES[c] for c in cells)
        raise ValueError(
            f"-thief needs a middle marble in every player's back row, and {where} "
            f"player {seat}'s back row ({names}) has none"
        )
    return cells[len(cells) // 2]


#: The variants by option name.
VARIANTS: Final[dict[str, type[Variant]]] = {
    "pillar": Pillar,
    "princess": Princess,
    "soccer": Soccer,
    "thief": Thief,
}
_INSTANCES: dict[str, Variant] = {}


def variant_names() -> list[str]:
    return list(VARIANTS)


def get_variant(name: str) -> Variant:
    """The variant called ``name`` (one shared instance; variants hold no state)."""
    if name not in VARIANTS:
        raise ValueError(
            f"there is no variant called {name!r}; the variants are "
            f"{', '.join(variant_names()[:-1])} and {variant_names()[-1]}"
        )
    if name not in _INSTANCES:
        _INSTANCES[name] = VARIANTS[name]()
    return _INSTANCES[name]


def check_variant(name: str | None, layout_name: str, players: int, teams: bool) -> None:
    """Raise ValueError, with a sentence for the players, if the variant makes no sense
    for this layout, number of players and team play (None: no variant, always fine)."""
    layout = get_layout(layout_name, players)
    if name is None:
        return
    variant = get_variant(name)
    variant.check_players(players, teams)
    variant.special_cells(layout)


def pick_variant(flags: Iterable[str]) -> str | None:
    """The one variant among option names (``["ko", "princess"]`` -> ``"princess"``).

    Raise ValueError if more than one variant is named.
    """
    chosen = [flag for flag in flags if flag in VARIANTS]
    if len(chosen) > 1:
        raise ValueError(
            f"choose at most one variant, not -{' and -'.join(chosen)}"
        )
    return chosen[0] if chosen else None


__all__ = [
    "HALVES",
    "NEUTRAL_CHAR",
    "SIDES",
    "SIDE_CELLS",
    "TREASURE_CHARS",
    "VARIANTS",
    "Pillar",
    "Seating",
    "Princess",
    "Soccer",
    "Thief",
    "Variant",
    "back_row_middle",
    "check_variant",
    "get_variant",
    "pick_variant",
    "sides_crossed",
    "variant_names",
]
