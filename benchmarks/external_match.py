"""Matches against public engines: one of our robots against an outside Abalone engine.

    python benchmarks/external_match.py --ours boulder --engine cotix --games 8 --budget 1
    python benchmarks/external_match.py --engine verloop --verloop-src DIR --games 2 --budget 0.3
    python benchmarks/external_match.py --ours cotix --ours-budget 1 --budget 0.25

Engines:

* ``cotix`` (github.com/Cotix/Abalone): C++, 128-bit bitboards, alpha-beta with
  iterative deepening.  Built with g++ together with our driver
  ``benchmarks/engines/cotix_driver.cpp``, which is handed the whole position each
  move, so every layout of ours can be played.
* ``verloop`` (github.com/MichielVerloop/AbaloneAI): Java alpha-beta with a
  transposition table and move ordering (the settings of its README).  Compiled with
  javac together with our ``benchmarks/engines/VerloopDriver.java``; it keeps its own
  game, is told every move, and sets up ``standard`` and ``belgian-daisy`` only.

``--cotix-src DIR`` / ``--verloop-src DIR`` name a source tree or a git repository
(bare or not); without them the GitHub repository is cloned into ``--cache-dir``.
Their code is used unchanged and never copied into this tree.

Both sides get the same time per move (``--budget``).  Games cycle through the
layouts (``standard`` and ``belgian-daisy`` by default), each opening followed by
``--opening-moves`` random moves; every opening is played twice with the colours
swapped.  The move limit (default 150 plies) decides as in ``benchmarks/robots.py``:
more marbles pushed off wins, equal is a draw.

``--ours cotix`` puts a second Cotix process (``cotix-2``) in ours' seat: the engine
against itself, at time odds with ``--ours-budget``, shows how often a stronger search
of its own kind finishes the game against it (a yardstick for ours' share won by six).

Every position the engine answers is checked against our rules: the move is the one
legal move of ours that leads to it.  When none does, the game ends there as a loss
for the engine and the line says so; a move of ours the engine refuses (their rules
differ) aborts the game, which is left out of the score.  Prints one line per game
and the summary: score, Elo difference with its 95 % interval, wins by pushing off
six for each side, games that reached the move limit, time per move, search depth
and speed of both sides.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
for path in (str(REPO), str(BENCHMARKS)):
    if path not in sys.path:
        sys.path.insert(0, path)

from abalone_pbm.robots import ENGINES, make_engine  # noqa: E402
from abalone_pbm.robots.base import SearchInfo, occupied_mask, push_kind  # noqa: E402
from abalone_pbm.robots.endgame import CONTACT_PUSHES, LEAD_CENTRE, set_endgame  # noqa: E402
from abalone_pbm.robots.features import (  # noqa: E402
    PRESSURE, current_weights, set_pressure, set_weights)
from abalone_pbm.rules import Board, Rules  # noqa: E402
from abalone_pbm.rules.geometry import (  # noqa: E402
    CELL_BY_NAME, CELL_NAMES, CELLS, DIAGONAL_OF, OFFSETS, ROW_OF, iter_bits)
from abalone_pbm.rules.layouts import ROW_LENGTHS  # noqa: E402
from abalone_pbm.rules.moves import Move  # noqa: E402
from match_report import LoadWatch  # noqa: E402
from robots import EngineStats, GameResult, play_opening, summary_line  # noqa: E402

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
def resolve_source(given: str | None, url: str, marker: str, cache: Path, name: str,
                   option: str = "the --...-src option") -> Path:
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
        clone = subprocess.run(["git", "clone", "--quiet", origin, str(target)])
        if clone.returncode != 0:
            raise SystemExit(f"could not clone {origin}: name a checkout of it, or a git "
                             f"repository, with {option}")
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


# ---------------------------------------------------------------- the Java engine
VERLOOP_URL = "https://github.com/MichielVerloop/AbaloneAI"
VERLOOP_MARKER = "abalone/src/model/gamelogic/GameState.java"
#: Our layouts that their StartingLayout has (the cells agree: tested in new_game).
VERLOOP_LAYOUTS = {"standard": "STANDARD2", "belgian-daisy": "BELGIAN_DAISY"}
#: Their layouts for 3 players and for 4 in two teams (ours turned 120 degrees for three;
#: for four their own, not ours): games with more players start from these, their cells
#: named in our notation.
VERLOOP_MULTI_LAYOUTS = {3: "STANDARD3", 4: "STANDARD4"}
#: Libraries their model classes import, as Debian packages them (libopencsv-java,
#: libguava-java); Maven Central is the other source.
JAVA_LIBRARIES = ("opencsv", "guava", "commons-lang3", "commons-text", "commons-beanutils",
                  "commons-collections4")
#: Their JSON library (Genson) only annotates constructors for loading player files,
#: which the driver does not use; this declaration lets their sources compile without it.
GENSON_ANNOTATION = """package com.owlike.genson.annotation;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.CONSTRUCTOR})
public @interface JsonProperty {
    String value() default "";
    boolean serialize() default true;
    boolean deserialize() default true;
    String[] aliases() default {};
}
"""


def java_classpath() -> list[str]:
    jars = []
    for name in JAVA_LIBRARIES:
        found = next((str(p) for p in (Path("/usr/share/java") / f"{name}.jar",) if p.is_file()),
                     None)
        if found is None:
            candidates = sorted((Path.home() / ".m2" / "repository").glob(f"**/{name}-*.jar"))
            found = str(candidates[-1]) if candidates else None
        if found is None and name in ("opencsv", "guava"):
            raise SystemExit(f"{name}.jar is needed to build the Java engine "
                             "(apt-get install libopencsv-java libguava-java)")
        if found is not None:
            jars.append(found)
    return jars


def build_verloop(source: Path, cache: Path) -> list[str]:
    """Compile our driver against their sources; the classpath to run it."""
    driver = DRIVERS / "VerloopDriver.java"
    sources = source / "abalone" / "src"
    digest = hashlib.sha1(driver.read_bytes() + b"".join(
        p.read_bytes() for p in sorted(sources.rglob("*.java")))).hexdigest()[:12]
    build = cache / f"verloop-{digest}"
    libraries = java_classpath()
    classpath = [str(build / "classes"), *libraries]
    if (build / "classes" / "model" / "artificialintelligence" / "minimax"
            / "VerloopDriver.class").is_file():
        return classpath
    if shutil.which("javac") is None:
        raise SystemExit("javac is needed to build the Java engine")
    annotation = build / "annotations" / "com" / "owlike" / "genson" / "annotation"
    annotation.mkdir(parents=True, exist_ok=True)
    (annotation / "JsonProperty.java").write_text(GENSON_ANNOTATION)
    command = ["javac", "-nowarn", "-d", str(build / "classes"), "-cp", ":".join(libraries),
               "-sourcepath", f"{sources}:{build / 'annotations'}", str(driver)]
    print("building: " + " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    return classpath


# ---------------------------------------------------------------- the engine processes
@dataclass
class Reply:
    """What the engine answered: our marble masks after its move (seat by seat), and its
    search."""

    masks: tuple[int, ...]
    depth: int
    nodes: int
    seconds: float


class EngineError(RuntimeError):
    """The engine answered something we cannot play (reported, the engine loses)."""


class LineEngine:
    """An engine process that answers one line per request line."""

    name = "engine"

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)

    def request(self, line: str) -> list[str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise EngineError(f"engine exited (status {self.process.poll()})") from None
        answer = self.process.stdout.readline().split()
        if not answer or answer[0] == "error":
            raise EngineError(f"engine answered {' '.join(answer) or 'nothing'} to {line[:60]!r}")
        return answer

    def observe(self, board: Board) -> None:
        """A move was played on ``board`` (by us, or as an opening move)."""

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
            except OSError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class CotixEngine(LineEngine):
    """Stateless between moves: every request carries the whole position."""

    name = "cotix"

    def __init__(self, binary: Path, hash_mb: int) -> None:
        super().__init__([str(binary), str(hash_mb)])

    def new_game(self, layout: str, board: Board) -> None:
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
        # Each side's marbles at the start: those left and those the other side pushed
        # off (so a board set up mid-game is counted right too).
        starts = [board.marble_count(s) + board.ejected(3 - s) for s in (1, 2)]
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


def position_text(board: Board) -> str:
    """Every seat's cells in our (and their) notation, seat by seat: 'a1 a2 ... / i5 ...'."""
    return " / ".join(" ".join(sorted(CELL_NAMES[c] for c in iter_bits(board.marbles(seat))))
                      for seat in range(1, board.players + 1))


def masks_of(text: list[str], seats: int = 2) -> tuple[int, ...]:
    """The marble masks of ``seats`` groups of cells separated by '/'."""
    masks = [0] * seats
    side = 0
    for word in text:
        if word == "/":
            side += 1
        elif word in CELL_BY_NAME and side < seats:
            masks[side] |= 1 << CELL_BY_NAME[word]
        else:
            raise EngineError(f"engine named {word!r} in a position")
    return tuple(masks)


def board_from_masks(masks: tuple[int, ...], rules: Rules) -> Board:
    """A board with these marbles (seat 1's first), seat 1 to move, nothing pushed off."""
    owner = {cell: str(seat) for seat, mask in enumerate(masks, 1) for cell in iter_bits(mask)}
    flat = "".join(owner.get(cell, ".") for cell in CELLS)
    rows, start = [], 0
    for length in ROW_LENGTHS:
        rows.append(flat[start:start + length])
        start += length
    return Board(f"{'/'.join(rows)} 1 {','.join('0' * len(masks))}", rules)


class VerloopEngine(LineEngine):
    """Keeps its own game: it is told every move and its own moves are played in it."""

    name = "verloop"

    def __init__(self, classpath: list[str]) -> None:
        super().__init__(["java", "-cp", ":".join(classpath),
                          "model.artificialintelligence.minimax.VerloopDriver"])
        self.known_ply = 0
        self.seats = 2

    def new_game(self, layout: str, board: Board) -> None:
        if layout not in VERLOOP_LAYOUTS:
            raise SystemExit(f"the Java engine sets up only {', '.join(VERLOOP_LAYOUTS)}")
        answer = self.request(f"new {VERLOOP_LAYOUTS[layout]}")
        if masks_of(answer[1:]) != (board.marbles(1), board.marbles(2)):
            raise SystemExit(f"their {layout} is not ours: {' '.join(answer[1:])}")
        self.known_ply = board.ply
        self.seats = 2

    def new_multi_game(self, players: int) -> tuple[int, ...]:
        """A new game of theirs for 3 players or 4 in two teams, on their own layout: its
        marbles seat by seat in the order of moving (the driver lists them so)."""
        answer = self.request(f"new {VERLOOP_MULTI_LAYOUTS[players]}")
        if answer[0] != "position":
            raise SystemExit(f"the Java engine answered {' '.join(answer)}")
        self.known_ply = 0
        self.seats = players
        return masks_of(answer[1:], players)

    def observe(self, board: Board) -> None:
        if board.ply != self.known_ply:
            move = board.peek()
            assert move is not None
            cells = iter_bits(move.cells)
            target = CELL_NAMES[cells[0] + OFFSETS[move.direction]]
            line = " ".join(CELL_NAMES[c] for c in cells)
            self.request(f"play {line} > {target} = {position_text(board)}")
            self.known_ply = board.ply

    def choose(self, board: Board, budget: float) -> Reply:
        answer = self.request(f"go {max(1, round(budget * 1000))}")
        if answer[0] != "move" or len(answer) < 4:
            raise EngineError(f"engine answered {' '.join(answer)}")
        self.known_ply = board.ply + 1
        return Reply(masks_of(answer[1:-2], self.seats), int(answer[-2]), 0,
                     int(answer[-1]) / 1000)


Engine = CotixEngine | VerloopEngine


def move_to(board: Board, masks: tuple[int, ...]) -> Move | None:
    """Our legal move that leads to these marble masks (seat 1, seat 2, ...), or None."""
    seats = range(1, board.players + 1)
    for move in board.generate_legal_moves():
        board.push(move)
        reached = tuple(board.marbles(s) for s in seats) == masks
        board.pop()
        if reached:
            return move
    return None


def answered_move(engine_name: str, board: Board, reply: Reply) -> Move:
    """Our legal move that reaches the engine's answer on ``board``; EngineError (the
    engine forfeits) when none does."""
    move = move_to(board, reply.masks)
    if move is None:
        after = ", ".join(f"seat {seat} {mask:#x}" for seat, mask in enumerate(reply.masks, 1))
        raise EngineError(f"{engine_name} answered a position no legal move reaches "
                          f"(before: {board.position()}; after: {after})")
    return move


class EngineInOursSeat:
    """The Cotix engine in ours' seat (``--ours cotix``): a second process of it plays
    the first, so a match of the engine against itself (at time odds, say) shows how
    often its own search finishes the game against it."""

    def __init__(self, engine: CotixEngine) -> None:
        self.engine = engine
        self.name = engine.name
        self.last_info: SearchInfo | None = None

    def choose_move(self, board: Board, budget_seconds: float,
                    rng_seed: int | None = None) -> Move:
        reply = self.engine.choose(board, budget_seconds)
        move = answered_move(self.name, board, reply)
        self.last_info = SearchInfo(move=move, depth=reply.depth, nodes=reply.nodes,
                                    elapsed=reply.seconds, depths=[reply.depth])
        return move


# ---------------------------------------------------------------- a game
@dataclass(frozen=True)
class MatchSpec:
    ours: str
    layouts: tuple[str, ...]
    opening_moves: int
    budget: float
    movelimit: int
    seed: int
    #: Ours' seconds a move when it differs from the engine's (time odds); None: budget.
    ours_budget: float | None = None

    def budget_of(self, ours: bool) -> float:
        """One side's seconds a move."""
        return self.budget if not ours or self.ours_budget is None else self.ours_budget


def play_game(spec: MatchSpec, index: int, engine: Engine,
              thinking: dict[str, float] | None = None,
              trace: TextIO | None = None, record: TextIO | None = None,
              ours_engine: EngineInOursSeat | None = None) -> GameResult:
    """Game ``index``: ours ("a") against the engine ("b").  Pair ``index // 2`` plays
    its layout and random opening twice, ours moving first after it in the even game.
    With ``trace``, one JSON line per move of ours: the position before it, the marbles
    pushed off, the search's depth and value, the kind of move, and whether it returned
    to a position of the game.  With ``record``, one JSON line for the game: its layout
    and every move from it (:func:`replay` plays them again).  With ``ours_engine``,
    that engine plays ours' seat instead of the robot ``spec.ours``."""
    pair = index // 2
    layout = spec.layouts[pair % len(spec.layouts)]
    board = Board.from_layout(layout, Rules(players=2, movelimit=spec.movelimit))
    engine.new_game(layout, board)
    if ours_engine is not None:
        ours_engine.engine.new_game(layout, board)
    play_opening(board, spec.seed, pair, spec.opening_moves, after_each=engine.observe)
    # Colours are swapped by the seat to move after the opening, so the pair plays the
    # same position from both sides.
    ours_seat = board.turn if index % 2 == 0 else 3 - board.turn
    robot = ours_engine or make_engine(spec.ours)
    stats = {"a": EngineStats(), "b": EngineStats()}
    move_rng = random.Random(spec.seed * 7919 + index)
    failure: str | None = None  # the engine's answer is no legal move: it loses
    ours_failure: str | None = None  # the same, from an engine in ours' seat
    had: set[str] = {board.position().split(" ")[0] + str(board.turn)}
    aborted: str | None = None  # the engine refuses a move of ours: no result
    while board.outcome() is None:
        mine = board.turn == ours_seat
        st = stats["a" if mine else "b"]
        started = time.perf_counter()
        if mine:
            try:
                move = robot.choose_move(board, spec.budget_of(True),
                                         rng_seed=move_rng.getrandbits(32))
            except EngineError as error:
                ours_failure = str(error)
                break
            took = time.perf_counter() - started
            info = robot.last_info
            if info is not None and info.depths:
                st.searched_once(info.depth, info.nodes, info.elapsed, board.ply)
            if trace is not None:
                trace_move(trace, index, board, move, ours_seat, info, had)
        else:
            try:
                reply = engine.choose(board, spec.budget)
                took = time.perf_counter() - started
                move = answered_move(engine.name, board, reply)
            except EngineError as error:
                failure = str(error)
                break
            st.searched_once(reply.depth, reply.nodes, reply.seconds, board.ply)
        st.moves += 1
        if thinking is not None:
            thinking["a" if mine else "b"] += took
        st.longest = max(st.longest, took)
        if took > spec.budget_of(mine):
            st.over_budget += 1
        board.push(move)
        had.add(board.position().split(" ")[0] + str(board.turn))
        try:
            engine.observe(board)
        except EngineError as error:
            aborted = str(error)
            break
    if aborted is not None:
        winner, reason = "draw", f"aborted, {engine.name} could not follow the move: {aborted}"
    elif failure is not None:
        winner, reason = "a", f"illegal answer, {engine.name} forfeits: {failure}"
    elif ours_failure is not None:
        winner, reason = "b", f"illegal answer, {spec.ours} forfeits: {ours_failure}"
    else:
        outcome = board.outcome()
        assert outcome is not None
        if outcome.draw:
            winner = "draw"
        else:
            winner = "a" if outcome.winners[0] == ours_seat else "b"
        reason = outcome.reason
    result = GameResult(index, layout, ours_seat, winner, reason, board.ply,
                        board.ejected(ours_seat), board.ejected(3 - ours_seat), stats)
    if record is not None:
        record_game(record, result, spec, board, engine.name)
    return result


def record_game(record: TextIO, result: GameResult, spec: MatchSpec, board: Board,
                theirs: str) -> None:
    """One JSON line for a finished game: enough to play it again move by move."""
    record.write(json.dumps({
        "game": result.index, "layout": result.layout, "movelimit": spec.movelimit,
        "ours": spec.ours, "theirs": theirs, "ours_seat": result.a_seat,
        "opening_moves": spec.opening_moves,
        "winner": {"a": spec.ours, "b": theirs, "draw": "draw"}[result.winner],
        "reason": result.reason, "pushed_off": [result.ejected_a, result.ejected_b],
        "moves": [str(move) for move in board.move_stack],
    }) + "\n")
    record.flush()


def replay(game: dict[str, Any], plies: int | None = None) -> Board:
    """The board of a recorded game (a line :func:`record_game` wrote) after ``plies``
    of its moves (all of them by default), the opening's included."""
    board = Board.from_layout(game["layout"], Rules(players=2, movelimit=game["movelimit"]))
    for text in game["moves"][:plies]:
        board.push_text(text)
    return board


def play_multi_game(spec: MatchSpec, index: int, players: int, engine: VerloopEngine,
                    thinking: dict[str, float] | None = None) -> GameResult:
    """Game ``index`` with more players: ours ("a") holds one seat, the engine every other
    one (in a team game its partner too).  Opening ``index // players`` is played once
    with ours in each seat; the board is their layout, cell by cell.  A won game goes to
    the side that won; ``ejected_a`` is the marbles our side pushed off, ``ejected_b``
    the most another side pushed off."""
    opening, ours_seat = divmod(index, players)
    ours_seat += 1
    rules = Rules(players=players, teams=players == 4, movelimit=spec.movelimit)
    board = board_from_masks(engine.new_multi_game(players), rules)
    play_opening(board, spec.seed, opening, spec.opening_moves, after_each=engine.observe)
    robot = make_engine(spec.ours)
    stats = {"a": EngineStats(), "b": EngineStats()}
    move_rng = random.Random(spec.seed * 7919 + index)
    ours_side = rules.side_of(ours_seat)
    failure: str | None = None
    aborted: str | None = None
    while board.outcome() is None:
        mine = board.turn == ours_seat
        st = stats["a" if mine else "b"]
        started = time.perf_counter()
        if mine:
            move = robot.choose_move(board, spec.budget_of(True), rng_seed=move_rng.getrandbits(32))
            took = time.perf_counter() - started
            info = robot.last_info
            if info is not None and info.depths:
                st.searched_once(info.depth, info.nodes, info.elapsed, board.ply)
        else:
            try:
                reply = engine.choose(board, spec.budget)
                took = time.perf_counter() - started
                move = answered_move(engine.name, board, reply)
            except EngineError as error:
                failure = str(error)
                break
            st.searched_once(reply.depth, reply.nodes, reply.seconds, board.ply)
        st.moves += 1
        if thinking is not None:
            thinking["a" if mine else "b"] += took
        st.longest = max(st.longest, took)
        if took > spec.budget_of(mine):
            st.over_budget += 1
        board.push(move)
        try:
            engine.observe(board)
        except EngineError as error:
            aborted = str(error)
            break
    scores = [board.side_score(x) for x in range(rules.sides)]
    ours_score = scores[ours_side]
    best_other = max(v for x, v in enumerate(scores) if x != ours_side)
    if aborted is not None:
        winner, reason = "draw", f"aborted, {engine.name} could not follow the move: {aborted}"
    elif failure is not None:
        # Another seat's answer broke the rules: nobody wins, and the line says why.
        winner, reason = "draw", f"aborted, {engine.name} answered no legal move: {failure}"
    else:
        outcome = board.outcome()
        assert outcome is not None
        if outcome.draw:
            winner = "draw"
        else:
            winner = "a" if rules.side_of(outcome.winners[0]) == ours_side else "b"
        reason = outcome.reason
    setup = f"{players}{'t' if players == 4 else 'p'}-{VERLOOP_MULTI_LAYOUTS[players].lower()}"
    return GameResult(index, setup, ours_seat, winner, reason, board.ply, ours_score,
                      best_other, stats)


def trace_move(trace: TextIO, index: int, board: Board, move: Move, seat: int,
               info: SearchInfo | None, had: set[str]) -> None:
    """One JSON line about a move of ours, before it is played on ``board``."""
    kind = push_kind(occupied_mask(board), move)
    before = board.position()
    board.push(move)
    returns = board.position().split(" ")[0] + str(board.turn) in had
    board.pop()
    trace.write(json.dumps({
        "game": index, "ply": board.ply, "position": before, "seat": seat,
        "mine": board.ejected(seat), "theirs": board.ejected(3 - seat),
        "depth": info.depth if info else 0, "value": info.value if info else None,
        "kind": ("quiet", "push", "eject")[kind], "returns": returns, "move": str(move),
        "reason": info.reason if info else "",
    }) + "\n")
    trace.flush()


def report_game(r: GameResult, ours: str, theirs: str, players: int = 2) -> None:
    result = {"a": f"{ours} wins", "b": f"{theirs} wins", "draw": "draw"}[r.winner]
    seat = ("o" if r.a_seat == 1 else "x") if players == 2 else f"seat {r.a_seat}"
    print(f"game {r.index + 1:3d} {r.layout:14s} {ours} as {seat}: "
          f"{result:15s} pushed off {r.ejected_a}-{r.ejected_b} in {r.plies} plies "
          f"({r.reason})", flush=True)


def seconds(text: str) -> float:
    """A time a move from the command line: a number of seconds above zero."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is no time to think: give seconds above 0")
    return value


def add_weight_options(parser: argparse.ArgumentParser) -> None:
    """The options that give ours other evaluation weights (matches between settings)."""
    parser.add_argument("--weights", default=None,
                        help="a JSON file of evaluation weights for ours "
                        "(robots/weights.py names; those left out keep their value)")
    parser.add_argument("--pressure", type=int, default=None,
                        help="another weight for ours' pressure term (features.PRESSURE)")
    parser.add_argument("--pushes", type=int, default=None,
                        help="another weight for ours' push term (features.PUSHES)")
    parser.add_argument("--contact-pushes", type=int, default=None,
                        help="another weight for ours' contact push term "
                        "(endgame.CONTACT_PUSHES)")
    parser.add_argument("--lead-centre", type=int, default=None,
                        help="another weight for ours' lead centre term (endgame.LEAD_CENTRE)")


def apply_weight_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Set the weights :func:`add_weight_options` read (in this process: ours only); a
    weights file that cannot be read, or is no object of known names and whole numbers,
    is refused with why."""
    if args.weights:
        try:
            weights = json.loads(Path(args.weights).read_text())
        except (OSError, ValueError) as error:
            parser.error(f"--weights {args.weights}: {error}")
        known = set(current_weights())
        if not isinstance(weights, dict) or not all(
                name in known and isinstance(value, int) for name, value in weights.items()):
            parser.error(f"--weights {args.weights}: give a JSON object of whole numbers by "
                         f"the names {', '.join(sorted(known))}")
        set_weights(weights)
    if args.pressure is not None or args.pushes is not None:
        set_pressure(PRESSURE if args.pressure is None else args.pressure, args.pushes)
    if args.contact_pushes is not None or args.lead_centre is not None:
        set_endgame(CONTACT_PUSHES if args.contact_pushes is None else args.contact_pushes,
                    LEAD_CENTRE if args.lead_centre is None else args.lead_centre)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", default="boulder", choices=sorted(ENGINES) + ["cotix"],
                        help="our robot, or cotix: a second Cotix process in ours' seat "
                        "against --engine cotix (with --ours-budget, the engine at time odds "
                        "against itself)")
    parser.add_argument("--engine", default="cotix", choices=["cotix", "verloop"])
    parser.add_argument("--players", default="2", choices=["2", "3", "4t"],
                        help="3: three players, ours in one seat and the engine in the "
                        "other two; 4t: two teams of two, the engine also our partner "
                        "(the Java engine only; its own layouts)")
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--budget", type=seconds, default=1.0, help="seconds per move, both sides")
    parser.add_argument("--ours-budget", type=seconds, default=None,
                        help="seconds per move for ours alone (time odds: does more search "
                        "alone win?); default --budget")
    parser.add_argument("--movelimit", type=int, default=150)
    parser.add_argument("--layouts", default="standard,belgian-daisy")
    parser.add_argument("--opening-moves", type=int, default=2,
                        help="random moves played after the layout, before the engines")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cotix-src", default=None,
                        help="Cotix/Abalone source tree or git repository "
                        f"(default: clone {COTIX_URL})")
    parser.add_argument("--cotix-hash-mb", type=int, default=512,
                        help="memory of the Cotix transposition tables (theirs: 2048)")
    parser.add_argument("--verloop-src", default=None,
                        help="AbaloneAI source tree or git repository "
                        f"(default: clone {VERLOOP_URL})")
    add_weight_options(parser)
    parser.add_argument("--trace", default=None,
                        help="write one JSON line per move of ours to this file")
    parser.add_argument("--record", default=None,
                        help="write one JSON line per game to this file: the layout and "
                        "every move, to replay it (external_match.replay)")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE),
                        help="where clones and built engines are kept")
    args = parser.parse_args(argv)
    layouts = tuple(name.strip() for name in args.layouts.split(",") if name.strip())
    for name in layouts:
        try:
            Board.from_layout(name, Rules(players=2))
        except ValueError as error:
            parser.error(f"layout {name}: {error}")
        if args.engine == "verloop" and name not in VERLOOP_LAYOUTS:
            parser.error(f"the Java engine sets up only {', '.join(VERLOOP_LAYOUTS)}")

    apply_weight_options(parser, args)
    players = int(args.players.rstrip("t"))
    if players > 2 and args.engine != "verloop":
        parser.error("games with more players are played against the Java engine (verloop)")
    if args.ours == "cotix" and args.engine != "cotix":
        # (two players only, then: more players are played against the Java engine)
        parser.error("--ours cotix plays against --engine cotix")
    cache = Path(args.cache_dir).expanduser()
    engine: Engine
    ours_engine: EngineInOursSeat | None = None
    if args.engine == "cotix":
        source = resolve_source(args.cotix_src, COTIX_URL, "Game.cpp", cache, "Cotix-Abalone",
                                "--cotix-src")
        binary = build_cotix(source, cache)
        engine = CotixEngine(binary, args.cotix_hash_mb)
        if args.ours == "cotix":
            ours_engine = EngineInOursSeat(CotixEngine(binary, args.cotix_hash_mb))
    else:
        source = resolve_source(args.verloop_src, VERLOOP_URL, VERLOOP_MARKER, cache,
                                "MichielVerloop-AbaloneAI", "--verloop-src")
        engine = VerloopEngine(build_verloop(source, cache))
    # The second Cotix gets a name of its own, so the lines and the summary tell the two apart.
    spec = MatchSpec("cotix-2" if ours_engine else args.ours, layouts, args.opening_moves,
                     args.budget, args.movelimit, args.seed, args.ours_budget)
    results: list[GameResult] = []
    thinking = {"a": 0.0, "b": 0.0}
    started = time.perf_counter()
    load = LoadWatch()
    trace = open(args.trace, "w") if args.trace else None
    record = open(args.record, "w") if args.record else None
    try:
        for index in range(args.games):
            if players > 2:
                assert isinstance(engine, VerloopEngine)
                result = play_multi_game(spec, index, players, engine, thinking)
            else:
                result = play_game(spec, index, engine, thinking, trace, record, ours_engine)
            results.append(result)
            report_game(result, spec.ours, engine.name, players)
    finally:
        engine.close()
        if ours_engine is not None:
            ours_engine.engine.close()
        if trace is not None:
            trace.close()
        if record is not None:
            record.close()
    elapsed = time.perf_counter() - started
    print_summary(spec, engine.name, results, thinking, elapsed, load.stop())
    return 0


def print_summary(spec: MatchSpec, theirs: str, played: list[GameResult],
                  thinking: dict[str, float], elapsed: float, load: str = "") -> None:
    ours = spec.ours
    aborted = [r for r in played if r.reason.startswith("aborted")]
    results = [r for r in played if not r.reason.startswith("aborted")]
    n = len(results) or 1
    print()
    each = ("each" if spec.ours_budget is None
            else f"for {theirs}, {spec.budget_of(True)} s/move for {ours}")
    print(f"{ours} vs {theirs}: {len(played)} games, budget {spec.budget} s/move {each}, "
          f"move limit {spec.movelimit}, layouts {','.join(spec.layouts)}, "
          f"{spec.opening_moves} random opening moves, seed {spec.seed}")
    line, _ = summary_line(ours, theirs, results)
    print(f"  {line}")
    at_limit = sum(r.reason.startswith("move limit") for r in results)
    forfeits = sum(r.reason.startswith("illegal answer") and r.winner == "a" for r in results)
    print(f"  ended at the move limit: {at_limit}; {theirs} forfeits by an illegal answer: "
          f"{forfeits}; aborted (left out above): {len(aborted)}")
    print(f"  mean pushed off: {ours} {sum(r.ejected_a for r in results) / n:.2f}, "
          f"{theirs} {sum(r.ejected_b for r in results) / n:.2f}; "
          f"mean length {sum(r.plies for r in results) / n:.0f} plies")
    for key, name in (("a", ours), ("b", theirs)):
        total = EngineStats()
        for r in results:
            total.add(r.stats[key])
        moves = sum(r.stats[key].moves for r in played) or 1
        line = (f"  {name}: {total.moves} moves, {thinking[key] / moves:.2f} s a move, longest "
                f"{total.longest:.2f} s ({total.over_budget} over the budget)")
        if total.searched:
            line += f", mean depth {total.depth_total / total.searched:.2f}"
            if total.mid_moves:
                line += f" (middlegame plies 10-60: {total.mid_depth_total / total.mid_moves:.2f})"
            if total.seconds > 0 and total.nodes > 0:
                line += f", {total.nodes / total.seconds:,.0f} nodes/s"
        print(line)
    print(f"  wall time {elapsed:.0f} s" + (f"; {load}" if load else ""))


if __name__ == "__main__":
    raise SystemExit(main())
