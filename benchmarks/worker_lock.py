"""How long the worker holds the write lock per mail, on quoted-board replies.

    python benchmarks/worker_lock.py [--games N] [--moves M] [--backlog B] [--no-read-ahead]

In one process, without SMTP: signs up 2N players, starts N games, then plays M moves
as Gmail writes a reply (``reply_shapes.py``: the move on the first line, the whole
board mail quoted in a text and an HTML part), B at a time stored in the inbox before
the worker takes them (``run_group``, as ``serve``'s worker on SQLite; with
``--no-read-ahead`` each mail is parsed and read in its transaction). Prints the
worker's time inside write transactions per mail (the lock every other writer waits
for), its time outside them (reading ahead, argon2 waits), and its CPU per mail.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import quiet_move  # noqa: E402
from reply_shapes import Original, reply  # noqa: E402
from sqlalchemy import select  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from abalone_pbm.clock import ManualClock  # noqa: E402
from abalone_pbm.config import Settings  # noqa: E402
from abalone_pbm.db.models import OutboxMail  # noqa: E402
from abalone_pbm.db.session import Database  # noqa: E402
from abalone_pbm.mail import intake  # noqa: E402
from abalone_pbm.rules import Board  # noqa: E402
from abalone_pbm.server import _service_hooks, password_hook  # noqa: E402
from abalone_pbm.worker import GROUP_MOST, Worker  # noqa: E402


class LockTimer:
    """Wraps ``database.write`` to add up the seconds spent inside write transactions:
    wall time, and the CPU time of this process (what a loaded machine does not skew)."""

    def __init__(self, database: Database) -> None:
        self.inside = self.inside_cpu = 0.0
        self._write = database.write

        @contextmanager
        def timed() -> Iterator[Session]:
            started, cpu = time.perf_counter(), time.process_time()
            try:
                with self._write() as session:
                    yield session
            finally:
                self.inside += time.perf_counter() - started
                self.inside_cpu += time.process_time() - cpu

        database.write = timed  # type: ignore[method-assign]


def store(database: Database, clock: ManualClock, sender: str, to: str, raw: bytes) -> None:
    with database.write() as session:
        intake.store_inbox(session, raw, sender, [to], clock.now())


def command(database: Database, clock: ManualClock, worker: Worker, settings: Settings,
            sender: str, subject: str) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, settings.address, subject
    message["Message-ID"] = f"<{time.time_ns()}@players.test>"
    message.set_content("\n")
    store(database, clock, sender, settings.address, message.as_bytes())
    worker.run_pending()


def board_mails(database: Database) -> dict[str, bytes]:
    """The newest board mail of each recipient (every pending row then marked sent)."""
    newest: dict[str, bytes] = {}
    with database.write() as session:
        for row in session.scalars(select(OutboxMail).where(OutboxMail.status == "pending")
                                   .order_by(OutboxMail.id)):
            if "Board" in (email.message_from_bytes(bytes(row.raw),
                                                    policy=email.policy.compat32)["Subject"] or ""):
                newest[row.recipient] = bytes(row.raw)
            row.status = "sent"
    return newest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--moves", type=int, default=120)
    parser.add_argument("--backlog", type=int, default=4)
    parser.add_argument("--no-read-ahead", action="store_true",
                        help="read each mail in its transaction (as before reading ahead)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite:///{workdir}/lock.sqlite3"
        settings = Settings(database_url=url, maildir=f"{workdir}/outgoing",
                            daily_reply_cap=100000, sender_daily_mails=0,
                            challenges_per_sender_daily=0, challenges_per_player_daily=0)
        database = Database(url)
        database.ensure_schema()
        clock = ManualClock()
        handle, _tick = _service_hooks(settings, database)
        worker = Worker(database, settings, clock, handle, passwords=password_hook(settings),
                        group_most=GROUP_MOST)
        players: list[tuple[str, str]] = []
        for number in range(2 * args.games):
            userid = f"p{number}"
            players.append((userid, f"{userid}@players.test"))
            command(database, clock, worker, settings, players[-1][1], f"signup {userid} pw{number}x")
        for game in range(args.games):
            (first, _), (second, _) = players[2 * game], players[2 * game + 1]
            command(database, clock, worker, settings, players[2 * game][1],
                    f"abalone challenge {first} {second}")
        boards = {101 + game: Board.from_layout("standard") for game in range(args.games)}
        if args.no_read_ahead:
            worker._read_ahead = lambda most: None  # type: ignore[method-assign]
        timer = LockTimer(database)
        played = 0
        cpu = wall = lock = lock_cpu = 0.0
        while played < args.moves:
            newest = board_mails(database)
            batch = 0
            for game, board in boards.items():
                if batch >= args.backlog or played + batch >= args.moves:
                    break
                index = game - 101
                mover = players[2 * index + board.turn - 1]
                original = Original.parse(newest[mover[1]])
                move = quiet_move(board, index)
                raw = reply("gmail", sender=mover[1], sender_name=mover[0].capitalize(),
                            to=original.reply_to, subject=f"Re: Abalone Board {game}",
                            message_id=f"<m{game}.{board.ply}.{time.time_ns()}@players.test>",
                            move=move, original=original)
                store(database, clock, mover[1], original.reply_to, raw)
                board.push_text(move)
                batch += 1
            timer.inside = timer.inside_cpu = 0.0
            started, cpu_started = time.perf_counter(), time.process_time()
            taken = 0
            while taken < batch:
                taken += worker.run_group()
            wall += time.perf_counter() - started
            cpu += time.process_time() - cpu_started
            played += taken
            lock += timer.inside
            lock_cpu += timer.inside_cpu
        print(f"{played} quoted-board replies, {args.backlog} waiting at a time, "
              f"{args.games} games")
        print(f"write lock held: {1000 * lock / played:.2f} ms per mail "
              f"({1000 * lock_cpu / played:.2f} ms of CPU); outside it: "
              f"{1000 * (wall - lock) / played:.2f} ms ({1000 * (cpu - lock_cpu) / played:.2f} "
              f"ms of CPU); worker CPU {1000 * cpu / played:.2f} ms per mail")


if __name__ == "__main__":
    main()
