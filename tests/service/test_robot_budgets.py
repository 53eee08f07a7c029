"""Robot thinking time: per level, per setting, capped; the strongest level by mail;
one robot object per game so that its search tables carry over between its moves."""

from __future__ import annotations

import pytest

from abalone_pbm.config import Settings, load_settings
from abalone_pbm.db import repository
from abalone_pbm.robots import ROBOTS, BoulderRobot
from abalone_pbm.rules import Board
from abalone_pbm.service import robots as robot_service

from .harness import Harness


def test_each_level_has_its_budget_and_the_settings_cap_it() -> None:
    settings = Settings()
    assert robot_service.budget_of(settings, "pebble") == ROBOTS["pebble"].budget
    assert robot_service.budget_of(settings, "avalanche") == 30.0
    tuned = Settings(robot_budgets="avalanche:60, boulder:2")
    assert robot_service.budget_of(tuned, "avalanche") == 60.0
    assert robot_service.budget_of(tuned, "boulder") == 2.0
    capped = Settings(robot_budget=0.5, robot_budgets="avalanche:60")
    assert robot_service.budget_of(capped, "avalanche") == 0.5


def test_bad_robot_budgets_are_refused_by_name() -> None:
    for text in ("avalanche", "avalanche:0", "avalanche:61", ":5", "boulder:ten"):
        with pytest.raises(ValueError, match="ROBOT_BUDGETS"):
            load_settings(environ={"ABALONE_PBM_ROBOT_BUDGETS": text})
    assert load_settings(environ={"ABALONE_PBM_ROBOT_BUDGETS": "avalanche:45"}).robot_budgets


def test_the_strongest_robot_plays_by_mail_and_keeps_its_tables(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.challenge("fred", "avalanche")
    harness.mail("fred@example.org", "abalone move 101 fred pw c3-c5,d4")
    robot = robot_service._players[(101, 2)]
    assert isinstance(robot, BoulderRobot) and robot.name == "avalanche"
    tables = robot.duel_tables()
    assert tables.generation == 1
    with harness.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.ply == 2
        reply = min(str(m) for m in Board(game.position, ply=game.ply).legal_moves)
    sent = harness.mail("fred@example.org", f"abalone move 101 fred pw {reply}")
    assert any(s.subject == "Abalone Board 101 fred" for s in sent)
    # The same robot object answered again, with the table of its first search.
    assert robot_service._players[(101, 2)] is robot
    assert robot.duel_tables() is tables and tables.generation == 2
    with harness.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.ply == 4
