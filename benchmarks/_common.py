"""Helpers shared by the benchmark scripts (not a benchmark itself).

- ``REPO``: the checkout; it is put on ``sys.path`` so that ``abalone_pbm`` and the
  test helpers (``tests.pg``, ``tests.service.harness``) import without installing.
- ``quiet_move(board, salt)``: a deterministic legal move that pushes no marble off
  and does not end the game, so a game can go on for as many plies as wanted.
- ``percentile(values, p)`` and ``summary(values)``: figures in milliseconds.
- ``start_postgres()``: the test suite's throw-away PostgreSQL 15 server.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from abalone_pbm.rules import Board  # noqa: E402


@dataclass
class Player:
    """A person the benchmarks play for."""

    userid: str
    password: str

    @property
    def address(self) -> str:
        return f"{self.userid}@example.org"


def quiet_move(board: Board, salt: int = 0) -> str:
    """A legal move that ejects nothing and does not finish the game.

    The legal moves are sorted by their text and tried from index ``salt + ply * 7``
    (mod their number), so that games with different salts differ and one game does
    not just shuffle one marble back and forth. Positions may repeat (fine without
    the ko option).
    """
    moves = sorted(board.generate_legal_moves(), key=str)
    if not moves:
        raise RuntimeError(f"no legal move in {board.position()}")
    before = board.ejected_counts
    start = (salt + board.ply * 7) % len(moves)
    for offset in range(len(moves)):
        move = moves[(start + offset) % len(moves)]
        board.push(move)
        quiet = board.ejected_counts == before and board.outcome() is None
        board.pop()
        if quiet:
            return str(move)
    return str(moves[start])


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100) by linear interpolation; nan for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * p / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def machine() -> str:
    """One line about the machine: CPUs, Python, and how busy it is already."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    cpus = os.cpu_count()
    usable_text = f" ({usable} usable)" if usable is not None and usable != cpus else ""
    try:
        load = "; load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = ""
    return (f"CPUs: {cpus}{usable_text}; Python {sys.version.split()[0]} "
            f"({sys.implementation.name}); {sys.platform}{load}")


def command_line() -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])


def start_postgres() -> Any:
    """Start the test suite's throw-away PostgreSQL server (``tests/pg.py``).

    Returns the started ``PostgresServer``; raises ``PostgresUnavailable`` with the
    reason when it cannot be started. Call ``.stop()`` when done (also at exit).
    """
    from tests.pg import PostgresServer

    return PostgresServer().start()
