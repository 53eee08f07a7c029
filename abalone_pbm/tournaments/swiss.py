"""Swiss pairing: one game a round, players of equal score meet, nobody meets twice.

Our own pairer, in the spirit of the Dutch system (FIDE C.04.3) without its full
detail (see the README's "Tournaments" for why not a library):

* players are ranked by score, then rating at the start, then userid;
* with an odd number the lowest-ranked player who has not had a bye gets it (a point,
  no game, unrated); a player gets a second bye only when everyone has had one;
* from the top, each player is paired with a player of the same score if one is left,
  the Dutch partner first (the top half of a score group meets the bottom half), else
  with the nearest score (a "floater"); never with an earlier opponent;
* a choice that leaves the rest unpairable is taken back (depth-first search); the
  search is bounded (:data:`SEARCH_BUDGET` steps): past it, or when no pairing without
  a repeat exists, :class:`PairingImpossible` is raised and the admin decides;
* colours: the one who moved first less often moves first; when equal, the one who
  moved second last time; in the first round alternately by board.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .results import Pairing

#: The most steps the search takes for one round (each step tries one partner). A
#: round of 64 players that has a pairing finds it in a few hundred.
SEARCH_BUDGET = 200_000


class PairingImpossible(Exception):
    """No pairing without a repeated opponent was found for the round."""


@dataclass(frozen=True)
class SwissPlayer:
    """What pairing needs of one player: ``firsts``/``seconds``: games moved first and
    second; ``last_first``: whether they moved first in their last game (None: none)."""

    userid: str
    score: float
    rating: float
    opponents: frozenset[str] = field(default_factory=frozenset)
    firsts: int = 0
    seconds: int = 0
    last_first: bool | None = None
    byes: int = 0

    @property
    def colour_difference(self) -> int:
        return self.firsts - self.seconds


def ranked(players: Sequence[SwissPlayer]) -> list[SwissPlayer]:
    return sorted(players, key=lambda p: (-p.score, -p.rating, p.userid))


def pair_round(players: Sequence[SwissPlayer], round_number: int) -> list[Pairing]:
    """The pairings of a round (the bye last, as a Pairing without ``second``)."""
    order = ranked(players)
    if len({p.userid for p in order}) != len(order):
        raise ValueError("a player is listed twice")
    steps = [0]
    if len(order) % 2 == 0:
        pairs = _search(order, steps)
        if pairs is None:
            raise PairingImpossible(_why(steps))
        return _with_colours(pairs, round_number, None)
    fewest = min(p.byes for p in order)
    for candidate in reversed(order):
        if candidate.byes != fewest:
            continue
        rest = [p for p in order if p is not candidate]
        pairs = _search(rest, steps)
        if pairs is not None:
            return _with_colours(pairs, round_number, candidate)
        if steps[0] > SEARCH_BUDGET:
            break
    raise PairingImpossible(_why(steps))


def _why(steps: list[int]) -> str:
    if steps[0] > SEARCH_BUDGET:
        return f"no pairing found within {SEARCH_BUDGET} search steps"
    return "every pairing would repeat a game already played"


def _search(order: list[SwissPlayer], steps: list[int]) -> list[tuple[SwissPlayer, SwissPlayer]] | None:
    """Depth-first: the top player with each acceptable partner in order of preference."""
    if not order:
        return []
    top, rest = order[0], order[1:]
    for partner in _preferences(top, rest):
        steps[0] += 1
        if steps[0] > SEARCH_BUDGET:
            return None
        remainder = [p for p in rest if p is not partner]
        found = _search(remainder, steps)
        if found is not None:
            return [(top, partner), *found]
        if steps[0] > SEARCH_BUDGET:
            return None
    return None


def _preferences(top: SwissPlayer, rest: list[SwissPlayer]) -> list[SwissPlayer]:
    group = [p for p in rest if p.score == top.score]
    # The Dutch partner: the top half of the score group (top included) meets the
    # bottom half, first against first.
    ideal = (len(group) + 1) // 2 - 1 if group else 0

    def preference(item: tuple[int, SwissPlayer]) -> tuple[float, int, int]:
        position, player = item
        same_group_distance = abs(position - ideal) if player.score == top.score else position
        return (abs(player.score - top.score), _colour_clash(top, player), same_group_distance)

    allowed = [(i, p) for i, p in enumerate(rest) if p.userid not in top.opponents]
    return [p for _, p in sorted(allowed, key=preference)]


def _colour_clash(a: SwissPlayer, b: SwissPlayer) -> int:
    """1 when both are due the same colour (both moved first more often, or second)."""
    da, db = a.colour_difference, b.colour_difference
    return 1 if (da > 0 and db > 0) or (da < 0 and db < 0) else 0


def first_mover(higher: SwissPlayer, lower: SwissPlayer, board: int) -> bool:
    """Whether ``higher`` (the better ranked of a pair) moves first."""
    if higher.colour_difference != lower.colour_difference:
        return higher.colour_difference < lower.colour_difference
    if higher.last_first is not None and lower.last_first is not None \
            and higher.last_first != lower.last_first:
        return not higher.last_first
    return board % 2 == 1


def _with_colours(pairs: list[tuple[SwissPlayer, SwissPlayer]], round_number: int,
                  bye: SwissPlayer | None) -> list[Pairing]:
    out = []
    for board, (higher, lower) in enumerate(pairs, start=1):
        if first_mover(higher, lower, board):
            out.append(Pairing(round_number, higher.userid, lower.userid, board))
        else:
            out.append(Pairing(round_number, lower.userid, higher.userid, board))
    if bye is not None:
        out.append(Pairing(round_number, bye.userid, None, len(pairs) + 1))
    return out
