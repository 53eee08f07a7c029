"""Robot matches with three to six players: two engines share the seats of each game.

    python benchmarks/multi_match.py --a boulder --b boulder-multi-1 --budget 0.5 \\
        --movelimit 120 --openings 10 --max-minutes 40
    python benchmarks/multi_match.py --setups 3,4t --layouts standard --openings 2 --budget 0.2

Setups (``--setups``): a number of players, free-for-all, or with ``t`` the team game
of the rules core (4 players in two teams of two, 6 in three teams of two); layouts
(``--layouts``): the rules core's boards for these counts, ``standard`` and ``bowl``.
Each opening (a setup, a layout and a few random moves, ``--opening-moves``, seeded)
is played once for every seat assignment of a rotation in which A and B sit in each
seat equally often, and a team's seats always go to one engine:

* an even number of sides (4 free-for-all, 6 free-for-all, 4 in teams): A holds every
  other side, then B does (two games);
* an odd number (3 free-for-all, 6 in three teams): A holds one side against B on the
  others, then B holds it against A, for each side in turn (six games).

A game ends when a side has pushed off the target (six) or, at the move limit
(``--movelimit``, in plies of all players), as the rules core decides it: the side
with the most marbles pushed off wins, and when two or more sides share the most it is
a draw (nobody wins).  A game won goes to the engine that holds the winning side.

Prints per setup and in total, for A and B: games won by the target and at the move
limit, draws, the share of the games won, the marbles its seats pushed off and lost
per game, and for its moves the mean depth the search completed and the nodes per
second.  Since the rotation gives each engine each seat equally often, equal engines
win equal shares; the interval is the 95 % one of the difference of the shares over
the openings (each opening's games taken together, so a rotation counts once).
``--max-minutes`` starts no new opening after that many minutes, so that a match
fits a time slot and still plays whole rotations.  One process, one game at a time.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.robots import ENGINES, make_engine  # noqa: E402
from abalone_pbm.rules import Board, Rules  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from match_report import LoadWatch, elo_text, search_text, share_text  # noqa: E402

DEFAULT_SETUPS = ("3", "4", "6", "4t", "6t")
DEFAULT_LAYOUTS = ("standard", "bowl")


@dataclass(frozen=True)
class Setup:
    players: int
    teams: bool

    @property
    def name(self) -> str:
        return f"{self.players}{' teams' if self.teams else ' free-for-all'}"

    def rules(self, movelimit: int) -> Rules:
        return Rules(players=self.players, teams=self.teams, movelimit=movelimit)


def parse_setup(text: str) -> Setup:
    text = text.strip().lower()
    teams = text.endswith("t")
    try:
        players = int(text.rstrip("t"))
        Rules(players=players, teams=teams)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"setup {text!r}: {error}") from None
    if players < 3:
        raise argparse.ArgumentTypeError(f"setup {text!r}: this match is for 3 to 6 players")
    return Setup(players, teams)


def rotation(rules: Rules) -> list[frozenset[int]]:
    """The seats A holds in each game of one opening; each seat is A's as often as B's."""
    sides = rules.sides
    seats_of = [rules.seats_of_side(side) for side in range(sides)]
    everyone = frozenset(range(1, rules.players + 1))
    if sides % 2 == 0:
        even = frozenset(s for side in range(0, sides, 2) for s in seats_of[side])
        return [even, everyone - even]
    out = []
    for side in range(sides):
        alone = frozenset(seats_of[side])
        out += [alone, everyone - alone]
    return out


@dataclass
class EngineStats:
    games: int = 0
    won_by_target: int = 0
    won_at_limit: int = 0
    pushed_off: int = 0
    lost: int = 0
    moves: int = 0
    searched: int = 0
    depth_total: int = 0
    nodes: int = 0
    seconds: float = 0.0
    longest: float = 0.0

    @property
    def wins(self) -> int:
        return self.won_by_target + self.won_at_limit

    def add(self, other: EngineStats) -> None:
        for name in ("games", "won_by_target", "won_at_limit", "pushed_off", "lost", "moves",
                     "searched", "depth_total", "nodes", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.longest = max(self.longest, other.longest)


@dataclass
class GameResult:
    opening: int
    setup: Setup
    layout: str
    a_seats: frozenset[int]
    winner: str  # "a", "b" or "draw"
    reason: str
    plies: int
    ejected: dict[str, int]
    stats: dict[str, EngineStats] = field(default_factory=dict)


def play_opening(board: Board, seed: int, opening: int, plies: int) -> None:
    rng = random.Random(seed * 1_000_003 + opening)
    for _ in range(plies):
        if board.outcome() is not None:
            break
        board.push(rng.choice(list(board.generate_legal_moves())))


def play(args: argparse.Namespace, opening: int, setup: Setup, layout: str,
         a_seats: frozenset[int], game: int) -> GameResult:
    rules = setup.rules(args.movelimit)
    board = Board.from_layout(layout, rules)
    play_opening(board, args.seed, opening, args.opening_moves)
    label = {s: ("a" if s in a_seats else "b") for s in range(1, setup.players + 1)}
    # One robot per seat: a robot keeps its tables for the one game it plays.
    engines = {s: make_engine(args.a if label[s] == "a" else args.b) for s in label}
    depths = {"a": args.depth_a, "b": args.depth_b}
    stats = {"a": EngineStats(games=1), "b": EngineStats(games=1)}
    move_rng = random.Random(args.seed * 7919 + game)
    while board.outcome() is None:
        seat = board.turn
        who = label[seat]
        engine = engines[seat]
        started = time.perf_counter()
        move = engine.choose_move(board, args.budget, rng_seed=move_rng.getrandbits(32),
                                  max_depth=depths[who])
        took = time.perf_counter() - started
        st = stats[who]
        st.moves += 1
        st.longest = max(st.longest, took)
        info = engine.last_info
        if info is not None and info.depths:
            st.searched += 1
            st.depth_total += info.depth
            st.nodes += info.nodes
            st.seconds += info.elapsed
        board.push(move)
    outcome = board.outcome()
    assert outcome is not None
    ejected = {"a": 0, "b": 0}
    for s, who in label.items():
        ejected[who] += board.ejected(s)
        stats[who].pushed_off += board.ejected(s)
        stats[who].lost += board.lost(s)
    if outcome.draw:
        winner = "draw"
    else:
        winner = label[outcome.winners[0]]
        if outcome.reason.startswith("pushed off"):
            stats[winner].won_by_target += 1
        else:
            stats[winner].won_at_limit += 1
    return GameResult(opening, setup, layout, a_seats, winner, outcome.reason, board.ply,
                      ejected, stats)


def share_difference(results: list[GameResult]) -> tuple[float, float]:
    """A's share of the games won minus B's, and the 95 % half-width over the openings."""
    by_opening: dict[int, list[GameResult]] = {}
    for r in results:
        by_opening.setdefault(r.opening, []).append(r)
    diffs = [
        (sum(r.winner == "a" for r in games) - sum(r.winner == "b" for r in games)) / len(games)
        for games in by_opening.values()
    ]
    n = len(diffs)
    if n == 0:
        return 0.0, math.inf
    mean = sum(diffs) / n
    if n == 1:
        return mean, math.inf
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean, 1.96 * math.sqrt(variance / n)


def report(title: str, a: str, b: str, results: list[GameResult]) -> None:
    n = len(results)
    if not n:
        return
    total = {"a": EngineStats(), "b": EngineStats()}
    for r in results:
        for key in total:
            total[key].add(r.stats[key])
    draws = sum(r.winner == "draw" for r in results)
    at_limit = sum(r.reason.startswith("move limit") for r in results)
    diff, margin = share_difference(results)
    # Over a rotation equal engines score one half (wins 1, draws 1/2): A's score is
    # (1 + share won A - share won B) / 2, its interval half of the difference's.
    print(f"{title}: {n} games, {draws} drawn, {at_limit} reached the move limit; "
          f"mean length {sum(r.plies for r in results) / n:.0f} plies; "
          f"share won A - B {diff:+.1%} ± {margin:.1%}; A's score {(1 + diff) / 2:.1%}, "
          f"{elo_text((1 + diff) / 2, margin / 2)}")
    for key, name in (("a", a), ("b", b)):
        st = total[key]
        line = (f"  {key}={name}: won {st.wins} ({st.wins / n:.1%}; by the target "
                f"{st.won_by_target}, at the move limit {st.won_at_limit}; by six "
                f"{share_text(st.won_by_target, st.wins)} of its wins); per game pushed "
                f"off {st.pushed_off / n:.2f}, lost {st.lost / n:.2f}; "
                f"{search_text(st.depth_total, st.searched, st.nodes, st.seconds)}"
                f"; longest move {st.longest:.2f} s")
        print(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", default="boulder", choices=sorted(ENGINES))
    parser.add_argument("--b", default="boulder-multi-1", choices=sorted(ENGINES))
    parser.add_argument("--setups", default=",".join(DEFAULT_SETUPS),
                        help="comma-separated: players, with t for teams (3,4,6,4t,6t)")
    parser.add_argument("--layouts", default=",".join(DEFAULT_LAYOUTS))
    parser.add_argument("--openings", type=int, default=10,
                        help="openings; each is played in every seat assignment of its rotation")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="start no new opening after this many minutes")
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per move")
    parser.add_argument("--movelimit", type=int, default=120, help="plies of all players")
    parser.add_argument("--opening-moves", type=int, default=3,
                        help="random moves played after the layout, before the engines")
    parser.add_argument("--depth-a", type=int, default=None,
                        help="fixed search depth for A (ignores the clock)")
    parser.add_argument("--depth-b", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", action="store_true", help="no line per game")
    args = parser.parse_args(argv)
    try:
        setups = [parse_setup(text) for text in args.setups.split(",") if text.strip()]
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    for layout in layouts:
        try:
            Board.from_layout(layout, Rules(players=3))
        except ValueError as error:
            parser.error(f"layout {layout!r}: {error}")

    started = time.perf_counter()
    load = LoadWatch()
    results: list[GameResult] = []
    game = 0
    for opening in range(args.openings):
        if args.max_minutes is not None and time.perf_counter() - started > args.max_minutes * 60:
            break
        setup = setups[opening % len(setups)]
        layout = layouts[(opening // len(setups)) % len(layouts)]
        for a_seats in rotation(setup.rules(args.movelimit)):
            result = play(args, opening, setup, layout, a_seats, game)
            game += 1
            results.append(result)
            if not args.quiet:
                seats = "".join(str(s) for s in sorted(a_seats))
                print(f"game {game:3d} opening {opening + 1} {setup.name:15s} {layout:8s} "
                      f"A in seats {seats:4s}: {result.winner:4s} pushed off "
                      f"A {result.ejected['a']} B {result.ejected['b']} in {result.plies} "
                      f"plies ({result.reason})", flush=True)
    elapsed = time.perf_counter() - started

    print()
    print(f"{args.a} (A) vs {args.b} (B): {len(results)} games from "
          f"{len({r.opening for r in results})} openings, budget {args.budget} s/move, "
          f"move limit {args.movelimit} plies, layouts {','.join(layouts)}, "
          f"{args.opening_moves} random opening moves, seed {args.seed}")
    print("  at the move limit the side with the most marbles pushed off wins; "
          "a tie for the most is a draw")
    for setup in setups:
        report(f" {setup.name}", args.a, args.b, [r for r in results if r.setup == setup])
    report(" all", args.a, args.b, results)
    print(f"  wall time {elapsed:.0f} s; {load.stop()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
