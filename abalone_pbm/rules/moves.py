"""The ``Move`` value object, its canonical spelling and the move errors."""

from __future__ import annotations

from .geometry import CELL_NAMES, OFFSETS, iter_bits


class MoveError(ValueError):
    """Base class: a move that cannot be played."""


class InvalidMoveError(MoveError):
    """The text cannot be read as a move at all."""


class IllegalMoveError(MoveError):
    """The text reads as a move, but the rules forbid it in this position."""


class GameOverError(IllegalMoveError):
    """No move can be played because the game has ended."""


class Move:
    """One to three marbles in a straight line moving one step in one direction.

    ``cells`` is the bit mask of the moving line (the mover's marbles, and in team
    games possibly a partner's); pushed marbles are not part of it, they follow from
    the position.  Two moves are equal when they move the same line the same way.
    A move is a value: what playing it needs (in-line or not, the rear and front
    cells, where a side-step's marbles land) is worked out once, when it is made.
    """

    __slots__ = ("cells", "direction", "is_inline", "rear", "front", "moved")

    def __init__(self, cells: int, direction: int) -> None:
        self.cells = cells
        self.direction = direction
        offset = OFFSETS[direction]
        low = (cells & -cells).bit_length() - 1
        high = cells.bit_length() - 1
        #: True when the line moves along itself (a single marble always does).
        self.is_inline = low == high or bool(cells >> (low + abs(offset)) & 1)
        #: The last and the first marble of the line in the direction of the move.
        self.rear, self.front = (low, high) if offset > 0 else (high, low)
        #: The line's cells after a side-step.
        self.moved = cells << offset if offset > 0 else cells >> -offset

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Move)
            and self.cells == other.cells
            and self.direction == other.direction
        )

    def __hash__(self) -> int:
        return hash((self.cells, self.direction))

    def __repr__(self) -> str:
        return f"Move({self})"

    def __str__(self) -> str:
        return canonical_text(self.cells, self.direction)

    @property
    def marbles(self) -> list[int]:
        """Bit indices of the moving line, lowest first."""
        return iter_bits(self.cells)

    @property
    def size(self) -> int:
        return self.cells.bit_count()

    def text(self) -> str:
        return str(self)


def canonical_text(cells: int, direction: int) -> str:
    """The one spelling the server prints for a move; it parses back to the same move.

    A single marble: ``from,to``.  An in-line move: ``rear-front,target`` where target
    is the cell the front marble enters.  A side-step: ``first-last,target`` where
    first/last are in reading order and target is where the first marble goes.
    """
    offset = OFFSETS[direction]
    line = iter_bits(cells)
    if len(line) == 1:
        return f"{CELL_NAMES[line[0]]},{CELL_NAMES[line[0] + offset]}"
    if line[1] - line[0] == abs(offset):
        rear, front = (line[0], line[-1]) if offset > 0 else (line[-1], line[0])
        return f"{CELL_NAMES[rear]}-{CELL_NAMES[front]},{CELL_NAMES[front + offset]}"
    return f"{CELL_NAMES[line[0]]}-{CELL_NAMES[line[-1]]},{CELL_NAMES[line[0] + offset]}"
