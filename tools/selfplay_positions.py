"""Positions from self-play, labelled with the game's result, for fitting the evaluation.

    python tools/selfplay_positions.py --games 60 --depth 2 --out positions.csv
    python tools/selfplay_positions.py --games 200 --budget 0.1 --layouts standard,belgian-daisy \
        --movelimit 120 --jobs 2 --out positions.csv

Games of ``boulder`` against itself, either to a fixed depth (``--depth``: the data
does not depend on the machine's speed) or in a time budget per move (``--budget``:
the engine as it plays), with the current evaluation weights or others
(``--weights FILE``), from the layouts of ``--layouts``, each after a few random
opening moves (``--opening-moves``), with a move limit.  ``--jobs N`` plays N games
at once.

Every position from ply ``--skip`` on is written as one CSV row: the position text,
the side to move's result (1 win, 0.5 draw, 0 loss), how the game ended
(``target``: a side pushed off six; ``limit``: the move limit), the position's ply,
the game's length, then the feature vector of
:func:`abalone_pbm.robots.features.features`.  Which positions to fit on (quiet
ones, decided games) is for ``tools/fit_weights.py`` to choose.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots import make_engine  # noqa: E402
from abalone_pbm.robots.features import FEATURES, features, set_weights  # noqa: E402
from abalone_pbm.rules import Board, Rules  # noqa: E402

DEFAULT_LAYOUTS = ("standard", "belgian-daisy", "german-daisy")
#: The columns before the features.
LEAD_COLUMNS = ("position", "result", "end", "ply", "length")


@dataclass(frozen=True)
class GameSpec:
    index: int
    layout: str
    depth: int | None
    budget: float
    opening_moves: int
    movelimit: int
    seed: int
    weights: tuple[tuple[str, int], ...] | None


@dataclass
class GameRecord:
    """One game: its positions (text, seat to move, ply, features), each seat's
    score, how it ended and its length in plies."""

    positions: list[tuple[str, int, int, list[float]]]
    score: dict[int, float]
    end: str
    length: int


def play_game(spec: GameSpec) -> GameRecord:
    if spec.weights is not None:
        set_weights(dict(spec.weights))
    rng = random.Random(spec.seed * 100_003 + spec.index)
    board = Board.from_layout(spec.layout, Rules(movelimit=spec.movelimit))
    for _ in range(spec.opening_moves):
        board.push(rng.choice(list(board.generate_legal_moves())))
    engines = {1: make_engine("boulder"), 2: make_engine("boulder")}
    positions = []
    # Without a depth the budget rules; with one the clock is ignored.
    budget = spec.budget if spec.depth is None else 60.0
    while board.outcome() is None:
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        vector = features(me, op, board.ejected(seat), board.ejected(3 - seat))
        positions.append((board.position(), seat, board.ply, vector))
        move = engines[seat].choose_move(
            board, budget, rng_seed=rng.getrandbits(32), max_depth=spec.depth
        )
        board.push(move)
    outcome = board.outcome()
    assert outcome is not None
    if outcome.draw:
        score = {1: 0.5, 2: 0.5}
    else:
        winner = outcome.winners[0]
        score = {winner: 1.0, 3 - winner: 0.0}
    target = board.rules.target
    end = "target" if max(board.ejected(1), board.ejected(2)) >= target else "limit"
    return GameRecord(positions, score, end, board.ply)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--depth", type=int, default=None,
                        help="search depth per move (default: --budget decides)")
    parser.add_argument("--budget", type=float, default=0.1,
                        help="seconds per move when no --depth is given")
    parser.add_argument("--layouts", default=",".join(DEFAULT_LAYOUTS))
    parser.add_argument("--opening-moves", type=int, default=6)
    parser.add_argument("--movelimit", type=int, default=150)
    parser.add_argument("--skip", type=int, default=8, help="plies left out at the start")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="games played at once")
    parser.add_argument("--out", type=Path, default=Path("positions.csv"))
    parser.add_argument("--weights", type=Path, default=None,
                        help="JSON evaluation weights to play with (default: robots/weights.py)")
    args = parser.parse_args(argv)
    weights = None
    if args.weights is not None:
        loaded = json.loads(args.weights.read_text())
        weights = tuple(sorted((str(n), int(v)) for n, v in loaded.items()))
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    specs = [
        GameSpec(i, layouts[i % len(layouts)], args.depth, args.budget, args.opening_moves,
                 args.movelimit, args.seed, weights)
        for i in range(args.games)
    ]
    started = time.perf_counter()
    written = 0
    with args.out.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow([*LEAD_COLUMNS, *FEATURES])
        with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for spec, game in zip(specs, pool.map(play_game, specs)):
                for position, seat, ply, vector in game.positions:
                    if ply < args.skip:
                        continue
                    out.writerow([position, game.score[seat], game.end, ply, game.length,
                                  *vector])
                    written += 1
                handle.flush()
                print(f"game {spec.index + 1} ({spec.layout}): {len(game.positions)} positions, "
                      f"{game.length} plies, ended by {game.end}, player 1 scored "
                      f"{game.score[1]}", flush=True)
    print(f"{written} positions in {args.out} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
