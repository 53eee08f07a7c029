"""Standings: points (1 a win, ½ a draw, 0 a loss; a bye or a no-show's game 1), then
the tie-breaks, each in a column of its own so that anyone can check them by hand.

Round robins and championships: Sonneborn-Berger (SB), the points of every opponent
beaten plus half the points of every opponent drawn, game by game.  Swiss: Buchholz,
the points of every opponent met, game by game; a game not played (a bye, or a game
one side never moved in: a no-show) counts, as FIDE's tie-break rules of 2023 have it,
as a game against a dummy opponent with the player's own points, so that neither the
player with the bye nor the no-show's opponent is docked a game's worth of Buchholz
and the no-show gains nothing from an opponent never met.  Knockouts rank by
the round reached first (the winner one past the final).  Then, for all: head-to-head
(the points each scored in the games among the players still tied), marble difference
(marbles pushed off minus marbles lost, over the games played), the rating at the start,
and last the userid, so that the order is always the same.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .results import Kind, Result

#: Results that were not played on a board: for Buchholz they count as a game against
#: a dummy opponent with the player's own points (FIDE's tie-break rules of 2023).
UNPLAYED: frozenset[Kind] = frozenset({"bye", "noshow"})

#: The first tie-break: Sonneborn-Berger, Buchholz, or the knockout round reached.
Primary = Literal["sb", "buchholz", "round"]

PRIMARY_LABELS: dict[Primary, str] = {"sb": "SB", "buchholz": "Buchholz", "round": "Round"}

TIE_BREAK_LINES: dict[Primary, str] = {
    "sb": "Ties are broken by Sonneborn-Berger (SB: the points of each opponent you "
          "beat, plus half those of each you drew), then head-to-head (H2H: points in "
          "the games among the tied players), then marble difference (+/-: marbles "
          "pushed off minus marbles lost), then rating at the start, then userid.",
    "buchholz": "Ties are broken by Buchholz (the points of each opponent you played; a "
                "game not played, a bye or a no-show, counts your own points instead), "
                "then head-to-head (H2H: points in the games among the "
                "tied players), then marble difference (+/-: marbles pushed off minus "
                "marbles lost), then rating at the start, then userid.",
    "round": "Places go by the round reached (the winner one past the final), then "
             "points, then head-to-head (H2H: points in the games among the tied "
             "players), then marble difference (+/-: marbles pushed off minus marbles "
             "lost), then rating at the start, then userid.",
}


@dataclass(frozen=True)
class Standing:
    place: int
    userid: str
    points: float
    #: SB, Buchholz or the round reached, as ``primary`` says.
    tie_break: float
    head_to_head: float
    marble_difference: int
    rating: float
    played: int
    wins: int
    draws: int
    losses: int
    #: "" while in, "withdrawn" or "disqualified".
    status: str = ""


def points_of(results: Iterable[Result]) -> dict[str, float]:
    points: dict[str, float] = defaultdict(float)
    for r in results:
        points[r.first] += r.score_first
        if r.second is not None:
            points[r.second] += 1.0 - r.score_first
    return points


def standings(entrants: Mapping[str, float], results: Sequence[Result], primary: Primary,
              *, status: Mapping[str, str] | None = None,
              rounds_reached: Mapping[str, int] | None = None) -> list[Standing]:
    """The table of ``entrants`` (userid -> rating at the start) after ``results``."""
    status = status or {}
    points = points_of(results)
    tally: dict[str, list[int]] = {u: [0, 0, 0, 0] for u in entrants}  # played w d l
    marbles: dict[str, int] = defaultdict(int)
    tie_break: dict[str, float] = defaultdict(float)
    #: Buchholz: each player's unplayed games, each worth their own points at the end.
    unplayed: dict[str, int] = defaultdict(int)
    for r in results:
        for player in (r.first, r.second):
            if player is None:
                continue
            score = r.score_of(player)
            counts = tally.setdefault(player, [0, 0, 0, 0])
            opponent = r.opponent_of(player)
            if opponent is not None:
                counts[0] += 1
                counts[1 if score == 1 else 2 if score == 0.5 else 3] += 1
            if r.kind == "game" or r.kind == "adjudicated":
                marbles[player] += r.marble_difference_of(player)
            if primary == "buchholz" and r.kind in UNPLAYED:
                unplayed[player] += 1
                continue
            if opponent is None:
                continue
            if primary == "sb":
                tie_break[player] += score * points.get(opponent, 0.0)
            elif primary == "buchholz":
                tie_break[player] += points.get(opponent, 0.0)
    for player, count in unplayed.items():
        tie_break[player] += count * points.get(player, 0.0)
    if primary == "round":
        tie_break = defaultdict(float, {u: float(v) for u, v in (rounds_reached or {}).items()})
    players = list(entrants)

    def outer(u: str) -> tuple[float, float] | tuple[float, float, float]:
        if primary == "round":
            return (tie_break[u], points.get(u, 0.0))
        return (points.get(u, 0.0), tie_break[u])

    groups: dict[tuple[float, ...], list[str]] = defaultdict(list)
    for u in players:
        groups[outer(u)].append(u)
    head: dict[str, float] = {}
    for members in groups.values():
        among = set(members)
        for u in members:
            head[u] = sum(r.score_of(u) for r in results
                          if r.involves(u) and r.opponent_of(u) in among) if len(members) > 1 else 0.0
    order = sorted(players, key=lambda u: (
        tuple(-v for v in outer(u)), -head[u], -marbles[u], -entrants[u], u))
    rows = []
    for place, u in enumerate(order, start=1):
        played, wins, draws, losses = tally.get(u, [0, 0, 0, 0])
        rows.append(Standing(place, u, points.get(u, 0.0), tie_break[u], head[u], marbles[u],
                             entrants[u], played, wins, draws, losses, status.get(u, "")))
    return rows


def half(value: float) -> str:
    """1.5 as "1½", 2.0 as "2", 0.5 as "½"."""
    whole = int(value)
    if value - whole == 0.5:
        return f"{whole if whole else ''}½"
    if value == whole:
        return str(whole)
    return f"{value:g}"


def table_lines(rows: Sequence[Standing], primary: Primary) -> list[str]:
    """The standings as a fixed-width table, a line a player."""
    label = PRIMARY_LABELS[primary]
    lines = [f"{'#':>3}  {'Player':<20} {'Pts':>5} {label:>8} {'H2H':>5} {'+/-':>5} "
             f"{'Rating':>6}  {'G':>3} {'W':>3} {'D':>3} {'L':>3}"]
    for s in rows:
        note = f"  ({s.status})" if s.status else ""
        primary_text = str(int(s.tie_break)) if primary == "round" else half(s.tie_break)
        lines.append(
            f"{s.place:>3}  {s.userid:<20} {half(s.points):>5} {primary_text:>8} "
            f"{half(s.head_to_head):>5} {s.marble_difference:>+5d} {round(s.rating):>6}  "
            f"{s.played:>3} {s.wins:>3} {s.draws:>3} {s.losses:>3}{note}")
    return lines
