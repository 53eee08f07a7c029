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
    robot = robot_service.kept_robot(101, 2)
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
    assert robot_service.kept_robot(101, 2) is robot
    assert robot.duel_tables() is tables and tables.generation == 2
    with harness.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.ply == 4


def test_a_game_sets_its_robots_thinking_time_within_the_cap(harness: Harness, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    budgets: list[tuple[int, str, float]] = []
    real_choose = robot_service.choose

    def spy(turn: robot_service.RobotTurn, budget: float):  # type: ignore[no-untyped-def]
        budgets.append((turn.number, turn.robot, budget))
        return real_choose(turn, budget)

    monkeypatch.setattr(robot_service, "choose", spy)
    harness.signup("fred", "pw")
    mails = harness.challenge("boulder", "fred", options="-think=7", by="fred@example.org")
    assert "Computer players think 7 s a move" in mails["fred"].body
    harness.challenge("boulder", "fred", by="fred@example.org")
    with harness.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.ply == 1
    # The harness caps every robot at 0.05 s: -think asks for more, the cap wins.
    assert budgets == [(101, "boulder", 0.05), (102, "boulder", 0.05)]
    assert robot_service.budget_of(Settings(), "boulder", 7) == 7.0
    assert robot_service.budget_of(Settings(robot_budget=3.0), "boulder", 7) == 3.0
    assert robot_service.budget_of(Settings(), "boulder", None) == ROBOTS["boulder"].budget


def test_bad_think_options_are_refused_and_start_no_game(harness: Harness) -> None:
    harness.signup("fred", "pw")
    for option, words in (
        ("-think=0", "positive whole number"),
        ("-think=61", "at most 60"),
        ("-think=fast", "positive whole number"),
        ("-think", "needs a value"),
    ):
        sent = harness.mail("fred@example.org", f"abalone challenge {option} fred boulder")
        assert len(sent) == 1 and words in sent[0].body, (option, sent[0].body)
    with harness.database.read() as session:
        assert repository.get_game(session, 101) is None


def test_help_explains_think(harness: Harness) -> None:
    body = harness.mail("fred@example.org", "help variants")[0].body
    assert "-think=S" in body and "up to 60" in body
    body = harness.mail("fred@example.org", "help challenge")[0].body
    assert "-think=S" in body


def test_a_kept_robot_serves_only_the_game_that_went_on_from_its_move(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another game under the same number (a database restored from a backup, another
    site's database in the same process) does not inherit the robot's remembered
    positions and tables."""
    monkeypatch.setattr(robot_service, "_players", type(robot_service._players)())
    board = Board()
    board.push(min(board.legal_moves, key=str))

    def turn(at: Board, robot: str = "boulder") -> robot_service.RobotTurn:
        return robot_service.RobotTurn(number=101, version=1, seat=2, robot=robot,
                                       board=at)

    first = robot_service.robot_player(turn(board))
    later = board.copy()
    later.push(min(later.legal_moves, key=str))
    later.push(min(later.legal_moves, key=str))
    assert robot_service.robot_player(turn(later)) is first  # the game went on
    assert robot_service.robot_player(turn(later)) is not first  # the same ply again
    again = robot_service.robot_player(turn(board))  # back before its last move
    assert again is not first
    assert robot_service.robot_player(turn(later, "pebble")) is not again  # another level
