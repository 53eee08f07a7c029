"""The value objects of a tournament: who plays whom, and what a finished pairing scored.

Pure data, no I/O: the service layer turns its rows into these and back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The formats a tournament can have.
Format = Literal["roundrobin", "swiss", "knockout", "championship"]
FORMATS: tuple[Format, ...] = ("roundrobin", "swiss", "knockout", "championship")

#: How a tournament game was decided: played on the board, a bye (a point without a
#: game), a no-show (the opponent never moved: the point, unrated), the admin's verdict.
Kind = Literal["game", "bye", "noshow", "adjudicated"]


@dataclass(frozen=True)
class Pairing:
    """One game to start: ``first`` moves first (seat 1); ``second`` None is a bye.
    ``match``: the pairing's number in its round (a knockout's mini-match)."""

    round: int
    first: str
    second: str | None
    match: int = 0
    division: int = 0


@dataclass(frozen=True)
class Result:
    """A finished tournament game (or bye) as standings read it.

    ``score_first``: 1, 0.5 or 0 for ``first`` (``second`` scores the rest);
    ``marbles_first``/``marbles_second``: marbles each pushed off.
    """

    round: int
    first: str
    second: str | None
    score_first: float
    marbles_first: int = 0
    marbles_second: int = 0
    kind: Kind = "game"
    match: int = 0
    division: int = 0

    def score_of(self, userid: str) -> float:
        if userid == self.first:
            return self.score_first
        if userid == self.second:
            return 1.0 - self.score_first
        raise ValueError(f"{userid} did not play this game")

    def opponent_of(self, userid: str) -> str | None:
        if userid == self.first:
            return self.second
        if userid == self.second:
            return self.first
        raise ValueError(f"{userid} did not play this game")

    def marble_difference_of(self, userid: str) -> int:
        if userid == self.first:
            return self.marbles_first - self.marbles_second
        if userid == self.second:
            return self.marbles_second - self.marbles_first
        raise ValueError(f"{userid} did not play this game")

    def involves(self, userid: str) -> bool:
        return userid in (self.first, self.second)
