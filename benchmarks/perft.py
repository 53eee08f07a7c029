"""Perft(4) from the standard start: the rules core's speed figure.

    python benchmarks/perft.py [DEPTH] [LAYOUT]

Prints the count and the seconds it took, wall and CPU (pure Python; target: at most
1 s on an otherwise idle machine; the CPU figure is the one to trust when it is busy).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from abalone_pbm.rules import Board, perft  # noqa: E402


def main() -> None:
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    layout = sys.argv[2] if len(sys.argv) > 2 else "standard"
    board = Board.from_layout(layout)
    started, cpu_started = time.perf_counter(), time.process_time()
    count = perft(board, depth)
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    print(f"perft({depth}) {layout}: {count} move sequences in {elapsed:.2f} s "
          f"({cpu:.2f} s of CPU; {count / elapsed / 1e6:.2f} M/s)")


if __name__ == "__main__":
    main()
