"""Where a sampled process spent its time, by thread and by function.

    python benchmarks/profile_summary.py FILE [--top N] [--thread WORD] [--moves M]
                                              [--under FUNCTION]

FILE holds py-spy's collapsed stacks (``py-spy record --format raw --threads``, as
``mail_throughput.py --profile FILE`` writes them): one line per distinct stack,
``thread (id): name;frame;frame;... count``. This prints the samples of each thread
(with ``--moves M``, also as milliseconds per move at the sampling rate ``--rate``),
then for each thread (or only those whose name contains ``--thread``) the functions
that took the most samples: *inclusive* (the function anywhere on the stack, counted
once per sample) and *self* (the function at the top of the stack). ``--under F``
keeps only the samples whose stack holds a function whose name contains F.
A frame is counted by function and file, not by line.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^():]+)(?::\d+)?\)$")


def frame_key(frame: str) -> str:
    """``func (file:line)`` -> ``func (file)``: one entry per function."""
    match = _FRAME.match(frame)
    return f"{match.group('name')} ({match.group('file')})" if match else frame


def read(path: Path) -> list[tuple[str, list[str], int]]:
    """(thread name, frames outermost first, samples) for each line of FILE."""
    stacks = []
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        # With ``--subprocesses`` py-spy puts the process (and its parents) first:
        # the innermost process names the thread, e.g. ``work --linked: MainThread``.
        processes = 0
        while processes < len(frames) - 1 and frames[processes].startswith("process "):
            processes += 1
        thread = frames[processes]
        name = thread.split(": ", 1)[1] if ": " in thread else thread
        if processes:
            words = frames[processes - 1].partition(":")[2].strip('"').split()
            # ``python -m abalone_pbm work --linked ...`` -> ``work``
            program = (words[words.index("abalone_pbm") + 1]
                       if "abalone_pbm" in words[:-1] else words[-1] if words else "?")
            name = f"{program}: {name}"
        stacks.append((name, [frame_key(f) for f in frames[processes + 1:]], int(count)))
    return stacks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--thread", default="", help="only threads whose name contains this")
    parser.add_argument("--under", default="", help="only samples under this function")
    parser.add_argument("--moves", type=int, default=0, help="moves made while sampling")
    parser.add_argument("--rate", type=float, default=250.0, help="samples per second")
    args = parser.parse_args()

    stacks = [s for s in read(args.file)
              if args.thread in s[0] and (not args.under
                                          or any(args.under in f for f in s[1]))]
    per_thread: Counter[str] = Counter()
    inclusive: dict[str, Counter[str]] = defaultdict(Counter)
    own: dict[str, Counter[str]] = defaultdict(Counter)
    for thread, frames, count in stacks:
        per_thread[thread] += count
        for frame in set(frames):
            inclusive[thread][frame] += count
        if frames:
            own[thread][frames[-1]] += count

    def figure(samples: int) -> str:
        if args.moves:
            return f"{samples / args.rate / args.moves * 1000:7.2f} ms/move"
        return f"{samples:7d} samples"

    total = sum(per_thread.values())
    print(f"{total} samples" + (f", {args.moves} moves" if args.moves else ""))
    for thread, samples in per_thread.most_common():
        print(f"  {thread:<30} {figure(samples)}  {samples / total:6.1%}")
    for thread, samples in per_thread.most_common():
        print(f"\n== {thread}: inclusive")
        for frame, count in inclusive[thread].most_common(args.top):
            print(f"  {figure(count)} {count / samples:6.1%}  {frame}")
        print(f"== {thread}: self")
        for frame, count in own[thread].most_common(args.top):
            print(f"  {figure(count)} {count / samples:6.1%}  {frame}")


if __name__ == "__main__":
    main()
