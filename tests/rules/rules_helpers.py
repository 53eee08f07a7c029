"""Helpers shared by the rules tests, written from DESIGN.md section 3 alone.

Nothing here uses the rules core's bitboards: cells are pbmserv names, directions
are (row, diagonal) deltas, and ``naive_successors`` plays every legal move of a
position by walking cells one at a time.  It is deliberately slow and obvious so
that it can referee the fast generators, the notation reader and ``Board.push``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from hypothesis import strategies as st

from abalone_pbm.rules import Board, Move, Rules
from abalone_pbm.rules.geometry import CELL_NAMES, OFFSETS, iter_bits

ROWS = "abcdefghi"
#: Diagonals of each row, as in the pbmserv help: A a1-a5 ... E e1-e9 ... I i5-i9.
ROW_DIAGONALS = {
    "a": range(1, 6),
    "b": range(1, 7),
    "c": range(1, 8),
    "d": range(1, 9),
    "e": range(1, 10),
    "f": range(2, 10),
    "g": range(3, 10),
    "h": range(4, 10),
    "i": range(5, 10),
}
#: The 61 cell names in reading order (row A first, increasing diagonal).
CELLS = [f"{r}{d}" for r in ROWS for d in ROW_DIAGONALS[r]]
CELL_SET = frozenset(CELLS)
#: (row delta, diagonal delta) of the six directions.
RIGHT, DOWN_RIGHT, DOWN_LEFT, LEFT, UP_LEFT, UP_RIGHT = (
    (0, 1),
    (1, 1),
    (1, 0),
    (0, -1),
    (-1, -1),
    (-1, 0),
)
DELTAS = (RIGHT, DOWN_RIGHT, DOWN_LEFT, LEFT, UP_LEFT, UP_RIGHT)

Delta = tuple[int, int]
MoveKey = tuple[frozenset[str], Delta]

STANDARD_START = "11111/111111/..111../......../........./......../..222../222222/22222 1 0,0"
EMPTY_ROWS = "...../....../......./......../........./......../......./....../....."


def step(cell: str, delta: Delta) -> str | None:
    """The neighbour of ``cell`` in direction ``delta``, or None off the board."""
    row = ROWS.index(cell[0]) + delta[0]
    diagonal = int(cell[1:]) + delta[1]
    if not 0 <= row < 9:
        return None
    name = f"{ROWS[row]}{diagonal}"
    return name if name in CELL_SET else None


def delta_between(a: str, b: str) -> Delta:
    return (ROWS.index(b[0]) - ROWS.index(a[0]), int(b[1:]) - int(a[1:]))


# --------------------------------------------------------------- positions
def make_position(
    marbles: Mapping[str, int] | None = None,
    turn: int = 1,
    ejected: Iterable[int] = (0, 0),
) -> str:
    """A position text from ``{cell name: player}``; all other cells empty.

    Player 0 is a variant's neutral marble, written ``*``.
    """
    marbles = {k.lower(): v for k, v in (marbles or {}).items()}
    assert set(marbles) <= CELL_SET, set(marbles) - CELL_SET
    rows = []
    for r in ROWS:
        rows.append(
            "".join(
                "*" if marbles.get(f"{r}{d}") == 0 else str(marbles.get(f"{r}{d}", "."))
                for d in ROW_DIAGONALS[r]
            )
        )
    return f"{'/'.join(rows)} {turn} {','.join(str(n) for n in ejected)}"


def row_e(cells: str, turn: int = 1, ejected: Iterable[int] = (0, 0)) -> str:
    """A position whose only marbles are the nine characters given for row E."""
    rows = EMPTY_ROWS.split("/")
    rows[4] = cells.replace(" ", "")
    assert len(rows[4]) == 9
    return f"{'/'.join(rows)} {turn} {','.join(str(n) for n in ejected)}"


def parse_position(text: str) -> tuple[dict[str, int], int, list[int]]:
    """(marbles by cell name, player to move, ejected counts); ``*`` is player 0."""
    rows_text, turn, ejected = text.split()
    flat = "".join(rows_text.split("/"))
    assert len(flat) == 61
    marbles = {cell: 0 if ch == "*" else int(ch) for cell, ch in zip(CELLS, flat) if ch != "."}
    return marbles, int(turn), [int(n) for n in ejected.split(",")]


def diagram(text: str) -> str:
    """Rows of a drawn board (spaces ignored) joined into the rows part of a position."""
    rows = [line.replace(" ", "") for line in text.strip().splitlines()]
    return "/".join(rows)


# ---------------------------------------------------------- the reference
def side_of(seat: int, players: int, teams: bool) -> int:
    return (seat - 1) % (players // 2) if teams else seat - 1


def naive_moves(
    marbles: Mapping[str, int],
    seat: int,
    players: int,
    teams: bool = False,
    fixed_neutral: bool = False,
    ball: bool = False,
) -> dict[MoveKey, tuple[dict[str, int], int]]:
    """Every legal move of ``seat``: {(line, delta): (marbles after, marbles ejected)}.

    Player 0 is a neutral marble: pushed like any opponent marble (and not counted as
    ejected), or with ``fixed_neutral`` (the pillar) never moved and never entered, or
    with ``ball`` (soccer) pushed only as the first pushed marble: behind an opponent
    marble it stops the push.
    """
    side = side_of(seat, players, teams)

    def own(c: str | None) -> bool:
        return c is not None and marbles.get(c) == seat

    def friend(c: str | None) -> bool:
        return (
            c is not None
            and c in marbles
            and marbles[c] not in (0, seat)
            and side_of(marbles[c], players, teams) == side
        )

    def enemy(c: str | None) -> bool:
        if c is None or c not in marbles or own(c) or friend(c):
            return False
        return not (fixed_neutral and marbles[c] == 0)

    out: dict[MoveKey, tuple[dict[str, int], int]] = {}
    for rear in CELLS:
        if not own(rear):
            continue
        for delta in DELTAS:
            line = [rear]
            while len(line) <= 3:
                front = line[-1]
                target = step(front, delta)
                partner_in_line = any(friend(c) for c in line)
                # target None: the front is at the edge, and own marbles never leave.
                if target is not None and target not in marbles:
                    if not partner_in_line:
                        out[(frozenset(line), delta)] = _slide(marbles, line, delta, [])
                elif target is not None and enemy(target) and len(line) > 1:
                    pushed: list[str] = []
                    cell: str | None = target
                    while cell is not None and enemy(cell):
                        if ball and pushed and marbles[cell] == 0:
                            break  # the ball behind an opponent marble: an obstacle
                        pushed.append(cell)
                        cell = step(cell, delta)
                    if len(pushed) < len(line) and (cell is None or cell not in marbles):
                        out[(frozenset(line), delta)] = _slide(marbles, line, delta, pushed)
                if len(line) == 3 or not (own(target) or friend(target)):
                    break
                assert target is not None
                line.append(target)
    # Side-steps: two or three own marbles in a line, moving across it into empty cells.
    for first in CELLS:
        if not own(first):
            continue
        for axis in (RIGHT, DOWN_RIGHT, DOWN_LEFT):
            line = [first]
            for _ in range(2):
                nxt = step(line[-1], axis)
                if not own(nxt):
                    break
                assert nxt is not None
                line.append(nxt)
                for delta in DELTAS:
                    if delta in (axis, (-axis[0], -axis[1])):
                        continue
                    targets = [step(c, delta) for c in line]
                    if all(t is not None and t not in marbles for t in targets):
                        out[(frozenset(line), delta)] = _slide(marbles, line, delta, [])
    return out


def _slide(
    marbles: Mapping[str, int], line: list[str], delta: Delta, pushed: list[str]
) -> tuple[dict[str, int], int]:
    after = dict(marbles)
    moving = [*line, *pushed]
    for c in moving:
        del after[c]
    ejected = 0
    for c in moving:
        dest = step(c, delta)
        if dest is None:
            ejected += marbles[c] != 0  # a neutral marble is nobody's
        else:
            after[dest] = marbles[c]
    return after, ejected


def naive_successors(
    text: str, teams: bool = False, fixed_neutral: bool = False, ball: bool = False
) -> dict[MoveKey, str]:
    """{(line, delta): position text after the move} for the player to move."""
    marbles, turn, ejected = parse_position(text)
    players = len(ejected)
    result = {}
    moves = naive_moves(marbles, turn, players, teams, fixed_neutral, ball)
    for key, (after, out) in moves.items():
        counts = list(ejected)
        counts[turn - 1] += out
        nxt = _naive_next(after, turn, players, teams, fixed_neutral, ball)
        result[key] = make_position(after, nxt, counts)
    return result


def _naive_next(
    marbles: Mapping[str, int],
    seat: int,
    players: int,
    teams: bool,
    fixed_neutral: bool = False,
    ball: bool = False,
) -> int:
    """The next seat with marbles and a legal move; the mover itself last of all."""
    for k in range(1, players + 1):
        candidate = (seat - 1 + k) % players + 1
        if candidate not in marbles.values():
            continue
        if candidate == seat or naive_moves(
            marbles, candidate, players, teams, fixed_neutral, ball
        ):
            return candidate
    return seat


# ------------------------------------------------------- the core's side
def move_key(move: Move) -> MoveKey:
    """A Move as (cell names of the line, direction delta), without using geometry tables."""
    names = [CELL_NAMES[c] for c in iter_bits(move.cells)]
    first = iter_bits(move.cells)[0]
    return frozenset(names), delta_between(
        CELL_NAMES[first], CELL_NAMES[first + OFFSETS[move.direction]]
    )


def board_successors(board: Board) -> dict[MoveKey, str]:
    out = {}
    for move in list(board.generate_legal_moves()):
        board.push(move)
        out[move_key(move)] = board.position()
        board.pop()
    return out


def random_playout(board: Board, plies: int, rng: random.Random) -> list[str]:
    """Play up to ``plies`` random legal moves; returns the positions met (after each move)."""
    seen = []
    for _ in range(plies):
        moves = list(board.generate_legal_moves())
        if not moves:
            break
        board.push(rng.choice(moves))
        seen.append(board.position())
    return seen


# ----------------------------------------------------- hypothesis strategies
@st.composite
def random_positions(draw: st.DrawFn, players: int | None = None) -> str:
    """Scattered positions: any marbles anywhere, so every push shape turns up."""
    n = players if players is not None else draw(st.integers(2, 6))
    density = draw(st.sampled_from([2, 3, 4]))  # empty cells weigh 2-4 times a player
    choices = [0] * (density * n // 2) + list(range(1, n + 1))
    flat = draw(st.lists(st.sampled_from(choices), min_size=61, max_size=61))
    present = sorted(set(flat) - {0})
    if not present:
        flat[30] = 1
        present = [1]
    turn = draw(st.sampled_from(present))
    marbles = {cell: p for cell, p in zip(CELLS, flat) if p}
    return make_position(marbles, turn, [0] * n)


@st.composite
def played_games(
    draw: st.DrawFn, layouts: tuple[str, ...] = ("standard", "bowl"), max_plies: int = 60
) -> tuple[str, Board]:
    """(start position, board after a random playout) from a layout for 2 to 6 players."""
    players = draw(st.integers(2, 6))
    names = list(layouts)
    if players == 2:
        names += ["belgian-daisy", "german-daisy", "snakes", "the-wall", "alien-attack"]
    name = draw(st.sampled_from(names))
    board = Board.from_layout(name, Rules(players=players))
    start = board.position()
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    random_playout(board, draw(st.integers(0, max_plies)), rng)
    return start, board


def played_boards(max_plies: int = 60) -> st.SearchStrategy[Board]:
    """A board reached by a random playout from a layout for 2 to 6 players."""
    return played_games(max_plies=max_plies).map(lambda game: game[1])
