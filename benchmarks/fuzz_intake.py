"""Long fuzz run of the intake: hostile mail into a real `abalone-pbm serve` over SMTP.

    .venv/bin/python benchmarks/fuzz_intake.py --count 100000 [--postgresql] [--seed 1]
    .venv/bin/python benchmarks/fuzz_intake.py --count 100000 --in-process

Starts a relay sink (offering SMTPUTF8) and `abalone-pbm serve` on a fresh SQLite file
(or the test suite's throw-away PostgreSQL), sends ``--count`` deliveries made by
``tests/abuse/hostile_mail.py`` over several SMTP connections (plus every tenth mail
again, as an MTA's redelivery), waits until the server is quiet, and prints what it
found (``tests/abuse/intake_check.py``): wedges (mail still waiting), parked mails,
mails processed with neither an answer nor a drop reason, tracebacks in the log and
passwords that got out. ``--in-process`` runs the same deliveries through the
listener's checks, the store and the worker without sockets (faster). Exit status 0
when all of those are 0.
"""

from __future__ import annotations

import argparse
import os
import random
import smtplib
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from _common import REPO

from aiosmtpd.controller import Controller

from abalone_pbm.db.session import Database
from tests.abuse.hostile_mail import Delivery, hostile_mail
from tests.abuse.intake_check import Findings
from tests.e2e.conftest import RelaySink, free_port


def deliveries(count: int, seed: int) -> Iterator[Delivery]:
    """``count`` deliveries made one at a time (a list of them would not fit in memory)."""
    rng = random.Random(seed)
    made = serial = 0
    while made < count:
        delivery = hostile_mail(rng, serial)
        serial += 1
        made += 1
        yield delivery
        if serial % 10 == 0 and made < count:
            made += 1
            yield Delivery(delivery.envelope_from, delivery.recipient, delivery.raw,
                           "redelivery")


class _Shared:
    """One delivery stream taken by several client threads."""

    def __init__(self, items: Iterator[Delivery]) -> None:
        self.items = items
        self.lock = threading.Lock()
        self.taken = 0

    def __iter__(self) -> Iterator[Delivery]:
        return self

    def __next__(self) -> Delivery:
        with self.lock:
            item = next(self.items)
            self.taken += 1
            if self.taken % 10000 == 0:
                print(f"  {self.taken} deliveries sent", flush=True)
            return item


def _send_all(host: str, port: int, items: Iterable[Delivery], outcomes: Counter[str]) -> None:
    client: smtplib.SMTP | None = None
    for item in items:
        for attempt in range(3):
            try:
                if client is None:
                    client = smtplib.SMTP(host, port, timeout=120)
                options = [] if item.envelope_from.isascii() else ["SMTPUTF8"]
                client.sendmail(item.envelope_from, [item.recipient], item.raw,
                                mail_options=options)
                outcomes["250"] += 1
                break
            except smtplib.SMTPSenderRefused as error:
                outcomes[f"refused at MAIL {error.smtp_code}"] += 1
                break
            except smtplib.SMTPRecipientsRefused:
                outcomes["refused at RCPT"] += 1
                break
            except smtplib.SMTPDataError as error:
                outcomes[f"refused at DATA {error.smtp_code}"] += 1
                break
            except (UnicodeEncodeError, smtplib.SMTPNotSupportedError):
                outcomes["client could not write it"] += 1
                break
            except (smtplib.SMTPException, OSError):
                outcomes["connection trouble (retried)"] += 1
                try:
                    if client is not None:
                        client.close()
                except Exception:
                    pass
                client = None
        else:
            outcomes["gave up after 3 tries"] += 1
    if client is not None:
        try:
            client.quit()
        except Exception:
            pass


def _quiet(database: Database, timeout: float) -> bool:
    """Wait until nothing is waiting in the inbox or outbox; False when nothing moved
    for ``timeout`` seconds (a wedge: a slow server still working is waited for)."""
    from sqlalchemy import func, select

    from abalone_pbm.db.models import InboxMail, OutboxMail

    last = None
    moved = time.monotonic()
    while time.monotonic() - moved < timeout:
        with database.read() as session:
            waiting = session.scalar(
                select(func.count(InboxMail.id)).where(InboxMail.status == "new"))
            pending = session.scalar(
                select(func.count(OutboxMail.id)).where(OutboxMail.status == "pending",
                                                        OutboxMail.attempts == 0))
        if not waiting and not pending:
            return True
        if (waiting, pending) != last:
            last, moved = (waiting, pending), time.monotonic()
        time.sleep(1.0)
    return False


def run_smtp(items: Iterator[Delivery], db_url: str, workdir: Path, clients: int) -> int:
    sink = RelaySink()
    relay_port = free_port()
    relay = Controller(sink, hostname="127.0.0.1", port=relay_port, enable_SMTPUTF8=True)
    relay.start()
    listen = f"127.0.0.1:{free_port()}"
    # No daily reply cap and no daily limit of mails per sender: the run has a dozen
    # senders, and the limits would drop most of their mail before the worker read it
    # (the limits are tested elsewhere).
    env = dict(os.environ, ABALONE_PBM_LISTEN=listen, ABALONE_PBM_DATABASE_URL=db_url,
               ABALONE_PBM_RELAY=f"smtp://127.0.0.1:{relay_port}",
               ABALONE_PBM_DAILY_REPLY_CAP="0", ABALONE_PBM_SENDER_DAILY_MAILS="0")
    log_path = workdir / "serve.log"
    with open(log_path, "w") as log_file:
        server = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "serve"], cwd=workdir,
                                  env=env, stdout=log_file, stderr=subprocess.STDOUT)
    host, port = listen.rsplit(":", 1)
    database = Database(db_url)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                smtplib.SMTP(host, int(port), timeout=5).quit()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("abalone-pbm serve did not start: "
                                       + log_path.read_text()[-2000:]) from None
                time.sleep(0.2)
        outcomes: Counter[str] = Counter()
        started = time.monotonic()
        shared = _Shared(items)
        threads = [threading.Thread(target=_send_all, args=(host, int(port), shared, outcomes))
                   for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        sent_seconds = time.monotonic() - started
        quiet = _quiet(database, timeout=300)
        total = time.monotonic() - started
        alive = server.poll() is None
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        relay.stop()
    lines = log_path.read_text(errors="replace").splitlines()
    found = Findings.collect(database, lines)
    database.dispose()
    print(f"deliveries: {shared.taken} over {clients} SMTP connections in {sent_seconds:.0f} s; "
          f"quiet after {total:.0f} s ({shared.taken / total:.1f} mails/s)")
    print("SMTP answers: " + ", ".join(f"{k} x{v}" for k, v in outcomes.most_common()))
    print(f"server still running at the end: {alive}; quiet: {quiet}")
    print(f"relay received: {len(sink.messages)} mails")
    print(found.report())
    return 0 if found.clean and alive and quiet else 1


def run_in_process(items: Iterator[Delivery], db_url: str, workdir: Path) -> int:
    from tests.abuse.intake_inprocess import InProcessIntake

    intake = InProcessIntake(db_url, workdir, daily_reply_cap=0, sender_daily_mails=0)
    outcomes: Counter[str] = Counter()
    started = time.monotonic()
    index = 0
    try:
        for index, item in enumerate(items, start=1):
            outcomes[intake.deliver(item)] += 1
            if index % 50 == 0:
                intake.process()
            if index % 10000 == 0:
                print(f"  {index} deliveries, {time.monotonic() - started:.0f} s", flush=True)
        intake.process()
        found = intake.findings()
    finally:
        intake.close()
    seconds = time.monotonic() - started
    print(f"deliveries: {index} in process in {seconds:.0f} s "
          f"({index / seconds:.1f} mails/s)")
    print("intake: " + ", ".join(f"{k} x{v}" for k, v in outcomes.most_common()))
    print(found.report())
    return 0 if found.clean else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--postgresql", action="store_true")
    parser.add_argument("--in-process", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="fuzz-intake-"))
    pg = None
    if args.postgresql:
        from _common import start_postgres

        pg = start_postgres()
        db_url = pg.create_database()
    else:
        db_url = f"sqlite:///{workdir / 'fuzz.sqlite3'}"
    items = deliveries(args.count, args.seed)
    print(f"abalone-pbm intake fuzz: {args.count} deliveries, seed {args.seed}, "
          f"{'PostgreSQL' if pg else 'SQLite'}, {'in process' if args.in_process else 'SMTP'}; "
          f"work in {workdir}", flush=True)
    try:
        if args.in_process:
            return run_in_process(items, db_url, workdir)
        return run_smtp(items, db_url, workdir, args.clients)
    finally:
        if pg is not None:
            pg.stop()


if __name__ == "__main__":
    _ = REPO
    sys.exit(main())
