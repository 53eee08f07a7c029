"""Round robin schedules by the circle method.

Player 1 stays put and the others turn one place a round, so every pairing meets once a
cycle.  Colours by the parity rule: of players i < j (in entry order) the first to move
is i when i + j is odd, else j; every player then moves first in half their games of a
cycle (one more or fewer with an odd count).  A double round robin plays the cycle
twice with the colours swapped, so every pairing is played once from each side (the
first player has the edge in Abalone).  With an odd number of players one rests each
round: a rest is no game and scores nothing (unlike a Swiss bye).
"""

from __future__ import annotations

from collections.abc import Sequence

from .results import Pairing


def circle_rounds(players: Sequence[str]) -> list[list[tuple[str, str]]]:
    """One cycle: for each round the pairs that meet, as (first, second) by colour."""
    index = {p: i for i, p in enumerate(players)}
    if len(index) != len(players):
        raise ValueError("a player is listed twice")
    seats: list[str | None] = list(players)
    if len(seats) % 2:
        seats.append(None)
    count = len(seats)
    if count < 2:
        return []
    rotating = seats[1:]
    rounds: list[list[tuple[str, str]]] = []
    for _ in range(count - 1):
        line = [seats[0], *rotating]
        pairs: list[tuple[str, str]] = []
        for board in range(count // 2):
            a, b = line[board], line[count - 1 - board]
            if a is None or b is None:
                continue
            low, high = sorted((a, b), key=index.__getitem__)
            first_is_low = (index[low] + index[high]) % 2 == 1
            pairs.append((low, high) if first_is_low else (high, low))
        rounds.append(pairs)
        rotating = [rotating[-1], *rotating[:-1]]
    return rounds


def round_robin(players: Sequence[str], cycles: int = 2, *, division: int = 0,
                first_round: int = 1) -> list[Pairing]:
    """Every game of a round robin of ``cycles`` cycles (2: double, colours swapped in
    the second), numbered by round from ``first_round``."""
    if cycles < 1:
        raise ValueError("a round robin has at least one cycle")
    one_cycle = circle_rounds(players)
    out: list[Pairing] = []
    for cycle in range(cycles):
        for offset, pairs in enumerate(one_cycle):
            number = first_round + cycle * len(one_cycle) + offset
            for match, (first, second) in enumerate(pairs, start=1):
                if cycle % 2:
                    first, second = second, first
                out.append(Pairing(number, first, second, match, division))
    return out
