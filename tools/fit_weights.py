"""Fit the evaluation's weights to game results (Texel-style logistic regression).

    python tools/fit_weights.py positions.csv [--write]

Reads the rows of ``tools/selfplay_positions.py`` and finds the weights ``w`` that
make ``sigmoid(w . features)`` predict the side to move's result best (least
squares on the probability, as in Texel tuning, with a little L2 regularisation),
by gradient descent from the current weights.  The fitted weights are scaled so
that one marble pushed off stays 1000 and printed next to the current ones, with
the mean squared error of each on the data; ``--write`` rewrites
``abalone_pbm/robots/weights.py`` with them.
"""

from __future__ import annotations

import argparse
import csv
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
    l2: float,
) -> list[float]:
    """Gradient descent on the mean squared error (features scaled to unit spread)."""
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
    args = parser.parse_args(argv)

    rows, results = load(args.positions)
    # Hold out a tenth of the positions to see that the fit generalises.
    order = list(range(len(rows)))
    random.Random(args.seed).shuffle(order)
    cut = len(order) // 10
    test = [rows[i] for i in order[:cut]], [results[i] for i in order[:cut]]
    train = [rows[i] for i in order[cut:]], [results[i] for i in order[cut:]]

    current = current_weights()
    start = [current[name] / UNITS_PER_LOGIT for name in WEIGHT_NAMES]
    print(f"{len(rows)} positions; current weights: train mse {mse(start, *train):.5f}, "
          f"held-out mse {mse(start, *test):.5f}")
    fitted = fit(train[0], train[1], start, args.steps, args.rate, args.l2)
    print(f"fitted: train mse {mse(fitted, *train):.5f}, held-out mse {mse(fitted, *test):.5f}")
    scale = 1000.0 / fitted[0] if fitted[0] > 0 else UNITS_PER_LOGIT
    new = {name: round(w * scale) for name, w in zip(WEIGHT_NAMES, fitted)}
    new["MATERIAL"] = 1000
    for name in WEIGHT_NAMES:
        print(f"  {name:13s} {current[name]:6d} -> {new[name]:6d}")
    if args.write:
        write_weights(new, f"{len(rows)} self-play positions ({args.positions.name})")
        print(f"wrote {WEIGHTS_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
