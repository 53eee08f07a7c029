"""What the worker's choice of the next mail costs with a large backlog waiting.

    python benchmarks/claim_order.py [--boards N] [--per-board M] [--claims C] [--url URL]

Stores N*M waiting mails (default 500 boards x 10 = 5,000), as a backlog after an
outage looks: each board's two players alternate (one by command in the Subject, one
by reply address), the boards interleaved in acceptance order, plus a flood of 200
mails of unknown board from one sender. Then claims C of them, each in a write
transaction of its own, as the worker does (``claim_next_inbox``, then ``mark_inbox``),
and prints the time per claim (median, 99th percentile, worst) and the time of the
read-ahead's look at the next 64 (``next_waiting_inbox``). Checks that every board's
mails were claimed in acceptance order. SQLite in a temporary file unless ``--url``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert  # noqa: E402

from abalone_pbm.db import repository  # noqa: E402
from abalone_pbm.db.models import InboxMail  # noqa: E402
from abalone_pbm.db.session import Database  # noqa: E402
from abalone_pbm.mail import intake  # noqa: E402

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def _mail(sender: str, subject: str, number: int) -> bytes:
    return (f"From: {sender}\r\nSubject: {subject}\r\nMessage-ID: <b{number}@bench>\r\n"
            "\r\nc3-c4\r\n").encode()


def store_backlog(database: Database, boards: int, per_board: int) -> dict[int, int]:
    """The backlog's rows (made by ``intake.inbox_values``, as the listener makes them);
    each stored mail's board by id."""
    rows = []
    number = 0
    for ply in range(1, per_board + 1):
        for board in range(101, 101 + boards):
            number += 1
            if ply % 2:
                sender = f"p1.{board}@example.org"
                raw = _mail(sender, f"abalone move {board} p{board} pw c3-c4#{ply}", number)
                recipients = ["abalone@localhost"]
            else:
                sender = f"p2.{board}@example.org"
                raw = _mail(sender, f"Re: Abalone Board {board} p2", number)
                recipients = [f"abalone+{board}.tok{board}abcd@localhost"]
            rows.append(intake.inbox_values(raw, sender, recipients, NOW))
            if ply == 1 and board % 50 == 0:
                for _ in range(20):  # a flooder's mails of no board, among the others
                    number += 1
                    rows.append(intake.inbox_values(_mail("flood@evil.example", "help",
                                                          number),
                                                    "flood@evil.example",
                                                    ["abalone@localhost"], NOW))
    with database.write() as session:
        session.execute(insert(InboxMail.__table__), rows)
    with database.read() as session:
        return {mail.id: mail.board for mail in session.query(InboxMail)
                if mail.board is not None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=500)
    parser.add_argument("--per-board", type=int, default=10)
    parser.add_argument("--claims", type=int, default=1000)
    parser.add_argument("--url", default=None, help="a database URL (default: SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'bench.sqlite3'}"
        database = Database(url)
        database.ensure_schema()
        try:
            board_of = store_backlog(database, args.boards, args.per_board)
            with database.read() as session:
                started = time.perf_counter()
                repository.next_waiting_inbox(session, 64)
                ahead = time.perf_counter() - started
            claims: list[float] = []
            taken: list[int] = []
            for _ in range(args.claims):
                with database.write() as session:
                    started = time.perf_counter()
                    mail = repository.claim_next_inbox(session)
                    claims.append(time.perf_counter() - started)
                    if mail is None:
                        break
                    taken.append(mail.id)
                    repository.mark_inbox(session, mail, "done", now=NOW)
        finally:
            database.dispose()
    per_board: dict[int, list[int]] = {}
    for mail_id in taken:
        if mail_id in board_of:
            per_board.setdefault(board_of[mail_id], []).append(mail_id)
    in_order = all(ids == sorted(ids) for ids in per_board.values())
    claims.sort()
    print(f"{len(board_of) + 200} waiting ({args.boards} boards x {args.per_board}, "
          f"200 of no board); {len(taken)} claimed, each board in acceptance order: "
          f"{in_order}")
    print(f"claim: median {statistics.median(claims) * 1e3:.2f} ms, "
          f"p99 {claims[int(len(claims) * 0.99) - 1] * 1e3:.2f} ms, "
          f"worst {claims[-1] * 1e3:.2f} ms; read-ahead look at 64: {ahead * 1e3:.2f} ms")
    if not in_order:
        raise SystemExit("a board's mails were claimed out of order")


if __name__ == "__main__":
    main()
