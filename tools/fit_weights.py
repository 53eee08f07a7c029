"""Fit the evaluation's weights to game results (Texel tuning).

    python tools/fit_weights.py positions.csv [more.csv ...] [--quiet qsearch] [--qsearch]
        [--limit-weight W] [--prior P] [--start WEIGHTS.json] [--json OUT.json] [--write]
    python tools/fit_weights.py positions.csv --method gradient [--level]

Reads the rows of ``tools/selfplay_positions.py`` and finds weights whose
evaluation ``v`` predicts the side to move's result as ``sigmoid(v / K)`` with the
least mean squared error (see :mod:`abalone_pbm.robots.tuning`).  Whole games are
held out (``--held-out``) to see that the fit generalises.  Which positions count:
``--quiet`` keeps only quiet ones (``mover``: the side to move cannot push a marble
off; ``both``: neither side could; ``qsearch``: the quiescence search ends where it
starts), ``--limit-weight`` weighs those of games that ran to the move limit (0:
left out).

``--method local`` (the default) is Texel's local search from the starting weights:
K is fitted to them, then one weight at a time moves a step up or down while the
training loss falls (``--prior`` pulls toward the start), the held-out loss decides
when to stop; with ``--qsearch`` every position is valued by its quiescence search,
as the engine sees it, not by the static sum.

``--method gradient`` is the older logistic regression on the static features by
gradient descent (little L2), scaled so that one marble stays 1000.  ``--level``
fits it in two stages, because the positional features are confounded with
material: a side that has lost marbles has fewer on the board, so its sum of
distances to the centre, its edge marbles and its adjacent pairs all shrink with
the loss, and the one-stage fit bends those weights to stand in for material.
Stage one fits every weight on all positions, which sets how many logits a marble
is worth; stage two fits only the terms that vary when material is level on the
positions where it is, the others held at their stage-one values.

The fitted weights are printed next to the starting ones; ``--json`` writes them
as a weights file (for ``benchmarks/robots.py --weights-a``), ``--write`` rewrites
``abalone_pbm/robots/weights.py`` with them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots.features import (  # noqa: E402
    WEIGHT_NAMES,
    current_weights,
    features,
    set_weights,
)
from abalone_pbm.robots.tuning import (  # noqa: E402
    ANCHOR,
    LIMIT,
    QUIET_FILTERS,
    Sample,
    build_problem,
    SearchOptions,
    cross_fitted,
    fit_scale,
    is_quiet,
    load_samples,
    local_search,
    split_by_game,
)

WEIGHTS_FILE = Path(__file__).resolve().parent.parent / "abalone_pbm" / "robots" / "weights.py"
#: Evaluation units per logit of the current weights' scale: a marble (1000) is
#: taken to be worth this much in the logistic model at the start.
UNITS_PER_LOGIT = 1000.0


def mse(weights: list[float], rows: list[list[float]], results: list[float]) -> float:
    total = 0.0
    for x, y in zip(rows, results):
        z = sum(w * v for w, v in zip(weights, x))
        total += (y - 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))) ** 2
    return total / len(rows)


def fit(
    rows: list[list[float]], results: list[float], start: list[float], steps: int, rate: float,
    l2: float, frozen: frozenset[int] = frozenset(),
) -> list[float]:
    """Gradient descent on the mean squared error (features scaled to unit spread);
    the weights at the indices ``frozen`` keep their starting values."""
    n, k = len(rows), len(start)
    spread = [
        max(1e-9, math.sqrt(sum(r[j] * r[j] for r in rows) / n)) for j in range(k)
    ]
    scaled = [[r[j] / spread[j] for j in range(k)] for r in rows]
    w = [start[j] * spread[j] for j in range(k)]
    for step in range(steps):
        grad = [0.0] * k
        for x, y in zip(scaled, results):
            z = sum(wj * xj for wj, xj in zip(w, x))
            p = 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))
            g = (p - y) * p * (1.0 - p)
            for j in range(k):
                grad[j] += g * x[j]
        for j in range(k):
            if j in frozen:
                continue
            w[j] -= rate * (2.0 * grad[j] / n + l2 * w[j])
        if step % 100 == 0:
            print(f"  step {step}: mse {mse([w[j] / spread[j] for j in range(k)], rows, results):.5f}",
                  flush=True)
    return [w[j] / spread[j] for j in range(k)]


def write_weights(weights: dict[str, int], source: str) -> None:
    text = f"Fitted by ``tools/fit_weights.py`` to {source}; one marble pushed off is 1000."
    lines = [
        '"""Weights of the two-player evaluation (:mod:`abalone_pbm.robots.features`).',
        "",
        *textwrap.wrap(text, 88),
        '"""',
        "",
    ]
    lines += [f"{name} = {weights[name]}" for name in WEIGHT_NAMES]
    WEIGHTS_FILE.write_text("\n".join(lines) + "\n")


def gradient_fit(
    train: list[Sample], test: list[Sample], current: dict[str, int], args: argparse.Namespace,
) -> list[float]:
    """The logistic fit of the static features by gradient descent (``--level``: the
    positional terms in a second stage on the positions with material level)."""
    def rows_of(samples: list[Sample]) -> tuple[list[list[float]], list[float]]:
        kept = [s for s in samples if args.limit_weight > 0 or s.end != LIMIT]
        return ([features(s.me, s.op, s.mine, s.theirs) for s in kept],
                [s.result for s in kept])

    train_rows, test_rows = rows_of(train), rows_of(test)
    start = [current[name] / UNITS_PER_LOGIT for name in WEIGHT_NAMES]
    print(f"current weights: train mse {mse(start, *train_rows):.5f}, "
          f"held-out mse {mse(start, *test_rows):.5f}")
    fitted = fit(train_rows[0], train_rows[1], start, args.steps, args.rate, args.l2)
    if args.level:
        print(f"stage one (all positions): train mse {mse(fitted, *train_rows):.5f}, "
              f"held-out mse {mse(fitted, *test_rows):.5f}, a marble = {fitted[0]:.3f} logits")
        level = [i for i, row in enumerate(train_rows[0]) if row[0] == 0]
        # The terms that are zero whenever material is level cannot be fitted there.
        frozen = frozenset(
            j for j in range(len(start)) if all(train_rows[0][i][j] == 0 for i in level)
        )
        positional_start = [fitted[j] if j in frozen else start[j] for j in range(len(start))]
        level_train = [train_rows[0][i] for i in level], [train_rows[1][i] for i in level]
        level_test = [r for r in test_rows[0] if r[0] == 0], [
            y for r, y in zip(*test_rows) if r[0] == 0
        ]
        print(f"stage two: {len(level_train[0])} level positions, held: "
              f"{', '.join(WEIGHT_NAMES[j] for j in sorted(frozen))}; current weights: "
              f"held-out mse {mse(start, *level_test):.5f}")
        fitted = fit(level_train[0], level_train[1], positional_start, args.steps, args.rate,
                     args.l2, frozen)
        print(f"stage two fitted: level held-out mse {mse(fitted, *level_test):.5f}")
    print(f"fitted: train mse {mse(fitted, *train_rows):.5f}, "
          f"held-out mse {mse(fitted, *test_rows):.5f}")
    return fitted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("positions", type=Path, nargs="+",
                        help="CSV files of tools/selfplay_positions.py")
    parser.add_argument("--method", choices=("local", "gradient"), default="local",
                        help="Texel local search on integer weights, or gradient descent")
    parser.add_argument("--quiet", choices=QUIET_FILTERS, default="none",
                        help="fit on quiet positions only (see abalone_pbm.robots.tuning)")
    parser.add_argument("--limit-weight", type=float, default=1.0,
                        help="weight of positions from games ended by the move limit (0: left "
                             "out; gradient: any other value keeps them at 1)")
    parser.add_argument("--qsearch", action="store_true",
                        help="local: value positions by their quiescence search, not statically")
    parser.add_argument("--step", type=int, default=16, help="local: first step per weight")
    parser.add_argument("--min-step", type=int, default=2, help="local: smallest step")
    parser.add_argument("--passes", type=int, default=20, help="local: most passes")
    parser.add_argument("--prior", type=float, default=0.0,
                        help="local: loss per (1000 units)^2 of change from the start")
    parser.add_argument("--tune", default=None,
                        help="local: comma-separated weight names to tune (default: all)")
    parser.add_argument("--held-out", type=float, default=0.1,
                        help="share of the games held out to check the fit")
    parser.add_argument("--folds", type=int, default=0,
                        help="local: fit once per fold of the games (that fold held out) "
                             "and take the mean of the weights")
    parser.add_argument("--steps", type=int, default=600, help="gradient: steps")
    parser.add_argument("--rate", type=float, default=2.0, help="gradient: step size")
    parser.add_argument("--l2", type=float, default=1e-4, help="gradient: L2 regularisation")
    parser.add_argument("--level", action="store_true",
                        help="gradient: fit the positional terms on positions with material level")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=Path, default=None,
                        help="JSON weights to start from (default: robots/weights.py)")
    parser.add_argument("--json", type=Path, default=None, help="write the fitted weights here")
    parser.add_argument("--write", action="store_true",
                        help="rewrite abalone_pbm/robots/weights.py with the fitted weights")
    args = parser.parse_args(argv)

    current = current_weights()
    if args.start is not None:
        current.update({n: int(v) for n, v in json.loads(args.start.read_text()).items()})
    set_weights(current)
    samples: list[Sample] = []
    for path in args.positions:
        offset = 1 + max((s.game for s in samples), default=-1)
        samples += [replace(s, game=s.game + offset) for s in load_samples(path)]
    kept = [s for s in samples if is_quiet(s, args.quiet)]
    limit_games = len({s.game for s in kept if s.end == LIMIT})
    print(f"{len(samples)} positions, {len(kept)} quiet ({args.quiet}) from "
          f"{len({s.game for s in kept})} games ({limit_games} ended by the move limit)")
    train, test = split_by_game(kept, args.held_out, args.seed)

    if args.method == "gradient":
        fitted = gradient_fit(train, test, current, args)
        scale = 1000.0 / fitted[0] if fitted[0] > 0 else UNITS_PER_LOGIT
        new = {name: round(w * scale) for name, w in zip(WEIGHT_NAMES, fitted)}
        new[ANCHOR] = 1000
        how = "gradient descent on the static features" + (", --level" if args.level else "")
    else:
        start_problem = build_problem(train, current, args.qsearch, args.limit_weight)
        k = fit_scale(start_problem, current)
        tuned = args.tune.split(",") if args.tune else None
        options = SearchOptions(step=args.step, min_step=args.min_step, prior=args.prior,
                                max_passes=args.passes, limit_weight=args.limit_weight,
                                tuned=tuned)
        how = (f"Texel local search on the {'quiescence' if args.qsearch else 'static'} "
               f"values (K {k:.0f}, prior {args.prior:g}")
        if args.folds > 1:
            new, results = cross_fitted(kept, current, args.folds, args.seed,
                                        use_qsearch=args.qsearch, scale=k, options=options)
            for i, r in enumerate(results):
                print(f"fold {i + 1}: held-out loss {r.start_test_loss:.5f} -> "
                      f"{r.test_loss:.5f} after {r.passes} passes: "
                      + " ".join(f"{n}={r.weights[n]}" for n in WEIGHT_NAMES if n != ANCHOR))
            how += f", mean of {args.folds} folds)"
        else:
            result = local_search(train, test, current, use_qsearch=args.qsearch, scale=k,
                                  options=options, report=lambda t: print(t, flush=True))
            new = result.weights
            how += ")"
    for name in WEIGHT_NAMES:
        print(f"  {name:13s} {current[name]:6d} -> {new[name]:6d}")
    source = (f"{len(kept)} {args.quiet}-quiet self-play positions "
              f"({', '.join(p.name for p in args.positions)}; move-limit games weighted "
              f"{args.limit_weight:g}) by {how}")
    if args.json is not None:
        args.json.write_text(json.dumps(new) + "\n")
        print(f"wrote {args.json}")
    if args.write:
        write_weights(new, source)
        print(f"wrote {WEIGHTS_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
