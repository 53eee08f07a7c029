"""Robot matches: play engines against each other; score, Elo difference, wins by six.

    python benchmarks/robots.py --a boulder --b random --games 20 --budget 5 --movelimit 200
    python benchmarks/robots.py --ladder pebble,marble,boulder-1,boulder --games 10 --budget 1
    python benchmarks/robots.py --a boulder --b boulder-1 --games 40 --budget 1 --require 0.65

Engines: the registered robots (pebble, marble, boulder) and the baselines
``random`` (a uniformly random legal move) and ``greedy`` (one ply, the best
evaluation after the move).  Games cycle through the layouts (standard,
belgian-daisy, german-daisy by default), each opening followed by a few random
moves (``--opening-moves``); every opening is played twice with the colours
swapped.  When the move limit is reached the side with more ejections wins,
equal is a draw (the rules core's ``-movelimit``).

Prints wins/draws/losses of A, A's Elo difference with its 95 % interval (from the
score's standard error over the games), the share of the decided games won by
pushing off the target (six) rather than on the move limit, the mean ejections,
for each engine the average
depth its search completed (overall and in the middlegame, plies 10-60), the
nodes per second, and the longest time one move took against the budget.
``--jobs 2`` plays two games at once (one per core; the time budget then holds per
process, on a machine that is not busy otherwise).  ``--ladder`` plays each
neighbouring pair of a list (levels, or versions) and prints one line per pair.
``--weights-a FILE`` / ``--weights-b FILE`` give an engine other evaluation weights
(a JSON object, e.g. the hand-set ones against the fitted ones of ``robots/weights.py``).
``--require S`` makes the exit status 1 unless A scores at least S (0.65: the new
boulder must beat the old one in 65 % of the games at equal time).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots import ENGINES, make_engine  # noqa: E402
from abalone_pbm.robots.features import current_weights, set_weights  # noqa: E402
from abalone_pbm.rules import Board, Rules  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from match_report import (  # noqa: E402
    LoadWatch, elo_text, score_interval, search_text, share_of_games_text, share_text)

DEFAULT_LAYOUTS = ("standard", "belgian-daisy", "german-daisy")


@dataclass
class EngineStats:
    moves: int = 0
    searched: int = 0
    depth_total: int = 0
    mid_moves: int = 0
    mid_depth_total: int = 0
    nodes: int = 0
    seconds: float = 0.0
    longest: float = 0.0
    over_budget: int = 0

    def searched_once(self, depth: int, nodes: int, seconds: float, ply: int) -> None:
        """One move found by search, at ``ply`` (plies 10-60 also count as middlegame)."""
        self.searched += 1
        self.depth_total += depth
        self.nodes += nodes
        self.seconds += seconds
        if 10 <= ply <= 60:
            self.mid_moves += 1
            self.mid_depth_total += depth

    def add(self, other: EngineStats) -> None:
        self.moves += other.moves
        self.searched += other.searched
        self.depth_total += other.depth_total
        self.mid_moves += other.mid_moves
        self.mid_depth_total += other.mid_depth_total
        self.nodes += other.nodes
        self.seconds += other.seconds
        self.longest = max(self.longest, other.longest)
        self.over_budget += other.over_budget


@dataclass
class GameResult:
    index: int
    layout: str
    a_seat: int
    winner: str  # "a", "b" or "draw"
    reason: str
    plies: int
    ejected_a: int
    ejected_b: int
    stats: dict[str, EngineStats] = field(default_factory=dict)


@dataclass(frozen=True)
class GameSpec:
    index: int
    a: str
    b: str
    layout: str
    opening_moves: int
    budget: float
    movelimit: int
    seed: int
    depth_a: int | None
    depth_b: int | None
    #: Evaluation weights for A and B (None: those of ``robots/weights.py``).
    weights_a: tuple[tuple[str, int], ...] | None = None
    weights_b: tuple[tuple[str, int], ...] | None = None


def play_opening(board: Board, seed: int, pair: int, plies: int,
                 after_each: Callable[[Board], None] | None = None) -> None:
    """The random opening of a pair of games (the same for both colours)."""
    opening = random.Random(seed * 1_000_003 + pair)
    for _ in range(plies):
        moves = list(board.generate_legal_moves())
        if not moves:
            break
        board.push(opening.choice(moves))
        if after_each is not None:
            after_each(board)


def play(spec: GameSpec) -> GameResult:
    pair = spec.index // 2
    a_seat = 1 if spec.index % 2 == 0 else 2
    rules = Rules(players=2, movelimit=spec.movelimit)
    board = Board.from_layout(spec.layout, rules)
    play_opening(board, spec.seed, pair, spec.opening_moves)
    engines = {a_seat: make_engine(spec.a), 3 - a_seat: make_engine(spec.b)}
    depths = {a_seat: spec.depth_a, 3 - a_seat: spec.depth_b}
    standard = current_weights()
    weights = {
        a_seat: dict(spec.weights_a) if spec.weights_a else standard,
        3 - a_seat: dict(spec.weights_b) if spec.weights_b else standard,
    }
    label = {a_seat: "a", 3 - a_seat: "b"}
    stats = {"a": EngineStats(), "b": EngineStats()}
    move_rng = random.Random(spec.seed * 7919 + spec.index)
    while board.outcome() is None:
        seat = board.turn
        engine = engines[seat]
        set_weights(weights[seat])
        started = time.perf_counter()
        move = engine.choose_move(
            board, spec.budget, rng_seed=move_rng.getrandbits(32), max_depth=depths[seat]
        )
        took = time.perf_counter() - started
        st = stats[label[seat]]
        st.moves += 1
        st.longest = max(st.longest, took)
        if took > spec.budget:
            st.over_budget += 1
        info = engine.last_info
        if info is not None and info.depths:
            st.searched_once(info.depth, info.nodes, info.elapsed, board.ply)
        board.push(move)
    outcome = board.outcome()
    assert outcome is not None
    if outcome.draw:
        winner = "draw"
    else:
        winner = label[outcome.winners[0]]
    return GameResult(
        spec.index,
        spec.layout,
        a_seat,
        winner,
        outcome.reason,
        board.ply,
        board.ejected(a_seat),
        board.ejected(3 - a_seat),
        stats,
    )


def read_weights(path: str | None) -> tuple[tuple[str, int], ...] | None:
    """Weights from a JSON object file (names as in ``robots/weights.py``); the ones
    it leaves out keep their current values."""
    if path is None:
        return None
    weights = current_weights()
    weights.update({name: int(value) for name, value in json.loads(Path(path).read_text()).items()})
    return tuple(weights.items())


def run_match(args: argparse.Namespace, a: str, b: str) -> list[GameResult]:
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    specs = [
        GameSpec(i, a, b, layouts[(i // 2) % len(layouts)], args.opening_moves,
                 args.budget, args.movelimit, args.seed, args.depth_a, args.depth_b,
                 read_weights(args.weights_a), read_weights(args.weights_b))
        for i in range(args.games)
    ]
    results: list[GameResult] = []
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for result in pool.map(play, specs):
                results.append(result)
                if not args.quiet:
                    report_game(result)
    else:
        for spec in specs:
            result = play(spec)
            results.append(result)
            if not args.quiet:
                report_game(result)
    return results


def summary_line(a: str, b: str, results: list[GameResult]) -> tuple[str, float]:
    """One line: A's record, score, Elo with interval, wins by the target; and the score."""
    wins = sum(r.winner == "a" for r in results)
    draws = sum(r.winner == "draw" for r in results)
    losses = sum(r.winner == "b" for r in results)
    score, margin = score_interval(wins, draws, losses)
    decided = [r for r in results if r.winner != "draw"]
    by_target = [r for r in decided if r.reason.startswith("pushed off")]
    a_by_target = sum(r.winner == "a" for r in by_target)
    share = f"{len(by_target)}/{len(decided)}" if decided else "0/0"
    line = (f"{a} vs {b}: +{wins} ={draws} -{losses}, score {score:.1%}, "
            f"{elo_text(score, margin)}; won by pushing off the target: "
            f"{share} of the decided games ({a}: {share_text(a_by_target, wins)} of its wins, "
            f"{b}: {share_text(len(by_target) - a_by_target, losses)}); "
            f"{a} won by six {share_of_games_text(a_by_target, len(results))}")
    return line, score


def engine_line(results: list[GameResult], key: str, name: str) -> str:
    """One engine's moves, time and search (depth, nodes a second) over a match."""
    total = EngineStats()
    for r in results:
        total.add(r.stats[key])
    line = (f"{key}={name}: {total.moves} moves, longest {total.longest:.2f} s "
            f"({total.over_budget} over the budget), "
            f"{search_text(total.depth_total, total.searched, total.nodes, total.seconds)}")
    if total.mid_moves:
        line += f" (middlegame plies 10-60: depth {total.mid_depth_total / total.mid_moves:.2f})"
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", default="boulder", choices=sorted(ENGINES))
    parser.add_argument("--b", default="random", choices=sorted(ENGINES))
    parser.add_argument("--ladder", default=None,
                        help="comma-separated engines: play each neighbouring pair")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--budget", type=float, default=5.0, help="seconds per move")
    parser.add_argument("--movelimit", type=int, default=200)
    parser.add_argument("--layouts", default=",".join(DEFAULT_LAYOUTS))
    parser.add_argument("--opening-moves", type=int, default=2,
                        help="random moves played after the layout, before the engines")
    parser.add_argument("--depth-a", type=int, default=None,
                        help="fixed search depth for A (ignores the clock)")
    parser.add_argument("--depth-b", type=int, default=None)
    parser.add_argument("--weights-a", default=None,
                        help="JSON file of evaluation weights for A (two-player boulder)")
    parser.add_argument("--weights-b", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--quiet", action="store_true", help="no line per game")
    parser.add_argument("--require", type=float, default=None,
                        help="exit 1 unless A scores at least this share (0-1)")
    args = parser.parse_args(argv)
    load = LoadWatch()

    if args.ladder:
        names = [name.strip() for name in args.ladder.split(",") if name.strip()]
        unknown = [name for name in names if name not in ENGINES]
        if unknown or len(names) < 2:
            parser.error(f"--ladder needs two or more of {', '.join(sorted(ENGINES))}")
        lines = []
        for weaker, stronger in zip(names, names[1:]):
            results = run_match(args, stronger, weaker)
            lines.append(summary_line(stronger, weaker, results)[0])
            for key, name in (("a", stronger), ("b", weaker)):
                lines.append(f"  {engine_line(results, key, name)}")
            print("\n".join(lines[-3:]), flush=True)
        print()
        print(f"ladder, {args.games} games a pair, budget {args.budget} s/move, "
              f"move limit {args.movelimit}:")
        for line in lines:
            print(f"  {line}")
        print(f"  {load.stop()}")
        return 0

    started = time.perf_counter()
    results = run_match(args, args.a, args.b)
    elapsed = time.perf_counter() - started
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    n = len(results) or 1
    print()
    print(f"{args.a} vs {args.b}: {len(results)} games, budget {args.budget} s/move, "
          f"move limit {args.movelimit}, layouts {','.join(layouts)}, "
          f"{args.opening_moves} random opening moves, seed {args.seed}")
    line, score = summary_line(args.a, args.b, results)
    print(f"  {line}")
    print(f"  mean ejections: {args.a} {sum(r.ejected_a for r in results) / n:.2f}, "
          f"{args.b} {sum(r.ejected_b for r in results) / n:.2f}; "
          f"mean length {sum(r.plies for r in results) / n:.0f} plies")
    for key, name in (("a", args.a), ("b", args.b)):
        print(f"  {engine_line(results, key, name)}")
    print(f"  wall time {elapsed:.0f} s; {load.stop()}")
    if args.require is not None:
        verdict = "met" if score >= args.require else "NOT met"
        print(f"  required score {args.require:.0%}: {verdict} ({score:.1%})")
        return 0 if score >= args.require else 1
    return 0


def report_game(r: GameResult) -> None:
    print(f"game {r.index + 1:3d} {r.layout:14s} A as {'o' if r.a_seat == 1 else 'x'}: "
          f"{r.winner:4s} {r.ejected_a}-{r.ejected_b} in {r.plies} plies ({r.reason})",
          flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
