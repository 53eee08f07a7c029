"""Fitting the evaluation to results: quiet positions, quiescence leaves, Texel search."""

from __future__ import annotations

import csv
import json
import math
import random
import subprocess
import sys
from pathlib import Path

from robots_helpers import cells, make_position

from abalone_pbm.robots.duel import INFINITY, DuelSearch, DuelTables
from abalone_pbm.robots.endgame import evaluation  # the search's evaluation
from abalone_pbm.robots.features import (
    WEIGHT_NAMES,
    current_weights,
    set_weights,
    threatened_marbles,
)
from abalone_pbm.robots.tuning import (
    LIMIT,
    TARGET,
    Leaf,
    Sample,
    SearchOptions,
    build_problem,
    cross_fitted,
    fit_scale,
    fold_games,
    is_quiet,
    leaf_value,
    load_samples,
    local_search,
    loss,
    quiescence_leaf,
    quiescence_value,
    sample_from_position,
    split_by_game,
)
from abalone_pbm.rules import Board, Rules

ROOT = Path(__file__).resolve().parents[2]
HAND_SET = {
    "MATERIAL": 1000, "PROGRESS": 48, "CENTRE": 80, "COHESION": 40, "LINES": 0, "EDGE": 20,
    "THREAT_NOW": 200, "THREATS": 414, "THREATENED": 158, "EXPOSED": 30, "LEAD_THREATS": 13,
}


def _random_samples(count: int, seed: int, plies: int = 80) -> list[Sample]:
    """Positions of random games (each game its own number), result unknown (0.5)."""
    rng = random.Random(seed)
    out: list[Sample] = []
    game = 0
    while len(out) < count:
        board = Board.from_layout(rng.choice(["standard", "belgian-daisy"]), Rules())
        for _ in range(rng.randrange(10, plies)):
            moves = list(board.generate_legal_moves())
            if not moves or board.outcome() is not None:
                break
            board.push(rng.choice(moves))
        if board.outcome() is None:
            out.append(sample_from_position(board.position(), 0.5, TARGET, game))
            game += 1
    return out


def test_a_positions_static_terms_are_its_evaluation() -> None:
    set_weights(HAND_SET)
    for s in _random_samples(150, seed=3):
        root = Leaf(1, s.me, s.op, s.mine, s.theirs)
        assert leaf_value(root, HAND_SET) == evaluation(s.me, s.op, s.mine, s.theirs)[0]


def test_quiescence_leaf_gives_the_searchs_quiescence_value() -> None:
    set_weights(HAND_SET)
    weights = current_weights()
    moved = 0
    for s in _random_samples(200, seed=4, plies=120):
        search = DuelSearch(DuelTables(), s.target, None, None)
        expected = search.quiesce(s.me, s.op, s.mine, s.theirs, -INFINITY, INFINITY, 0, 0)
        assert quiescence_value(s.me, s.op, s.mine, s.theirs, s.target) == expected
        leaf = quiescence_leaf(s.me, s.op, s.mine, s.theirs, s.target)
        if leaf.terminal is None:
            assert leaf_value(leaf, weights) == expected
        else:
            assert leaf.terminal == expected
        moved += (leaf.me, leaf.op) != (s.me, s.op)
    assert moved > 0  # some lines do go somewhere


def _sample(text: str) -> Sample:
    return sample_from_position(text, 1.0, TARGET, 0)


def test_quiet_filters_keep_and_drop_the_right_positions() -> None:
    set_weights(HAND_SET)
    # Black (1) on b2 c3 can push white's a1 off the board.
    marbles = {**cells("b2 c3 e5 e6 f6", 1), **cells("a1 g7 h8 h7", 2)}
    mover_threatens = _sample(make_position(marbles, turn=1))
    assert threatened_marbles(mover_threatens.me, mover_threatens.op)
    for how in ("mover", "both"):
        assert not is_quiet(mover_threatens, how), how
    assert is_quiet(mover_threatens, "none")
    # The evaluation already counts most of a marble for a threat on the move and
    # against a marble on the edge, so here quiescence stands pat; with five pushed
    # off the push wins the game, and its line leaves the position.
    winning = _sample(make_position(marbles, turn=1, ejected=(5, 0)))
    assert quiescence_leaf(winning.me, winning.op, 5, 0).terminal is not None
    assert not is_quiet(winning, "qsearch")
    assert is_quiet(winning, "none")
    # The same with white to move: only the other side threatens.
    other_threatens = _sample(make_position(marbles, turn=2))
    assert is_quiet(other_threatens, "mover")
    assert not is_quiet(other_threatens, "both")
    # White has no push at all, so its quiescence search stands pat at once.
    assert is_quiet(other_threatens, "qsearch")
    opening = _sample(Board.from_layout("standard").position())
    assert all(is_quiet(opening, how) for how in ("none", "mover", "both", "qsearch"))


def test_positions_of_games_on_the_move_limit_can_be_left_out() -> None:
    samples = _random_samples(20, seed=5)
    mixed = [Sample(s.me, s.op, s.mine, s.theirs, 1.0, LIMIT if i % 2 else TARGET, s.game)
             for i, s in enumerate(samples)]
    assert len(build_problem(mixed, HAND_SET, False, limit_weight=0.0)) == 10
    half = build_problem(mixed, HAND_SET, False, limit_weight=0.5)
    assert len(half) == 20 and sorted(set(half.sample_weights)) == [0.5, 1.0]


def _labelled(samples: list[Sample], weights: dict[str, int], scale: float) -> list[Sample]:
    """The samples with results the true weights predict exactly (soft labels)."""
    problem = build_problem(samples, weights, False)
    out = []
    for s, vector, fixed in zip(problem.samples, problem.vectors, problem.fixed):
        value = fixed + sum(weights[n] * x for n, x in zip(WEIGHT_NAMES, vector))
        out.append(Sample(s.me, s.op, s.mine, s.theirs, 1 / (1 + math.exp(-value / scale)),
                          s.end, s.game))
    return out


def test_fit_scale_finds_the_scale_of_the_results() -> None:
    samples = _labelled(_random_samples(300, seed=6, plies=160), HAND_SET, 700.0)
    problem = build_problem(samples, HAND_SET, False)
    assert abs(fit_scale(problem, HAND_SET) - 700.0) < 20.0


def test_local_search_walks_toward_the_true_weights() -> None:
    truth = dict(HAND_SET)
    samples = _labelled(_random_samples(500, seed=7, plies=160), truth, 600.0)
    train, test = split_by_game(samples, 0.2, seed=1)
    start = {**truth, "CENTRE": 160, "COHESION": -20, "EDGE": 90}
    tuned = ("CENTRE", "COHESION", "EDGE")
    result = local_search(train, test, start, use_qsearch=False, scale=600.0,
                          options=SearchOptions(step=16, min_step=2, max_passes=60, tuned=tuned))
    assert result.train_loss < result.start_train_loss
    assert result.test_loss < result.start_test_loss
    for name in tuned:
        assert abs(result.weights[name] - truth[name]) < abs(start[name] - truth[name]) / 3, name
    untouched = set(WEIGHT_NAMES) - set(tuned)
    assert all(result.weights[n] == start[n] for n in untouched)
    problem = build_problem(train, truth, False)
    assert loss(problem, result.weights, 600.0) < loss(problem, start, 600.0)


def test_a_prior_holds_the_weights_near_the_start() -> None:
    truth = dict(HAND_SET)
    samples = _labelled(_random_samples(300, seed=8, plies=160), truth, 600.0)
    train, test = split_by_game(samples, 0.2, seed=1)
    start = {**truth, "CENTRE": 200}
    free = local_search(train, test, start, use_qsearch=False, scale=600.0,
                        options=SearchOptions(tuned=("CENTRE",)))
    held = local_search(train, test, start, use_qsearch=False, scale=600.0,
                        options=SearchOptions(tuned=("CENTRE",), prior=1000.0))
    assert abs(held.weights["CENTRE"] - 200) < abs(free.weights["CENTRE"] - 200)


def test_selfplay_rows_load_as_games_with_their_ending(tmp_path: Path) -> None:
    out = tmp_path / "positions.csv"
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "selfplay_positions.py"), "--games", "2",
         "--depth", "1", "--movelimit", "30", "--skip", "4", "--layouts",
         "standard,belgian-daisy", "--out", str(out)],
        check=True, capture_output=True, text=True,
    )
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert {row["end"] for row in rows} <= {TARGET, LIMIT}
    samples = load_samples(out)
    assert len(samples) == len(rows) > 0
    assert len({s.game for s in samples}) == 2
    # Results are the side to move's: the two sides of a decided game score 1 and 0.
    first_game = [s for s in samples if s.game == 0]
    assert {s.result for s in first_game[:2]} in ({0.5}, {0.0, 1.0})
    train, test = split_by_game(samples, 0.5, seed=1)
    assert {s.game for s in train}.isdisjoint({s.game for s in test})


def test_fold_means_land_near_the_true_weights() -> None:
    truth = dict(HAND_SET)
    samples = _labelled(_random_samples(400, seed=9, plies=160), truth, 600.0)
    parts = fold_games(samples, 4, seed=2)
    assert sum(len(p) for p in parts) == len(samples)
    assert all(p for p in parts)
    games = [{s.game for s in p} for p in parts]
    assert all(a.isdisjoint(b) for i, a in enumerate(games) for b in games[i + 1:])
    start = {**truth, "CENTRE": 150, "EXPOSED": -40}
    mean, results = cross_fitted(samples, start, 4, seed=2, use_qsearch=False, scale=600.0,
                                 options=SearchOptions(max_passes=60,
                                                       tuned=("CENTRE", "EXPOSED")))
    assert len(results) == 4
    assert all(r.test_loss < r.start_test_loss for r in results)
    for name in ("CENTRE", "EXPOSED"):
        assert abs(mean[name] - truth[name]) < abs(start[name] - truth[name]) / 3, name


def test_fit_tool_writes_weights_that_start_from_the_given_ones(tmp_path: Path) -> None:
    positions = tmp_path / "positions.csv"
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "selfplay_positions.py"), "--games", "4",
         "--depth", "1", "--movelimit", "40", "--out", str(positions)],
        check=True, capture_output=True, text=True,
    )
    start = tmp_path / "start.json"
    start.write_text(json.dumps(HAND_SET))
    fitted = tmp_path / "fitted.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "fit_weights.py"), str(positions), "--quiet",
         "qsearch", "--qsearch", "--held-out", "0.25", "--passes", "2", "--start", str(start),
         "--json", str(fitted)],
        check=True, capture_output=True, text=True,
    )
    assert "quiet (qsearch)" in done.stdout
    weights = json.loads(fitted.read_text())
    assert set(weights) == set(WEIGHT_NAMES) and weights["MATERIAL"] == 1000
    # Two passes of steps of 16 at most from the start.
    assert all(abs(weights[n] - HAND_SET[n]) <= 32 for n in WEIGHT_NAMES)


def test_building_a_problem_gives_the_weights_back() -> None:
    before = current_weights()
    other = {name: value * 2 + 1 for name, value in before.items()}
    problem = build_problem(_random_samples(6, seed=9), other, True)
    assert len(problem) == 6
    assert current_weights() == before
