"""Game commands through the mail path: queue, submit/confirm, preview."""

from __future__ import annotations


from .game_helpers import (
    FRED,
    THREE,
    WILMA,
    expect_errors,
    game,
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


# --------------------------------------------------------------------------- queue
def test_queued_move_plays_itself_when_the_turn_comes(harness: Harness) -> None:
    two_players(harness)
    sent = harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 g7-g5,f6")
    assert [s.subject for s in sent] == ["Abalone Board 101 queue"]
    assert "is queued on board 101" in text(sent[0])
    assert "pw2" not in text(sent[0])
    assert game(harness).ply == 0  # nothing played, nobody else told

    sent = move(harness, "fred", "pw1", FRED[0])
    # One board mail per player, after both moves: fred is to move again.
    assert subjects(sent) == {"Abalone Board 101 fred"}
    body = text(only(sent, FRED_AT))
    assert "wilma's queued move g5-g7,f4 was played as move #2" in body
    assert "2. g5-g7,f4*" in body
    stored = game(harness)
    assert stored.ply == 2
    assert [m.automatic for m in stored.moves] == [False, True]
    assert all(s.queued_move is None for s in stored.seats)


def test_illegal_queued_move_is_reported_and_dropped(harness: Harness) -> None:
    two_players(harness)
    harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 d4,e5")  # no marble of hers on d4
    sent = move(harness, "fred", "pw1", FRED[0])
    dropped = [s for s in sent if s.subject == "Abalone Board 101 queued move not played"]
    assert [s.to for s in dropped] == [WILMA_AT]
    assert "Your queued move d4,e5 on board 101 was not played:" in text(dropped[0])
    assert "d4" in text(dropped[0]).split("not played:")[1]
    assert subjects([s for s in sent if s not in dropped]) == {"Abalone Board 101 wilma"}
    stored = game(harness)
    assert stored.ply == 1 and all(s.queued_move is None for s in stored.seats)


def test_queued_move_with_a_stale_number_is_dropped(harness: Harness) -> None:
    three_players(harness)
    # barney queues for move #2, but he moves third (#3).
    harness.mail("barney@example.org", "abalone queue 101 barney pw3 h4-g4,f4#2")
    move(harness, "fred", "pw1", THREE[0])
    sent = move(harness, "wilma", "pw2", THREE[1])
    dropped = only([s for s in sent if "not played" in s.subject], "barney@example.org")
    assert "queued as move #2, but the next move is #3" in text(dropped)
    assert game(harness).ply == 2


def test_queued_moves_chain_and_can_end_in_the_next_players_turn(harness: Harness) -> None:
    three_players(harness)
    harness.mail("wilma@example.org", "abalone queue 101 wilma pw2 " + THREE[1])
    harness.mail("barney@example.org", "abalone queue 101 barney pw3 " + THREE[2] + "#3")
    sent = move(harness, "fred", "pw1", THREE[0])
    assert subjects(sent) == {"Abalone Board 101 fred"}
    stored = game(harness)
    assert stored.ply == 3
    assert [m.automatic for m in stored.moves] == [False, True, True]


def test_queue_on_your_own_turn_plays_at_once(harness: Harness) -> None:
    two_players(harness)
    sent = harness.mail(FRED_AT, "abalone queue 101 fred pw1 c3-c5,d4", "my comment")
    assert subjects(sent) == {"Abalone Board 101 wilma **"}
    assert "so the move was played at once" in text(only(sent, WILMA_AT))
    assert not game(harness).moves[0].automatic


def test_queue_replace_and_cancel(harness: Harness) -> None:
    two_players(harness)
    harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 g7-g5,f6")
    sent = harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 h7-h5,g6#2")
    assert "It replaces your queued move g7-g5,f6" in text(sent[0])
    assert game(harness).seats[1].queued_move == "h7-h5,g6#2"
    sent = harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 none")
    assert "is cancelled" in text(sent[0])
    assert game(harness).seats[1].queued_move is None
    sent = harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 none")
    assert "You have no queued move on board 101" in text(sent[0])


def test_queue_errors(harness: Harness) -> None:
    two_players(harness)
    harness.signup("barney", "pw3")
    expect_errors(harness, [
        (WILMA_AT, "abalone queue 101 wilma wrong g7-g5,f6", "Invalid password entered"),
        (WILMA_AT, "abalone queue 999 wilma pw2 g7-g5,f6", "Abalone board 999 not found"),
        (BARNEY_AT, "abalone queue 101 barney pw3 g7-g5,f6", "You are NOT playing this game"),
        (WILMA_AT, "abalone queue 101 wilma pw2 hello", "is not a move"),
        (WILMA_AT, "abalone queue 101 wilma pw2 j1,j2", "j1 is not a cell of the board"),
        (WILMA_AT, "abalone queue 101 wilma pw2 g7-g5,f6#1", "move #1 is not yours"),
        (WILMA_AT, "abalone queue 101 wilma", "needs a password"),
    ])
    assert game(harness).seats[1].queued_move is None


def test_queue_in_a_finished_game(harness: Harness) -> None:
    two_players(harness)
    harness.mail(WILMA_AT, "abalone resign 101 wilma pw2")  # withdrawal: game removed
    sent = harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 g7-g5,f6")
    assert sent[0].subject == "Abalone Board 101 Error"
    assert "The game has ended" in text(sent[0])


# ----------------------------------------------------------------- submit, confirm
def test_submit_shows_a_preview_and_confirm_plays_it(harness: Harness) -> None:
    two_players(harness)
    sent = harness.mail(FRED_AT, "abalone submit 101 fred pw1 c3-c5,d4#1")
    assert [(s.to, s.subject) for s in sent] == [(FRED_AT, "Abalone Board 101 submitted")]
    body = text(sent[0])
    assert "Nothing has been played yet" in body
    assert "D- . . . o o o . . /" in body  # the board after the move
    assert "abalone confirm 101 fred <password>" in body
    assert "pw1" not in body
    assert game(harness).ply == 0
    assert game(harness).seats[0].submitted_move == "c3-c5,d4#1"

    sent = harness.mail(FRED_AT, "abalone confirm 101 fred pw1", "Here we go")
    assert subjects(sent) == {"Abalone Board 101 wilma **"}
    assert "Here we go" in text(only(sent, WILMA_AT))
    stored = game(harness)
    assert stored.ply == 1 and stored.moves[0].text == "c3-c5,d4"
    assert stored.seats[0].submitted_move is None


def test_confirm_is_checked_again(harness: Harness) -> None:
    two_players(harness)
    harness.mail(FRED_AT, "abalone submit 101 fred pw1 c3-c5,d4")
    move(harness, "fred", "pw1", "c5,d5")  # fred plays something else meanwhile
    sent = harness.mail(FRED_AT, "abalone confirm 101 fred pw1")
    assert sent[0].subject == "Abalone Board 101 Error"
    assert "It is not your move" in text(sent[0])
    assert game(harness).ply == 1


def test_submit_and_confirm_errors(harness: Harness) -> None:
    two_players(harness)
    harness.signup("barney", "pw3")
    expect_errors(harness, [
        (FRED_AT, "abalone confirm 101 fred pw1", "You have no submitted move on board 101"),
        (FRED_AT, "abalone confirm 101 fred bad", "Invalid password entered"),
        (FRED_AT, "abalone submit 101 fred pw1 e5,e6", "Illegal move e5,e6: e5 is empty"),
        (FRED_AT, "abalone submit 101 fred pw1 c3-c5,d4#4", "received as move #4"),
        (FRED_AT, "abalone submit 102 fred pw1 c3-c5,d4", "Abalone board 102 not found"),
        (WILMA_AT, "abalone submit 101 wilma pw2 g7-g5,f6", "It is not your move"),
        (BARNEY_AT, "abalone submit 101 barney pw3 c3-c5,d4", "You are NOT playing this game"),
    ])
    assert game(harness).ply == 0
    assert all(s.submitted_move is None for s in game(harness).seats)


# ------------------------------------------------------------------------- preview
def test_preview_of_a_board_saves_nothing(harness: Harness) -> None:
    two_players(harness)
    sent = harness.mail("barney@example.org", f"abalone preview 101 {FRED[0]} {WILMA[0]}")
    assert [s.subject for s in sent] == ["Abalone Board 101 preview"]
    body = text(sent[0])
    assert "Nothing is played" in body
    assert "D- . . . o o o . . /" in body and "F- . . x x x . . ." in body
    assert "It is fred's turn" in body and "1. c3-c5,d4" in body
    assert game(harness).ply == 0


def test_preview_from_an_earlier_position(harness: Harness) -> None:
    two_players(harness)
    move(harness, "fred", "pw1", FRED[0])
    move(harness, "wilma", "pw2", WILMA[0])
    sent = harness.mail("barney@example.org", "abalone preview 101#1 g7,f6")
    body = text(sent[0])
    assert "after move #1" in body
    assert "2. g7,f6" in body and "g5-g7" not in body
    assert game(harness).ply == 2


def test_preview_of_a_new_game(harness: Harness) -> None:
    sent = harness.mail("anyone@example.org", f"abalone preview new 3 {THREE[0]} {THREE[1]}")
    assert [s.subject for s in sent] == ["Abalone preview"]
    body = text(sent[0])
    assert "Preview of a new 3-player game" in body
    assert "It is player 3's turn (3)" in body
    assert "A- 1 1 1 . 1 / 7" in body and "C- . . . 1 . . . / 9" in body  # a4 to c4


def test_preview_errors(harness: Harness) -> None:
    two_players(harness)
    expect_errors(harness, [
        (BARNEY_AT, "abalone preview 101 c3-c5,d4 c3-c5,d4",
         "Preview move 2 (c3-c5,d4) cannot be played"),
        (BARNEY_AT, "abalone preview 101#3 c3-c5,d4", "Board 101 has 0 moves"),
        (BARNEY_AT, "abalone preview 555 c3-c5,d4", "Abalone board 555 not found"),
        (BARNEY_AT, "abalone preview new 7 c3-c5,d4", "is not a number of players"),
        (BARNEY_AT, "abalone preview 101 hello", "is not a move"),
    ])
