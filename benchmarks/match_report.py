"""What every match script prints besides its games: Elo with its interval, the share
of the games won by pushing off six, and the machine's load while the match ran.

The load matters because the robots think on a clock: on a machine busy with other
work they search less deep than their budget would allow, and the side that suffers
more from it (an interpreted engine against a compiled one) loses strength that a
quiet machine would give back.  ``LoadWatch`` samples the one-minute load average
every few seconds from a thread of its own, so a figure can be read with the load
it was measured under.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Sequence


def elo(score: float) -> float:
    """The Elo difference that makes ``score`` (0-1) the expected score."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def score_interval(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """(score, half-width of its 95 % interval) over games scored 1, 1/2, 0."""
    n = wins + draws + losses
    if n == 0:
        return 0.5, math.inf
    score = (wins + draws / 2) / n
    variance = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / n
    return score, 1.96 * math.sqrt(variance / n)


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value) or 0:+d}"  # "or 0": no "-0"


def elo_text(score: float, margin: float) -> str:
    """``Elo +191 [+45, +inf]``: the difference at ``score`` and at its interval's ends."""
    low, high = elo(score - margin), elo(score + margin)
    return f"Elo {_signed(elo(score))} [{_signed(low)}, {_signed(high)}]"


def share_text(won_by_six: int, won: int) -> str:
    """``3/8 (38 %)``: the games won by pushing off six among those won."""
    if not won:
        return "0/0"
    return f"{won_by_six}/{won} ({won_by_six / won:.0%})"


def search_text(depths: Sequence[int] | int, searched: int, nodes: int, seconds: float) -> str:
    """``mean depth 5.21, 131,000 nodes/s`` (or what of it is known)."""
    total_depth = depths if isinstance(depths, int) else sum(depths)
    parts = []
    if searched:
        parts.append(f"mean depth {total_depth / searched:.2f}")
    if seconds > 0 and nodes > 0:
        parts.append(f"{nodes / seconds:,.0f} nodes/s")
    return ", ".join(parts) if parts else "no search figures"


class LoadWatch:
    """Samples the machine's one-minute load average while a match runs."""

    def __init__(self, every: float = 5.0) -> None:
        self.every = every
        self.samples: list[float] = [os.getloadavg()[0]]
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> str:
        """Stop sampling; one line: the load over the run and the machine's cores."""
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])
        return self.text()

    def text(self) -> str:
        samples = self.samples
        mean = sum(samples) / len(samples)
        return (
            f"machine load (1-minute average, {len(samples)} samples over "
            f"{time.monotonic() - self.started:.0f} s): mean {mean:.2f}, min {min(samples):.2f}, "
            f"max {max(samples):.2f} on {os.cpu_count()} cores"
        )
