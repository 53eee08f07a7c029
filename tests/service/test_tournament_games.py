"""Tournament boards as games: a first-move resignation is a played, rated loss (not a
first-round withdrawal, not a no-show); limit and reject do not refuse the games of a
tournament the player joined; the standings mails are subscribed mail, with
List-Unsubscribe and a way out without a password."""

from __future__ import annotations

import re

from sqlalchemy import select

from abalone_pbm.db import repository
from abalone_pbm.db.models import TournamentEntry, User
from abalone_pbm.service import tournaments

from . import tournament_play as tp
from .harness import Harness, Sent

PLAYERS = ["ann", "bob", "cyd"]
_MAILTO = re.compile(r"<mailto:([^?>]+)\?subject=unsubscribe>")


def _round_robin_of_three(harness: Harness, name: str = "rr") -> list[tp.Row]:
    for userid in PLAYERS:
        harness.signup(userid)
    tp.create(harness, tournaments.Plan(name=name, format="roundrobin", games_per_pairing=1))
    tp.join_all(harness, name, PLAYERS)
    tp.start(harness, name)
    return tp.open_games(harness, name)


def test_a_first_move_resignation_is_a_rated_loss(harness: Harness) -> None:
    games = _round_robin_of_three(harness)
    # The first to move resigns at once; on another board the second resigns after one
    # move by the first: both inside pbmserv's first-round withdrawal, both losses here.
    _, at_once, first, second, _, _ = games[0]
    assert at_once is not None and second is not None
    sent = tp.resign(harness, at_once, first)
    assert not any("withdr" in s.subject.lower() for s in sent)
    _, after_one, first2, second2, _, _ = games[1]
    assert after_one is not None and second2 is not None
    tp.move(harness, after_one, first2)
    tp.resign(harness, after_one, second2)
    rows = {r[1]: r for r in tp.rows(harness, "rr")}
    assert rows[at_once][4:] == ("game", 0.0)
    assert rows[after_one][4:] == ("game", 1.0)
    with harness.database.read() as session:
        for number, loser in ((at_once, first), (after_one, second2)):
            game = repository.get_game(session, number)
            assert game is not None and game.status == "finished" and game.withdrawn is None
            assert game.players == 2
            seats = {s.user.userid: s for s in game.seats}
            before, after = seats[loser].rating_before, seats[loser].rating_after
            assert before is not None and after is not None and after < before


def test_a_forfeit_before_moving_is_a_no_show_unrated(harness: Harness) -> None:
    games = _round_robin_of_three(harness)
    _, board, first, second, _, _ = games[0]
    assert board is not None and second is not None
    harness.clock.advance(days=7, hours=1)
    harness.tick()
    rows = {r[1]: r for r in tp.rows(harness, "rr")}
    assert rows[board][4:] == ("noshow", 0.0)
    with harness.database.read() as session:
        game = repository.get_game(session, board)
        assert game is not None and all(s.rating_after is None for s in game.seats)


def test_limit_and_reject_do_not_refuse_the_games_of_a_tournament_joined(
    harness: Harness,
) -> None:
    for userid in PLAYERS:
        harness.signup(userid)
    harness.mail("ann@example.org", "abalone reject ann ann-pw")
    harness.mail("bob@example.org", "abalone limit bob bob-pw 1")
    harness.challenge("bob", "cyd", by="cyd@example.org")  # bob at his limit of one
    refused = harness.mail("cyd@example.org", "abalone challenge cyd ann")
    assert "does not accept challenges" in refused[0].body
    refused = harness.mail("cyd@example.org", "abalone challenge cyd bob")
    assert "already plays 1 games" in refused[0].body
    tp.create(harness, tournaments.Plan(name="open", format="roundrobin"))
    tp.join_all(harness, "open", PLAYERS)
    started = tp.start(harness, "open")
    new_boards = [s for s in started if s.subject.startswith("New Abalone Board")]
    assert len(new_boards) == 12  # 3 pairings, twice, a mail to each player
    assert len(tp.open_games(harness, "open")) == 6


def _way_out(mail: Sent) -> str:
    header = str(mail.message["List-Unsubscribe"])
    found = _MAILTO.search(header)
    assert found, header
    return found.group(1)


def test_standings_mails_have_a_way_out_without_a_password(harness: Harness) -> None:
    games = _round_robin_of_three(harness)
    # The single round robin of three: three rounds of one game, one resting each.
    assert [r[0] for r in games] == [1, 2, 3]
    _, board, first, second, _, _ = games[0]
    assert board is not None and second is not None
    sent = tp.play(harness, board, first, second, loser=second)
    after_one = [s for s in sent if s.subject == "Abalone tournament rr standings after round 1"]
    assert sorted(s.to for s in after_one) == [f"{u}@example.org" for u in PLAYERS]
    mail = next(s for s in after_one if s.to == "ann@example.org")
    assert mail.message["List-Unsubscribe"] is not None
    text = " ".join(mail.body.split())  # the lines are wrapped
    assert "ann is entered in a tournament, whose standings are mailed" in text
    assert '"abalone tournament mail rr <userid> <password> off"' in text

    answer = harness.mail("ann@example.org", "unsubscribe", to=_way_out(mail))
    said = " ".join(answer[0].body.split())
    assert "ann gets no standings mails of this tournament any more" in said
    assert '"abalone tournament mail rr ann <password> on"' in said
    with harness.database.read() as session:
        ann = session.scalars(select(User).where(User.userid == "ann")).one()
        entry = session.scalars(select(TournamentEntry).where(
            TournamentEntry.user_id == ann.id)).one()
        assert entry.standings_mail is False

    _, board, first, second, _, _ = games[1]
    assert board is not None and second is not None
    sent = tp.play(harness, board, first, second, loser=second)
    after_two = [s for s in sent if s.subject == "Abalone tournament rr standings after round 2"]
    assert sorted(s.to for s in after_two) == ["bob@example.org", "cyd@example.org"]
    # Back on by mail, with the password.
    back = harness.mail("ann@example.org", "abalone tournament mail rr ann ann-pw on")
    assert back[0].subject == "Abalone tournament rr mail on"
    _, board, first, second, _, _ = games[2]
    assert board is not None and second is not None
    sent = tp.play(harness, board, first, second, loser=second)
    final = [s for s in sent if s.subject == "Abalone tournament rr standings final"]
    assert sorted(s.to for s in final) == [f"{u}@example.org" for u in PLAYERS]


def test_show_says_sign_up_closes_before_the_start_and_closed_after(harness: Harness) -> None:
    from datetime import timedelta

    for userid in PLAYERS:
        harness.signup(userid)
    closes = harness.clock.now() + timedelta(days=3)
    tp.create(harness, tournaments.Plan(name="dated", format="roundrobin",
                                        games_per_pairing=1, signup_until=closes))
    (before,) = harness.mail("ann@example.org", "abalone tournament show dated")
    assert "Sign-up closes:" in before.body and "Sign-up closed:" not in before.body
    tp.join_all(harness, "dated", PLAYERS)
    tp.start(harness, "dated")
    (after,) = harness.mail("ann@example.org", "abalone tournament show dated")
    assert "Sign-up closed:" in after.body and "Sign-up closes:" not in after.body
