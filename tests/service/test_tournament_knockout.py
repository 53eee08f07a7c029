"""A knockout of 8 played by mail (worker, mailroom, outbox) with the clock moved
forward: mini-matches of two games with the colours swapped, deciders when level (one
drawn by the director, so a second decider), the bracket moving on match by match, a
timeout (two no-shows, one of them in a decider), a withdrawal in
the middle of a match, and the final standings worked out by hand."""

from __future__ import annotations

from abalone_pbm.service import tournaments

from . import tournament_play as tp
from .harness import Harness

PLAYERS = ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"]


def _board(harness: Harness, round_number: int, first: str, second: str) -> int:
    found = [r[1] for r in tp.open_games(harness, "ko")
             if (r[0], r[2], r[3]) == (round_number, first, second)]
    assert len(found) == 1 and found[0] is not None, (first, second, tp.open_games(harness, "ko"))
    return found[0]


def _open(harness: Harness) -> list[tuple[int, str, str | None]]:
    return [(r[0], r[2], r[3]) for r in tp.open_games(harness, "ko")]


def _won_by(harness: Harness, round_number: int, first: str, second: str, winner: str) -> None:
    board = _board(harness, round_number, first, second)
    tp.play(harness, board, first, second, loser=second if winner == first else first)


def test_knockout_of_eight_by_mail(harness: Harness) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    tp.set_ratings(harness, {u: 1900.0 - 25 * i for i, u in enumerate(PLAYERS)})
    tp.create(harness, tournaments.Plan(name="ko", format="knockout"))
    tp.join_all(harness, "ko", PLAYERS)
    tp.start(harness, "ko")

    # Seeds by rating; the bracket 1-8, 4-5, 2-7, 3-6, the higher seed first in game 1.
    assert _open(harness) == [
        (1, "k1", "k8"), (1, "k8", "k1"), (1, "k4", "k5"), (1, "k5", "k4"),
        (1, "k2", "k7"), (1, "k7", "k2"), (1, "k3", "k6"), (1, "k6", "k3")]
    _won_by(harness, 1, "k1", "k8", "k1")
    _won_by(harness, 1, "k8", "k1", "k8")  # 1-1: a decider
    _won_by(harness, 1, "k4", "k5", "k5")
    _won_by(harness, 1, "k5", "k4", "k5")  # k5 through 2-0
    _won_by(harness, 1, "k2", "k7", "k2")
    _won_by(harness, 1, "k3", "k6", "k3")
    _won_by(harness, 1, "k6", "k3", "k3")
    # k1-k8 level: its decider started as its games ended, k8 (the lower seed) moving
    # first; k7 never moves on the other board.  The bracket moves match by match:
    # k5 waits for the winner of match 1, k3 for that of match 3.
    assert _open(harness) == [(1, "k8", "k1"), (1, "k7", "k2")]
    harness.clock.advance(days=7, hours=1)
    harness.tick()
    # k8 and k7 forfeit (no-shows): k1 and k2 through.

    # Winners of matches 1 and 2 meet, 3 and 4.
    assert tp.status(harness, "ko") == ("running", 2)
    assert _open(harness) == [(2, "k1", "k5"), (2, "k5", "k1"), (2, "k2", "k3"), (2, "k3", "k2")]
    _won_by(harness, 2, "k1", "k5", "k1")
    board = _board(harness, 2, "k5", "k1")
    tp.move(harness, board, "k5")
    tp.move(harness, board, "k1")
    sent = harness.mail("k1@example.org", "abalone tournament withdraw ko k1 k1-pw")
    assert any(s.subject == f"Abalone Board {board}" and "k1 withdrew from tournament ko"
               in s.body for s in sent)
    _won_by(harness, 2, "k2", "k3", "k2")
    _won_by(harness, 2, "k3", "k2", "k3")
    # k1-k5 is 1-1, but k1 has left: k5 goes through without a decider.
    assert _open(harness) == [(2, "k3", "k2")]
    _won_by(harness, 2, "k3", "k2", "k3")

    assert tp.status(harness, "ko") == ("running", 3)
    assert _open(harness) == [(3, "k3", "k5"), (3, "k5", "k3")]
    _won_by(harness, 3, "k3", "k5", "k3")
    _won_by(harness, 3, "k5", "k3", "k5")
    decider = _board(harness, 3, "k5", "k3")
    tp.move(harness, decider, "k5")
    tp.adjudicate(harness, "ko", decider, "draw")
    # Level after the first decider: a second one, the higher seed moving first.
    assert _open(harness) == [(3, "k3", "k5")]
    board = _board(harness, 3, "k3", "k5")
    sent = tp.play(harness, board, "k3", "k5", loser="k5")
    assert tp.status(harness, "ko") == ("finished", 3)
    final = [s for s in sent if s.subject == "Abalone tournament ko standings final"]
    # Everyone still in; k1 withdrew.
    assert sorted(s.to.split("@")[0] for s in final) == ["k2", "k3", "k4", "k5", "k6", "k7", "k8"]

    # Round reached (the champion one past the final), then points:
    #   k3 2 (k6) + 2 (k2, decider won) + 2½ (k5: 1, 0, ½, 1) = 6½, round 4
    #   k5 2 (k4) + 1 (k1: 0, 1 by withdrawal) + 1½ = 4½, round 3
    #   k1 2 (k8: 1, 0, decider 1 by no-show) + 1 = 3, round 2 (withdrawn)
    #   k2 2 (k7: 1, no-show 1) + 1 (k3: 1, 0, decider 0) = 3, round 2
    #   k8 1, k4 0, k6 0, k7 0: round 1.
    # k1 and k2 tied (round 2, 3 points, never met: H2H 0, no marbles pushed off):
    # rating at the start, k1 1900 before k2 1875; the same for k4, k6, k7.
    expected = [
        ["1", "k3", "6½", "4", "0", "+0", "1850", "9", "6", "1", "2"],
        ["2", "k5", "4½", "3", "0", "+0", "1800", "8", "4", "1", "3"],
        ["3", "k1", "3", "2", "0", "+0", "1900", "5", "3", "0", "2", "(withdrawn)"],
        ["4", "k2", "3", "2", "0", "+0", "1875", "5", "3", "0", "2"],
        ["5", "k8", "1", "1", "0", "+0", "1725", "3", "1", "0", "2"],
        ["6", "k4", "0", "1", "0", "+0", "1825", "2", "0", "0", "2"],
        ["7", "k6", "0", "1", "0", "+0", "1775", "2", "0", "0", "2"],
        ["8", "k7", "0", "1", "0", "+0", "1750", "2", "0", "0", "2"],
    ]
    assert tp.table_of(final[0], 8) == expected
    assert "Places go by the round reached" in final[0].body
    kinds = {(r[0], r[2], r[3]): r[4] for r in tp.rows(harness, "ko")}
    assert kinds[(1, "k7", "k2")] == "noshow"
    assert kinds[(3, "k5", "k3")] == "adjudicated"
