"""Matches against public engines: one of our robots against an outside Abalone engine.

    python benchmarks/external_match.py --ours boulder --engine cotix --games 8 --budget 1
    python benchmarks/external_match.py --engine cotix --cotix-src /path/to/Abalone --games 2 --budget 0.3

Engines: ``cotix`` (github.com/Cotix/Abalone, C++ 128-bit bitboards, alpha-beta with
iterative deepening).  The script builds it from a checkout (``--cotix-src DIR``: a
source tree or a git repository, bare or not; by default a clone of the GitHub
repository in ``--cache-dir``) together with our driver ``benchmarks/engines/
cotix_driver.cpp``, which speaks a line protocol on stdin/stdout.  Their code is
used unchanged and never copied into this tree.

Both sides get the same time per move (``--budget``).  Games cycle through the
layouts (``standard`` and ``belgian-daisy`` by default; any two-player layout of
ours works, the driver is handed the bitboards), each opening followed by
``--opening-moves`` random moves; every opening is played twice with the colours
swapped.  The move limit (default 150 plies) decides as in ``benchmarks/robots.py``:
more marbles pushed off wins, equal is a draw.

Every position the engine answers is checked against our rules: the move is the one
legal move of ours that leads to it.  When none does, the game ends there as a loss
for the engine and the line says so.  Prints one line per game and the summary:
score, Elo difference with its 95 % interval, wins by pushing off six for each side,
games that reached the move limit, search depth and speed of both sides.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import subprocess
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
from abalone_pbm.rules import Board, Rules  # noqa: E402
from abalone_pbm.rules.geometry import CELLS, DIAGONAL_OF, ROW_OF  # noqa: E402
from abalone_pbm.rules.moves import Move  # noqa: E402
from robots import EngineStats, GameResult, summary_line  # noqa: E402

COTIX_URL = "https://github.com/Cotix/Abalone"
DRIVERS = BENCHMARKS / "engines"
DEFAULT_CACHE = Path.home() / ".cache" / "abalone-pbm" / "engines"


# ---------------------------------------------------------------- the Cotix board
# Their board (Game.h): 11 x 11 bits, bit 11 * R + c; R = 1 (bottom) .. 9 (top) are
# the rows, c = 1..9 the cells of a row counted from the right (bit 10 is drawn at the
# left).  Ours (rules/geometry.py): bit 11 * (row + 1) + diagonal, row A = 0 at the
# top, diagonals from the left.  Laying both diagrams on top of each other gives
# R = 9 - row and c = 6 - diagonal + row.
def _cotix_bit(cell: int) -> int:
    row, diagonal = ROW_OF[cell], DIAGONAL_OF[cell]
    return 11 * (9 - row) + (6 - diagonal + row)


OUR_TO_COTIX: dict[int, int] = {cell: _cotix_bit(cell) for cell in CELLS}
COTIX_TO_OUR: dict[int, int] = {bit: cell for cell, bit in OUR_TO_COTIX.items()}


def to_cotix(mask: int) -> int:
    """One of our marble masks as their bitboard."""
    out = 0
    for cell, bit in OUR_TO_COTIX.items():
        if mask >> cell & 1:
            out |= 1 << bit
    return out


def from_cotix(bits: int) -> int:
    """Their bitboard as our mask; a bit off our board raises ValueError."""
    out = 0
    rest = bits
    for bit, cell in COTIX_TO_OUR.items():
        if bits >> bit & 1:
            out |= 1 << cell
            rest &= ~(1 << bit)
    if rest:
        raise ValueError(f"bits outside the board: {rest:#x}")
    return out


# ---------------------------------------------------------------- building
def resolve_source(given: str | None, url: str, marker: str, cache: Path, name: str) -> Path:
    """A source tree holding ``marker``: ``given`` itself, or a clone of ``given`` (a git
    repository, bare or not) or of ``url`` into the cache."""
    if given is not None:
        path = Path(given).expanduser().resolve()
        if (path / marker).is_file():
            return path
        origin = str(path)
        target = cache / f"{name}-{hashlib.sha1(origin.encode()).hexdigest()[:8]}"
    else:
        origin = url
        target = cache / name
    if not (target / marker).is_file():
        if target.exists():
            shutil.rmtree(target)
        cache.mkdir(parents=True, exist_ok=True)
        print(f"cloning {origin} into {target}", file=sys.stderr)
        subprocess.run(["git", "clone", "--quiet", origin, str(target)], check=True)
    if not (target / marker).is_file():
        raise SystemExit(f"{origin}: no {marker} in its checkout")
    return target


def build_cotix(source: Path, cache: Path) -> Path:
    """Compile our driver with their Game.cpp and util.cpp (cached by content)."""
    driver = DRIVERS / "cotix_driver.cpp"
    inputs = [driver, source / "Game.cpp", source / "Game.h", source / "util.cpp"]
    digest = hashlib.sha1(b"".join(p.read_bytes() for p in inputs)).hexdigest()[:12]
    binary = cache / f"cotix_driver-{digest}"
    if binary.is_file():
        return binary
    compiler = shutil.which("g++")
    if compiler is None:
        raise SystemExit("g++ is needed to build the Cotix engine")
    cache.mkdir(parents=True, exist_ok=True)
    command = [compiler, "-O3", "-march=native", "-w", f"-I{source}", str(driver),
               str(source / "Game.cpp"), str(source / "util.cpp"), "-o", str(binary)]
    print("building: " + " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    return binary


# ---------------------------------------------------------------- the engine process
@dataclass
class Reply:
    """What the engine answered: our two marble masks after its move, and its search."""

    masks: tuple[int, int]
    depth: int
    nodes: int
    seconds: float


class EngineError(RuntimeError):
    """The engine answered something we cannot play (reported, the engine loses)."""


class CotixEngine:
    name = "cotix"

    def __init__(self, binary: Path, hash_mb: int) -> None:
        self.process = subprocess.Popen(
            [str(binary), str(hash_mb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, bufsize=1)

    def request(self, line: str) -> list[str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().split()
        if not answer or answer[0] == "error":
            raise EngineError(f"engine answered {' '.join(answer) or 'nothing'} to {line!r}")
        return answer

    def new_game(self) -> None:
        self.request("new")

    def start_boards(self, which: str) -> tuple[int, int]:
        """Their own set-up (``daisy`` or ``start``) as two raw bitboards."""
        _, b0, b1 = self.request(which)
        return int(b0, 16), int(b1, 16)

    def moves(self, board: Board) -> list[tuple[int, int]]:
        """Their move generator's positions after each move of the side to move."""
        b0, b1 = to_cotix(board.marbles(1)), to_cotix(board.marbles(2))
        answer = self.request(f"moves {board.turn - 1} {b0:x} {b1:x}")
        words = answer[2:]
        return [(from_cotix(int(words[i], 16)), from_cotix(int(words[i + 1], 16)))
                for i in range(0, len(words), 2)]

    def choose(self, board: Board, budget: float) -> Reply:
        b0, b1 = to_cotix(board.marbles(1)), to_cotix(board.marbles(2))
        starts = [board.marble_count(s) + board.lost(s) for s in (1, 2)]
        answer = self.request(
            f"go {board.turn - 1} {max(1, round(budget * 1000))} {b0:x} {b1:x} "
            f"{starts[0]} {starts[1]}")
        if answer[0] != "move" or len(answer) != 7:
            raise EngineError(f"engine answered {' '.join(answer)}")
        try:
            masks = (from_cotix(int(answer[1], 16)), from_cotix(int(answer[2], 16)))
        except ValueError as error:
            raise EngineError(f"engine put a marble off the board ({error})") from None
        return Reply(masks, int(answer[3]), int(answer[5]), int(answer[6]) / 1000)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.request("quit")
            except (EngineError, OSError):
                pass
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def move_to(board: Board, masks: tuple[int, int]) -> Move | None:
    """Our legal move that leads to these marble masks (seat 1, seat 2), or None."""
    for move in board.generate_legal_moves():
        board.push(move)
        reached = (board.marbles(1), board.marbles(2)) == masks
        board.pop()
        if reached:
            return move
    return None


# ---------------------------------------------------------------- a game
@dataclass(frozen=True)
class MatchSpec:
    ours: str
    layouts: tuple[str, ...]
    opening_moves: int
    budget: float
    movelimit: int
    seed: int


def opening_board(spec: MatchSpec, index: int) -> Board:
    """The layout of the pair ``index // 2`` followed by its random opening moves."""
    pair = index // 2
    board = Board.from_layout(spec.layouts[pair % len(spec.layouts)],
                              Rules(players=2, movelimit=spec.movelimit))
    opening = random.Random(spec.seed * 1_000_003 + pair)
    for _ in range(spec.opening_moves):
        moves = list(board.generate_legal_moves())
        if not moves:
            break
        board.push(opening.choice(moves))
    return board


def play_game(spec: MatchSpec, index: int, engine: CotixEngine) -> GameResult:
    """Game ``index``: ours ("a") against the engine ("b"); ours plays first in even games."""
    board = opening_board(spec, index)
    layout = spec.layouts[(index // 2) % len(spec.layouts)]
    # Colours are swapped by the seat to move after the opening, so the pair plays the
    # same position from both sides.
    ours_seat = board.turn if index % 2 == 0 else 3 - board.turn
    robot = make_engine(spec.ours)
    engine.new_game()
    stats = {"a": EngineStats(), "b": EngineStats()}
    move_rng = random.Random(spec.seed * 7919 + index)
    failure: str | None = None
    while board.outcome() is None:
        mine = board.turn == ours_seat
        st = stats["a" if mine else "b"]
        started = time.perf_counter()
        if mine:
            move = robot.choose_move(board, spec.budget, rng_seed=move_rng.getrandbits(32))
            took = time.perf_counter() - started
            info = robot.last_info
            if info is not None and info.depths:
                st.searched += 1
                st.depth_total += info.depth
                st.nodes += info.nodes
                st.seconds += info.elapsed
                if 10 <= board.ply <= 60:
                    st.mid_moves += 1
                    st.mid_depth_total += info.depth
        else:
            try:
                reply = engine.choose(board, spec.budget)
            except EngineError as error:
                failure = str(error)
                break
            took = time.perf_counter() - started
            found = move_to(board, reply.masks)
            if found is None:
                failure = (f"{engine.name} answered a position no legal move reaches "
                           f"(before: {board.position()}; after: seat 1 {reply.masks[0]:#x}, "
                           f"seat 2 {reply.masks[1]:#x})")
                break
            move = found
            st.searched += 1
            st.depth_total += reply.depth
            st.nodes += reply.nodes
            st.seconds += reply.seconds
            if 10 <= board.ply <= 60:
                st.mid_moves += 1
                st.mid_depth_total += reply.depth
        st.moves += 1
        st.longest = max(st.longest, took)
        if took > spec.budget:
            st.over_budget += 1
        board.push(move)
    if failure is not None:
        winner, reason = "a", f"illegal answer, {engine.name} forfeits: {failure}"
    else:
        outcome = board.outcome()
        assert outcome is not None
        if outcome.draw:
            winner = "draw"
        else:
            winner = "a" if outcome.winners[0] == ours_seat else "b"
        reason = outcome.reason
    return GameResult(index, layout, ours_seat, winner, reason, board.ply,
                      board.ejected(ours_seat), board.ejected(3 - ours_seat), stats)


def report_game(r: GameResult, ours: str, theirs: str) -> None:
    result = {"a": f"{ours} wins", "b": f"{theirs} wins", "draw": "draw"}[r.winner]
    print(f"game {r.index + 1:3d} {r.layout:14s} {ours} as {'o' if r.a_seat == 1 else 'x'}: "
          f"{result:15s} pushed off {r.ejected_a}-{r.ejected_b} in {r.plies} plies "
          f"({r.reason})", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", default="boulder", choices=sorted(ENGINES))
    parser.add_argument("--engine", default="cotix", choices=["cotix"])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per move, both sides")
    parser.add_argument("--movelimit", type=int, default=150)
    parser.add_argument("--layouts", default="standard,belgian-daisy")
    parser.add_argument("--opening-moves", type=int, default=2,
                        help="random moves played after the layout, before the engines")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cotix-src", default=None,
                        help=f"Cotix/Abalone source tree or git repository (default: clone {COTIX_URL})")
    parser.add_argument("--cotix-hash-mb", type=int, default=512,
                        help="memory of the Cotix transposition tables (theirs: 2048)")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE),
                        help="where clones and built engines are kept")
    args = parser.parse_args(argv)
    layouts = tuple(name.strip() for name in args.layouts.split(",") if name.strip())
    for name in layouts:
        try:
            Board.from_layout(name, Rules(players=2))
        except ValueError as error:
            parser.error(f"layout {name}: {error}")

    cache = Path(args.cache_dir).expanduser()
    source = resolve_source(args.cotix_src, COTIX_URL, "Game.cpp", cache, "Cotix-Abalone")
    binary = build_cotix(source, cache)
    spec = MatchSpec(args.ours, layouts, args.opening_moves, args.budget, args.movelimit,
                     args.seed)
    engine = CotixEngine(binary, args.cotix_hash_mb)
    results: list[GameResult] = []
    started = time.perf_counter()
    try:
        for index in range(args.games):
            result = play_game(spec, index, engine)
            results.append(result)
            report_game(result, args.ours, engine.name)
    finally:
        engine.close()
    elapsed = time.perf_counter() - started
    print_summary(args, spec, engine.name, results, elapsed)
    return 0


def print_summary(args: argparse.Namespace, spec: MatchSpec, theirs: str,
                  results: list[GameResult], elapsed: float) -> None:
    ours = spec.ours
    n = len(results) or 1
    print()
    print(f"{ours} vs {theirs}: {len(results)} games, budget {spec.budget} s/move each, "
          f"move limit {spec.movelimit}, layouts {','.join(spec.layouts)}, "
          f"{spec.opening_moves} random opening moves, seed {spec.seed}")
    line, _ = summary_line(ours, theirs, results)
    print(f"  {line}")
    at_limit = sum(r.reason.startswith("move limit") for r in results)
    forfeits = sum(r.reason.startswith("illegal answer") for r in results)
    print(f"  ended at the move limit: {at_limit}; {theirs} forfeits by an illegal answer: "
          f"{forfeits}")
    print(f"  mean pushed off: {ours} {sum(r.ejected_a for r in results) / n:.2f}, "
          f"{theirs} {sum(r.ejected_b for r in results) / n:.2f}; "
          f"mean length {sum(r.plies for r in results) / n:.0f} plies")
    for key, name in (("a", ours), ("b", theirs)):
        total = EngineStats()
        for r in results:
            total.add(r.stats[key])
        line = (f"  {name}: {total.moves} moves, longest {total.longest:.2f} s "
                f"({total.over_budget} over the budget)")
        if total.searched:
            line += f", mean depth {total.depth_total / total.searched:.2f}"
            if total.mid_moves:
                line += f" (middlegame plies 10-60: {total.mid_depth_total / total.mid_moves:.2f})"
            if total.seconds > 0:
                line += f", {total.nodes / total.seconds:,.0f} nodes/s"
        print(line)
    print(f"  wall time {elapsed:.0f} s")


if __name__ == "__main__":
    raise SystemExit(main())
