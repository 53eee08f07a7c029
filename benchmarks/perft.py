"""Perft(4) from the standard start: the rules core's speed figure.

    python benchmarks/perft.py [DEPTH] [LAYOUT]

Prints the count and the seconds it took (pure Python; target: at most 5 s).
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
    started = time.perf_counter()
    count = perft(board, depth)
    elapsed = time.perf_counter() - started
    print(f"perft({depth}) {layout}: {count} move sequences in {elapsed:.2f} s "
          f"({count / elapsed / 1e6:.2f} M/s)")


if __name__ == "__main__":
    main()
