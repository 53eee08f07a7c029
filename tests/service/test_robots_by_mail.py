"""Computer players through the mail path: challengeable like anyone, moving by themselves."""

from __future__ import annotations

from abalone_pbm.db import repository
from abalone_pbm.rules import Board
from abalone_pbm.service.admin_games import start_admin_game
from abalone_pbm.service.games import GameOptions

from .harness import Harness


def _game(harness: Harness, number: int):  # type: ignore[no-untyped-def]
    with harness.database.read() as session:
        game = repository.get_game(session, number)
        assert game is not None
        seats = {s.seat: s.user.userid for s in game.seats}
        return game.status, game.position, game.ply, seats, game.options


def test_a_robot_answers_a_move_by_mail(harness: Harness) -> None:
    harness.signup("fred", "pw")
    mails = harness.challenge("fred", "boulder")
    assert set(mails) == {"fred"}, "robots get no mail"
    sent = harness.mail("fred@example.org", "abalone move 101 fred pw c3-c5,d4")
    # fred's move, then the robot's answer: two board mails to fred.
    assert [s.subject for s in sent] == ["Abalone Board 101 boulder", "Abalone Board 101 fred"]
    status, position, ply, _, _ = _game(harness, 101)
    assert ply == 2 and status == "active"
    assert "2." in sent[-1].body


def test_robots_play_a_three_player_game_to_its_end(harness: Harness) -> None:
    """A game of robots only is the admin's (``abalone-pbm games start``)."""
    number, _ = start_admin_game(harness.database, harness.settings, harness.clock,
                                 ["-movelimit=45", "pebble", "marble", "boulder"])
    assert number == 101
    harness.robots(None)  # serve's sweep
    status, position, ply, seats, _ = _game(harness, 101)
    assert status == "finished"
    assert ply <= 45
    assert seats == {1: "pebble", 2: "marble", 3: "boulder"}


def test_robots_and_people_finish_a_six_player_game(harness: Harness) -> None:
    people = ["fred", "wilma", "barney"]
    for name in people:
        harness.signup(name, "pw")
    harness.mail(
        "fred@example.org",
        "abalone challenge -movelimit=30 fred pebble wilma marble barney boulder",
    )
    for _ in range(40):
        status, position, ply, seats, options = _game(harness, 101)
        if status != "active":
            break
        board = Board(position, GameOptions.from_json(options).rules(6), ply=ply)
        mover = seats[board.turn]
        assert mover in people, "robots never keep the turn"
        move = sorted(board.legal_moves, key=str)[0]
        sent = harness.mail(f"{mover}@example.org", f"abalone move 101 {mover} pw {move}")
        assert not any("Error" in s.subject for s in sent), [s.body for s in sent]
    status, _, ply, _, _ = _game(harness, 101)
    assert status == "finished" and ply == 30


def test_help_robots_lists_them(harness: Harness) -> None:
    sent = harness.mail("fred@example.org", "help robots")
    body = sent[0].body
    for name in ("pebble", "marble", "boulder"):
        assert name in body
