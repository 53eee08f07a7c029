"""Computer players: a pure library over the rules core (no I/O, no other imports).

    >>> from abalone_pbm.rules import Board
    >>> from abalone_pbm.robots import ROBOTS
    >>> board = Board.from_layout("standard")
    >>> move = ROBOTS["boulder"].create().choose_move(board, 1.0, rng_seed=7)
    >>> move in board.legal_moves
    True

``ROBOTS`` holds the robots that become registered users (pebble, marble,
boulder, avalanche, from weakest to strongest), each with its default time per
move; :func:`make_engine` also knows the two
benchmark baselines ``random`` and ``greedy``, the first boulder, ``boulder-1``, and
``boulder-multi-1``: boulder whose 3-6 player search has no quiescence (as before it had).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .base import BaseRobot, Robot, SearchInfo, safe_moves, soft_deadline, winning_moves
from .boulder import BoulderRobot
from .evaluation import WIN, Evaluator
from .search import AlphaBeta, SearchRobot
from .simple import GreedyRobot, PebbleRobot, RandomRobot


@dataclass(frozen=True)
class RobotSpec:
    """A robot that can be registered as a user."""

    name: str
    level: int
    description: str
    factory: Callable[[], BaseRobot]
    #: Seconds it thinks per move unless the server is told otherwise.
    budget: float = 5.0

    def create(self) -> BaseRobot:
        robot = self.factory()
        robot.name = self.name
        return robot


def _pebble() -> BaseRobot:
    return PebbleRobot()


def _marble() -> BaseRobot:
    return GreedyRobot()


def _boulder() -> BaseRobot:
    return BoulderRobot()


def _avalanche() -> BaseRobot:
    return BoulderRobot()


def _boulder_multi_1() -> BaseRobot:
    return BoulderRobot(multi_quiescence=False)


#: The most seconds a robot may be given for one move.
MAX_BUDGET = 60.0

ROBOTS: dict[str, RobotSpec] = {
    spec.name: spec
    for spec in (
        RobotSpec(
            "pebble",
            1,
            "Beginner: plays at random but loves to push; takes a win when it sees one. Instant.",
            _pebble,
            budget=1.0,
        ),
        RobotSpec(
            "marble",
            2,
            "Casual: looks one move ahead for the best-looking position. Well under a second.",
            _marble,
            budget=1.0,
        ),
        RobotSpec(
            "boulder",
            3,
            "Strong: searches several moves deep (principal variation, quiescence, "
            "best-reply with many players); a few seconds a move.",
            _boulder,
            budget=5.0,
        ),
        RobotSpec(
            "avalanche",
            4,
            "Strongest: boulder's search given correspondence time (half a minute a move "
            "by default), so it looks much deeper.",
            _avalanche,
            budget=30.0,
        ),
    )
}

#: Engines by name for benchmarks: the registered robots plus the baselines.
ENGINES: dict[str, Callable[[], BaseRobot]] = {
    "random": RandomRobot,
    "greedy": GreedyRobot,
    #: The boulder of before the bitboard search, for matches against it.
    "boulder-1": SearchRobot,
    #: Boulder with the multi-player search of before its quiescence.
    "boulder-multi-1": _boulder_multi_1,
    **{name: spec.create for name, spec in ROBOTS.items()},
}


def make_engine(name: str) -> BaseRobot:
    """A fresh robot by name (a registered robot or ``random``/``greedy``)."""
    try:
        factory = ENGINES[name.lower()]
    except KeyError:
        raise ValueError(f"unknown robot {name!r}; known: {', '.join(ENGINES)}") from None
    return factory()


def get_robot(name: str) -> BaseRobot:
    """A fresh instance of a registered robot."""
    try:
        return ROBOTS[name.lower()].create()
    except KeyError:
        raise ValueError(f"unknown robot {name!r}; known: {', '.join(ROBOTS)}") from None


__all__ = [
    "AlphaBeta",
    "BaseRobot",
    "BoulderRobot",
    "MAX_BUDGET",
    "ENGINES",
    "Evaluator",
    "GreedyRobot",
    "PebbleRobot",
    "ROBOTS",
    "RandomRobot",
    "Robot",
    "RobotSpec",
    "SearchInfo",
    "SearchRobot",
    "WIN",
    "get_robot",
    "make_engine",
    "safe_moves",
    "soft_deadline",
    "winning_moves",
]
