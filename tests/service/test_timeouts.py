"""Reminders, forfeits, unanswered draws and total time: the clock is moved, never waited for."""

from __future__ import annotations

from abalone_pbm.db import repository
from abalone_pbm.service import timeouts
from abalone_pbm.service.robots import ensure_robot_users

from .harness import Harness, Sent


def _players(harness: Harness, *names: str) -> None:
    for name in names:
        harness.signup(name, f"{name}-pw")


def _game(harness: Harness, number: int = 101):  # type: ignore[no-untyped-def]
    with harness.database.read() as session:
        game = repository.get_game(session, number)
        assert game is not None
        game.seats, game.moves  # load them while the session is open
        for seat in game.seats:
            seat.user
        return game


def _text(mail: Sent) -> str:
    """The body with its line breaks as blanks (texts are wrapped)."""
    return " ".join(mail.body.split())


def _subjects(sent: list[Sent]) -> list[tuple[str, str]]:
    return sorted((s.to, s.subject) for s in sent)


def test_reminder_after_seven_days_then_daily(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    new = harness.challenge("fred", "wilma")
    harness.clock.advance(days=6, hours=23)
    assert harness.tick() == []
    harness.clock.advance(hours=1)
    sent = harness.tick()
    assert _subjects(sent) == [("fred@example.org", "Nag: Abalone Board 101 fred")]
    nag = sent[0]
    assert nag.message["Auto-Submitted"] == "auto-generated"
    assert nag.reply_to == new["fred"].reply_to  # the player's own reply address
    assert "7 days" in _text(nag) and "within 14 days" in _text(nag)
    assert "o o o o o" in _text(nag)  # the board
    harness.clock.advance(hours=23)
    assert harness.tick() == []
    harness.clock.advance(hours=1)
    assert _subjects(harness.tick()) == [("fred@example.org", "Nag: Abalone Board 101 fred")]
    assert harness.tick() == []  # once per day, however often the clock ticks


def test_a_move_restarts_the_clock(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    harness.challenge("fred", "wilma", options="-nagtime=2 -forfeittime=4")
    harness.clock.advance(days=2)
    assert _subjects(harness.tick()) == [("fred@example.org", "Nag: Abalone Board 101 fred")]
    harness.mail("fred@example.org", "abalone move 101 fred fred-pw c3-c5,d4")
    harness.clock.advance(days=1)
    assert harness.tick() == []
    harness.clock.advance(days=1)
    sent = harness.tick()
    assert _subjects(sent) == [("wilma@example.org", "Nag: Abalone Board 101 wilma")]
    assert "within 2 days" in _text(sent[0])


def test_forfeit_in_a_two_player_game(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    harness.challenge("fred", "wilma")
    harness.clock.advance(days=21)
    sent = harness.tick()
    assert _subjects(sent) == [
        ("fred@example.org", "Abalone Board 101"), ("wilma@example.org", "Abalone Board 101")
    ]
    assert all(s.message["Auto-Submitted"] == "auto-generated" for s in sent)
    assert "wilma wins (fred forfeited)" in _text(sent[0])
    assert "fred did not move for 21 days and forfeited" in _text(sent[0])
    game = _game(harness)
    assert game.status == "finished" and game.winners == "2"
    assert game.result_reason == "fred forfeited"
    assert game.seats[1].rating_after is not None and game.seats[1].rating_after > 1600
    harness.clock.advance(days=30)
    assert harness.tick() == []


def test_forfeit_with_three_players_resigns_and_goes_on(harness: Harness) -> None:
    _players(harness, "fred", "wilma", "barney")
    harness.challenge("fred", "wilma", "barney")
    harness.clock.advance(days=21)
    sent = harness.tick()
    assert _subjects(sent) == [
        ("barney@example.org", "Abalone Board 101 wilma"),
        ("fred@example.org", "Abalone Board 101 wilma"),
        ("wilma@example.org", "Abalone Board 101 wilma"),
    ]
    assert "fred did not move for 21 days and forfeited" in _text(sent[0])
    game = _game(harness)
    assert game.status == "active" and [s.resigned for s in game.seats] == [True, False, False]
    assert "11111/" in game.position  # fred's marbles stay
    # wilma's turn began at the forfeit: her clock is fresh.
    harness.clock.advance(days=7)
    assert _subjects(harness.tick()) == [("wilma@example.org", "Nag: Abalone Board 101 wilma")]
    harness.clock.advance(days=14)
    sent = harness.tick()
    assert {s.subject for s in sent} == {"Abalone Board 101"}
    assert "barney wins (wilma forfeited)" in _text(sent[0])
    assert _game(harness).winners == "3"


def test_vacation_stops_reminders_and_forfeits(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    harness.challenge("fred", "wilma")
    harness.clock.advance(days=5)
    harness.mail("fred@example.org", "vacation fred fred-pw on")
    harness.clock.advance(days=40)
    assert harness.tick() == []
    assert _game(harness).status == "active"
    sent = harness.mail("fred@example.org", "vacation fred fred-pw off")
    assert "It is your turn on board 101" in _text(sent[0])
    # The 5 days before the vacation still count; the 40 days away do not.
    harness.clock.advance(days=1, hours=23)
    assert harness.tick() == []
    harness.clock.advance(hours=1)
    assert _subjects(harness.tick()) == [("fred@example.org", "Nag: Abalone Board 101 fred")]
    harness.clock.advance(days=14)
    assert {s.subject for s in harness.tick()} == {"Abalone Board 101"}


def test_robots_are_not_reminded_or_forfeited(harness: Harness) -> None:
    _players(harness, "fred")
    with harness.database.write() as session:
        ensure_robot_users(session, harness.clock)
    harness.robots = lambda boards=None: 0  # the robot has not played (its thread is busy, say)
    harness.mail("fred@example.org", "abalone challenge pebble fred")
    harness.clock.advance(days=30)
    assert harness.tick() == []
    assert _game(harness).status == "active"


def test_total_time_ends_the_game(harness: Harness) -> None:
    _players(harness, "fred", "wilma", "barney", "betty")
    harness.challenge("fred", "wilma", options="-totaltime=10")
    harness.challenge("barney", "betty", options="-totaltime=10")
    # On board 102 barney has pushed off one of betty's marbles.
    with harness.database.write() as session:
        game = repository.get_game(session, 102)
        assert game is not None
        game.position = "11111/111111/..111../......../........./......../..222../222222/2222. 2 1,0"
    harness.clock.advance(days=9, hours=23)
    assert {s.subject for s in harness.tick()} == {  # reminders only
        "Nag: Abalone Board 101 fred", "Nag: Abalone Board 102 betty"
    }
    harness.clock.advance(hours=1)
    sent = harness.tick()
    assert {s.subject for s in sent} == {"Abalone Board 101", "Abalone Board 102"}
    draw = next(s for s in sent if s.to == "fred@example.org")
    assert "it is a draw (the total time of 10 days is up with equal scores)" in _text(draw)
    win = next(s for s in sent if s.to == "betty@example.org")
    assert "barney wins (the total time of 10 days is up" in _text(win)
    assert _game(harness, 101).winners == "" and _game(harness, 102).winners == "1"


def test_unanswered_draw_proposal_is_accepted_at_forfeit_age(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    harness.challenge("fred", "wilma")
    with harness.database.write() as session:
        game = repository.get_game(session, 101)
        assert game is not None
        game.proposal, game.proposal_seat, game.proposal_votes = "draw", 2, "2"
    harness.clock.advance(days=21)
    sent = harness.tick()
    assert {s.subject for s in sent} == {"Abalone Board 101"}
    assert "it is a draw" in _text(sent[0])
    assert "fred did not answer the draw proposal within 21 days" in _text(sent[0])
    game = _game(harness)
    assert game.status == "finished" and game.winners == "" and game.proposal is None


def test_a_silent_player_on_vacation_does_not_accept_a_draw(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    harness.challenge("fred", "wilma")
    with harness.database.write() as session:
        game = repository.get_game(session, 101)
        assert game is not None
        game.proposal, game.proposal_seat, game.proposal_votes = "draw", 1, "1"
    harness.mail("wilma@example.org", "vacation wilma wilma-pw on")
    harness.clock.advance(days=21)
    sent = harness.tick()
    assert "wilma wins (fred forfeited)" in _text(sent[0])


def test_tick_summary_and_a_second_process(harness: Harness) -> None:
    _players(harness, "fred", "wilma", "barney")
    harness.challenge("fred", "wilma")
    harness.challenge("barney", "fred")
    harness.clock.advance(days=7)
    now = harness.clock.now()
    summary = timeouts.tick(harness.database, now, harness.settings)
    assert (summary.checked, summary.nagged, summary.forfeited) == (2, 2, 0)
    assert str(summary).startswith("2 reminders, 0 forfeits, 0 draws")
    again = timeouts.tick(harness.database, now, harness.settings)
    assert (again.nagged, again.boards) == (0, [])
    assert len(harness.take_outbox()) == 2


def test_after_a_forfeit_the_next_players_queued_move_plays(harness: Harness) -> None:
    from abalone_pbm.rules import Board, Rules

    _players(harness, "fred", "wilma", "barney")
    harness.challenge("fred", "wilma", "barney")
    board = Board.from_layout("standard", Rules(players=3))
    board.resign(1)
    move = str(next(iter(board.legal_moves)))
    sent = harness.mail("wilma@example.org", f"abalone queue 101 wilma wilma-pw {move}")
    assert not [s for s in sent if "rror" in s.subject], [s.body for s in sent]
    harness.clock.advance(days=21)
    sent = harness.tick()
    assert {s.subject for s in sent} == {"Abalone Board 101 barney"}
    text = _text(sent[0])
    assert "fred did not move for 21 days and forfeited" in text
    assert f"wilma's queued move {move} was played" in text
    game = _game(harness)
    assert game.ply == 1 and game.moves[0].automatic
