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
    """

    __slots__ = ("cells", "direction")

    def __init__(self, cells: int, direction: int) -> None:
        self.cells = cells
        self.direction = direction

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

    @property
    def is_inline(self) -> bool:
        """True when the line moves along itself (a single marble always does)."""
        cells = iter_bits(self.cells)
        return len(cells) == 1 or cells[1] - cells[0] == abs(OFFSETS[self.direction])

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
