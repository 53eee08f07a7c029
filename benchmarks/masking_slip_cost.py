"""What reading slipped command words costs the masking: CPU time on floods of command
lines, and the words of prose it hides.

- 12,000 ``signup fredN pwN`` lines in one text (some 250 KB: a mail at the size
  limit), and the same with a letter put in ("signnup");
- 3,000 ``abalone singup fredN PwN`` lines in one text, and each of them alone
  (as a Subject is read);
- prose, each line alone: README.md, the mail templates and the licence texts of
  /usr/share/common-licenses (where there are): how many lines and words the masking
  changes (none of them holds a password).

Usage: ``.venv/bin/python benchmarks/masking_slip_cost.py [--rounds 3] [--changed FILE]``;
prints process CPU time, best of the rounds, with the whole-text caches emptied before
each; ``--changed`` writes each prose line the masking changes, and how (to compare two
versions of the masking with ``diff``).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from pathlib import Path

import _common  # noqa: F401  (puts the checkout on sys.path)

from abalone_pbm.protocol import masking
from abalone_pbm.protocol.masking import PASSWORD_MASK, mask_passwords

PROSE_FILES = (_common.REPO / "README.md", *sorted((_common.REPO / "templates").rglob("*.txt")),
               *sorted(Path("/usr/share/common-licenses").glob("*")))


def best_of(rounds: int, work: Callable[[], object]) -> float:
    """The least process CPU time of ``work`` in ``rounds`` runs (seconds)."""
    spent = []
    for _ in range(rounds):
        masking.forget_whole_texts()
        masking._KNOWN_WINDOWS.clear()
        start = time.process_time()
        work()
        spent.append(time.process_time() - start)
    return min(spent)


def prose_lines() -> list[str]:
    return [line for path in PROSE_FILES if path.is_file()
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--changed", type=Path, help="where to write the prose lines changed")
    arguments = parser.parse_args()
    rounds = arguments.rounds

    floods = {
        "12,000 signup lines": "\n".join(f"signup fred{n} pw{n}" for n in range(12_000)),
        "12,000 signnup lines": "\n".join(f"signnup fred{n} pw{n}" for n in range(12_000)),
        "3,000 abalone singup lines": "\n".join(
            f"abalone singup fred{n} Pw{n}x" for n in range(3_000)),
    }
    for name, text in floods.items():
        seconds = best_of(rounds, functools.partial(mask_passwords, text))
        lines = text.count("\n") + 1
        hidden = mask_passwords(text).count(PASSWORD_MASK)
        print(f"{name:32} {seconds * 1000:8.1f} ms  {seconds * 1e6 / lines:6.1f} µs/line"
              f"  {hidden} masked")
    singles = [f"abalone singup fred{n} Pw{n}x" for n in range(3_000)]
    seconds = best_of(rounds, lambda: [mask_passwords(line) for line in singles])
    print(f"{'3,000 abalone singup, one by one':32} {seconds * 1000:8.1f} ms"
          f"  {seconds * 1e6 / len(singles):6.1f} µs/line")

    prose = prose_lines()
    changed = [(line, mask_passwords(line)) for line in prose]
    changed = [(line, masked) for line, masked in changed if masked != line]
    words = sum(masked.count(PASSWORD_MASK) for _, masked in changed)
    seconds = best_of(rounds, lambda: [mask_passwords(line) for line in prose])
    print(f"{'prose lines':32} {seconds * 1000:8.1f} ms"
          f"  {len(prose)} lines, {len(changed)} changed, {words} words masked")
    if arguments.changed is not None:
        arguments.changed.write_text(
            "".join(f"{line}\n -> {masked}\n" for line, masked in changed), encoding="utf-8")


if __name__ == "__main__":
    main()
