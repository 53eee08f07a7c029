"""Moves of all six directions at once: the bitboard copied into lanes of one integer.

A move is found by looking, from the cell it ends on, back along its direction: two
of the mover's marbles two and three steps back, an opponent marble one step back and
a free cell here make a push of one by two.  Each such test is an AND of the
bitboards shifted by a few steps in that direction.  Instead of six shifts and six
ANDs per test (one per direction), one multiplication by a constant with a bit per
direction puts six copies of a bitboard side by side, each shifted by its own
direction's step (:data:`LANE` bits apart, so that copies never overlap and no
carry can arise), and one AND tests all six directions.  Counting the moves is then
a population count per kind of move, and generating them is reading the set bits,
each of which names one move through a precomputed table (python-chess's way: tables
built once, integers as sets).

The side-steps are done the same way with twelve lanes: one per axis of the line
and direction of the step across it.

Everything is pure Python and exact: ``count_moves`` equals the number of moves
``moves`` lists, and both equal the cell-by-cell rules (``tests/rules``).
"""

from __future__ import annotations

from typing import Final

from .geometry import AXES, BOARD_MASK, CELLS, GRID_MASK, OFFSETS
from .moves import Move

#: Bits per lane and where the unshifted board starts in its lane.  The board's bits
#: run from 12 to 108, ``free`` from 0 to 120; shifted by at most five steps of 12
#: either way they stay inside [BASE - 60 + 12, BASE + 120 + 60): inside the lane.
LANE: Final = 248
BASE: Final = 60
#: The twelve side-step lanes: (axis offset, step offset) with the step across the axis.
SIDE_LANES: Final = tuple(
    (OFFSETS[axis], OFFSETS[d]) for axis in AXES for d in range(6) if d not in (axis, axis + 3)
)
SIDE_DIRECTIONS: Final = tuple(d for axis in AXES for d in range(6) if d not in (axis, axis + 3))
#: Side-step lanes: shifts from -36 to +12 of the board's bits 12..108.
SIDE_LANE: Final = 176
SIDE_BASE: Final = 36


def _spread(steps: int) -> int:
    """The constant whose product with a bitboard holds it once per direction, shifted
    ``steps`` steps in that direction."""
    return sum(1 << (LANE * d + BASE + steps * o) for d, o in enumerate(OFFSETS))


def _side_spread(axis_steps: int, across: int) -> int:
    """Side-step lanes: the bitboard shifted by ``across`` steps across and
    ``-axis_steps`` along the axis."""
    return sum(
        1 << (SIDE_LANE * j + SIDE_BASE + across * s - axis_steps * oa)
        for j, (oa, s) in enumerate(SIDE_LANES)
    )


#: SPREAD[k]: six copies, each shifted k steps along its lane's direction.
SPREAD: Final = tuple(_spread(k) for k in range(6))
_S0, _S1, _S2, _S3, _S4, _S5 = SPREAD
#: Side-step constants: the line's cells before the step (tail, second, third) and
#: the empty cells after it (the tail's target, the second's, the third's).
_T_TAIL: Final = _side_spread(0, 1)
_T_SECOND: Final = _side_spread(1, 1)
_T_THIRD: Final = _side_spread(2, 1)
_T_ROOM1: Final = _side_spread(0, 0)
_T_ROOM2: Final = _side_spread(1, 0)
_T_ROOM3: Final = _side_spread(2, 0)


def count_moves(own: int, enemy: int, blockers: int = 0, lead_only: int = 0) -> int:
    """The number of legal moves of ``own`` marbles.

    ``enemy``: the marbles that may be pushed; ``blockers``: marbles that block like
    the edge of a wall (a partner's, the pillar); ``lead_only``: pushable marbles that
    block when they lie behind another pushed marble (the soccer ball).
    """
    occupied = own | enemy | blockers
    empty = BOARD_MASK & ~occupied
    o1 = own * _S1
    o2 = own * _S2
    room = empty * _S0
    two = o1 & o2
    three = two & own * _S3
    total = (o1 & room).bit_count() + (two & room).bit_count() + (three & room).bit_count()
    o3 = own * _S3
    # Lanes where two of own, then one pushable marble, end just before the cell.
    hits = o3 & o2 & enemy * _S1
    if hits:
        free = (GRID_MASK & ~occupied) * _S0
        one = hits & free
        if one:
            total += one.bit_count() + (one & own * _S4).bit_count()
        o4 = own * _S4
        total += (
            own * _S5 & o4 & o3 & enemy * _S2 & (enemy & ~lead_only) * _S1 & free
        ).bit_count()
    pairs = own * _T_TAIL & own * _T_SECOND
    if pairs:
        steps = pairs & empty * _T_ROOM1 & empty * _T_ROOM2
        if steps:
            total += steps.bit_count() + (
                steps & own * _T_THIRD & empty * _T_ROOM3
            ).bit_count()
    return total


#: What a table holds at a bit where no move can end (never read: see ``moves``).
_NO_MOVE: Final = Move(0, 0)


def _inline_table(length: int, pushed: int) -> list[Move]:
    """Lane bit -> the move of ``length`` marbles pushing ``pushed`` that ends there
    (the cell entered, or beyond the pushed marbles)."""
    table = [_NO_MOVE] * (6 * LANE)
    for d, o in enumerate(OFFSETS):
        for end in range(GRID_MASK.bit_length()):
            line = [end - (pushed + k) * o for k in range(1, length + 1)]
            if all(0 <= c < GRID_MASK.bit_length() and BOARD_MASK >> c & 1 for c in line):
                if pushed and not all(BOARD_MASK >> (end - k * o) & 1 for k in range(1, pushed + 1)):
                    continue
                cells = 0
                for c in line:
                    cells |= 1 << c
                table[LANE * d + BASE + end] = Move(cells, d)
    return table


def _side_table(length: int) -> list[Move]:
    """Side-step lane bit -> the side-step of ``length`` marbles whose tail enters it."""
    table = [_NO_MOVE] * (len(SIDE_LANES) * SIDE_LANE)
    for j, (oa, s) in enumerate(SIDE_LANES):
        for target in CELLS:
            tail = target - s
            line = [tail + k * oa for k in range(length)]
            if all(0 <= c < GRID_MASK.bit_length() and BOARD_MASK >> c & 1 for c in line):
                cells = 0
                for c in line:
                    cells |= 1 << c
                table[SIDE_LANE * j + SIDE_BASE + target] = Move(cells, SIDE_DIRECTIONS[j])
    return table


#: The moves named by lane bits, one table per kind: into an empty cell with one, two,
#: three marbles; two push one, three push one, three push two; side-steps of two, three.
STEP_TABLES: Final = tuple(_inline_table(n, 0) for n in (1, 2, 3))
PUSH_TABLES: Final = (_inline_table(2, 1), _inline_table(3, 1), _inline_table(3, 2))
SIDE_TABLES: Final = (_side_table(2), _side_table(3))


def moves(own: int, enemy: int, blockers: int = 0, lead_only: int = 0) -> list[Move]:
    """The legal moves of ``own`` marbles (the arguments as for :func:`count_moves`)."""
    occupied = own | enemy | blockers
    empty = BOARD_MASK & ~occupied
    o1 = own * _S1
    o2 = own * _S2
    o3 = own * _S3
    room = empty * _S0
    two = o1 & o2
    found = [o1 & room, two & room, two & o3 & room]
    tables = [*STEP_TABLES]
    hits = o3 & o2 & enemy * _S1
    if hits:
        free = (GRID_MASK & ~occupied) * _S0
        one = hits & free
        o4 = own * _S4
        found += (
            one,
            one & o4,
            own * _S5 & o4 & o3 & enemy * _S2 & (enemy & ~lead_only) * _S1 & free,
        )
        tables += PUSH_TABLES
    pairs = own * _T_TAIL & own * _T_SECOND
    if pairs:
        steps = pairs & empty * _T_ROOM1 & empty * _T_ROOM2
        found += (steps, steps & own * _T_THIRD & empty * _T_ROOM3)
        tables += SIDE_TABLES
    out: list[Move] = []
    append = out.append
    for bits, table in zip(found, tables):
        # Every set bit is the end of a legal move: the tables hold a move there.
        while bits:
            low = bits & -bits
            append(table[low.bit_length() - 1])
            bits ^= low
    return out


__all__ = ["LANE", "SIDE_LANE", "count_moves", "moves"]
