"""Masking passwords: CPU per call and per line of the three masking entry points
(find_passwords, mask_passwords, quote_original) on the shapes of mail that cost most.

- a bare move (one line);
- a reply that quotes the server's board mail: a move, a comment, a Gmail attribution
  and the board mail (rendered by the real service, on a throw-away SQLite database)
  quoted with "> ";
- a 200 KB thread: that reply's quote repeated, quoted ever deeper;
- 256 KB of ``signup fred pwN =`` lines (each a command and a soft line break).

Usage: ``.venv/bin/python benchmarks/masking.py [--seconds 0.3] [--service 20]``;
prints µs per line and ms per call (process CPU time, best of three rounds); ``find
(server)`` is find_passwords with a userid check, as the server reads a mail.

With ``--service N`` it also plays N moves by reply through the real service (the
harness of tests/service, SQLite) in turns of a bare move, the same move with a comment
and the board mail quoted, and the move with a 256 KB quoted thread, and prints the
worker's CPU per mail (median): what reading, masking, quoting and storing the masked
copy of a quoting reply add to a bare move.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _common  # noqa: F401  (puts the checkout on sys.path)

from abalone_pbm.protocol import masking
from abalone_pbm.protocol.masking import find_passwords, mask_passwords, quote_original

LIMIT = 256 * 1024


def board_mail_body() -> tuple[str, str]:
    """The Subject and text of a real new-board mail, from the service harness."""
    from argon2 import PasswordHasher

    from abalone_pbm.service import passwords
    from tests.service.harness import make_harness

    passwords._hasher = PasswordHasher(time_cost=1, memory_cost=64)
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{Path(directory) / 'bench.db'}"
        harness = make_harness(url, Path(directory))
        try:
            harness.signup("fred", "fred-secret")
            harness.signup("wilma", "wilma-secret")
            mail = harness.challenge("fred", "wilma")["fred"]
        finally:
            harness.database.dispose()
    return mail.subject, mail.body


def quoted_reply(subject: str, board: str) -> str:
    """A move, a comment, a Gmail attribution and the board mail quoted with "> "."""
    quoted = "\n".join(f"> {line}".rstrip() for line in board.splitlines())
    return ("c3-c5\n\nNice opening, let us see how you answer this one.\n\n"
            "On Fri, 27 Nov 2026 at 14:02, Abalone <abalone@example.org> wrote:\n"
            f"{quoted}\n")


def thread(reply: str, size: int) -> str:
    """Replies quoting each other until ``size`` characters: each level one ">" deeper."""
    parts: list[str] = []
    depth = 0
    while sum(map(len, parts)) < size:
        prefix = "> " * depth
        parts.append("\n".join(f"{prefix}{line}".rstrip() for line in reply.splitlines()))
        depth = (depth + 1) % 8
    return "\n".join(parts)[:size]


def signup_lines(size: int) -> str:
    lines: list[str] = []
    total = 0
    number = 0
    while total < size:
        line = f"signup fred pw{number} ="
        lines.append(line)
        total += len(line) + 1
        number += 1
    return "\n".join(lines)


def per_call(action: Callable[[], object], seconds: float) -> float:
    """Process CPU seconds of one call: the best of three rounds of ``seconds`` each,
    each call without what the last one kept of its whole text."""
    best = float("inf")
    for _ in range(3):
        calls = 0
        start = time.process_time()
        while True:
            masking.forget_whole_texts()
            action()
            calls += 1
            spent = time.process_time() - start
            if spent >= seconds:
                break
        best = min(best, spent / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="CPU time per round")
    parser.add_argument("--service", type=int, default=0, metavar="N",
                        help="also play N moves of each kind through the service")
    options = parser.parse_args()
    subject, board = board_mail_body()
    reply = quoted_reply(subject, board)
    texts = {
        "bare move": ("Re: " + subject, "c3-c5\n"),
        f"quoted board ({len(reply.splitlines())} lines)": ("Re: " + subject, reply),
        "200 KB thread": ("Re: " + subject, thread(reply, 200 * 1024)),
        "256 KB signup lines": ("signup fred pw =", signup_lines(LIMIT)),
    }
    print(f"{'mail':32} {'lines':>6} {'find ms':>9} {'find (server)':>14} {'mask ms':>9} "
          f"{'quote ms':>9} {'mask µs/line':>13}")
    users = {"fred", "wilma"}
    for name, (subj, body) in texts.items():
        lines = body.count("\n") + 1
        text = f"{subj}\n\n{body}"
        find = per_call(lambda: find_passwords(text), options.seconds)
        server = per_call(lambda: find_passwords(text, users.__contains__), options.seconds)
        mask = per_call(lambda: mask_passwords(text), options.seconds)
        quote = per_call(lambda: quote_original(subj, body, max_lines=10 ** 6),
                         options.seconds)
        print(f"{name:32} {lines:6d} {find * 1e3:9.3f} {server * 1e3:14.3f} {mask * 1e3:9.3f} "
              f"{quote * 1e3:9.3f} {mask * 1e6 / lines:13.1f}")
    if options.service:
        service(options.service, board, reply)


def service(moves: int, board: str, reply: str) -> None:
    """Worker CPU per mail for bare, quoting and 256 KB replies (see the module text)."""
    import itertools
    import statistics
    from email.message import EmailMessage

    from argon2 import PasswordHasher

    from _common import quiet_move
    from abalone_pbm.mail import intake
    from abalone_pbm.rules import Board
    from abalone_pbm.service import passwords
    from tests.service.harness import make_harness

    passwords._hasher = PasswordHasher(time_cost=1, memory_cost=64)
    quote = reply.split("\n", 1)[1]  # the comment, attribution and quoted board
    big = thread(reply, LIMIT - 2048)
    cpu: dict[str, list[float]] = {"bare move": [], "quoted board": [], "256 KB thread": []}
    kinds = itertools.cycle(cpu)
    with tempfile.TemporaryDirectory() as directory:
        harness = make_harness(f"sqlite:///{Path(directory) / 'bench.db'}", Path(directory),
                               daily_reply_cap=10 ** 6, sender_daily_mails=10 ** 6)
        try:
            harness.signup("fred", "fred-secret")
            harness.signup("wilma", "wilma-secret")
            mails = harness.challenge("fred", "wilma")
            number = int(mails["fred"].subject.split()[3])
            reply_to = {u: str(m.reply_to) for u, m in mails.items()}
            game = Board()
            for serial in range(moves * len(cpu)):
                kind = next(kinds)
                mover = ("fred", "wilma")[game.turn - 1]
                text = quiet_move(game, 3)
                body = {"bare move": f"{text}\n", "quoted board": f"{text}\n{quote}",
                        "256 KB thread": f"{text}\n\n{big}\n"}[kind]
                message = EmailMessage()
                message["From"] = f"{mover}@example.org"
                message["To"] = reply_to[mover]
                message["Subject"] = f"Re: Abalone Board {number} {mover}"
                message["Message-ID"] = f"<masking{serial}@players.test>"
                message.set_content(body)
                with harness.database.write() as session:
                    intake.store_inbox(session, message.as_bytes(), f"{mover}@example.org",
                                       [reply_to[mover]], harness.clock.now())
                masking.forget_whole_texts()
                start = time.process_time()
                while harness.worker.run_once():
                    pass
                cpu[kind].append(time.process_time() - start)
                sent = harness.take_outbox()
                if not any(s.subject.startswith(f"Abalone Board {number}") for s in sent):
                    raise RuntimeError(f"{kind} move {text} failed: "
                                       f"{[(s.subject, s.body[:300]) for s in sent]}")
                game.push_text(text)
        finally:
            harness.database.dispose()
    bare = statistics.median(cpu["bare move"])
    print(f"\nworker CPU per mail, median of {moves} each (SQLite):")
    for kind, values in cpu.items():
        middle = statistics.median(values)
        print(f"  {kind:16} {middle * 1e3:8.2f} ms  ({middle / bare:.2f}x a bare move, "
              f"+{(middle - bare) * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
