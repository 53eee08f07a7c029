"""Fit the evaluation's weights to game results (Texel-style logistic regression).

    python tools/fit_weights.py positions.csv [--level] [--start WEIGHTS.json] [--write]

Reads the rows of ``tools/selfplay_positions.py`` and finds the weights ``w`` that
make ``sigmoid(w . features)`` predict the side to move's result best (least
squares on the probability, as in Texel tuning, with a little L2 regularisation),
by gradient descent from the current weights.  The fitted weights are scaled so
that one marble pushed off stays 1000 and printed next to the current ones, with
the mean squared error of each on the data; ``--write`` rewrites
``abalone_pbm/robots/weights.py`` with them.

``--level`` fits in two stages, because the positional features are confounded
with material: a side that has lost marbles has fewer on the board, so its sum of
distances to the centre, its edge marbles and its adjacent pairs all shrink with
the loss, and the one-stage fit bends those weights to stand in for material
(over all positions the centre feature correlates negatively with the result).
Stage one fits every weight on all positions, which sets how many logits a marble
is worth (the scale); stage two fits only the terms that vary when material is
level on the positions where it is, the others held at their stage-one values.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots.features import FEATURES, WEIGHT_NAMES, current_weights  # noqa: E402

WEIGHTS_FILE = Path(__file__).resolve().parent.parent / "abalone_pbm" / "robots" / "weights.py"
#: Evaluation units per logit of the current weights' scale: a marble (1000) is
#: taken to be worth this much in the logistic model at the start.
UNITS_PER_LOGIT = 1000.0


def load(path: Path) -> tuple[list[list[float]], list[float]]:
    rows, results = [], []
    with path.open() as handle:
        reader = csv.reader(handle)
        header = next(reader)
        if header[2:] != list(FEATURES):
            raise SystemExit(f"{path}: the columns are not this version's features")
        for row in reader:
            results.append(float(row[1]))
            rows.append([float(x) for x in row[2:]])
    return rows, results


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
    lines = [
        '"""Weights of the two-player evaluation (:mod:`abalone_pbm.robots.features`).',
        "",
        f"Fitted by ``tools/fit_weights.py`` to {source}; one marble pushed off is 1000.",
        '"""',
        "",
    ]
    lines += [f"{name} = {weights[name]}" for name in WEIGHT_NAMES]
    WEIGHTS_FILE.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("positions", type=Path)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--rate", type=float, default=2.0)
    parser.add_argument("--l2", type=float, default=1e-4)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=Path, default=None,
                        help="JSON weights to start from (default: robots/weights.py)")
    parser.add_argument("--level", action="store_true",
                        help="fit the positional terms on positions with material level")
    args = parser.parse_args(argv)

    rows, results = load(args.positions)
    # Hold out a tenth of the positions to see that the fit generalises.
    order = list(range(len(rows)))
    random.Random(args.seed).shuffle(order)
    cut = len(order) // 10
    test = [rows[i] for i in order[:cut]], [results[i] for i in order[:cut]]
    train = [rows[i] for i in order[cut:]], [results[i] for i in order[cut:]]

    current = current_weights()
    if args.start is not None:
        current.update({n: int(v) for n, v in json.loads(args.start.read_text()).items()})
    start = [current[name] / UNITS_PER_LOGIT for name in WEIGHT_NAMES]
    print(f"{len(rows)} positions; current weights: train mse {mse(start, *train):.5f}, "
          f"held-out mse {mse(start, *test):.5f}")
    fitted = fit(train[0], train[1], start, args.steps, args.rate, args.l2)
    if args.level:
        print(f"stage one (all positions): train mse {mse(fitted, *train):.5f}, "
              f"held-out mse {mse(fitted, *test):.5f}, a marble = {fitted[0]:.3f} logits")
        level = [i for i, row in enumerate(train[0]) if row[0] == 0]
        # The terms that are zero whenever material is level cannot be fitted there.
        frozen = frozenset(
            j for j in range(len(start)) if all(train[0][i][j] == 0 for i in level)
        )
        positional_start = [fitted[j] if j in frozen else start[j] for j in range(len(start))]
        level_train = [train[0][i] for i in level], [train[1][i] for i in level]
        level_test = [r for r in test[0] if r[0] == 0], [
            y for r, y in zip(*test) if r[0] == 0
        ]
        print(f"stage two: {len(level_train[0])} level positions, held: "
              f"{', '.join(WEIGHT_NAMES[j] for j in sorted(frozen))}; current weights: "
              f"held-out mse {mse(start, *level_test):.5f}")
        fitted = fit(level_train[0], level_train[1], positional_start, args.steps, args.rate,
                     args.l2, frozen)
        print(f"stage two fitted: level held-out mse {mse(fitted, *level_test):.5f}")
    print(f"fitted: train mse {mse(fitted, *train):.5f}, held-out mse {mse(fitted, *test):.5f}")
    scale = 1000.0 / fitted[0] if fitted[0] > 0 else UNITS_PER_LOGIT
    new = {name: round(w * scale) for name, w in zip(WEIGHT_NAMES, fitted)}
    new["MATERIAL"] = 1000
    for name in WEIGHT_NAMES:
        print(f"  {name:13s} {current[name]:6d} -> {new[name]:6d}")
    if args.write:
        how = " (positional terms on the material-level ones, --level)" if args.level else ""
        write_weights(new, f"{len(rows)} self-play positions ({args.positions.name}){how}")
        print(f"wrote {WEIGHTS_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
