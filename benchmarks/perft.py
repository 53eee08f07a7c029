"""Perft from a layout: the rules core's speed against an independent reference.

    python benchmarks/perft.py [DEPTH] [LAYOUT] [--variant NAME] [--no-reference]

Counts the move sequences of DEPTH plies (default 4, the standard start) with the
rules core, then with a reference written here from the rules alone: positions are
dicts from (row, diagonal) to player, moves are found by walking cells one step at a
time and played on a copy of the dict (two players, no variant).  Both counts must
agree.  Prints each one's count and seconds (wall and CPU of this process; the CPU
figure is the one to trust on a busy machine), the ratio of the reference's CPU time
to the core's (target: at least 30), and the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.rules import Board, Rules, perft  # noqa: E402
from abalone_pbm.rules.variants import variant_names  # noqa: E402

Cell = tuple[int, int]
Marbles = dict[Cell, int]
#: A move: the moving line (rear to front for an in-line move), its direction and the
#: marbles it pushes (front to back).
RefMove = tuple[tuple[Cell, ...], Cell, tuple[Cell, ...]]

#: Row (0 = A) and diagonal (1-9) deltas of the six directions.
DIRECTIONS: tuple[Cell, ...] = ((0, 1), (1, 1), (1, 0), (0, -1), (-1, -1), (-1, 0))
#: The three axes a line lies on (one direction of each).
AXES: tuple[Cell, ...] = ((0, 1), (1, 1), (1, 0))
#: The 61 cells: row r holds diagonals max(1, r - 3) to min(9, r + 5).
REFERENCE_CELLS: frozenset[Cell] = frozenset(
    (r, d) for r in range(9) for d in range(max(1, r - 3), min(9, r + 5) + 1)
)


def reference_start(layout_rows: str) -> Marbles:
    """The dict position of a position text's rows (digits are players)."""
    flat = layout_rows.replace("/", "")
    ordered = sorted(REFERENCE_CELLS)
    return {cell: int(ch) for cell, ch in zip(ordered, flat) if ch.isdigit()}


def _step(cell: Cell, delta: Cell) -> Cell | None:
    nxt = (cell[0] + delta[0], cell[1] + delta[1])
    return nxt if nxt in REFERENCE_CELLS else None


def reference_moves(marbles: Marbles, seat: int) -> list[RefMove]:
    """Every legal move of ``seat``: in-line moves of 1-3 marbles (pushing fewer
    opponent marbles than the line holds, into an empty cell or off the board), and
    side-steps of lines of 2-3 into empty cells."""
    out: list[RefMove] = []
    mine = [cell for cell, owner in marbles.items() if owner == seat]
    for rear in mine:
        for delta in DIRECTIONS:
            line = [rear]
            while True:
                target = _step(line[-1], delta)
                if target is None:
                    break
                occupant = marbles.get(target)
                if occupant is None:
                    out.append((tuple(line), delta, ()))
                    break
                if occupant == seat:
                    if len(line) == 3:
                        break
                    line.append(target)
                    continue
                pushed = [target]
                beyond = _step(target, delta)
                while beyond is not None and marbles.get(beyond) not in (None, seat):
                    pushed.append(beyond)
                    beyond = _step(beyond, delta)
                if len(pushed) < len(line) and (beyond is None or beyond not in marbles):
                    out.append((tuple(line), delta, tuple(pushed)))
                break
    for first in mine:
        for axis in AXES:
            line = [first]
            for _ in range(2):
                nxt = _step(line[-1], axis)
                if nxt is None or marbles.get(nxt) != seat:
                    break
                line.append(nxt)
                for delta in DIRECTIONS:
                    if delta == axis or delta == (-axis[0], -axis[1]):
                        continue
                    targets = [_step(c, delta) for c in line]
                    if all(t is not None and t not in marbles for t in targets):
                        out.append((tuple(line), delta, ()))
    return out


def reference_play(marbles: Marbles, move: RefMove) -> tuple[Marbles, int]:
    """(the position after ``move``, marbles pushed off)."""
    line, delta, pushed = move
    after = dict(marbles)
    moving = [*line, *pushed]
    for cell in moving:
        del after[cell]
    off = 0
    for cell in moving:
        dest = _step(cell, delta)
        if dest is None:
            off += 1
        else:
            after[dest] = marbles[cell]
    return after, off


def reference_perft(marbles: Marbles, seat: int, ejected: tuple[int, int], depth: int) -> int:
    """Move sequences of ``depth`` plies; a game ends when a side has pushed off six."""
    if max(ejected) >= 6:
        return 0 if depth else 1
    if depth == 0:
        return 1
    moves = reference_moves(marbles, seat)
    if depth == 1:
        return len(moves)
    total = 0
    other = 3 - seat
    for move in moves:
        after, off = reference_play(marbles, move)
        counts = (ejected[0] + off, ejected[1]) if seat == 1 else (ejected[0], ejected[1] + off)
        total += reference_perft(after, other, counts, depth - 1)
    return total


def _timed(run: Callable[[], int]) -> tuple[int, float, float]:
    started, cpu_started = time.perf_counter(), time.process_time()
    count = run()
    return count, time.perf_counter() - started, time.process_time() - cpu_started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("depth", nargs="?", type=int, default=4)
    parser.add_argument("layout", nargs="?", default="standard")
    parser.add_argument("--variant", choices=variant_names(), default=None,
                        help="count a variant's moves (the reference does not play it)")
    parser.add_argument("--no-reference", action="store_true",
                        help="time the core alone")
    args = parser.parse_args(argv)
    board = Board.from_layout(args.layout, Rules(variant=args.variant))
    start = board.position()
    load_before = os.getloadavg()[0]
    count, wall, cpu = _timed(lambda: perft(board, args.depth))
    print(f"core      perft({args.depth}) {args.layout}: {count} move sequences in "
          f"{wall:.2f} s ({cpu:.2f} s of CPU; {count / max(wall, 1e-9) / 1e6:.2f} M/s)")
    status = 0
    if not args.no_reference and args.variant is None:
        marbles = reference_start(start.split()[0])
        ref_count, ref_wall, ref_cpu = _timed(
            lambda: reference_perft(marbles, 1, (0, 0), args.depth)
        )
        print(f"reference perft({args.depth}) {args.layout}: {ref_count} move sequences in "
              f"{ref_wall:.2f} s ({ref_cpu:.2f} s of CPU)")
        if ref_count != count:
            print(f"COUNTS DIFFER: core {count}, reference {ref_count}")
            status = 1
        print(f"core / reference: {ref_cpu / max(cpu, 1e-9):.1f}x faster in CPU time "
              f"({ref_wall / max(wall, 1e-9):.1f}x in wall time; target: 30x)")
    print(f"load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after, "
          f"{os.cpu_count()} cores")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
