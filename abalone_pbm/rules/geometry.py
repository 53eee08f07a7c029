"""The hexagonal board: cells, their pbmserv names, directions and bit masks.

Cells live on an 11 x 11 grid of bits (one ring of padding around the 9 x 9 rows
and diagonals) so that moving a whole set of marbles one step is a single shift,
and stepping off the board lands on a padding bit instead of wrapping around.
Row A is the top row; diagonals 1-9 run from upper right to lower left, exactly
as in the pbmserv help: A holds a1-a5, E e1-e9, I i5-i9, and e5 is the centre.
"""

from __future__ import annotations

from typing import Final

ROWS: Final = "abcdefghi"
WIDTH: Final = 11

#: Directions in clockwise order, so that ``(k + 3) % 6`` is the opposite one.
RIGHT, DOWN_RIGHT, DOWN_LEFT, LEFT, UP_LEFT, UP_RIGHT = range(6)
DIRECTION_NAMES: Final = ("right", "down-right", "down-left", "left", "up-left", "up-right")
#: (row delta, diagonal delta) of each direction.
DIRECTION_DELTAS: Final = ((0, 1), (1, 1), (1, 0), (0, -1), (-1, -1), (-1, 0))
#: Bit offset of one step in each direction.
OFFSETS: Final = tuple(dr * WIDTH + dd for dr, dd in DIRECTION_DELTAS)
#: The three axes a line can lie on, named by their positive direction.
AXES: Final = (RIGHT, DOWN_RIGHT, DOWN_LEFT)


def opposite(direction: int) -> int:
    return (direction + 3) % 6


def _diagonal_range(row: int) -> range:
    return range(max(1, row - 3), min(9, row + 5) + 1)


def index_of(row: int, diagonal: int) -> int:
    """Bit index of the cell in ``row`` (0 = A) and ``diagonal`` (1-9)."""
    return (row + 1) * WIDTH + diagonal


#: Bit indices of the 61 cells in reading order (a1 ... i9).
CELLS: Final = tuple(index_of(r, d) for r in range(9) for d in _diagonal_range(r))
ROW_OF: Final = {index_of(r, d): r for r in range(9) for d in _diagonal_range(r)}
DIAGONAL_OF: Final = {index_of(r, d): d for r in range(9) for d in _diagonal_range(r)}
#: All on-board cells as one mask.
BOARD_MASK: Final = sum(1 << c for c in CELLS)
#: Every bit of the grid, padding included; shifts of on-board sets stay inside it.
GRID_MASK: Final = (1 << (WIDTH * WIDTH)) - 1
OFF_BOARD_MASK: Final = GRID_MASK & ~BOARD_MASK
CENTRE: Final = index_of(4, 5)

CELL_NAMES: Final = {c: f"{ROWS[ROW_OF[c]]}{DIAGONAL_OF[c]}" for c in CELLS}
CELL_BY_NAME: Final = {name: c for c, name in CELL_NAMES.items()}


def cell_name(cell: int) -> str:
    return CELL_NAMES[cell]


def on_board(cell: int) -> bool:
    return 0 <= cell < WIDTH * WIDTH and (BOARD_MASK >> cell) & 1 == 1


def neighbour(cell: int, direction: int) -> int | None:
    """The adjacent cell in ``direction``, or None off the edge."""
    target = cell + OFFSETS[direction]
    return target if on_board(target) else None


def direction_between(a: int, b: int) -> int | None:
    """The direction from ``a`` to ``b`` when they are adjacent, else None."""
    delta = b - a
    for direction, offset in enumerate(OFFSETS):
        if offset == delta:
            return direction
    return None


def shift(bits: int, direction: int) -> int:
    """Move every set bit one step in ``direction`` (result may touch padding)."""
    offset = OFFSETS[direction]
    return bits << offset if offset > 0 else bits >> -offset


def iter_bits(bits: int) -> list[int]:
    """Indices of the set bits, lowest first."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def mask_of(cells: list[int] | tuple[int, ...]) -> int:
    mask = 0
    for c in cells:
        mask |= 1 << c
    return mask
