"""Search speed of a robot: nodes per second and time to a fixed depth.

    python benchmarks/search_speed.py [--robot boulder] [--depth 4] [--budget 1.0]
    python benchmarks/search_speed.py --robot boulder --against boulder-1 --depth 5
    python benchmarks/search_speed.py --players 3 --against boulder-multi-1 --depth 3
    python benchmarks/search_speed.py --marbles-off --depth 5

Positions: the standard and Belgian Daisy starts, each after 4 and after 20 plies
of a fixed random opening (seeded), 2 players; with ``--players 3`` to ``6`` (and
``--teams``) the standard and bowl boards for that many players, after 6 and 30
plies.  With ``--marbles-off`` (2 players) the random play after the opening takes a
push that ejects two times in three when there is one, until two marbles are off
(the finishing, pressure and push terms count only then).  For each position the robot searches once to ``--depth`` (clock ignored;
timed in CPU seconds of this process, so that other work on the machine counts
less) and once for ``--budget`` seconds.  Prints, per position and in total: nodes,
seconds, nodes/s, and the depth reached in the budget.  The figure to compare
between versions is the total nodes/s and the total seconds to the fixed depth.
With ``--against OTHER`` the other robot is measured the same way and the ratios are
printed (nodes per second in the budget, and how many times faster the first
reaches the fixed depth).  The last line is the machine's load during the run.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots import ENGINES, make_engine  # noqa: E402
from abalone_pbm.robots.base import occupied_mask, push_kind  # noqa: E402
from abalone_pbm.robots.features import clear_caches  # noqa: E402
from abalone_pbm.rules import Board, Move, Rules  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from match_report import LoadWatch  # noqa: E402


def positions(
    seed: int = 11, players: int = 2, teams: bool = False, marbles_off: bool = False
) -> list[tuple[str, Board]]:
    out = []
    layouts = ("standard", "belgian-daisy") if players == 2 else ("standard", "bowl")
    for layout in layouts:
        for plies in ((4, 20) if players == 2 else (6, 30)):
            board = Board.from_layout(
                layout, Rules(players=players, teams=teams, movelimit=200)
            )
            rng = random.Random(seed * 101 + plies)
            played = 0
            while played < plies or (marbles_off and _marbles_off(board) < 2):
                # In notation order: the positions do not depend on the order in which
                # a version of the generator lists the moves, so versions compare.
                moves = sorted(board.generate_legal_moves(), key=str)
                if marbles_off and played >= plies and rng.random() < 2 / 3:
                    moves = _ejecting(board, moves) or moves
                board.push(rng.choice(moves))
                played += 1
            name = f"{layout}+{played}" + (f" off {_marbles_off(board)}" if marbles_off else "")
            out.append((name, Board(board.position(), board.rules)))
    return out


def _marbles_off(board: Board) -> int:
    return sum(board.ejected(seat) for seat in range(1, board.players + 1))


def _ejecting(board: Board, moves: list[Move]) -> list[Move]:
    """The moves of ``moves`` that push a marble off."""
    occupied = occupied_mask(board)
    return [move for move in moves if push_kind(occupied, move) == 2]  # 2: ejects


def measure(
    robot_name: str, depth: int, budget: float, players: int = 2, teams: bool = False,
    marbles_off: bool = False,
) -> tuple[float, float, float, float]:
    """(seconds to ``depth``, nodes/s to it, nodes/s in the budget, mean depth in it)."""
    fixed_nodes = fixed_seconds = 0.0
    timed_nodes = timed_seconds = 0.0
    depths = []
    for name, board in positions(players=players, teams=teams, marbles_off=marbles_off):
        # Every search starts with the evaluation's caches empty (they are the module's,
        # not the robot's): the timed search would otherwise find the fixed-depth one's.
        clear_caches()
        robot = make_engine(robot_name)
        started = time.process_time()
        robot.choose_move(board, 60.0, rng_seed=1, max_depth=depth)
        took = time.process_time() - started
        info = robot.last_info
        nodes = info.nodes if info else 0
        fixed_nodes += nodes
        fixed_seconds += took
        clear_caches()
        robot = make_engine(robot_name)
        robot.choose_move(board, budget, rng_seed=1)
        info = robot.last_info
        t_nodes = info.nodes if info else 0
        t_secs = info.elapsed if info else 0.0
        timed_nodes += t_nodes
        timed_seconds += t_secs
        reached = info.depth if info else 0
        depths.append(reached)
        print(f"{robot_name:10s} {name:22s} depth {depth}: {nodes:8d} nodes {took:6.2f} s "
              f"({nodes / max(took, 1e-9):8,.0f}/s) | {budget:.1f} s: depth {reached}, "
              f"{t_nodes:8d} nodes ({t_nodes / max(t_secs, 1e-9):8,.0f}/s)", flush=True)
    fixed_rate = fixed_nodes / max(fixed_seconds, 1e-9)
    timed_rate = timed_nodes / max(timed_seconds, 1e-9)
    mean_depth = sum(depths) / len(depths)
    print(f"{robot_name}: depth {depth} in {fixed_seconds:.2f} s total, {fixed_rate:,.0f} nodes/s; "
          f"budget {budget} s: {timed_rate:,.0f} nodes/s, mean depth {mean_depth:.2f}")
    return fixed_seconds, fixed_rate, timed_rate, mean_depth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="boulder", choices=sorted(ENGINES))
    parser.add_argument("--against", default=None, choices=sorted(ENGINES))
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--players", type=int, default=2, choices=range(2, 7))
    parser.add_argument("--teams", action="store_true", help="team play (4 or 6 players)")
    parser.add_argument("--marbles-off", action="store_true",
                        help="positions with two marbles or more pushed off (2 players)")
    args = parser.parse_args(argv)
    if args.teams and args.players not in (4, 6):
        parser.error("--teams needs --players 4 or 6")
    if args.marbles_off and args.players != 2:
        parser.error("--marbles-off is for 2 players")
    load = LoadWatch()
    first = measure(args.robot, args.depth, args.budget, args.players, args.teams,
                    args.marbles_off)
    if args.against:
        other = measure(args.against, args.depth, args.budget, args.players, args.teams,
                        args.marbles_off)
        print(f"{args.robot} against {args.against}: depth {args.depth} "
              f"{other[0] / max(first[0], 1e-9):.1f} times faster; nodes/s to it "
              f"{first[1] / max(other[1], 1e-9):.2f}x, in the budget "
              f"{first[2] / max(other[2], 1e-9):.2f}x; mean depth in {args.budget} s "
              f"{first[3]:.2f} against {other[3]:.2f}")
    print(load.stop())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
