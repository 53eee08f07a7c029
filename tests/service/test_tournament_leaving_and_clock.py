"""Leaving and the clock's edges: withdrawing from a tournament that is over is refused
and changes nothing; a leaver's games are all decided before the round's standings go
out; a stalled round and the clock's forfeit read the same forfeit time by one rule; a
game's end looks its no-show up once."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from abalone_pbm.db.models import TournamentEntry
from abalone_pbm.service import tournament_games, tournaments

from . import tournament_play as tp
from .harness import Harness

PLAYERS = ["ann", "bob", "cyd", "dee"]


def _entries(harness: Harness) -> list[tuple[str, str]]:
    with harness.database.read() as session:
        return sorted((e.user.userid, e.status) for e in session.scalars(select(TournamentEntry)))


def _standings(harness: Harness, name: str) -> str:
    with harness.database.read() as session:
        return tournaments.standings_text(session, tournaments.require(session, name))


def test_withdrawing_from_a_finished_or_cancelled_tournament_is_refused(harness: Harness) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    tp.create(harness, tournaments.Plan(name="rr", format="roundrobin", games_per_pairing=1))
    tp.join_all(harness, "rr", PLAYERS[:2])
    tp.start(harness, "rr")
    ((_, board, first, second, _, _),) = tp.open_games(harness, "rr")
    assert board is not None and second is not None
    tp.play(harness, board, first, second, loser=second)
    assert tp.status(harness, "rr")[0] == "finished"
    before_entries, before_table = _entries(harness), _standings(harness, "rr")
    sent = harness.mail(f"{first}@example.org", f"abalone tournament withdraw rr {first} {first}-pw")
    assert len(sent) == 1, [(s.subject, s.body[:200]) for s in sent]
    assert 'Tournament "rr" is finished: there is nothing left to withdraw from' in \
        " ".join(sent[0].body.split())
    assert (_entries(harness), _standings(harness, "rr")) == (before_entries, before_table)

    # A sign-up that closed with too few players: cancelled, and so no withdrawing.
    tp.create(harness, tournaments.Plan(
        name="few", format="roundrobin", min_players=3,
        signup_until=harness.clock.now() + timedelta(days=1)))
    tp.join_all(harness, "few", ["cyd", "dee"])
    harness.clock.advance(days=1, hours=1)
    harness.tick()
    assert tp.status(harness, "few")[0] == "cancelled"
    sent = harness.mail("cyd@example.org", "abalone tournament withdraw few cyd cyd-pw")
    assert len(sent) == 1
    assert 'Tournament "few" is cancelled: there is nothing left to withdraw from' in \
        " ".join(sent[0].body.split())
    with harness.database.read() as session:
        t = tournaments.require(session, "few")
        assert [e.status for e in tournaments.entries_of(session, t)] == ["entered", "entered"]


def test_a_leaver_s_games_are_all_decided_before_the_round_s_standings(harness: Harness) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    tp.create(harness, tournaments.Plan(name="rr", format="roundrobin", games_per_pairing=1))
    tp.join_all(harness, "rr", PLAYERS)
    tp.start(harness, "rr")
    # Round 1's game without dee played out; then dee leaves with a game open in
    # every round (rounds 1 to 3): the first of them ends round 1.
    for round_number, board, first, second, _, _ in tp.open_games(harness, "rr"):
        if round_number == 1 and "dee" not in (first, second):
            assert board is not None and second is not None
            tp.play(harness, board, first, second, loser=second)
    sent = harness.mail("dee@example.org", "abalone tournament withdraw rr dee dee-pw")
    mails = [s for s in sent if s.subject == "Abalone tournament rr standings after round 1"]
    assert len(mails) == 3  # ann, bob, cyd; not dee, who left
    table = tp.table_of(mails[0], 4)
    # dee's three games all lost (no-shows): the table shows every one of them.
    dee = next(row for row in table if row[1] == "dee")
    assert dee[7:11] == ["3", "0", "0", "3"] and dee[-1] == "(withdrawn)"


def test_a_stalled_round_and_the_clock_share_the_forfeit_edge(harness: Harness) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    tp.create(harness, tournaments.Plan(name="rr", format="roundrobin", games_per_pairing=1,
                                        options={"nagtime": "1", "forfeittime": "3"}))
    tp.join_all(harness, "rr", PLAYERS)
    tp.start(harness, "rr")
    games = [(board, first) for _, board, first, _, _, _ in tp.open_games(harness, "rr")]
    on_vacation = games[0][1]
    harness.mail(f"{on_vacation}@example.org", f"vacation {on_vacation} {on_vacation}-pw on")
    # Just short of three days, nothing; at three days exactly the clock forfeits every
    # player to move but the one on vacation, whose game is reported as stalled.
    harness.clock.advance(days=3, seconds=-1)
    with harness.database.read() as session:
        assert tournaments.stalled_games(session, tournaments.require(session, "rr"),
                                         harness.clock.now()) == []
    harness.clock.advance(seconds=1)
    with harness.database.read() as session:
        stalled = tournaments.stalled_games(session, tournaments.require(session, "rr"),
                                            harness.clock.now())
        assert [(game.number, mover, days) for game, mover, days in stalled] == [
            (board, first, 3) for board, first in games]
    harness.tick()
    with harness.database.read() as session:
        stalled = tournaments.stalled_games(session, tournaments.require(session, "rr"),
                                            harness.clock.now())
        assert [mover for _, mover, _ in stalled] == [
            first for _, first in games if first == on_vacation]


def test_a_game_s_end_looks_up_its_no_show_once(harness: Harness, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    looked_up: list[int] = []
    real = tournament_games.no_show

    def counting(session, game):  # type: ignore[no-untyped-def]
        looked_up.append(game.number)
        return real(session, game)

    monkeypatch.setattr(tournament_games, "no_show", counting)
    for userid in PLAYERS[:2]:
        harness.signup(userid)
    tp.create(harness, tournaments.Plan(name="rr", format="roundrobin", games_per_pairing=1))
    tp.join_all(harness, "rr", PLAYERS[:2])
    tp.start(harness, "rr")
    ((_, board, _, _, _, _),) = tp.open_games(harness, "rr")
    harness.clock.advance(days=7, hours=1)
    harness.tick()
    assert looked_up == [board]
    # The first player never moved: forfeited, a no-show.
    assert tp.rows(harness, "rr")[0][4:] == ("noshow", 0.0)
