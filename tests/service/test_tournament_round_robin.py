"""A 6-player double round robin played by mail through the real mail path (worker,
mailroom, outbox) with the clock moved forward: a withdrawal, a timeout, and the final
standings checked against tie-breaks worked out by hand."""

from __future__ import annotations

from sqlalchemy import select

from abalone_pbm.db import repository
from abalone_pbm.db.models import Tournament, TournamentGame, User
from abalone_pbm.service import tournaments
from abalone_pbm.service.context import MailContext
from abalone_pbm.service.games import load_board

from .harness import Harness, Sent

PLAYERS = ["anna", "bert", "carl", "dora", "emil", "fred"]
A, B, C, D, E, F = PLAYERS


def _first_move(harness: Harness, number: int) -> str:
    with harness.database.read() as session:
        game = repository.get_game(session, number)
        assert game is not None
        return str(next(load_board(game).generate_legal_moves()))


def _move(harness: Harness, number: int, userid: str) -> list[Sent]:
    move = _first_move(harness, number)
    return harness.mail(f"{userid}@example.org", f"abalone move {number} {userid} {userid}-pw {move}")


def _resign(harness: Harness, number: int, userid: str) -> list[Sent]:
    return harness.mail(f"{userid}@example.org", f"abalone resign {number} {userid} {userid}-pw")


def test_double_round_robin_of_six_by_mail(harness: Harness) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    with harness.database.write() as session:
        tournaments.create(session, tournaments.Plan(name="rr", format="roundrobin"),
                           harness.clock.now())
        # d starts with a higher rating: the last tie-break before the userid.
        session.scalars(select(User).where(User.userid == D)).one().rating = 1650.0
    for userid in PLAYERS:
        sent = harness.mail(f"{userid}@example.org",
                            f"abalone tournament join rr {userid} {userid}-pw")
        assert [s.subject for s in sent] == [f"Abalone tournament rr join {userid}"]
    with harness.database.write() as session:
        ctx = MailContext(session=session, settings=harness.settings, now=harness.clock.now(),
                          sender=harness.settings.address)
        boards = tournaments.start(ctx, tournaments.require(session, "rr"))
        ctx.flush()
    assert len(boards) == 30  # 15 pairings, twice
    started = harness.take_outbox()
    new_boards = [s for s in started if s.subject.startswith("New Abalone Board")]
    assert len(new_boards) == 60
    assert all("Tournament rr, round" in s.body for s in new_boards)
    assert sum(s.subject == "Abalone tournament rr has started" for s in started) == 6
    # Every round's games run at once: the standings say so, not "round 3".
    (table,) = harness.mail(f"{E}@example.org", "abalone tournament standings rr")
    assert "Every round's games are being played at once." in table.body
    assert "is being played" not in table.body

    # f withdraws at once: their ten games are resigned, each a no-show (unrated).
    sent = harness.mail(f"{F}@example.org", f"abalone tournament withdraw rr {F} {F}-pw")
    assert any(s.subject == f"Abalone tournament rr withdraw {F}" for s in sent)

    with harness.database.read() as session:
        rows = [(r.board, r.first.userid, r.second.userid if r.second else None, r.kind,
                 r.score_first) for r in session.scalars(select(TournamentGame))]
    assert all(kind == "noshow" and (score == 1.0) == (second == F)
               for _, first, second, kind, score in rows if F in (first, second))
    timed_out = None
    for board, first, second, _, score in rows:
        if score is not None:
            continue
        assert F not in (first, second) and second is not None and board is not None
        if (first, second) == (C, D):
            timed_out = board  # c never moves: forfeited after the week
            continue
        # The first player wins, except that b loses to a with either colour.
        loser = second if (first, second) != (B, A) else first
        _move(harness, board, first)
        _move(harness, board, second)
        if loser == second:
            _move(harness, board, first)
        sent = _resign(harness, board, loser)
        assert any(s.subject.startswith(f"Abalone Board {board}") for s in sent)
    assert timed_out is not None

    harness.clock.advance(days=7, hours=1)
    sent = harness.tick()
    final = [s for s in sent if s.subject == "Abalone tournament rr standings final"]
    assert sorted(s.to for s in final) == [f"{u}@example.org" for u in PLAYERS[:5]]

    # Below a-f stand for anna, bert, carl, dora, emil, fred.  By hand: everyone 2 points from f; of the 8 games among a-e each wins the 4 it
    # moves first, except b's first move against a (a: 7, b: 5) and c's against d (c
    # timed out: c 5, d 7).  SB: a = b5+c5+d7+e6 + b5 = 28; d = a7+b5+c5+e6 + c5 = 28;
    # e = a7+b5+c5+d7 = 24; b = c5+d7+e6 = 18; c = a7+b5+e6 = 18.  a and d: one win
    # each against the other (H2H 1), no marbles pushed off, d's rating at the start
    # 1650 > 1600: d first.  b and c the same, equal ratings: the userid.
    table = final[0].body.split("Pts")[1].splitlines()[1:7]
    assert [line.split()[:7] for line in table] == [
        ["1", D, "7", "28", "1", "+0", "1650"],
        ["2", A, "7", "28", "1", "+0", "1600"],
        ["3", E, "6", "24", "0", "+0", "1600"],
        ["4", B, "5", "18", "1", "+0", "1600"],
        ["5", C, "5", "18", "1", "+0", "1600"],
        ["6", F, "0", "0", "0", "+0", "1600"],
    ]
    assert table[5].endswith("(withdrawn)")
    assert "Ties are broken by Sonneborn-Berger" in final[0].body
    with harness.database.read() as session:
        t = session.scalars(select(Tournament)).one()
        assert t.status == "finished"
        game = repository.get_game(session, timed_out)
        assert game is not None and game.winners == "2"
        # The no-show was not rated.
        assert all(seat.rating_after is None for seat in game.seats)
    # Standings by mail match.
    sent = harness.mail(f"{E}@example.org", "abalone tournament standings rr")
    assert sent[0].body.split("Pts")[1].splitlines()[1:7] == table
