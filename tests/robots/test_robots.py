"""The computer players: legality, determinism, immediate tactics, budgets, many players."""

from __future__ import annotations

import random
import time

import pytest
from robots_helpers import cells, make_position, next_player_can_win, snapshot

from abalone_pbm.robots import (
    ENGINES,
    ROBOTS,
    AlphaBeta,
    BaseRobot,
    Robot,
    SearchInfo,
    get_robot,
    make_engine,
)
from abalone_pbm.rules import Board, GameOverError, Rules

LEVELS = ("pebble", "marble", "boulder", "avalanche")
MIDDLEGAME = (
    "....1/.11.1./..1111./...2121./...21122./..221.2./..221../.222../2.... 1 0,0"
)

# Player 1 has pushed off five; e3-e2,e1 pushes a sixth (x on e1) off the board.
WIN_NOW = make_position(
    {
        **cells("e2 e3 c3 c4 c5 d4 d5", 1),
        **cells("e1 g5 g6 g7 h6 h7 i7 i8", 2),
    },
    turn=1,
    ejected=(5, 0),
)
# Player 2 has pushed off five and threatens e3-e2,e1.  Player 1 could push off a
# fifth marble (g5-h5,i5) but must save e1 instead (e1,d1 or e1,f2).
AVOID_LOSS = make_position(
    {
        **cells("e1 g5 h5 c3 c4 c5 d4 d5 d6", 1),
        **cells("e2 e3 i5 e6 e7 f6", 2),
    },
    turn=1,
    ejected=(4, 5),
)


def test_registry_has_four_levels_in_order() -> None:
    assert list(ROBOTS) == list(LEVELS)
    assert [spec.level for spec in ROBOTS.values()] == [1, 2, 3, 4]
    budgets = [spec.budget for spec in ROBOTS.values()]
    assert budgets == sorted(budgets) and budgets[-1] <= 60
    for name, spec in ROBOTS.items():
        assert spec.name == name and spec.description
        robot = spec.create()
        assert isinstance(robot, Robot) and isinstance(robot, BaseRobot)
        assert robot.name == name
    assert {"random", "greedy", *LEVELS} <= set(ENGINES)
    with pytest.raises(ValueError):
        get_robot("nobody")


@pytest.mark.parametrize("name", ["random", "greedy", *LEVELS])
def test_moves_are_legal_and_board_untouched(name: str) -> None:
    board = Board(MIDDLEGAME)
    before = snapshot(board)
    robot = make_engine(name)
    move = robot.choose_move(board, 5.0, rng_seed=3, max_depth=2)
    assert snapshot(board) == before
    assert move in list(board.generate_legal_moves())


@pytest.mark.parametrize("name", ["random", "greedy", *LEVELS])
def test_same_seed_same_move(name: str) -> None:
    for position in (Board().position(), MIDDLEGAME):
        moves = {
            str(make_engine(name).choose_move(Board(position), 5.0, rng_seed=42, max_depth=3))
            for _ in range(2)
        }
        assert len(moves) == 1, moves


def test_seed_only_breaks_ties() -> None:
    # The start is symmetric: different seeds may pick different (mirror) moves,
    # but the value found is the same.
    values, moves = set(), set()
    for seed in range(6):
        robot = make_engine("boulder")
        moves.add(str(robot.choose_move(Board(), 5.0, rng_seed=seed, max_depth=2)))
        assert robot.last_info is not None
        values.add(robot.last_info.value)
    assert len(values) == 1
    pebble = get_robot("pebble")
    pebble_moves = {str(pebble.choose_move(Board(), 1.0, rng_seed=s)) for s in range(6)}
    assert len(pebble_moves) > 1


@pytest.mark.parametrize("name", LEVELS)
@pytest.mark.parametrize("depth", [None, 1, 3])
def test_takes_an_immediate_win(name: str, depth: int | None) -> None:
    board = Board(WIN_NOW)
    move = get_robot(name).choose_move(board, 1.0, rng_seed=1, max_depth=depth)
    board.push(move)
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1,), str(move)


def test_search_finds_the_win_itself() -> None:
    board = Board(WIN_NOW)
    moves = list(board.generate_legal_moves())
    info = SearchInfo()
    move = AlphaBeta(board.copy()).run(moves, 2, random.Random(0), info)
    assert str(move) == "e3-e2,e1"
    assert info.value is not None and info.value > 900_000


@pytest.mark.parametrize("name", LEVELS)
@pytest.mark.parametrize("seed", range(3))
def test_avoids_an_immediate_loss(name: str, seed: int) -> None:
    board = Board(AVOID_LOSS)
    assert next_player_can_win(Board(AVOID_LOSS).copy()) is False  # P1 to move
    move = get_robot(name).choose_move(board, 1.0, rng_seed=seed, max_depth=2)
    assert str(move) in {"e1,d1", "e1,f2"}
    board.push(move)
    assert not next_player_can_win(board)


def test_search_alone_sees_the_threat() -> None:
    board = Board(AVOID_LOSS)
    info = SearchInfo()
    moves = list(board.generate_legal_moves())
    move = AlphaBeta(board.copy()).run(moves, 2, random.Random(0), info)
    assert str(move) in {"e1,d1", "e1,f2"}


def test_game_over_raises() -> None:
    board = Board(WIN_NOW)
    board.push_text("e3-e2,e1")
    assert board.outcome() is not None
    with pytest.raises(GameOverError):
        get_robot("boulder").choose_move(board, 0.5)


@pytest.mark.parametrize("position", [Board().position(), MIDDLEGAME])
def test_budget_is_kept(position: str) -> None:
    board = Board(position)
    robot = get_robot("boulder")
    # CPU time, not the wall clock: a busy machine may stop the process for a while
    # (the budget is wall-clock time, so the robot then does less work, never more).
    started = time.process_time()
    move = robot.choose_move(board, 0.3, rng_seed=5)
    took = time.process_time() - started
    assert took < 0.6, took
    assert move in list(board.generate_legal_moves())
    assert robot.last_info is not None and robot.last_info.depth >= 2


def test_budget_is_kept_with_six_players() -> None:
    board = Board.from_layout("standard", Rules(players=6))
    for _ in range(6):  # one move each, so the search starts from a real position
        board.push(list(board.generate_legal_moves())[0])
    started = time.process_time()
    get_robot("boulder").choose_move(board, 0.3, rng_seed=5)
    assert time.process_time() - started < 0.6


def _play_out(board: Board, robots: dict[int, BaseRobot], depth: int) -> int:
    plies = 0
    while board.outcome() is None:
        legal = list(board.generate_legal_moves())
        before = snapshot(board)
        move = robots[board.turn].choose_move(board, 5.0, rng_seed=plies, max_depth=depth)
        assert snapshot(board) == before
        assert move in legal
        board.push(move)
        plies += 1
    return plies


@pytest.mark.parametrize(
    ("players", "teams", "limit"), [(3, False, 45), (4, True, 40), (6, False, 36), (6, True, 30)]
)
def test_multi_player_games_run_to_the_end(players: int, teams: bool, limit: int) -> None:
    rules = Rules(players=players, teams=teams, movelimit=limit)
    board = Board.from_layout("standard", rules)
    names = ("boulder", "marble", "pebble")
    robots = {seat: get_robot(names[(seat - 1) % 3]) for seat in range(1, players + 1)}
    plies = _play_out(board, robots, depth=2)
    assert 0 < plies <= limit
    assert board.outcome() is not None


def test_two_player_game_to_the_end() -> None:
    board = Board.from_layout("belgian-daisy", Rules(movelimit=300))
    robots: dict[int, BaseRobot] = {1: get_robot("marble"), 2: make_engine("random")}
    _play_out(board, robots, depth=1)
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1,)


def test_ko_and_target_options_are_respected() -> None:
    # Under -ko every push of the rules core probes the next player's moves, so
    # searching is slow: keep this game short and shallow.
    rules = Rules(ko=True, target=2, movelimit=30)
    board = Board.from_layout("german-daisy", rules)
    robots: dict[int, BaseRobot] = {1: get_robot("boulder"), 2: get_robot("marble")}
    _play_out(board, robots, depth=1)
    outcome = board.outcome()
    assert outcome is not None
    assert max(board.ejected_counts) >= 2 or "move limit" in outcome.reason


@pytest.mark.parametrize("name", LEVELS)
def test_zero_budget_still_gives_a_legal_move(name: str) -> None:
    board = Board(MIDDLEGAME)
    started = time.process_time()  # CPU time: see test_budget_is_kept
    move = get_robot(name).choose_move(board, 0.0, rng_seed=1)
    assert time.process_time() - started < 0.2
    assert move in list(board.generate_legal_moves())
