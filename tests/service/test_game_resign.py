"""pbmserv's resign: withdrawal in the first round, waiting for the turn later."""

from __future__ import annotations

from .game_helpers import (
    FRED,
    THREE,
    WILMA,
    first_round,
    game,
    games,
    move,
    only,
    subjects,
    text,
    three_players,
    two_players,
)
from .harness import Harness

FRED_AT = "fred@example.org"
WILMA_AT = "wilma@example.org"
BARNEY_AT = "barney@example.org"


def test_withdrawal_from_a_two_player_game_removes_it(harness: Harness) -> None:
    boards = two_players(harness)
    harness.signup("betty", "pw4")
    harness.mail("betty@example.org", "abalone subscribe 101 betty pw4")
    move(harness, "fred", "pw1", FRED[0])
    sent = harness.mail(WILMA_AT, "abalone resign 101 wilma pw2", "Sorry, no time.")
    assert sorted(s.to for s in sent) == ["betty@example.org", FRED_AT, WILMA_AT]
    assert subjects(sent) == {"Abalone Board 101"}
    body = text(only(sent, FRED_AT))
    assert "board 101 has been removed: wilma withdrew before the end of the first round" \
        in body
    assert "not rated" in body and "Sorry, no time." in body
    stored = game(harness)
    assert stored.status == "aborted" and stored.withdrawn == "wilma"
    sent = move(harness, "fred", "pw1", FRED[1])
    assert "The game has ended" in text(sent[0])
    # The old reply address no longer moves anything either.
    sent = harness.mail(FRED_AT, "Re: x", "b2-b4,c3", to=boards["fred"].reply_to)
    assert "The game has ended" in text(sent[0])


def test_withdrawal_restarts_a_three_player_game_without_the_player(harness: Harness) -> None:
    boards = three_players(harness)
    harness.mail(FRED_AT, "abalone queue 101 fred pw1 c4,d4")  # dropped by the restart
    move(harness, "fred", "pw1", THREE[0])
    sent = harness.mail(BARNEY_AT, "abalone resign 101 barney pw3")  # out of turn: at once
    assert subjects(sent) == {"New Abalone Board 101 fred"}
    assert sorted(s.to for s in sent) == [BARNEY_AT, FRED_AT, WILMA_AT]
    fred_mail = only(sent, FRED_AT)
    assert "barney withdrew before the end of the first round" in text(fred_mail)
    assert "1. fred plays o, moves first" in text(fred_mail)
    assert "2. wilma plays x" in text(fred_mail)
    assert "C- . . o o o . . / 9" in text(fred_mail)  # the two-player start
    assert fred_mail.reply_to and fred_mail.reply_to != boards["fred"].reply_to
    assert only(sent, BARNEY_AT).reply_to is None
    stored = game(harness)
    assert stored.number == 101 and stored.players == 2 and stored.ply == 0
    assert [(s.seat, s.user.userid) for s in stored.seats] == [(1, "fred"), (2, "wilma")]
    assert stored.moves == [] and all(s.queued_move is None for s in stored.seats)
    assert len(games(harness)) == 1
    # The old reply address is dead, the new one works.
    sent = harness.mail(FRED_AT, "Re: x", FRED[0], to=boards["fred"].reply_to)
    assert "This reply address is not valid for board 101" in text(sent[0])
    sent = harness.mail(FRED_AT, "Re: x", FRED[0], to=fred_mail.reply_to)
    assert subjects(sent) == {"Abalone Board 101 wilma"}
    # The withdrawal is told until the first round is over.
    assert "barney withdrew" in text(only(sent, WILMA_AT))
    sent = move(harness, "wilma", "pw2", WILMA[0])
    assert "barney withdrew" not in text(only(sent, WILMA_AT))


def test_withdrawal_from_a_four_player_team_game_drops_the_teams(harness: Harness) -> None:
    for name in ("fred", "wilma", "barney", "betty"):
        harness.signup(name, "pw")
    harness.challenge("fred", "wilma", "barney", "betty", options="-teams")
    sent = harness.mail("betty@example.org", "abalone resign 101 betty pw")
    assert "the game is played without teams" in text(only(sent, FRED_AT))
    assert game(harness).players == 3


def test_resignation_out_of_turn_waits_for_the_turn(harness: Harness) -> None:
    three_players(harness)
    for userid, password, text_ in zip(("fred", "wilma", "barney"), ("pw1", "pw2", "pw3"),
                                       THREE):
        move(harness, userid, password, text_)
    sent = harness.mail(BARNEY_AT, "abalone resign 101 barney pw3")
    assert [(s.to, s.subject) for s in sent] == [(BARNEY_AT, "Abalone Board 101 resignation")]
    assert "takes effect when your turn comes" in text(sent[0])
    assert game(harness).seats[2].resign_pending
    assert "send the same resign again" in text(sent[0])
    # A second resign before the turn comes takes the first back ...
    sent = harness.mail(BARNEY_AT, "abalone resign 101 barney pw3")
    assert [(s.to, s.subject) for s in sent] == [
        (BARNEY_AT, "Abalone Board 101 resignation cancelled")]
    assert "you play on" in text(sent[0])
    assert not game(harness).seats[2].resign_pending
    # ... and a third one is a resignation again.
    harness.mail(BARNEY_AT, "abalone resign 101 barney pw3")
    assert game(harness).seats[2].resign_pending
    move(harness, "fred", "pw1", THREE[3])
    sent = move(harness, "wilma", "pw2", THREE[4])
    # barney's turn came: he resigned, and it is fred's turn again.
    assert subjects(sent) == {"Abalone Board 101 fred"}
    assert "barney resigned." in text(only(sent, BARNEY_AT))
    stored = game(harness)
    assert stored.seats[2].resigned and not stored.seats[2].resign_pending
    assert stored.status == "active" and stored.position.split(" ")[1] == "1"


def test_pending_resignation_ends_a_two_player_game(harness: Harness) -> None:
    two_players(harness)
    first_round(harness)
    harness.mail(WILMA_AT, "abalone resign 101 wilma pw2")  # fred is to move
    sent = move(harness, "fred", "pw1", FRED[1])
    assert subjects(sent) == {"Abalone Board 101"}
    body = text(only(sent, FRED_AT))
    assert "fred wins (wilma resigned)" in body
    stored = game(harness)
    assert stored.status == "finished" and stored.winners == "1"


def test_resignation_on_turn_applies_at_once(harness: Harness) -> None:
    two_players(harness)
    first_round(harness)
    sent = harness.mail(FRED_AT, "Re: abalone resign 101 fred pw1")
    assert subjects(sent) == {"Abalone Board 101"}
    assert "wilma wins (fred resigned)" in text(only(sent, WILMA_AT))


def test_resign_errors(harness: Harness) -> None:
    two_players(harness)
    harness.signup("barney", "pw3")
    sent = harness.mail(BARNEY_AT, "abalone resign 101 barney pw3")
    assert "You are NOT playing this game" in text(sent[0])
    sent = harness.mail(WILMA_AT, "abalone resign 101 wilma nope")
    assert "Invalid password entered" in text(sent[0])
    sent = harness.mail(WILMA_AT, "abalone resign 303 wilma pw2")
    assert "Abalone board 303 not found" in text(sent[0])
    assert game(harness).status == "active"


def test_a_player_whose_resignation_waits_still_votes(harness: Harness) -> None:
    three_players(harness)
    for userid, password, text_ in zip(("fred", "wilma", "barney"), ("pw1", "pw2", "pw3"),
                                       THREE):
        move(harness, userid, password, text_)
    harness.mail(WILMA_AT, "abalone resign 101 wilma pw2")
    harness.mail(FRED_AT, "abalone move 101 fred pw1 propose")
    harness.mail(BARNEY_AT, "abalone move 101 barney pw3 accept")
    sent = harness.mail(WILMA_AT, "abalone move 101 wilma pw2 accept")
    assert subjects(sent) == {"Abalone Board 101"}
    assert game(harness).status == "finished" and game(harness).winners == ""


def test_a_cancelled_resignation_leaves_the_player_in_the_game(harness: Harness) -> None:
    two_players(harness)
    first_round(harness)
    harness.mail(WILMA_AT, "abalone resign 101 wilma pw2")  # fred is to move
    harness.mail(WILMA_AT, "abalone resign 101 wilma pw2")  # taken back
    sent = move(harness, "fred", "pw1", FRED[1])
    assert subjects(sent) == {"Abalone Board 101 wilma"}
    sent = move(harness, "wilma", "pw2", WILMA[1])
    assert subjects(sent) == {"Abalone Board 101 fred"}
