"""A knockout's bracket moves on match by match: a match between two players who had
byes starts with the tournament, a next-round match starts as soon as the two matches
before it are decided, and a slow game holds up only its own branch."""

from __future__ import annotations

from abalone_pbm.service import tournaments

from . import tournament_play as tp
from .harness import Harness

PLAYERS = ["b1", "b2", "b3", "b4", "b5"]


def _open(harness: Harness) -> list[tuple[int, str, str | None]]:
    return [(r[0], r[2], r[3]) for r in tp.open_games(harness, "br")]


def _board(harness: Harness, round_number: int, first: str, second: str) -> int:
    found = [r[1] for r in tp.open_games(harness, "br")
             if (r[0], r[2], r[3]) == (round_number, first, second)]
    assert len(found) == 1 and found[0] is not None, (first, second, _open(harness))
    return found[0]


def test_the_bracket_moves_on_match_by_match(harness: Harness) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    tp.set_ratings(harness, {u: 1800.0 - 20 * i for i, u in enumerate(PLAYERS)})
    tp.create(harness, tournaments.Plan(name="br", format="knockout", games_per_pairing=1))
    tp.join_all(harness, "br", PLAYERS)
    tp.start(harness, "br")

    # Eight places: seeds 1, 2 and 3 have byes (against the absent 8, 7 and 6), so
    # round 1 plays only 4-5, and 2 meets 3 (round 2, match 2) from the start.
    assert _open(harness) == [(1, "b4", "b5"), (2, "b2", "b3")]
    tp.play(harness, _board(harness, 2, "b2", "b3"), "b2", "b3", loser="b2")
    # b3 waits for the winner of b1's branch; nothing else to start.
    assert _open(harness) == [(1, "b4", "b5")]
    assert tp.status(harness, "br") == ("running", 2)
    tp.play(harness, _board(harness, 1, "b4", "b5"), "b4", "b5", loser="b4")
    # b5 through: b1 (the bye) meets b5.
    assert _open(harness) == [(2, "b1", "b5")]
    sent = tp.play(harness, _board(harness, 2, "b1", "b5"), "b1", "b5", loser="b1")
    # Both semi-finals over: the final, b3 the higher seed first.
    assert _open(harness) == [(3, "b3", "b5")]
    assert any(s.subject == "Abalone tournament br standings after round 2" for s in sent)
    sent = tp.play(harness, _board(harness, 3, "b3", "b5"), "b3", "b5", loser="b5")
    assert tp.status(harness, "br") == ("finished", 3)
    final = [s for s in sent if s.subject == "Abalone tournament br standings final"]
    assert len(final) == len(PLAYERS)
    # Round reached, then points (a bye is a point), then rating at the start:
    #   b3 round 4: 1 (bye) + 1 (b2) + 1 (b5) = 3;  b5 round 3: 1 (b4) + 1 (b1) = 2;
    #   b1 round 2: 1 (bye);  b2 round 2: 1 (bye);  tied: rating b1 1800, b2 1780;
    #   b4 round 1: 0.
    assert [row[:4] for row in tp.table_of(final[0], 5)] == [
        ["1", "b3", "3", "4"], ["2", "b5", "2", "3"], ["3", "b1", "1", "2"],
        ["4", "b2", "1", "2"], ["5", "b4", "0", "1"]]
