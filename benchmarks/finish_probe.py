"""Does our robot convert a lead?  Play positions where it leads to the end against Cotix.

    python benchmarks/external_match.py --engine cotix --games 8 --budget 1 --trace t.jsonl
    python benchmarks/finish_probe.py --trace t.jsonl --lead 3 --budget 1
    python benchmarks/finish_probe.py --position "....1/...111/... 1 5,0" --ply 110

The positions come from the trace ``external_match.py --trace`` writes (one JSON line
per move of ours): in each game, the first position where ours is to move and leads by
``--lead`` marbles or more, at least ``--room`` plies before the move limit.  From each,
ours plays on against the Cotix engine (the same time a move for both) until the game
ends.  Prints per position whether ours pushed off the target and in how many plies,
and for the moves ours made while ahead what its search saw: the share whose value
was a forced win, the share of pushes and ejections among them, the mean depth, and
how often a move returned to a position of the game.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
for path in (str(REPO), str(BENCHMARKS)):
    if path not in sys.path:
        sys.path.insert(0, path)

from abalone_pbm.robots import ENGINES, make_engine  # noqa: E402
from abalone_pbm.robots.base import occupied_mask, push_kind  # noqa: E402
from abalone_pbm.robots.duel import WIN_THRESHOLD  # noqa: E402
from abalone_pbm.robots.features import set_pressure  # noqa: E402
from abalone_pbm.rules import Board, Rules  # noqa: E402
from external_match import (  # noqa: E402
    COTIX_URL, DEFAULT_CACHE, CotixEngine, build_cotix, move_to, resolve_source)


@dataclass
class Start:
    game: int
    ply: int
    position: str


@dataclass
class Outcome:
    start: Start
    by_target: bool
    winner: str
    plies: int
    score: tuple[int, int]
    moves: int
    forced_win_seen: int
    pushes: int
    depth_total: int
    returns: int


def starts_from_trace(path: Path, lead: int, room: int, movelimit: int) -> list[Start]:
    """Per game of the trace, the first position of ours leading by ``lead`` or more."""
    found: dict[int, Start] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        game = int(entry["game"])
        if game in found or entry["mine"] - entry["theirs"] < lead:
            continue
        if entry["ply"] + room > movelimit:
            continue
        found[game] = Start(game, int(entry["ply"]), str(entry["position"]))
    return [found[g] for g in sorted(found)]


def play_out(start: Start, ours: str, engine: CotixEngine, budget: float, movelimit: int,
             seed: int) -> Outcome:
    board = Board(start.position, Rules(players=2, movelimit=movelimit), ply=start.ply)
    ours_seat = board.turn
    robot = make_engine(ours)
    rng = random.Random(seed * 7919 + start.game)
    engine.new_game("standard", board)
    had = {board.position().split(" ")[0] + str(board.turn)}
    moves = forced = pushes = depth_total = returns = 0
    while board.outcome() is None:
        if board.turn == ours_seat:
            occupied = occupied_mask(board)
            move = robot.choose_move(board, budget, rng_seed=rng.getrandbits(32))
            info = robot.last_info
            moves += 1
            if info is not None:
                depth_total += info.depth
                if info.value is not None and info.value > WIN_THRESHOLD:
                    forced += 1
            if push_kind(occupied, move):
                pushes += 1
        else:
            reply = engine.choose(board, budget)
            found = move_to(board, reply.masks)
            if found is None:
                raise SystemExit(f"the engine answered no legal move from {board.position()}")
            move = found
        board.push(move)
        key = board.position().split(" ")[0] + str(board.turn)
        if board.turn != ours_seat and key in had:
            returns += 1
        had.add(key)
    outcome = board.outcome()
    assert outcome is not None
    if outcome.draw:
        winner = "draw"
    else:
        winner = "ours" if outcome.winners[0] == ours_seat else "theirs"
    return Outcome(start, outcome.reason.startswith("pushed off"), winner,
                   board.ply - start.ply, (board.ejected(ours_seat), board.ejected(3 - ours_seat)),
                   moves, forced, pushes, depth_total, returns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", default="boulder", choices=sorted(ENGINES))
    parser.add_argument("--trace", default=None, help="a trace of external_match.py --trace")
    parser.add_argument("--position", action="append", default=[],
                        help="a position to play out (ours to move); may be repeated")
    parser.add_argument("--ply", type=int, default=60, help="the ply of --position")
    parser.add_argument("--lead", type=int, default=2)
    parser.add_argument("--room", type=int, default=30,
                        help="plies the start leaves before the move limit at least")
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--movelimit", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pressure", type=int, default=None,
                        help="another weight for the evaluation's pressure term")
    parser.add_argument("--cotix-src", default=None)
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE))
    args = parser.parse_args(argv)
    if args.pressure is not None:
        set_pressure(args.pressure)
    starts = [Start(i, args.ply, p) for i, p in enumerate(args.position)]
    if args.trace:
        starts += starts_from_trace(Path(args.trace), args.lead, args.room, args.movelimit)
    if not starts:
        parser.error("no position to play: give --trace or --position")
    cache = Path(args.cache_dir).expanduser()
    source = resolve_source(args.cotix_src, COTIX_URL, "Game.cpp", cache, "Cotix-Abalone",
                            "--cotix-src")
    engine = CotixEngine(build_cotix(source, cache), 256)
    began = time.perf_counter()
    outcomes = []
    try:
        for start in starts:
            o = play_out(start, args.ours, engine, args.budget, args.movelimit, args.seed)
            outcomes.append(o)
            print(f"game {o.start.game + 1:3d} from ply {o.start.ply:3d} "
                  f"({o.start.position.split()[-1]}): {o.winner:6s} "
                  f"{'by six' if o.by_target else 'at the limit' if o.winner != 'draw' else ''} "
                  f"{o.score[0]}-{o.score[1]} after {o.plies} plies; ours {o.moves} moves, "
                  f"forced win seen in {o.forced_win_seen}, pushes {o.pushes}, mean depth "
                  f"{o.depth_total / max(1, o.moves):.1f}, returns {o.returns}", flush=True)
    finally:
        engine.close()
    won = sum(o.by_target and o.winner == "ours" for o in outcomes)
    moves = sum(o.moves for o in outcomes) or 1
    print(f"\n{args.ours} converted {won} of {len(outcomes)} leads by pushing off the target "
          f"(budget {args.budget} s a move, move limit {args.movelimit}); mean plies to "
          f"finish {sum(o.plies for o in outcomes if o.by_target) / max(1, won):.0f}; "
          f"pushes {sum(o.pushes for o in outcomes) / moves:.0%} of its moves, forced win "
          f"seen in {sum(o.forced_win_seen for o in outcomes) / moves:.0%}; "
          f"wall {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
