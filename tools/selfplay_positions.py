"""Positions from self-play, labelled with the game's result, for fitting the evaluation.

    python tools/selfplay_positions.py --games 60 --depth 2 --out positions.csv

Games of ``boulder`` against itself at a fixed depth (so the data does not depend
on the machine's speed; ``--weights FILE`` plays with other evaluation weights, to
regenerate the data of an earlier fit), from the standard, Belgian and German Daisy
layouts, each after a few random opening moves (``--opening-moves``), with a move
limit.  Every
quiet position (the side to move cannot push a marble off) from ply
``--skip`` on is written as one CSV row: the position text, then the side to move's
result (1 win, 0.5 draw, 0 loss), then the feature vector of
:func:`abalone_pbm.robots.features.features`.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots import make_engine  # noqa: E402
from abalone_pbm.robots.features import (  # noqa: E402
    FEATURES,
    features,
    set_weights,
    threatened_marbles,
)
from abalone_pbm.rules import Board, Rules  # noqa: E402

LAYOUTS = ("standard", "belgian-daisy", "german-daisy")


def play_game(index: int, depth: int, opening_moves: int, movelimit: int, seed: int) -> tuple[
    list[tuple[str, int, list[float]]], dict[int, float]
]:
    """One game: its quiet positions (text, seat to move, features) and each seat's score."""
    rng = random.Random(seed * 100_003 + index)
    board = Board.from_layout(LAYOUTS[index % len(LAYOUTS)], Rules(movelimit=movelimit))
    for _ in range(opening_moves):
        board.push(rng.choice(list(board.generate_legal_moves())))
    engines = {1: make_engine("boulder"), 2: make_engine("boulder")}
    rows = []
    while board.outcome() is None:
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        if not threatened_marbles(me, op):
            rows.append(
                (board.position(), seat, features(me, op, board.ejected(seat), board.ejected(3 - seat)))
            )
        move = engines[seat].choose_move(board, 60.0, rng_seed=rng.getrandbits(32), max_depth=depth)
        board.push(move)
    outcome = board.outcome()
    assert outcome is not None
    if outcome.draw:
        score = {1: 0.5, 2: 0.5}
    else:
        winner = outcome.winners[0]
        score = {winner: 1.0, 3 - winner: 0.0}
    return rows, score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--opening-moves", type=int, default=6)
    parser.add_argument("--movelimit", type=int, default=150)
    parser.add_argument("--skip", type=int, default=8, help="plies left out at the start")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("positions.csv"))
    parser.add_argument("--weights", type=Path, default=None,
                        help="JSON evaluation weights to play with (default: robots/weights.py)")
    args = parser.parse_args(argv)
    if args.weights is not None:
        set_weights({n: int(v) for n, v in json.loads(args.weights.read_text()).items()})
    started = time.perf_counter()
    written = 0
    with args.out.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["position", "result", *FEATURES])
        for index in range(args.games):
            rows, score = play_game(
                index, args.depth, args.opening_moves, args.movelimit, args.seed
            )
            for ply, (position, seat, vector) in enumerate(rows):
                if ply < args.skip:
                    continue
                out.writerow([position, score[seat], *vector])
                written += 1
            print(f"game {index + 1}: {len(rows)} positions, player 1 scored {score[1]}",
                  flush=True)
    print(f"{written} positions in {args.out} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
