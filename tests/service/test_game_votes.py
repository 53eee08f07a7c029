"""Draw offers and undo requests (move ... propose|undo|accept|reject, and by reply)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from abalone_pbm.db.models import User

from .game_helpers import (
    FRED,
    THREE,
    WILMA,
    expect_errors,
    first_round,
    game,
    move,
    only,
    subjects,
    text,
    three_players,
    two_players,
)
from .harness import Harness, Sent

FRED_AT = "fred@example.org"
WILMA_AT = "wilma@example.org"


def reply(h: Harness, mail: Sent, body: str) -> list[Sent]:
    """Reply to a board mail from its recipient, with ``body``."""
    assert mail.reply_to, mail.subject
    return h.mail(mail.to, "Re: " + mail.subject, body, to=mail.reply_to)


def test_draw_by_command(harness: Harness) -> None:
    two_players(harness)
    first_round(harness)
    sent = harness.mail(FRED_AT, "abalone move 101 fred pw1 propose", "Shall we call it a day?")
    assert subjects(sent) == {"Abalone Board 101 fred **"}
    body = text(only(sent, WILMA_AT))
    assert "fred proposes a draw. Waiting for wilma to accept or reject." in body
    assert "Shall we call it a day?" in body
    assert game(harness).proposal == "draw"

    sent = harness.mail(WILMA_AT, "abalone move 101 wilma pw2 accept")
    assert subjects(sent) == {"Abalone Board 101"}
    body = text(only(sent, FRED_AT))
    assert "All players agreed to a draw." in body
    assert "it is a draw (draw agreed)" in body
    stored = game(harness)
    assert stored.status == "finished" and stored.winners == ""
    with harness.database.read() as session:
        users = {u.userid: u for u in session.scalars(select(User))}
    assert (users["fred"].draws, users["wilma"].draws) == (1, 1)
    assert users["fred"].rated_games == 1 and users["fred"].rating == pytest.approx(1600)


def test_draw_by_reply_needs_every_player(harness: Harness) -> None:
    boards = three_players(harness)
    sent = reply(harness, boards["wilma"], "propose\n\nI am tired.\n-- \nwilma")
    assert subjects(sent) == {"Abalone Board 101 fred **"}
    assert "Waiting for fred and barney to accept or reject." in text(only(sent, FRED_AT))
    fred_mail = only(sent, FRED_AT)
    sent = reply(harness, fred_mail, "accept")
    assert "fred accepts wilma's draw offer." in text(only(sent, "barney@example.org"))
    assert "Waiting for barney to accept" in text(only(sent, "barney@example.org"))
    assert game(harness).status == "active"
    sent = harness.mail(FRED_AT, "abalone move 101 fred pw1 accept")
    assert "You have accepted the draw offer already" in text(sent[0])
    sent = harness.mail("barney@example.org", "abalone move 101 barney pw3 accept")
    assert subjects(sent) == {"Abalone Board 101"}
    assert game(harness).status == "finished"


def test_one_reject_cancels(harness: Harness) -> None:
    three_players(harness)
    harness.mail(FRED_AT, "abalone move 101 fred pw1 propose")
    harness.mail(WILMA_AT, "abalone move 101 wilma pw2 accept")
    sent = harness.mail("barney@example.org", "abalone move 101 barney pw3 reject")
    assert "barney rejected fred's draw offer." in text(only(sent, FRED_AT))
    assert "Waiting for" not in text(only(sent, FRED_AT))
    stored = game(harness)
    assert stored.proposal is None and stored.proposal_votes == "" and stored.status == "active"


def test_proposer_may_withdraw_and_a_move_clears_the_proposal(harness: Harness) -> None:
    two_players(harness)
    harness.mail(WILMA_AT, "abalone move 101 wilma pw2 propose")
    sent = harness.mail(WILMA_AT, "abalone move 101 wilma pw2 reject")
    assert "wilma withdrew their draw offer." in text(only(sent, FRED_AT))
    harness.mail(WILMA_AT, "abalone move 101 wilma pw2 propose")
    sent = move(harness, "fred", "pw1", FRED[0])
    assert "proposes a draw" not in text(only(sent, WILMA_AT))
    assert game(harness).proposal is None


def test_undo_by_reply(harness: Harness) -> None:
    two_players(harness)
    move(harness, "fred", "pw1", FRED[0])
    sent = move(harness, "wilma", "pw2", WILMA[0])
    harness.mail(WILMA_AT, "abalone queue 101 wilma pw2 " + WILMA[1])
    wilma_mail = only(sent, WILMA_AT)
    sent = reply(harness, wilma_mail, "undo\nSorry, I misclicked.")
    assert "wilma asks to take back the last move. Waiting for fred" in text(only(sent, FRED_AT))
    sent = reply(harness, only(sent, FRED_AT), "accept")
    assert subjects(sent) == {"Abalone Board 101 wilma"}
    body = text(only(sent, WILMA_AT))
    assert "Move #2 (wilma: g5-g7,f4) was taken back; all players agreed." in body
    assert "Queued and submitted moves were cancelled." in body
    assert "F- . . x x x . . ." not in body and "G- . . x x x . ." in body
    stored = game(harness)
    assert stored.ply == 1 and [m.text for m in stored.moves] == ["c3-c5,d4"]
    assert stored.position.split(" ")[1] == "2"
    assert all(s.queued_move is None for s in stored.seats)
    # wilma moves again, as move #2.
    sent = move(harness, "wilma", "pw2", "g7,f6#2")
    assert subjects(sent) == {"Abalone Board 101 fred"}


def test_undo_in_three_player_game_goes_back_to_the_right_player(harness: Harness) -> None:
    three_players(harness)
    for userid, password, text_ in zip(("fred", "wilma", "barney", "fred"),
                                       ("pw1", "pw2", "pw3", "pw1"), THREE):
        move(harness, userid, password, text_)
    harness.mail("barney@example.org", "abalone move 101 barney pw3 undo")
    harness.mail(FRED_AT, "abalone move 101 fred pw1 accept")
    sent = harness.mail(WILMA_AT, "abalone move 101 wilma pw2 accept")
    assert subjects(sent) == {"Abalone Board 101 fred"}
    stored = game(harness)
    assert stored.ply == 3 and stored.position.split(" ")[1] == "1"


def test_vote_errors(harness: Harness) -> None:
    two_players(harness)
    harness.signup("barney", "pw3")
    expect_errors(harness, [
        (WILMA_AT, "abalone move 101 wilma pw2 accept",
         "There is no draw offer or undo request to accept on board 101"),
        (WILMA_AT, "abalone move 101 wilma pw2 reject",
         "There is no draw offer or undo request to reject on board 101"),
        (WILMA_AT, "abalone move 101 wilma pw2 undo", "There is no move to take back yet"),
        (WILMA_AT, "abalone move 101 wilma bad propose", "Invalid password entered"),
        ("barney@example.org", "abalone move 101 barney pw3 propose",
         "You are NOT playing this game"),
        (WILMA_AT, "abalone move 102 wilma pw2 propose", "Abalone board 102 not found"),
        (WILMA_AT, "abalone move 101 wilma pw2 undo#3", "takes no move number"),
    ])
    harness.mail(FRED_AT, "abalone move 101 fred pw1 propose")
    expect_errors(harness, [
        (WILMA_AT, "abalone move 101 wilma pw2 propose",
         "fred's draw offer is still waiting for answers"),
        (WILMA_AT, "abalone move 101 wilma pw2 undo",
         "fred's draw offer is still waiting for answers"),
        (FRED_AT, "abalone move 101 fred pw1 accept", "The draw offer is your own"),
    ])
    assert game(harness).proposal == "draw"


def test_votes_after_the_end_are_refused(harness: Harness) -> None:
    two_players(harness)
    first_round(harness)
    harness.mail(FRED_AT, "abalone resign 101 fred pw1")
    sent = harness.mail(WILMA_AT, "abalone move 101 wilma pw2 propose")
    assert "The game has ended" in text(sent[0])


def test_computer_players_reject_draws_and_undos(harness: Harness) -> None:
    from abalone_pbm.robots import ROBOTS

    robot = min(ROBOTS, key=lambda name: ROBOTS[name].level)
    harness.signup("fred", "pw1")
    harness.mail(FRED_AT, f"abalone challenge fred {robot}")
    sent = move(harness, "fred", "pw1", FRED[0])  # the robot answers at once
    assert game(harness).ply == 2
    sent = harness.mail(FRED_AT, "abalone move 101 fred pw1 undo")
    assert f"fred asked to take back the last move; {robot} (computer player) rejected " \
        "it." in text(only(sent, FRED_AT))
    sent = harness.mail(FRED_AT, "abalone move 101 fred pw1 propose")
    assert f"{robot} (computer player) rejected it." in text(only(sent, FRED_AT))
    stored = game(harness)
    assert stored.proposal is None and stored.ply == 2
