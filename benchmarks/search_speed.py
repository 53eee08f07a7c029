"""Search speed of a robot: nodes per second and time to a fixed depth.

    python benchmarks/search_speed.py [--robot boulder] [--depth 4] [--budget 1.0]

Positions: the standard and Belgian Daisy starts, each after 4 and after 20 plies
of a fixed random opening (seeded), 2 players.  For each position the robot
searches once to ``--depth`` (clock ignored; timed in CPU seconds of this process,
so that other work on the machine counts less) and once for ``--budget`` seconds.
Prints, per position and in total: nodes, seconds, nodes/s, and the depth reached
in the budget.  The figure to compare between versions is the total nodes/s and
the total seconds to the fixed depth.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots import ENGINES, make_engine  # noqa: E402
from abalone_pbm.rules import Board, Rules  # noqa: E402


def positions(seed: int = 11) -> list[tuple[str, Board]]:
    out = []
    for layout in ("standard", "belgian-daisy"):
        for plies in (4, 20):
            board = Board.from_layout(layout, Rules(movelimit=200))
            rng = random.Random(seed * 101 + plies)
            for _ in range(plies):
                moves = list(board.generate_legal_moves())
                board.push(rng.choice(moves))
            out.append((f"{layout}+{plies}", Board(board.position(), board.rules)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="boulder", choices=sorted(ENGINES))
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--budget", type=float, default=1.0)
    args = parser.parse_args(argv)

    fixed_nodes = fixed_seconds = 0.0
    timed_nodes = timed_seconds = 0.0
    depths = []
    for name, board in positions():
        robot = make_engine(args.robot)
        started = time.process_time()
        robot.choose_move(board, 60.0, rng_seed=1, max_depth=args.depth)
        took = time.process_time() - started
        info = robot.last_info
        nodes = info.nodes if info else 0
        fixed_nodes += nodes
        fixed_seconds += took
        robot = make_engine(args.robot)
        robot.choose_move(board, args.budget, rng_seed=1)
        info = robot.last_info
        t_nodes = info.nodes if info else 0
        t_secs = info.elapsed if info else 0.0
        timed_nodes += t_nodes
        timed_seconds += t_secs
        depth = info.depth if info else 0
        depths.append(depth)
        print(f"{name:18s} depth {args.depth}: {nodes:8d} nodes {took:6.2f} s "
              f"({nodes / took:8,.0f}/s) | {args.budget:.1f} s: depth {depth}, "
              f"{t_nodes:8d} nodes ({t_nodes / max(t_secs, 1e-9):8,.0f}/s)", flush=True)
    print(f"{args.robot}: depth {args.depth} in {fixed_seconds:.2f} s total, "
          f"{fixed_nodes / fixed_seconds:,.0f} nodes/s; "
          f"budget {args.budget} s: {timed_nodes / max(timed_seconds, 1e-9):,.0f} nodes/s, "
          f"mean depth {sum(depths) / len(depths):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
