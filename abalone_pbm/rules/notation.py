"""Reading pbmserv move notation and explaining, in a player's words, why a move fails.

Two forms (case-insensitive, blanks allowed):

* ``rc1,rc2`` moves the marble on rc1 to the adjacent rc2.  When rc2 holds one of
  the mover's own marbles it is the official trailing-marble notation: the line of
  own marbles that starts at rc1 and points at rc2 moves one step that way.
* ``rc1-rc2,rc3`` moves the line rc1..rc2 (two or three marbles).  The direction is
  rc1->rc3 if rc3 is next to rc1, otherwise rc2->rc3.
"""

from __future__ import annotations

import re
from typing import Iterator, Protocol

from .geometry import BOARD_MASK, CELL_BY_NAME, CELL_NAMES, OFFSETS, direction_between, opposite
from .moves import GameOverError, IllegalMoveError, InvalidMoveError, Move
from .variants import Variant

_MOVE = re.compile(r"([a-z])(\d{1,2})(?:-([a-z])(\d{1,2}))?,([a-z])(\d{1,2})")
_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
SYNTAX_HINT = "write a move as c5,d5 (one marble) or c3-c5,d4 (a line of two or three)"


def _word(n: int) -> str:
    return _WORDS[n] if n < len(_WORDS) else str(n)


def _cell(row: str, number: str) -> int:
    name = f"{row}{int(number)}"
    if name not in CELL_BY_NAME:
        raise InvalidMoveError(f"{name} is not a cell of the board")
    return CELL_BY_NAME[name]


class MoveReadingBoard(Protocol):
    """What reading a move needs to know of a position (``board.Board`` has it all).

    The board module calls :func:`parse_move` for ``Board.parse_move``; this protocol
    lets notation stand below it without knowing the class.
    """

    @property
    def turn(self) -> int: ...

    @property
    def players(self) -> int: ...

    @property
    def variant(self) -> Variant | None: ...

    def is_game_over(self) -> bool: ...

    def side_masks(self, seat: int) -> tuple[int, int, int]: ...

    def owner(self, cell: int) -> int | None: ...

    def is_treasure(self, cell: int) -> bool: ...

    def repeats(self, move: Move) -> bool: ...

    def generate_legal_moves(self) -> Iterator[Move]: ...


class _Reader:
    """Knows who is who on the board from the point of view of the player to move."""

    def __init__(self, board: MoveReadingBoard) -> None:
        self.board = board
        self.seat = board.turn
        own, friends, enemy = board.side_masks(self.seat)
        self.own, self.friends, self.enemy = own, friends, enemy

    def describe(self, cell: int) -> str:
        """What stands on a cell, as a player would say it."""
        text = self._describe(cell)
        if self.board.is_treasure(cell):
            text = text.replace("marble", "treasure")
        return text

    def _describe(self, cell: int) -> str:
        if self.own >> cell & 1:
            return "your own marble"
        if self.friends >> cell & 1:
            return "your partner's marble"
        owner = self.board.owner(cell)
        if owner is None:
            return "nothing"
        if owner == 0:
            variant = self.board.variant
            return variant.neutral if variant is not None and variant.neutral else "a neutral marble"
        if self.board.players == 2:
            return "your opponent's marble"
        return f"player {owner}'s marble"

    def require_own(self, cell: int, allow_partner: bool = False) -> None:
        if self.own >> cell & 1 or (allow_partner and self.friends >> cell & 1):
            return
        name = CELL_NAMES[cell]
        if self.board.owner(cell) is None:
            raise IllegalMoveError(f"{name} is empty")
        raise IllegalMoveError(f"{name} holds {self.describe(cell)}, not one of yours")

    def check_inline(self, line: list[int], direction: int) -> Move:
        """``line`` runs rear to front; it moves one step along itself."""
        o = OFFSETS[direction]
        rear = line[0]
        self.require_own(rear)
        has_partner = False
        for cell in line[1:]:
            self.require_own(cell, allow_partner=True)
            has_partner = has_partner or not self.own >> cell & 1
        front = line[-1]
        target = front + o
        if not BOARD_MASK >> target & 1:
            raise IllegalMoveError(f"{CELL_NAMES[front]} would leave the board")
        tname = CELL_NAMES[target]
        occupant = self.board.owner(target)
        if occupant is None:
            if has_partner:
                raise IllegalMoveError(
                    "your partner's marbles may only move with yours in a push, "
                    f"and {tname} is empty"
                )
        elif self.own >> target & 1 or self.friends >> target & 1:
            raise IllegalMoveError(f"{tname} is occupied by {self.describe(target)}")
        elif not self.enemy >> target & 1:
            if self.board.owner(target) == 0:  # the pillar
                raise IllegalMoveError(
                    f"{tname} holds {self.describe(target)}: nothing can move onto it or push it"
                )
            raise IllegalMoveError(f"{tname} holds {self.describe(target)}, which cannot be pushed")
        else:
            if len(line) == 1:
                raise IllegalMoveError(
                    f"{tname} is occupied by {self.describe(target)}; one marble cannot push"
                )
            variant = self.board.variant
            ball_first_only = variant is not None and variant.neutral_pushed_only_first
            run, after = 0, target
            while self.enemy >> after & 1:
                if run and ball_first_only and self.board.owner(after) == 0:
                    raise IllegalMoveError(
                        f"the push is blocked by {self.describe(after)} on {CELL_NAMES[after]}: "
                        f"behind {self.describe(after - o)} it is an obstacle "
                        "(it is pushed only when it comes first)"
                    )
                run += 1
                after += o
            if run >= len(line):
                raise IllegalMoveError(
                    f"{_word(len(line))} cannot push {_word(run)} (the marbles from {tname})"
                )
            if BOARD_MASK >> after & 1 and self.board.owner(after) is not None:
                raise IllegalMoveError(
                    f"the push is blocked by {self.describe(after)} on {CELL_NAMES[after]}"
                )
        cells = 0
        for cell in line:
            cells |= 1 << cell
        return Move(cells, direction)

    def check_side_step(self, line: list[int], direction: int) -> Move:
        o = OFFSETS[direction]
        for cell in line:
            self.require_own(cell)
        for cell in line:
            target = cell + o
            if not BOARD_MASK >> target & 1:
                raise IllegalMoveError(f"{CELL_NAMES[cell]} would leave the board")
            occupant = self.board.owner(target)
            if occupant is None:
                continue
            tname = CELL_NAMES[target]
            if self.enemy >> target & 1:
                raise IllegalMoveError(
                    f"{tname} is occupied by {self.describe(target)}; a side-step cannot push"
                )
            raise IllegalMoveError(f"{tname} is occupied by {self.describe(target)}")
        cells = 0
        for cell in line:
            cells |= 1 << cell
        return Move(cells, direction)


def read_cells(text: str) -> tuple[int, int | None, int]:
    """Split a move text into (rc1, rc2 or None, rc3) cells, checking only the syntax."""
    compact = re.sub(r"\s+", "", text).lower()
    match = _MOVE.fullmatch(compact)
    if not match:
        raise InvalidMoveError(f'"{text.strip()}" is not a move; {SYNTAX_HINT}')
    r1, n1, r2, n2, r3, n3 = match.groups()
    first = _cell(r1, n1)
    second = _cell(r2, n2) if r2 else None
    last = _cell(r3, n3)
    return first, second, last


def parse_move(board: MoveReadingBoard, text: str) -> Move:
    """Read ``text`` as a move for the player to move on ``board`` and check it."""
    first, second, last = read_cells(text)
    if board.is_game_over():
        raise GameOverError("the game has ended")
    reader = _Reader(board)
    if second is None or second == first:
        move = _read_single(reader, first, last)
    else:
        move = _read_line(reader, first, second, last)
    if board.repeats(move):
        raise IllegalMoveError(
            "that would repeat a position you created before, which the ko rule forbids"
        )
    # A safety net (the checks above agree); not a repetition, as just checked.
    if move not in board.generate_legal_moves():
        raise IllegalMoveError(f"{move} is not a legal move here")
    return move


def _read_single(reader: _Reader, start: int, to: int) -> Move:
    direction = direction_between(start, to)
    if direction is None:
        raise IllegalMoveError(f"{CELL_NAMES[start]} and {CELL_NAMES[to]} are not next to each other")
    reader.require_own(start)
    mine = reader.own | reader.friends
    if not mine >> to & 1:
        return reader.check_inline([start], direction)
    # Trailing-marble notation: the line of own marbles from start towards `to`.
    line, cell = [], start
    while mine >> cell & 1 and BOARD_MASK >> cell & 1:
        line.append(cell)
        cell += OFFSETS[direction]
    if len(line) > 3:
        raise IllegalMoveError(
            f"{CELL_NAMES[start]},{CELL_NAMES[to]} would move {len(line)} marbles "
            f"({CELL_NAMES[line[0]]}-{CELL_NAMES[line[-1]]}); at most three move at once"
        )
    return reader.check_inline(line, direction)


def _read_line(reader: _Reader, first: int, second: int, last: int) -> Move:
    axis, length = None, 0
    for d, o in enumerate(OFFSETS):
        for steps in (1, 2):
            if second - first == steps * o:
                axis, length = d, steps + 1
    n1, n2 = CELL_NAMES[first], CELL_NAMES[second]
    if axis is None:
        raise IllegalMoveError(f"{n1} and {n2} do not form a straight line of two or three marbles")
    line = [first + i * OFFSETS[axis] for i in range(length)]
    direction = direction_between(first, last)
    if direction is None:
        direction = direction_between(second, last)
    if direction is None:
        raise IllegalMoveError(f"{CELL_NAMES[last]} is not next to {n1} or {n2}")
    if direction == axis:
        return reader.check_inline(line, direction)
    if direction == opposite(axis):
        return reader.check_inline(line[::-1], direction)
    return reader.check_side_step(line, direction)
