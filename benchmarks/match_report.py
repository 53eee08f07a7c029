"""What every match script prints besides its games: Elo with its interval, the share
of the games won by pushing off six (with its interval), and the machine's load while
the match ran.

A run of eight or sixteen games says little about a share: 8 of 16 won by six has a
95 % interval of 28-72 %.  ``python benchmarks/match_report.py 8/16 3/16`` says whether
two runs' shares differ more than chance would make them (Fisher's exact test), the
question to ask before a setting is kept or dropped on the strength of one run.

The load matters because the robots think on a clock: on a machine busy with other
work they search less deep than their budget would allow, and the side that suffers
more from it (an interpreted engine against a compiled one) loses strength that a
quiet machine would give back.  ``LoadWatch`` samples the one-minute load average
every few seconds from a thread of its own, so a figure can be read with the load
it was measured under.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
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


def share_interval(hits: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson 95 % interval of a share ``hits``/``games`` (it stays inside 0-1 and
    is not empty at 0 or at all games, unlike the normal approximation)."""
    if games <= 0:
        return 0.0, 1.0
    p = hits / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def share_of_games_text(hits: int, games: int) -> str:
    """``8 of 16 games (50 %, 95 % interval 28-72 %)``."""
    if games <= 0:
        return "0 of 0 games"
    low, high = share_interval(hits, games)
    return (f"{hits} of {games} games ({100 * hits / games:.0f} %, 95 % interval "
            f"{100 * low:.0f}-{100 * high:.0f} %)")


def fisher_exact(a: int, n: int, b: int, m: int) -> float:
    """The two-sided p-value of Fisher's exact test that ``a`` of ``n`` and ``b`` of ``m``
    come from one share: the chance, with the margins fixed, of a table at most as
    likely as the one seen."""
    if not (0 <= a <= n and 0 <= b <= m):
        raise ValueError("a share's hits lie between 0 and its games")
    hits, total = a + b, n + m

    def chance(x: int) -> float:
        return math.comb(n, x) * math.comb(m, hits - x) / math.comb(total, hits)

    seen = chance(a)
    low, high = max(0, hits - m), min(n, hits)
    # A small tolerance: tables exactly as likely as the one seen count, despite rounding.
    return min(1.0, sum(p for x in range(low, high + 1) if (p := chance(x)) <= seen * (1 + 1e-9)))


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


def _share(text: str) -> tuple[int, int]:
    hits, _, games = text.partition("/")
    try:
        h, g = int(hits), int(games)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no share: write hits/games, as 8/16")
    if g <= 0 or not 0 <= h <= g:
        raise argparse.ArgumentTypeError(f"{text!r}: hits lie between 0 and the games, games above 0")
    return h, g


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Two runs' shares (of games won by six, say): each with its 95 % "
                    "interval, and Fisher's exact test of whether they differ.")
    parser.add_argument("first", type=_share, help="hits/games of one run, as 8/16")
    parser.add_argument("second", type=_share, help="hits/games of the other run")
    args = parser.parse_args(argv)
    (a, n), (b, m) = args.first, args.second
    print(f"first:  {share_of_games_text(a, n)}")
    print(f"second: {share_of_games_text(b, m)}")
    print(f"Fisher's exact test, two-sided: p = {fisher_exact(a, n, b, m):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
