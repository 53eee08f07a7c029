"""``abalone analyze`` through the mail path: the robot's verdict and best line in words,
for finished games and games against a computer player, never for a running game
between people."""

from __future__ import annotations

import re

from abalone_pbm.db import repository
from abalone_pbm.rules import Board

from .harness import Harness, make_harness


def _play(harness: Harness, number: int, players: dict[int, str], plies: int) -> None:
    """Play ``plies`` moves by mail (the first legal move in sorted order)."""
    for _ in range(plies):
        with harness.database.read() as session:
            game = repository.get_game(session, number)
            assert game is not None
            board = Board(game.position, ply=game.ply)
        mover = players[board.turn]
        move = sorted(board.legal_moves, key=str)[0]
        sent = harness.mail(f"{mover}@example.org", f"abalone move {number} {mover} pw {move}")
        assert not any("rror" in s.subject for s in sent), [s.body for s in sent]


def test_a_running_game_between_people_cannot_be_analysed(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.signup("wilma", "pw")
    harness.challenge("fred", "wilma")
    _play(harness, 101, {1: "fred", 2: "wilma"}, 2)
    for sender in ("fred@example.org", "wilma@example.org", "barney@example.org"):
        for command in ("abalone analyze 101", "abalone analyze 101#1", "abalone analyse 101"):
            sent = harness.mail(sender, command)
            assert len(sent) == 1
            assert "between people that is still running" in sent[0].body
            assert "Best line" not in sent[0].body
    with harness.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.ply == 2


def test_a_finished_game_is_analysed_in_words(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.signup("wilma", "pw")
    harness.challenge("fred", "wilma")
    _play(harness, 101, {1: "fred", 2: "wilma"}, 4)
    harness.mail("fred@example.org", "abalone resign 101 fred pw")
    sent = harness.mail("barney@example.org", "abalone analyze 101#3")
    assert [s.subject for s in sent] == ["Abalone Board 101 analysis"], sent[0].body
    body = sent[0].body
    assert "Analysis of Abalone board 101, position after move #3" in body
    assert re.search(r"about even|Advantage (fred|wilma)|can force|cannot avoid", body), body
    # The line starts with move 4, played by wilma (x) who is to move after #3.
    assert re.search(r"^  4\. wilma \(x\) plays [a-i]\d", body, re.M), body
    assert "It is wilma's turn (x)" in body
    # The whole game and the position after the last move can be analysed too.
    body = harness.mail("barney@example.org", "abalone analyze 101")[0].body
    assert re.search(r"^  5\. fred \(o\) plays ", body, re.M), body
    for command, words in (("abalone analyze 101#9", "has 4 moves; analyze 101#0 to #4"),
                           ("abalone analyze 999", "not found"),
                           ("abalone analyze", "Too few words"),
                           ("abalone analyze 101 102", "Too many words")):
        reply = harness.mail("barney@example.org", command)
        assert len(reply) == 1 and words in reply[0].body, (command, reply[0].body)


def test_a_game_against_a_robot_is_analysed_while_it_runs(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.challenge("fred", "boulder")
    harness.mail("fred@example.org", "abalone move 101 fred pw c3-c5,d4")
    sent = harness.mail("fred@example.org", "abalone analyze 101")
    assert [s.subject for s in sent] == ["Abalone Board 101 analysis"]
    assert re.search(r"^  3\. fred \(o\) plays ", sent[0].body, re.M), sent[0].body
    # The analysis changed nothing: it is still fred's move 3.
    with harness.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.ply == 2


def test_help_analyze(harness: Harness) -> None:
    body = harness.mail("fred@example.org", "help analyze")[0].body
    assert "abalone analyze <board>[#<n>]" in body
    assert "between people that is still running cannot be analysed" in " ".join(body.split())


def test_a_three_player_game_with_robots_is_analysed(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.challenge("boulder", "avalanche", "fred", by="fred@example.org")
    sent = harness.mail("fred@example.org", "abalone analyze 101")
    assert [s.subject for s in sent] == ["Abalone Board 101 analysis"]
    body = sent[0].body
    assert re.search(r"^  3\. fred \(3\) plays [a-i]\d", body, re.M), body
    assert re.search(r"about even|Advantage|can force|cannot avoid", body), body
    body = harness.mail("fred@example.org", "abalone analyze 101#0")[0].body
    assert re.search(r"^  1\. boulder \(1\) plays ", body, re.M), body


def test_analyses_are_limited_per_sender(migrated_db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Each analysis holds the worker for a search: one sender gets a few a day, and
    another sender is not held back by them."""
    harness = make_harness(migrated_db_url, tmp_path, analyses_per_sender_daily=2)
    try:
        harness.signup("fred", "pw")
        harness.signup("wilma", "pw")
        harness.challenge("fred", "wilma")
        _play(harness, 101, {1: "fred", 2: "wilma"}, 2)
        harness.mail("fred@example.org", "abalone resign 101 fred pw")
        for _ in range(2):
            sent = harness.mail("barney@example.org", "abalone analyze 101#2")
            assert [s.subject for s in sent] == ["Abalone Board 101 analysis"]
        sent = harness.mail("barney@example.org", "abalone analyze 101#2")
        assert len(sent) == 1 and "at most 2 analyses a day" in sent[0].body
        sent = harness.mail("betty@example.org", "abalone analyze 101#2")
        assert [s.subject for s in sent] == ["Abalone Board 101 analysis"]
    finally:
        harness.database.dispose()


def test_one_mail_runs_one_analysis(harness: Harness) -> None:
    """A multiple of analyses would hold the worker for a search per line: the first
    line is analysed, the others are refused in the summary."""
    harness.signup("fred", "pw")
    harness.signup("wilma", "pw")
    harness.challenge("fred", "wilma")
    _play(harness, 101, {1: "fred", 2: "wilma"}, 2)
    harness.mail("fred@example.org", "abalone resign 101 fred pw")
    lines = "\n".join(["abalone analyze 101#1", "abalone analyze 101#2", "abalone analyze 101#0"])
    sent = harness.mail("barney@example.org", "multiple", lines)
    bodies = "\n".join(s.body for s in sent)
    assert bodies.count("Analysis of Abalone board 101") == 1, bodies
    assert bodies.count("One mail may ask for one analysis") == 2, bodies
