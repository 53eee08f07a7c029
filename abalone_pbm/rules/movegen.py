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

A side-step is its marbles each stepping into an empty cell the same way: in the
lanes of single steps, two targets next to each other along the line's axis (one
global shift by the axis's step, since the lane of a direction holds its targets).

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
_CELL_BITS: Final = GRID_MASK.bit_length()


def _spread(steps: int) -> int:
    """The constant whose product with a bitboard holds it once per direction, shifted
    ``steps`` steps in that direction."""
    return sum(1 << (LANE * d + BASE + steps * o) for d, o in enumerate(OFFSETS))


#: SPREAD[k]: six copies, each shifted k steps along its lane's direction.
SPREAD: Final = tuple(_spread(k) for k in range(6))
_S0, _S1, _S2, _S3, _S4, _S5 = SPREAD
#: The cells off the board (the padding ring) in every lane: always free.
OFF_BOARD_LANES: Final = (GRID_MASK & ~BOARD_MASK) * _S0
#: Side-steps: for each axis (its offset), the lanes of the directions across it.
_ACROSS: Final = tuple(
    (
        OFFSETS[axis],
        sum(((1 << LANE) - 1) << (LANE * d) for d in range(6) if d not in (axis, axis + 3)),
    )
    for axis in AXES
)


def count_moves(own: int, enemy: int, blockers: int = 0, lead_only: int = 0) -> int:
    """The number of legal moves of ``own`` marbles.

    ``enemy``: the marbles that may be pushed; ``blockers``: marbles that block like
    the edge of a wall (a partner's, the pillar); ``lead_only``: pushable marbles that
    block when they lie behind another pushed marble (the soccer ball).
    """
    empty = BOARD_MASK & ~(own | enemy | blockers)
    o1 = own * _S1
    o2 = own * _S2
    o3 = own * _S3
    room = empty * _S0
    single = o1 & room
    two = o1 & o2
    back = o2 & o3  # own two and three steps back
    total = single.bit_count() + (two & room).bit_count() + (back & o1 & room).bit_count()
    # Lanes where two of own, then one pushable marble, end just before the cell.
    e1 = enemy * _S1
    hits = back & e1
    if hits:
        free = room | OFF_BOARD_LANES
        total += (hits & free).bit_count()
        o4 = own * _S4
        # Three of own against a pushable marble: pushes of one or two by three.
        threes = hits & o4
        if threes:
            if lead_only:
                e1 = (enemy & ~lead_only) * _S1
            total += (threes & free).bit_count() + (
                own * _S5 & o4 & o3 & enemy * _S2 & e1 & free
            ).bit_count()
    # A side-step of a line is each of its marbles stepping into an empty cell the same
    # way: single steps whose targets lie next to each other along the line's axis.
    for axis, across in _ACROSS:
        pair = single & (single >> axis) & across
        if pair:
            total += pair.bit_count() + (pair & (single >> (2 * axis))).bit_count()
    return total


#: What a table holds at a bit where no move can end (never read: see ``moves``).
_NO_MOVE: Final = Move(0, 0)


def _on_board(cells: list[int]) -> bool:
    return all(0 <= c < _CELL_BITS and BOARD_MASK >> c & 1 for c in cells)


def _line_move(cells: list[int], direction: int) -> Move:
    mask = 0
    for c in cells:
        mask |= 1 << c
    return Move(mask, direction)


def _inline_table(length: int, pushed: int) -> list[Move]:
    """Lane bit -> the move of ``length`` marbles pushing ``pushed`` that ends there
    (the cell entered, or beyond the pushed marbles)."""
    table = [_NO_MOVE] * (6 * LANE)
    for d, o in enumerate(OFFSETS):
        for end in range(_CELL_BITS):
            line = [end - (pushed + k) * o for k in range(1, length + 1)]
            if _on_board(line) and _on_board([end - k * o for k in range(1, pushed + 1)]):
                table[LANE * d + BASE + end] = _line_move(line, d)
    return table


def _side_table(axis: int, length: int) -> list[Move]:
    """Lane bit -> the side-step of ``length`` marbles along ``axis`` (an offset) whose
    tail (lowest cell) steps onto it."""
    table = [_NO_MOVE] * (6 * LANE)
    for d, o in enumerate(OFFSETS):
        if o in (axis, -axis):
            continue
        for target in CELLS:
            line = [target - o + k * axis for k in range(length)]
            if _on_board(line) and _on_board([c + o for c in line]):
                table[LANE * d + BASE + target] = _line_move(line, d)
    return table


#: The moves named by lane bits, one table per kind: into an empty cell with one, two,
#: three marbles; two push one, three push one, three push two; side-steps of two and
#: of three along each axis.
STEP_TABLES: Final = tuple(_inline_table(n, 0) for n in (1, 2, 3))
PUSH_TABLES: Final = (_inline_table(2, 1), _inline_table(3, 1), _inline_table(3, 2))
SIDE_TABLES: Final = tuple(
    (_side_table(axis, 2), _side_table(axis, 3)) for axis, _ in _ACROSS
)


def lane_masks(
    own: int, enemy: int, blockers: int = 0, lead_only: int = 0
) -> list[tuple[int, int]]:
    """The lanes of each kind of move: ``(bits, kind)`` pairs where each set bit of
    ``bits`` is the end of one legal move, named by ``TABLES[kind]`` at that bit
    (the arguments as for :func:`count_moves`; kinds with no move are left out)."""
    empty = BOARD_MASK & ~(own | enemy | blockers)
    o1 = own * _S1
    o2 = own * _S2
    o3 = own * _S3
    room = empty * _S0
    single = o1 & room
    two = o1 & o2
    back = o2 & o3
    found = [(single, 0), (two & room, 1), (back & o1 & room, 2)]
    e1 = enemy * _S1
    hits = back & e1
    if hits:
        free = room | OFF_BOARD_LANES
        found.append((hits & free, 3))
        o4 = own * _S4
        threes = hits & o4
        if threes:
            if lead_only:
                e1 = (enemy & ~lead_only) * _S1
            found += ((threes & free, 4), (own * _S5 & o4 & o3 & enemy * _S2 & e1 & free, 5))
    kind = 6
    for axis, across in _ACROSS:
        pair = single & (single >> axis) & across
        if pair:
            found += ((pair, kind), (pair & (single >> (2 * axis)), kind + 1))
        kind += 2
    return found


#: BELOW[n]: the bits below bit n, to clear the highest bit of a lane mask (cheaper
#: on these long integers than isolating the lowest one).
BELOW: Final = tuple((1 << n) - 1 for n in range(6 * LANE))
#: The tables of :func:`lane_masks`'s kinds, in order: 0-2 steps into an empty cell,
#: 3-5 pushes, 6-11 side-steps of two and three along each axis.
TABLES: Final = (
    *STEP_TABLES,
    *PUSH_TABLES,
    *(table for pair in SIDE_TABLES for table in pair),
)


def moves(own: int, enemy: int, blockers: int = 0, lead_only: int = 0) -> list[Move]:
    """The legal moves of ``own`` marbles (the arguments as for :func:`count_moves`)."""
    out: list[Move] = []
    append = out.append
    for bits, kind in lane_masks(own, enemy, blockers, lead_only):
        table = TABLES[kind]
        # Every set bit is the end of a legal move: the table holds a move there.
        while bits:
            top = bits.bit_length() - 1
            append(table[top])
            bits &= BELOW[top]
    return out


__all__ = [
    "BASE",
    "BELOW",
    "LANE",
    "OFF_BOARD_LANES",
    "SPREAD",
    "TABLES",
    "count_moves",
    "lane_masks",
    "moves",
]
