"""The robot interface, the time budget and the immediate tactics every robot applies.

A robot is asked for one move: :meth:`Robot.choose_move` gets the board (which it
must leave as it found it), a time budget in seconds and an optional seed.  Every
robot here works on ``board.copy()``, chooses among ``board.generate_legal_moves()``
only, and so can never return an illegal move.

Before a robot's own policy runs, :class:`BaseRobot` applies two rules of thumb:

1. a move that wins at once (pushes off the last marble needed, or wins on the move
   limit) is played;
2. moves after which the next player can win at once are dropped, as long as some
   other move avoids that.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import gc
import random
import time
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from abalone_pbm.rules import Board, GameOverError, Move
from abalone_pbm.rules.geometry import BOARD_MASK, OFFSETS

#: Fraction of the budget kept back, and the most kept back, for returning in time.
SAFETY_FRACTION = 0.25
SAFETY_FIXED = 0.05
SAFETY_PER_SECOND = 0.1


def soft_deadline(
    start: float,
    budget_seconds: float,
    safety_fraction: float = SAFETY_FRACTION,
    safety_per_second: float = SAFETY_PER_SECOND,
) -> float:
    """The moment (``time.perf_counter`` scale) by which the thinking must stop;
    at most ``safety_fraction`` of the budget is kept back for returning in time."""
    budget = max(0.0, budget_seconds)
    margin = min(safety_fraction * budget, SAFETY_FIXED + safety_per_second * budget)
    return start + budget - margin


@dataclass
class SearchInfo:
    """What a robot found out while choosing its last move (for benchmarks and logs)."""

    move: Move | None = None
    value: int | None = None
    depth: int = 0
    nodes: int = 0
    elapsed: float = 0.0
    reason: str = ""
    depths: list[int] = field(default_factory=list)

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.elapsed if self.elapsed > 0 else 0.0


@runtime_checkable
class Robot(Protocol):
    """A computer player."""

    name: str
    last_info: SearchInfo | None

    def choose_move(
        self,
        board: Board,
        budget_seconds: float,
        rng_seed: int | None = None,
        *,
        max_depth: int | None = None,
    ) -> Move:
        """A legal move for the player to move on ``board``, chosen within the budget.

        The board is left as it was.  ``rng_seed`` fixes the tie-breaking; with
        ``max_depth`` a searching robot searches exactly that deep and ignores the
        clock, so its answer depends on the position, seed and depth only.
        Raises ``GameOverError`` when the game has ended.
        """
        ...


def move_key(move: Move) -> int:
    """An integer that identifies a move (cells and direction) cheaply."""
    return move.cells << 3 | move.direction


def push_kind(occupied: int, move: Move) -> int:
    """0 for a move into empty cells, 1 for a push, 2 for a push that ejects a marble.

    A legal side-step never has a marble in front of its leading marble, so the
    cell ahead of the highest (or lowest) bit tells in-line pushes apart.
    """
    cells = move.cells
    o = OFFSETS[move.direction]
    if o > 0:
        t = cells.bit_length() - 1 + o
    else:
        t = (cells & -cells).bit_length() - 1 + o
    if not (occupied >> t) & 1:
        return 0
    t += o
    while (occupied >> t) & 1:
        t += o
    return 1 if (BOARD_MASK >> t) & 1 else 2


def occupied_mask(board: Board) -> int:
    occupied = 0
    for seat in range(1, board.players + 1):
        occupied |= board.marbles(seat)
    return occupied


def _wins_for(board: Board, side: int) -> bool:
    outcome = board.outcome()
    return (
        outcome is not None
        and not outcome.draw
        and board.rules.side_of(outcome.winners[0]) == side
    )


def _loses_for(board: Board, side: int) -> bool:
    outcome = board.outcome()
    return (
        outcome is not None
        and not outcome.draw
        and board.rules.side_of(outcome.winners[0]) != side
    )


def _limit_within(board: Board, plies: int) -> bool:
    limit = board.rules.movelimit
    return limit is not None and board.ply + plies >= limit


def winning_moves(board: Board, moves: list[Move]) -> list[Move]:
    """The moves that end the game at once with the mover's side winning."""
    side = board.rules.side_of(board.turn)
    check_all = _limit_within(board, 1)
    occupied = occupied_mask(board)
    seat = board.turn
    before = board.ejected(seat)
    out = []
    for move in moves:
        if not check_all and push_kind(occupied, move) != 2:
            continue
        board.push(move)
        try:
            if (check_all or board.ejected(seat) > before) and _wins_for(board, side):
                out.append(move)
        finally:
            board.pop()
    return out


def opponent_can_win_now(board: Board, side: int) -> bool:
    """Whether the player to move (an opponent of ``side``) can win with one move."""
    if board.is_game_over():
        return False
    mover = board.turn
    rules = board.rules
    if rules.side_of(mover) == side:
        return False
    check_all = _limit_within(board, 1)
    if not check_all:
        score = board.side_score(rules.side_of(mover))
        if score + 1 < rules.target:
            return False
    occupied = occupied_mask(board)
    before = board.ejected(mover)
    for move in board.generate_legal_moves():
        if not check_all and push_kind(occupied, move) != 2:
            continue
        board.push(move)
        try:
            if (check_all or board.ejected(mover) > before) and _loses_for(board, side):
                return True
        finally:
            board.pop()
    return False


def _threat_possible(board: Board) -> bool:
    """Cheap test: could any opponent win with its next move at all?"""
    rules = board.rules
    if _limit_within(board, 2):
        return True
    mine = rules.side_of(board.turn)
    return any(
        board.side_score(x) + 1 >= rules.target for x in range(rules.sides) if x != mine
    )


def safe_moves(
    board: Board, moves: list[Move], deadline: float | None = None
) -> tuple[list[Move], bool]:
    """The moves after which the next player cannot win at once.

    Returns ``(moves, complete)``; when no move is safe all moves are returned.
    With a deadline the check may stop early (``complete`` is then False) and the
    moves not yet checked are kept.
    """
    if not _threat_possible(board):
        return moves, True
    side = board.rules.side_of(board.turn)
    safe: list[Move] = []
    for i, move in enumerate(moves):
        if deadline is not None and time.perf_counter() > deadline:
            return (safe + moves[i:]) or moves, False
        board.push(move)
        try:
            if not _wins_for(board, side) and opponent_can_win_now(board, side):
                continue
        finally:
            board.pop()
        safe.append(move)
    return (safe or moves), True


class BaseRobot(ABC):
    """Shared frame: copy the board, take immediate wins, avoid immediate losses.

    Subclasses implement :meth:`pick`, which gets the working copy of the board,
    the candidate moves (never empty), the deadline (None: ignore the clock) and
    a seeded random generator.
    """

    name = "robot"
    level = 0
    #: False: skip the immediate-win and immediate-loss checks (the random baseline).
    tactics = True
    #: The most of the budget kept back for returning in time.
    safety_fraction = SAFETY_FRACTION
    #: ... and at most this much of each second of it beyond a fixed twentieth.
    safety_per_second = SAFETY_PER_SECOND

    def __init__(self) -> None:
        self.last_info: SearchInfo | None = None

    def choose_move(
        self,
        board: Board,
        budget_seconds: float,
        rng_seed: int | None = None,
        *,
        max_depth: int | None = None,
    ) -> Move:
        start = time.perf_counter()
        # No cyclic garbage collection while thinking: the searches make no cycles, and
        # a full collection over their tables could take the time the budget allows.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._choose(board, budget_seconds, rng_seed, max_depth, start)
        finally:
            if collecting:
                gc.enable()

    def _choose(
        self,
        board: Board,
        budget_seconds: float,
        rng_seed: int | None,
        max_depth: int | None,
        start: float,
    ) -> Move:
        deadline = (
            None
            if max_depth is not None
            else soft_deadline(
                start, budget_seconds, self.safety_fraction, self.safety_per_second
            )
        )
        work = board.copy()
        legal = list(work.generate_legal_moves())
        if not legal:
            raise GameOverError("the game has ended; there is no move to choose")
        rng = random.Random(rng_seed)
        info = SearchInfo()
        self.last_info = info
        if len(legal) == 1:
            return self._done(info, legal[0], start, "only move")
        candidates = legal
        if self.tactics:
            wins = winning_moves(work, legal)
            if wins:
                return self._done(info, rng.choice(wins), start, "wins at once")
            candidates, _ = safe_moves(work, legal, deadline)
        move = self.pick(work, candidates, deadline, rng, max_depth, info)
        if move not in legal:  # defensive: never hand back an illegal move
            move = candidates[0]
        return self._done(info, move, start, info.reason or "chosen")

    @staticmethod
    def _done(info: SearchInfo, move: Move, start: float, reason: str) -> Move:
        info.move = move
        info.elapsed = time.perf_counter() - start
        info.reason = reason
        return move

    @abstractmethod
    def pick(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        max_depth: int | None,
        info: SearchInfo,
    ) -> Move:
        """Choose among ``moves`` (legal, and safe when any safe move exists)."""
