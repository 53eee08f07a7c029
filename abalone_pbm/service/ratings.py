"""pbmserv-style ratings: start at 1600, provisional below 20 games, then Elo with K = 32.

In a game of more than two, each player is rated against the average rating of the
others (of the opposing side in team games); winners score 1, losers 0, a draw 1/2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

START_RATING = 1600.0
PROVISIONAL_GAMES = 20
K_FACTOR = 32.0


@dataclass(frozen=True)
class RatingChange:
    seat: int
    before: float
    after: float
    provisional: bool

    @property
    def delta(self) -> float:
        return self.after - self.before


def expected_score(rating: float, opponent: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def new_rating(rating: float, games: int, opponent: float, score: float) -> float:
    """One player's rating after a game against an opponent (or an average) of ``opponent``.

    While provisional the rating is a running performance average: each game counts
    as the opponent's rating +400 for a win, -400 for a loss, +0 for a draw, and the
    rating held before counts as one more game (so a first win gives 1800, not 2000).
    """
    if games < PROVISIONAL_GAMES:
        performance = opponent + 400.0 * (2.0 * score - 1.0)
        return (rating * (games + 1) + performance) / (games + 2)
    return rating + K_FACTOR * (score - expected_score(rating, opponent))


def rate_game(
    ratings: dict[int, tuple[float, int]],
    sides: dict[int, int],
    winners: tuple[int, ...],
) -> list[RatingChange]:
    """Rating changes for every seat.

    ``ratings`` maps seat -> (rating, rated games so far); ``sides`` maps seat -> side
    (partners share a side); ``winners`` are the winning seats, empty for a draw.
    """
    changes = []
    for seat, (rating, games) in sorted(ratings.items()):
        others = [r for s, (r, _) in ratings.items() if sides[s] != sides[seat]]
        if not others:
            continue
        opponent = sum(others) / len(others)
        if not winners:
            score = 0.5
        else:
            score = 1.0 if seat in winners else 0.0
        after = new_rating(rating, games, opponent, score)
        changes.append(RatingChange(seat, rating, after, games < PROVISIONAL_GAMES))
    return changes
