"""The simple robots: uniform random, pebble (random, likes pushing) and greedy."""

from __future__ import annotations

import random

from abalone_pbm.rules import Board, Move

from .base import BaseRobot, SearchInfo, occupied_mask, push_kind
from .evaluation import Evaluator


class RandomRobot(BaseRobot):
    """A uniformly random legal move; no tactics at all (a baseline for benchmarks)."""

    name = "random"
    level = 0
    tactics = False

    def pick(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        max_depth: int | None,
        info: SearchInfo,
    ) -> Move:
        info.reason = "random"
        return rng.choice(moves)


class PebbleRobot(BaseRobot):
    """Random among the moves, weighted towards pushes and most of all ejections."""

    name = "pebble"
    level = 1
    WEIGHTS = (1, 6, 30)  # quiet move, push, ejection

    def pick(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        max_depth: int | None,
        info: SearchInfo,
    ) -> Move:
        occupied = occupied_mask(board)
        weights = [self.WEIGHTS[push_kind(occupied, m)] for m in moves]
        info.reason = "weighted random"
        return rng.choices(moves, weights=weights)[0]


class GreedyRobot(BaseRobot):
    """One ply: the move whose resulting position evaluates best (ties at random)."""

    name = "greedy"
    level = 2

    def pick(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        max_depth: int | None,
        info: SearchInfo,
    ) -> Move:
        side = board.rules.side_of(board.turn)
        evaluator = Evaluator(board, side)
        order = list(moves)
        rng.shuffle(order)
        best_move = order[0]
        best_value: int | None = None
        for move in order:
            board.push(move)
            try:
                value = evaluator.value(board)
            finally:
                board.pop()
            info.nodes += 1
            if best_value is None or value > best_value:
                best_value, best_move = value, move
        info.depth = 1
        info.value = best_value
        info.reason = "greedy"
        return best_move
