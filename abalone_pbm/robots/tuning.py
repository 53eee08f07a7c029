"""Fitting the two-player evaluation's weights to game results (Texel tuning).

The data are positions from self-play, each labelled with the result its side to
move went on to score (``tools/selfplay_positions.py``).  A position's value ``v``
(in thousandths of a marble, from the side to move) predicts that result as
``sigmoid(v / K)``; the weights are good when the mean squared error of that
prediction over many positions is small, as in the Texel method:

* :func:`fit_scale` finds ``K`` for the starting weights;
* :func:`local_search` changes one weight at a time by a step, keeps a change only
  when the training loss falls, and stops when the held-out loss no longer falls.

``v`` is either the static evaluation of the position or, as the search sees it,
the value of its quiescence search: :func:`quiescence_leaf` finds the position at
the end of the quiescence search's principal line (the same search as
:meth:`abalone_pbm.robots.duel.DuelSearch.quiesce`), and that leaf's static
evaluation, seen from the root, is the root's value.  The leaf depends on the
weights, so the local search finds the leaves again after each pass.

Because the static evaluation is linear in the weights
(:func:`~abalone_pbm.robots.features.features` times the weights, plus the
hand-set finishing term), each position is kept as its leaf's feature vector, sign
folded in, and the fixed part of the value: trying a weight costs one pass over
the numbers, not a search.
"""

from __future__ import annotations

import csv
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from abalone_pbm.rules import Board

from .bitmoves import EJECT, tactical_children
from .duel import EDGE_PUSH_PLIES, QUIESCENCE_PLIES, WIN
from .endgame import endgame_terms, evaluation
from .features import (
    EDGE,
    FEATURES,
    WEIGHT_NAMES,
    features,
    current_weights,
    hand_set_terms,
    set_weights,
    threatened_marbles,
)

#: The marble's weight: the unit of the evaluation, never tuned (K sets the scale).
ANCHOR: Final = "MATERIAL"
#: How a game ended: a side pushed off the target, or the move limit came first.
TARGET, LIMIT = "target", "limit"
#: Quiet-position filters (see :func:`is_quiet`).
QUIET_FILTERS: Final = ("none", "mover", "both", "qsearch")


@dataclass(frozen=True)
class Sample:
    """A position seen by the side to move, and the result that side scored."""

    me: int
    op: int
    mine: int
    theirs: int
    result: float
    #: :data:`TARGET`, :data:`LIMIT`, or None when the data do not say.
    end: str | None
    #: Positions of one game share the number (held-out sets take whole games).
    game: int
    target: int = 6


@dataclass(frozen=True)
class Leaf:
    """Where a quiescence search from a root ends: a position seen by its own side
    to move, and whether that side is the root's (``sign`` 1) or the other (-1).
    ``terminal`` is the root's value when the line ends by pushing off the target."""

    sign: int
    me: int
    op: int
    mine: int
    theirs: int
    terminal: int | None = None

    def flipped(self) -> Leaf:
        return Leaf(-self.sign, self.me, self.op, self.mine, self.theirs,
                    None if self.terminal is None else -self.terminal)


def sample_from_position(text: str, result: float, end: str | None, game: int) -> Sample:
    board = Board(text)
    seat = board.turn
    return Sample(board.marbles(seat), board.marbles(3 - seat), board.ejected(seat),
                  board.ejected(3 - seat), result, end, game, board.rules.target)


def load_samples(path: Path) -> list[Sample]:
    """The rows of ``tools/selfplay_positions.py`` (with or without the ``end`` and
    ``ply`` columns of its older versions) or of ``finish_probe.py --positions``.  A
    ``game`` column names each row's game; without it a game starts where the ply does
    not follow on, or, without plies, where fewer marbles are pushed off than before."""
    samples: list[Sample] = []
    with path.open() as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in ("position", "result") if name not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)}")
        game = 0
        last_ply: int | None = None
        last_pushed_off = -1
        last_key: str | None = None
        for row in reader:
            sample = sample_from_position(
                row["position"], float(row["result"]), row.get("end") or None, game
            )
            ply = int(row["ply"]) if row.get("ply") else None
            pushed_off = sample.mine + sample.theirs
            key = row.get("game")
            if key is not None:
                new_game = last_key is not None and key != last_key
                last_key = key
            else:
                new_game = (
                    (ply is not None and last_ply is not None and ply != last_ply + 1)
                    or (ply is None and pushed_off < last_pushed_off)
                )
            if new_game and samples:
                game += 1
                sample = Sample(sample.me, sample.op, sample.mine, sample.theirs,
                                sample.result, sample.end, game, sample.target)
            last_ply, last_pushed_off = ply, pushed_off
            samples.append(sample)
    return samples


def is_quiet(sample: Sample, how: str) -> bool:
    """Whether a position is quiet: ``none`` keeps all; ``mover``: the side to move
    cannot push a marble off; ``both``: neither side could; ``qsearch``: the
    quiescence search ends where it starts (its value is the static value)."""
    if how == "none":
        return True
    if how == "mover":
        return not threatened_marbles(sample.me, sample.op)
    if how == "both":
        return not threatened_marbles(sample.me, sample.op) and not threatened_marbles(
            sample.op, sample.me
        )
    if how == "qsearch":
        leaf = quiescence_leaf(sample.me, sample.op, sample.mine, sample.theirs, sample.target)
        return leaf.sign == 1 and leaf.terminal is None and (leaf.me, leaf.op) == (
            sample.me, sample.op
        )
    raise ValueError(f"unknown quiet filter {how!r} (one of {', '.join(QUIET_FILTERS)})")


def quiescence_leaf(me: int, op: int, mine: int, theirs: int, target: int = 6) -> Leaf:
    """The end of the principal line of the quiescence search from this position
    (with the weights in use now); its value, from the root, is :func:`leaf_value`."""
    return _quiesce(me, op, mine, theirs, -10 * WIN, 10 * WIN, 0, target)[1]


def quiescence_value(me: int, op: int, mine: int, theirs: int, target: int = 6) -> int:
    """The quiescence search's value of the position (full window)."""
    return _quiesce(me, op, mine, theirs, -10 * WIN, 10 * WIN, 0, target)[0]


def _quiesce(
    me: int, op: int, mine: int, theirs: int, alpha: int, beta: int, qply: int, target: int,
) -> tuple[int, Leaf]:
    # DuelSearch.quiesce, line for line, with the leaf carried along.
    stand, can_eject, _ = evaluation(me, op, mine, theirs)
    here = Leaf(1, me, op, mine, theirs)
    if stand >= beta or qply >= QUIESCENCE_PLIES:
        return stand, here
    if not can_eject and qply >= EDGE_PUSH_PLIES:
        return stand, here
    if stand > alpha:
        alpha = stand
    kids = tactical_children(me, op, EDGE if qply < EDGE_PUSH_PLIES else 0)
    if not kids:
        return stand, here
    best, best_leaf = stand, here
    kids.sort(key=lambda kid: kid[0], reverse=True)
    for kind, _diff, nme, nop in kids:
        if kind == EJECT:
            if mine + 1 >= target:
                win = WIN - qply - 1
                return win, Leaf(1, me, op, mine, theirs, win)
            gained = mine + 1
        else:
            gained = mine
        value, leaf = _quiesce(nop, nme, theirs, gained, -beta, -alpha, qply + 1, target)
        value = -value
        if value > best:
            best, best_leaf = value, leaf.flipped()
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    return best, best_leaf


def leaf_terms(leaf: Leaf) -> tuple[list[float], float]:
    """(the leaf's features with its sign, the fixed part of its value), both from
    the root: the root's value is their dot product with the weights plus the part."""
    if leaf.terminal is not None:
        return [0.0] * len(FEATURES), float(leaf.terminal)
    vector = features(leaf.me, leaf.op, leaf.mine, leaf.theirs)
    fixed = (hand_set_terms(leaf.me, leaf.op, leaf.mine, leaf.theirs)
             + endgame_terms(leaf.me, leaf.op, leaf.mine, leaf.theirs))
    return [leaf.sign * x for x in vector], float(leaf.sign * fixed)


def leaf_value(leaf: Leaf, weights: Mapping[str, int]) -> float:
    vector, fixed = leaf_terms(leaf)
    return fixed + sum(weights[name] * x for name, x in zip(WEIGHT_NAMES, vector))


@dataclass
class Problem:
    """Positions ready for the loss: per position its terms (see :func:`leaf_terms`),
    result and weight in the loss."""

    vectors: list[list[float]]
    fixed: list[float]
    results: list[float]
    sample_weights: list[float]
    samples: list[Sample] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.results)


def build_problem(
    samples: Sequence[Sample], weights: Mapping[str, int], use_qsearch: bool,
    limit_weight: float = 1.0,
) -> Problem:
    """Each position's terms: its own (static) or its quiescence leaf's under
    ``weights``.  Positions of games that ended on the move limit count
    ``limit_weight`` in the loss (0 leaves them out).  The search reads the global
    weights, so they are set for the quiescence leaves and given back afterwards."""
    before = current_weights()
    set_weights(dict(weights))
    try:
        problem = Problem([], [], [], [], [])
        for s in samples:
            share = limit_weight if s.end == LIMIT else 1.0
            if share <= 0:
                continue
            if use_qsearch:
                leaf = quiescence_leaf(s.me, s.op, s.mine, s.theirs, s.target)
            else:
                leaf = Leaf(1, s.me, s.op, s.mine, s.theirs)
            vector, fixed = leaf_terms(leaf)
            problem.vectors.append(vector)
            problem.fixed.append(fixed)
            problem.results.append(s.result)
            problem.sample_weights.append(share)
            problem.samples.append(s)
        return problem
    finally:
        set_weights(before)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, x))))


def values(problem: Problem, weights: Mapping[str, int]) -> list[float]:
    w = [float(weights[name]) for name in WEIGHT_NAMES]
    return [
        fixed + sum(wj * xj for wj, xj in zip(w, vector))
        for vector, fixed in zip(problem.vectors, problem.fixed)
    ]


def loss_of_values(problem: Problem, vals: Iterable[float], scale: float) -> float:
    """The weighted mean squared error of ``sigmoid(value / scale)`` against the results."""
    total = weight_sum = 0.0
    for v, y, g in zip(vals, problem.results, problem.sample_weights):
        total += g * (y - _sigmoid(v / scale)) ** 2
        weight_sum += g
    return total / weight_sum if weight_sum else 0.0


def loss(problem: Problem, weights: Mapping[str, int], scale: float) -> float:
    return loss_of_values(problem, values(problem, weights), scale)


def fit_scale(problem: Problem, weights: Mapping[str, int], low: float = 50.0,
              high: float = 20_000.0) -> float:
    """K: the evaluation units per logit that fit the results best for ``weights``
    (golden-section search on a log scale; the loss is unimodal in K in practice)."""
    vals = values(problem, weights)
    a, b = math.log(low), math.log(high)
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc = loss_of_values(problem, vals, math.exp(c))
    fd = loss_of_values(problem, vals, math.exp(d))
    for _ in range(40):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = loss_of_values(problem, vals, math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = loss_of_values(problem, vals, math.exp(d))
    return math.exp((a + b) / 2)


def penalty(weights: Mapping[str, int], start: Mapping[str, int], prior: float) -> float:
    """The pull toward the starting weights: ``prior`` per (a marble's worth)^2 of change."""
    return prior * sum(((weights[n] - start[n]) / 1000.0) ** 2 for n in WEIGHT_NAMES)


@dataclass
class SearchResult:
    weights: dict[str, int]
    train_loss: float
    test_loss: float
    start_train_loss: float
    start_test_loss: float
    passes: int
    log: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SearchOptions:
    """How :func:`local_search` walks: its first ``step`` (halved down to ``min_step``
    when a pass changes nothing), the pull ``prior`` toward the start, at most
    ``max_passes`` passes, the weight of positions from games that ran to the move
    limit, and which weights it may change (None: all but the marble's)."""

    step: int = 16
    min_step: int = 2
    prior: float = 0.0
    max_passes: int = 20
    limit_weight: float = 1.0
    tuned: Sequence[str] | None = None


def local_search(
    train: Sequence[Sample],
    test: Sequence[Sample],
    start: Mapping[str, int],
    *,
    use_qsearch: bool,
    scale: float,
    options: SearchOptions = SearchOptions(),
    report: Callable[[str], None] | None = None,
) -> SearchResult:
    """Texel's local search: each pass tries every tuned weight one ``step`` up and
    down and keeps a change when the training loss (plus :func:`penalty`) falls; a
    pass without a change halves the step, down to ``min_step``.  After each pass the
    leaves are found again with the new weights (with ``use_qsearch``) and the
    held-out loss is measured: the weights with the lowest held-out loss are
    returned, and the search stops after two passes without a new lowest."""
    tuned, step, min_step = options.tuned, options.step, options.min_step
    prior, max_passes, limit_weight = options.prior, options.max_passes, options.limit_weight
    names = [n for n in (tuned if tuned is not None else WEIGHT_NAMES) if n != ANCHOR]
    current = {n: int(start[n]) for n in WEIGHT_NAMES}
    log: list[str] = []

    def say(text: str) -> None:
        log.append(text)
        if report is not None:
            report(text)

    def problems(weights: dict[str, int]) -> tuple[Problem, Problem]:
        """The training and held-out positions, valued as the search sees them."""
        return (build_problem(train, weights, use_qsearch, limit_weight),
                build_problem(test, weights, use_qsearch, limit_weight))

    def losses(weights: dict[str, int]) -> tuple[float, float]:
        return loss(train_problem, weights, scale), loss(test_problem, weights, scale)

    train_problem, test_problem = problems(current)
    start_train, start_test = losses(current)
    say(f"start: train loss {start_train:.5f}, held-out {start_test:.5f} "
        f"({len(train_problem)} / {len(test_problem)} positions, K {scale:.0f})")
    best_weights, best_test, best_train = dict(current), start_test, start_train
    index = {n: j for j, n in enumerate(WEIGHT_NAMES)}
    since_best = 0
    passes = 0
    while passes < max_passes:
        passes += 1
        vals = values(train_problem, current)
        base = loss_of_values(train_problem, vals, scale) + penalty(current, start, prior)
        changed = 0
        for name in names:
            j = index[name]
            column = [v[j] for v in train_problem.vectors]
            for delta in (step, -step):
                trial = dict(current)
                trial[name] += delta
                trial_vals = [v + delta * x for v, x in zip(vals, column)]
                score = loss_of_values(train_problem, trial_vals, scale) + penalty(
                    trial, start, prior
                )
                if score < base:
                    current, vals, base = trial, trial_vals, score
                    changed += 1
                    break
        if use_qsearch:  # the quiescence leaves move with the weights
            train_problem, test_problem = problems(current)
        train_loss, test_loss = losses(current)
        say(f"pass {passes} (step {step}): {changed} changes, train loss {train_loss:.5f}, "
            f"held-out {test_loss:.5f}")
        if test_loss < best_test:
            best_weights, best_test, best_train = dict(current), test_loss, train_loss
            since_best = 0
        else:
            since_best += 1
            if since_best >= 2:
                break
        if not changed:
            if step <= min_step:
                break
            step = max(min_step, step // 2)
    return SearchResult(best_weights, best_train, best_test, start_train, start_test, passes, log)


def split_by_game(samples: Sequence[Sample], held_out: float, seed: int) -> tuple[
    list[Sample], list[Sample]
]:
    """(training, held-out) positions, whole games to each side."""
    games = sorted({s.game for s in samples})
    random.Random(seed).shuffle(games)
    cut = set(games[: max(1, round(len(games) * held_out))]) if held_out > 0 else set()
    return [s for s in samples if s.game not in cut], [s for s in samples if s.game in cut]


def fold_games(samples: Sequence[Sample], folds: int, seed: int) -> list[list[Sample]]:
    """The positions in ``folds`` parts of whole games each."""
    games = sorted({s.game for s in samples})
    random.Random(seed).shuffle(games)
    part = {g: i % folds for i, g in enumerate(games)}
    out: list[list[Sample]] = [[] for _ in range(folds)]
    for s in samples:
        out[part[s.game]].append(s)
    return out


def cross_fitted(
    samples: Sequence[Sample],
    start: Mapping[str, int],
    folds: int,
    seed: int,
    *,
    use_qsearch: bool,
    scale: float,
    options: SearchOptions = SearchOptions(),
) -> tuple[dict[str, int], list[SearchResult]]:
    """:func:`local_search` once per fold (that fold held out, the others trained
    on), and the mean of the fitted weights: with few games, one split's choice of
    changes is mostly noise, and what the folds agree on is left in the mean."""
    parts = fold_games(samples, folds, seed)
    results = []
    for i in range(folds):
        train = [s for j, part in enumerate(parts) if j != i for s in part]
        results.append(local_search(train, parts[i], start, use_qsearch=use_qsearch,
                                    scale=scale, options=options))
    mean = {
        name: round(sum(r.weights[name] for r in results) / folds) for name in WEIGHT_NAMES
    }
    return mean, results
