"""A position analysed by the strongest robot: its evaluation and the line it expects.

:func:`analyse` searches a position the way ``boulder`` would choose its move there
(the same engine for the same kind of game) and reads back:

* the value from the point of view of the player (or team) to move, in thousandths
  of a marble, or the number of moves to a forced win or loss;
* the best line: the chosen move and, in two-player games, the replies the search
  expects after it (read from its transposition table), each with what it does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from abalone_pbm.rules import Board, Move

from .boulder import BoulderRobot
from .duel import WIN_THRESHOLD, DuelSearch
from .evaluation import WIN

#: The longest line given.
MAX_LINE = 8


@dataclass(frozen=True)
class LineMove:
    """One move of the expected line: who plays it, the move and what it does."""

    ply: int
    seat: int
    move: str
    #: "pushes a marble off", "pushes" or "" (a move into empty cells).
    effect: str


@dataclass(frozen=True)
class Analysis:
    """What the search found for the player to move (``seat``)."""

    seat: int
    #: Thousandths of a marble from the side to move (None: nothing was searched).
    value: int | None
    #: Moves (plies) to a forced result: > 0 the side to move wins, < 0 it loses.
    forced: int | None
    depth: int
    nodes: int
    seconds: float
    line: list[LineMove] = field(default_factory=list)


def analyse(board: Board, seconds: float, seed: int = 0) -> Analysis:
    """Search ``board`` (left as it is) for ``seconds`` and explain the result."""
    robot = BoulderRobot()
    move = robot.choose_move(board, seconds, rng_seed=seed)
    info = robot.last_info
    assert info is not None
    value = info.value
    forced = None
    if value is not None and abs(value) > WIN_THRESHOLD:
        plies = WIN - abs(value)
        forced = plies if value > 0 else -plies
    if info.reason == "wins at once":
        value, forced = WIN - 1, 1
    work = board.copy()
    line = [_line_move(work, move)]
    work.push(move)
    search = getattr(robot, "last_search", None) if info.depths else None
    if isinstance(search, DuelSearch):
        _follow_table(search, work, line)
    return Analysis(
        seat=board.turn,
        value=value,
        forced=forced,
        depth=info.depth,
        nodes=info.nodes,
        seconds=info.elapsed,
        line=line,
    )


def _line_move(board: Board, move: Move) -> LineMove:
    seat = board.turn
    before_ejected = board.ejected(seat)
    others = [board.marbles(s) for s in range(1, board.players + 1) if s != seat]
    board.push(move)
    try:
        if board.ejected(seat) > before_ejected:
            effect = "pushes a marble off"
        elif [board.marbles(s) for s in range(1, board.players + 1) if s != seat] != others:
            effect = "pushes"
        else:
            effect = ""
    finally:
        board.pop()
    return LineMove(board.ply + 1, seat, str(move), effect)


def _follow_table(search: DuelSearch, board: Board, line: list[LineMove]) -> None:
    """Extend ``line`` by the table's best move from each position, while it has one."""
    seen = set()
    while len(line) < MAX_LINE and board.outcome() is None:
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        entry = search.table.get((me, op))
        if entry is None or entry[3] is None or (me, op) in seen:
            return
        seen.add((me, op))
        diff = entry[3][1]
        found = None
        for move in board.legal_moves:
            board.push(move)
            changed = board.marbles(seat) ^ me
            board.pop()
            if changed == diff:
                found = move
                break
        if found is None:
            return
        line.append(_line_move(board, found))
        board.push(found)
