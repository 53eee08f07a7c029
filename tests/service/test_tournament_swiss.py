"""A 9-player Swiss of 4 rounds played by mail (worker, mailroom, outbox) with the clock
moved forward: a bye each round while nine play, a timeout (a no-show), a draw by the
director, a withdrawal, every round's pairing and the final standings checked against
scores and Buchholz worked out by hand."""

from __future__ import annotations

from abalone_pbm.db import repository
from abalone_pbm.service import tournaments

from . import tournament_play as tp
from .harness import Harness

PLAYERS = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"]

# Each round as paired: (first to move, second), the bye last.  Worked out by hand
# from the rules in tournaments/swiss.py; the scores before each round are in the
# comments.
ROUNDS: dict[int, list[tuple[str, str | None]]] = {
    # Ranked by rating p1..p9: the top half meets the bottom half, the last gets the bye.
    1: [("p1", "p5"), ("p6", "p2"), ("p3", "p7"), ("p8", "p4"), ("p9", None)],
    # 1: p1 p2 p3 p4 p9; 0: p5 p6 p7 p8.  Bye: the lowest without one, p8.  p1 meets
    # p2, not p3, because p1 and p3 both moved first in round 1 (colours before the
    # Dutch partner); p9 floats down to p5.
    2: [("p2", "p1"), ("p4", "p3"), ("p5", "p9"), ("p7", "p6"), ("p8", None)],
    # p5 never moves on board 107: p9 wins by forfeit.  2: p1 p3 p9; 1: p2 p4 p6 p8;
    # 0: p5 p7.  p9 floats down to p2, p8 to p5, the bye to p7.
    3: [("p1", "p3"), ("p9", "p2"), ("p6", "p4"), ("p5", "p8"), ("p7", None)],
    # p1-p3 drawn by the director, p9 withdraws (losing to p2).  2½: p1 p3 (met);
    # 2: p2 p4; 1: p5 p6 p7 p8.  Eight left: no bye.
    4: [("p4", "p1"), ("p2", "p3"), ("p7", "p5"), ("p8", "p6")],
}


def test_swiss_of_nine_by_mail(harness: Harness) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    tp.set_ratings(harness, {u: 1900.0 - 25 * i for i, u in enumerate(PLAYERS)})
    tp.create(harness, tournaments.Plan(name="sw", format="swiss", rounds=4))
    tp.join_all(harness, "sw", PLAYERS)
    started = tp.start(harness, "sw")
    new_boards = [s for s in started if s.subject.startswith("New Abalone Board")]
    assert len(new_boards) == 8
    assert all("Tournament sw, round 1" in s.body for s in new_boards)

    unrated_boards: list[int] = []
    for round_number, expected in ROUNDS.items():
        assert tp.status(harness, "sw") == ("running", round_number)
        paired = [r for r in tp.rows(harness, "sw") if r[0] == round_number]
        assert [(first, second) for _, _, first, second, _, _ in paired] == expected
        timed_out = None
        for _, board, first, second, _, _ in paired:
            if second is None:
                continue
            assert board is not None
            if (round_number, first) == (2, "p5"):
                timed_out = board  # p5 never moves
            elif (round_number, first) == (3, "p1"):
                tp.move(harness, board, first)
                sent = tp.adjudicate(harness, "sw", board, "draw")
                assert {s.to for s in sent} == {"p1@example.org", "p3@example.org"}
                unrated_boards.append(board)
            elif (round_number, first) == (3, "p9"):
                tp.move(harness, board, first)
                tp.move(harness, board, second)
                sent = harness.mail("p9@example.org", "abalone tournament withdraw sw p9 p9-pw")
                assert "p9 withdrew from tournament sw" in next(
                    s.body for s in sent if s.subject == f"Abalone Board {board}")
            else:
                tp.play(harness, board, first, second, loser=max(first, second))
        if timed_out is not None:
            harness.clock.advance(days=7, hours=1)
            sent = harness.tick()
            assert any(s.subject == "Abalone tournament sw standings after round 2"
                       for s in sent)
            unrated_boards.append(timed_out)

    assert tp.status(harness, "sw") == ("finished", 4)
    kinds = {(r[0], r[2]): (r[4], r[5]) for r in tp.rows(harness, "sw")}
    assert kinds[(2, "p5")] == ("noshow", 0.0)
    assert kinds[(3, "p1")] == ("adjudicated", 0.5)
    assert kinds[(3, "p9")] == ("game", 0.0)
    with harness.database.read() as session:
        for number in unrated_boards:
            game = repository.get_game(session, number)
            assert game is not None and all(s.rating_after is None for s in game.seats)

    # Final points: p1 W W D W = 3½; p2 W L W W = 3; p3 W W D L = 2½; p4 W L W L = 2;
    # p5 L L(no-show) W W = 2; p6 L W L W = 2; p9 bye, W(no-show), L, withdrawn = 2;
    # p7 L L bye L = 1; p8 L bye L L = 1.
    # Buchholz (opponents' final points; a game not played, the byes and the p5-p9
    # no-show, counts the player's own points, "own"):
    #   p1 p5 2 + p2 3 + p3 2½ + p4 2 = 9½     p2 p6 2 + p1 3½ + p9 2 + p3 2½ = 10
    #   p3 p7 1 + p4 2 + p1 3½ + p2 3 = 9½     p4 p8 1 + p3 2½ + p6 2 + p1 3½ = 9
    #   p5 p1 3½ + own 2 + p8 1 + p7 1 = 7½    p6 p2 3 + p7 1 + p4 2 + p8 1 = 7
    #   p9 own 2 + own 2 + p2 3 = 7             p7 p3 2½ + p6 2 + own 1 + p5 2 = 7½
    #   p8 p4 2 + own 1 + p5 2 + p6 2 = 7
    # p6 and p9 share 2 points and Buchholz 7, never met (H2H 0 each), no marbles:
    # p6's higher rating at the start puts p6 first.  Everyone else: H2H 0 too.
    final_table = [
        ["1", "p1", "3½", "9½", "0", "+0", "1900", "4", "3", "1", "0"],
        ["2", "p2", "3", "10", "0", "+0", "1875", "4", "3", "0", "1"],
        ["3", "p3", "2½", "9½", "0", "+0", "1850", "4", "2", "1", "1"],
        ["4", "p4", "2", "9", "0", "+0", "1825", "4", "2", "0", "2"],
        ["5", "p5", "2", "7½", "0", "+0", "1800", "4", "2", "0", "2"],
        ["6", "p6", "2", "7", "0", "+0", "1775", "4", "2", "0", "2"],
        ["7", "p9", "2", "7", "0", "+0", "1700", "2", "1", "0", "1", "(withdrawn)"],
        ["8", "p7", "1", "7½", "0", "+0", "1750", "3", "0", "0", "3"],
        ["9", "p8", "1", "7", "0", "+0", "1725", "3", "0", "0", "3"],
    ]
    sent = harness.mail("p5@example.org", "abalone tournament standings sw")
    assert tp.table_of(sent[0], 9) == final_table
    assert "Ties are broken by Buchholz" in sent[0].body
