"""Knockout by mini-matches: a bracket seeded by rating, each pairing a match of a few
games with the colours swapped, a decider when the match is level.

* The bracket has the next power of two places; seeds beyond the entrants are byes, so
  the best seeds get them (seed 1 meets the last seed, as tennis draws do).
* A match of ``games`` games starts all of them at once: in the first the higher seed
  moves first, then the colours alternate.
* The bracket moves on match by match, not round by round: a level match starts its
  decider as soon as its games are over, and the winners of matches 1 and 2 (3 and 4,
  ...) meet as soon as both are known, so one slow game holds up only its own branch.
* Level after them: a decider, the lower seed moving first (the higher seed had the
  first move in the first game); level again: a second decider the other way round.
  Still level after :data:`MOST_DECIDERS`: the better marble difference in the match
  goes through, then the higher seed, so a match always ends.
* A player who has left (withdrawn or disqualified) goes no further: their opponent
  wins the match whatever its score, and one paired with them in a later round goes
  through without playing (a bye), as seeds beyond the entrants do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .results import Pairing, Result

#: Deciders played before the marble difference and then the seeding decide.
MOST_DECIDERS = 2


def bracket_order(size: int) -> list[int]:
    """Seeds in bracket order for a power-of-two ``size``: 8 -> 1 8 4 5 2 7 3 6."""
    if size < 1 or size & (size - 1):
        raise ValueError("a bracket has a power of two places")
    order = [1]
    while len(order) < size:
        total = len(order) * 2 + 1
        order = [seed for s in order for seed in (s, total - s)]
    return order


def bracket_size(entrants: int) -> int:
    size = 1
    while size < entrants:
        size *= 2
    return size


def rounds_needed(entrants: int) -> int:
    return max(1, bracket_size(entrants).bit_length() - 1)


@dataclass(frozen=True)
class Match:
    """One pairing of a knockout round; ``higher`` is the better seed, ``lower`` None a
    bye (``higher`` goes through without playing)."""

    round: int
    number: int
    higher: str
    lower: str | None


def first_round(seeded: Sequence[str]) -> list[Match]:
    """The first round's matches; ``seeded``: the entrants, best seed first."""
    size = bracket_size(len(seeded))
    order = bracket_order(size)
    out = []
    for number, index in enumerate(range(0, size, 2), start=1):
        a, b = order[index], order[index + 1]
        high, low = min(a, b), max(a, b)
        out.append(Match(1, number, seeded[high - 1],
                         seeded[low - 1] if low <= len(seeded) else None))
    return out


def meeting(a: str, b: str, round_number: int, number: int, seed_of: dict[str, int],
            gone: frozenset[str] = frozenset()) -> Match:
    """Match ``number`` of ``round_number``, between the winners ``a`` and ``b`` of
    matches ``2 * number - 1`` and ``2 * number`` of the round before; paired with one
    who has left (``gone``), a winner has a bye."""
    high, low = sorted((a, b), key=seed_of.__getitem__)
    if (low in gone) != (high in gone):
        return Match(round_number, number, low if high in gone else high, None)
    return Match(round_number, number, high, low)


def matches_in_round(entrants: int, round_number: int) -> int:
    """How many matches ``round_number`` of a knockout of ``entrants`` has (byes count)."""
    return max(1, bracket_size(entrants) >> round_number)


def match_games(match: Match, games: int) -> list[Pairing]:
    """The games a match starts with, colours alternating from the higher seed."""
    if match.lower is None:
        return [Pairing(match.round, match.higher, None, match.number)]
    out = []
    for game in range(games):
        first, second = (match.higher, match.lower) if game % 2 == 0 else (match.lower, match.higher)
        out.append(Pairing(match.round, first, second, match.number))
    return out


@dataclass(frozen=True)
class MatchState:
    """Where a match stands: ``winner`` once decided, else ``decider`` to start (or
    neither while games are still being played)."""

    winner: str | None = None
    decider: Pairing | None = None


def match_state(match: Match, games: int, results: Sequence[Result], unfinished: int,
                gone: frozenset[str] = frozenset()) -> MatchState:
    """The state of ``match`` after ``results`` (its finished games, byes included) with
    ``unfinished`` of its games still running; ``gone``: players who have left."""
    if match.lower is None:
        return MatchState(winner=match.higher)
    if unfinished:
        return MatchState()
    if (match.higher in gone) != (match.lower in gone):
        return MatchState(winner=match.lower if match.higher in gone else match.higher)
    if len(results) < games:
        raise ValueError("a match has fewer finished games than it started")
    higher = sum(r.score_of(match.higher) for r in results)
    lower = sum(r.score_of(match.lower) for r in results)
    if higher != lower:
        return MatchState(winner=match.higher if higher > lower else match.lower)
    deciders = len(results) - games
    if deciders < MOST_DECIDERS:
        # The first decider: the lower seed moves first; the next one the other way.
        first, second = (match.lower, match.higher) if deciders % 2 == 0 \
            else (match.higher, match.lower)
        return MatchState(decider=Pairing(match.round, first, second, match.number))
    marbles = sum(r.marble_difference_of(match.higher) for r in results)
    if marbles != 0:
        return MatchState(winner=match.higher if marbles > 0 else match.lower)
    return MatchState(winner=match.higher)
