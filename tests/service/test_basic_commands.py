"""Server and game commands of the first mail-server issue, through the mail path."""

from __future__ import annotations

from .harness import Harness


def test_signup_then_duplicate_userid(harness: Harness) -> None:
    harness.signup("fred", "chocolate")
    sent = harness.mail("other@example.org", "signup fred secret")
    assert [s.subject for s in sent] == ["Abalone error"]
    assert "already taken" in sent[0].body
    assert "secret" not in sent[0].body


def test_challenge_needs_existing_users(harness: Harness) -> None:
    harness.signup("fred")
    sent = harness.mail("fred@example.org", "abalone challenge fred nobody")
    assert sent[0].subject == "Abalone error"
    assert "Invalid userid" in sent[0].body


def test_board_numbers_start_at_101(harness: Harness) -> None:
    for name in ("fred", "wilma", "barney"):
        harness.signup(name)
    first = harness.challenge("fred", "wilma")
    second = harness.challenge("wilma", "barney", "fred")
    assert first["fred"].subject == "New Abalone Board 101 fred"
    assert second["barney"].subject == "New Abalone Board 102 wilma"
    assert "3 . . . . . . 2" in second["barney"].body.replace("D- ", "")


def test_move_with_ply_number(harness: Harness) -> None:
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    harness.challenge("fred", "wilma")
    sent = harness.mail("fred@example.org", "abalone move 101 fred pw1 c3-c5,d4#2")
    assert sent[0].subject == "Abalone Board 101 Error"
    assert "received as move #2" in sent[0].body
    sent = harness.mail("fred@example.org", "abalone mvoe 101 fred pw1 C3 - C5 , D4 #1")
    assert {s.subject for s in sent} == {"Abalone Board 101 wilma"}


def test_change_password_and_address(harness: Harness) -> None:
    harness.signup("fred", "old")
    sent = harness.mail("fred@example.org", "change password fred old new")
    assert sent[0].subject == "Abalone password changed"
    sent = harness.mail("fred@example.org", "change address fred old fred@new.example")
    assert "Invalid password" in sent[0].body
    sent = harness.mail("fred@example.org", "change address fred new fred@new.example")
    assert "fred@new.example" in sent[0].body


def test_resign_ends_a_two_player_game(harness: Harness) -> None:
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    harness.challenge("fred", "wilma")
    harness.mail("fred@example.org", "abalone move 101 fred pw1 c3-c5,d4")
    harness.mail("wilma@example.org", "abalone move 101 wilma pw2 g7-g5,f6")
    harness.mail("fred@example.org", "abalone move 101 fred pw1 b2-b4,c3")
    # After the first round, on wilma's turn: the resignation ends the game at once.
    sent = harness.mail("wilma@example.org", "abalone resign 101 wilma pw2")
    subjects = {s.subject for s in sent}
    assert subjects == {"Abalone Board 101"}
    assert any("fred wins" in s.body and "wilma resigned" in s.body for s in sent)
    sent = harness.mail("fred@example.org", "abalone move 101 fred pw1 c3-c5,d4")
    assert "The game has ended" in sent[0].body


def test_show_earlier_position(harness: Harness) -> None:
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    harness.challenge("fred", "wilma")
    harness.mail("fred@example.org", "abalone move 101 fred pw1 c3-c5,d4")
    sent = harness.mail("barney@example.org", "abalone show 101#0")
    assert "C- . . o o o . . / 9" in sent[0].body
    sent = harness.mail("barney@example.org", "abalone show 101")
    assert "D- . . . o o o . . /" in sent[0].body


def test_multiple_runs_each_line(harness: Harness) -> None:
    sent = harness.mail(
        "fred@example.org",
        "multiple",
        "signup fred pw1\nsignup wilma pw2 wilma@example.org\nbogus command\n",
    )
    # One summary answers the sender; wilma's address (not the sender's) is asked to
    # confirm and gets nothing else.
    assert sorted(s.to for s in sent) == ["fred@example.org", "wilma@example.org"]
    summary = next(s for s in sent if s.to == "fred@example.org")
    assert summary.subject == "Abalone multiple"
    assert next(s for s in sent if s.to == "wilma@example.org").subject.startswith(
        "confirm address ")
    body = summary.body.replace("\r\n", "\n")
    assert "2 done, 1 failed, 0 not processed" in body
    assert "Abalone signup fred" in body and "Abalone signup wilma" in body
    assert "-> failed: Unknown command" in body
    assert "pw1" not in body and "pw2" not in body and "********" in body
