"""Where a reply that quotes the board costs more than a bare move: a profile of both.

Players move by replying to their newest board mail (``reply_shapes.py``). This plays
one game in process through the real worker (the service harness of tests/service on
a throw-away SQLite database: reading ahead, masking ahead, the loop guards, the move,
the stored copy, the answers in the outbox), each move sent in turn as each shape, and
prints the worker's CPU a move per shape and, under ``--profile``, the functions whose
own time differs most between two shapes (per move):

    .venv/bin/python benchmarks/reply_profile.py [--moves N] [--shapes gmail,bare]
        [--profile gmail,bare] [--top 30]

Only the worker is measured (not the listener, the sender or SMTP): the difference
between shapes is what the worker's reading, masking and quoting cost.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import quiet_move  # noqa: E402
from reply_shapes import SHAPES, Original, reply  # noqa: E402

from abalone_pbm.mail import intake  # noqa: E402
from abalone_pbm.rules import Board  # noqa: E402

PLAYERS = ("fred", "wilma")

#: One profiled function: (file, line, name).
Where = tuple[str, int, str]


def times(profile: cProfile.Profile, cumulative: bool) -> dict[Where, float]:
    """Each function's own (or cumulative) seconds in ``profile``."""
    stats = pstats.Stats(profile)
    column = 3 if cumulative else 2
    return {where: entry[column]
            for where, entry in stats.stats.items()}  # type: ignore[attr-defined]


def play(moves: int, shapes: list[str], profiled: set[str]
         ) -> tuple[dict[str, list[float]], dict[str, cProfile.Profile]]:
    """Play ``moves`` moves of each shape in turn; the worker's CPU seconds of each move
    by shape, and a profile of the shapes in ``profiled``."""
    from argon2 import PasswordHasher

    from abalone_pbm.service import passwords
    from tests.service.harness import make_harness

    passwords._hasher = PasswordHasher(time_cost=1, memory_cost=64)
    cpu: dict[str, list[float]] = {shape: [] for shape in shapes}
    profiles = {shape: cProfile.Profile() for shape in profiled}
    with tempfile.TemporaryDirectory() as directory:
        harness = make_harness(f"sqlite:///{Path(directory) / 'profile.db'}", Path(directory),
                               daily_reply_cap=10 ** 6, sender_daily_mails=10 ** 6)
        try:
            for userid in PLAYERS:
                harness.signup(userid, f"{userid}-Secret9")
            started = harness.challenge(*PLAYERS)
            newest = {userid: started[userid] for userid in PLAYERS}
            board = Board()
            number = 0
            for turn in range(moves * len(shapes)):
                shape = shapes[turn % len(shapes)]
                mover = PLAYERS[board.turn - 1]
                board_mail = newest[mover]
                move = quiet_move(board, 3)
                board.push_text(move)
                number += 1
                raw = reply(shape, sender=f"{mover}@example.org",
                            sender_name=mover.capitalize(), to=str(board_mail.reply_to),
                            subject=f"Re: {board_mail.subject}",
                            message_id=f"<reply.{number}@players.test>", move=move,
                            original=Original.parse(board_mail.message.as_bytes()))
                with harness.database.write() as session:
                    intake.store_inbox(session, raw, f"{mover}@example.org",
                                       [str(board_mail.reply_to)], harness.clock.now())
                profile = profiles.get(shape)
                began = time.process_time()
                if profile is not None:
                    profile.enable()
                while harness.worker.run_once():
                    pass
                if profile is not None:
                    profile.disable()
                cpu[shape].append(time.process_time() - began)
                sent = harness.take_outbox()
                boards = {mail.to.split("@")[0]: mail for mail in sent
                          if "Board" in mail.subject and mail.reply_to}
                if set(boards) != set(PLAYERS):
                    raise RuntimeError(f"move {move} ({shape}) was not played: "
                                       f"{[(m.subject, m.body[:200]) for m in sent]}")
                newest.update(boards)
        finally:
            harness.database.dispose()
    return cpu, profiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=40, help="moves of each shape")
    parser.add_argument("--shapes", default="gmail,bare-headers,bare")
    parser.add_argument("--profile", default="",
                        help="two shapes to compare under cProfile, as A,B (e.g. gmail,bare)")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--cumulative", action="store_true",
                        help="compare the functions' cumulative time, not their own")
    options = parser.parse_args()
    shapes = options.shapes.split(",")
    if not set(shapes) <= set(SHAPES):
        parser.error(f"shapes are among {', '.join(SHAPES)}")
    compared: list[str] = []
    if options.profile:
        compared = options.profile.split(",")
        if len(compared) != 2 or not set(compared) <= set(shapes):
            parser.error("--profile compares two of --shapes, as A,B")
    cpu, profiles = play(options.moves, shapes, set(compared))
    print("worker CPU a move (median, mean), ms:")
    for shape in shapes:
        spent = sorted(cpu[shape])
        print(f"  {shape:14} {1000 * spent[len(spent) // 2]:7.2f} "
              f"{1000 * sum(spent) / len(spent):7.2f}   ({len(spent)} moves)")
    if not compared:
        return
    a, b = (times(profiles[shape], options.cumulative) for shape in compared)
    per_a, per_b = len(cpu[compared[0]]), len(cpu[compared[1]])
    rows = sorted(((a.get(w, 0.0) / per_a - b.get(w, 0.0) / per_b, w) for w in set(a) | set(b)),
                  reverse=True)
    total = sum(d for d, _ in rows)
    kind = "cumulative" if options.cumulative else f"own (total {1000 * total:+.2f} ms)"
    print(f"\n{kind} time a move, {compared[0]} minus {compared[1]}, largest first:")
    for difference, (file, line, name) in rows[:options.top]:
        where = f"{Path(file).name}:{line}" if line else file
        print(f"  {1000 * difference:+7.3f} ms  {name:40} {where}")


if __name__ == "__main__":
    main()
