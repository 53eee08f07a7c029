"""Robots in games of 3, 4 and 6 players through the mail path, with the best-reply
search of the strongest levels: every game reaches its end (the target or the move
limit) with no error mail, the people moving by mail, the robots by themselves."""

from __future__ import annotations

import pytest

from abalone_pbm.db import repository
from abalone_pbm.robots import BoulderRobot
from abalone_pbm.rules import Board
from abalone_pbm.service import robots as robot_service
from abalone_pbm.service.games import GameOptions

from .harness import Harness

ROBOTS = ("boulder", "avalanche", "marble", "pebble")


@pytest.mark.parametrize(
    ("seats", "options", "movelimit"),
    [
        (("boulder", "avalanche", "fred"), "", 27),
        (("boulder", "fred", "avalanche", "wilma"), "-teams", 28),
        (("fred", "boulder", "wilma", "avalanche", "marble", "pebble"), "", 30),
    ],
    ids=["3", "4-teams", "6"],
)
def test_robots_play_many_player_games_by_mail(
    harness: Harness, seats: tuple[str, ...], options: str, movelimit: int
) -> None:
    people = [name for name in seats if name not in ROBOTS]
    for name in people:
        harness.signup(name, "pw")
    sent = harness.mail(
        f"{people[0]}@example.org",
        f"abalone challenge {options} -movelimit={movelimit} {' '.join(seats)}",
    )
    assert not any("rror" in s.subject for s in sent), [s.body for s in sent]
    for _ in range(movelimit):
        with harness.database.read() as session:
            game = repository.get_game(session, 101)
            assert game is not None
            if game.status != "active":
                break
            rules = GameOptions.from_json(game.options).rules(len(seats))
            board = Board(game.position, rules, ply=game.ply)
        mover = seats[board.turn - 1]
        assert mover in people, "a robot never keeps the turn"
        move = sorted(board.legal_moves, key=str)[0]
        sent = harness.mail(f"{mover}@example.org", f"abalone move 101 {mover} pw {move}")
        assert not any("rror" in s.subject for s in sent), [s.body for s in sent]
    with harness.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.status == "finished"
        final = Board(game.position, GameOptions.from_json(game.options).rules(len(seats)),
                      ply=game.ply)
        robot_moves = [m for m in game.moves if seats[m.seat - 1] in ("boulder", "avalanche")]
    outcome = final.outcome()
    assert outcome is not None and (game.ply == movelimit or "pushed off" in outcome.reason)
    assert len(robot_moves) >= 2 * (game.ply // len(seats)) - 2
    # The strongest levels played with the best-reply search, tables kept per seat.
    for seat, name in enumerate(seats, start=1):
        if name in ("boulder", "avalanche"):
            robot = robot_service.kept_robot(101, seat)
            assert isinstance(robot, BoulderRobot) and robot._multi is not None
