"""The intake without sockets: the listener's checks, the store, the real worker and
mailroom, on a real database — for fuzzing many mails a second.

``InProcessIntake.deliver(delivery)`` does what the SMTP listener does with one
delivery (refuse the sender or recipient, or store the bytes), ``process()`` runs the
worker until the inbox is empty, ``findings()`` reads the outcome (intake_check).
"""

from __future__ import annotations

import logging
from pathlib import Path

from abalone_pbm.clock import ManualClock
from abalone_pbm.config import Settings
from abalone_pbm.db.session import Database
from abalone_pbm.log_format import OneLineFormatter
from abalone_pbm.mail.guards import is_our_address
from abalone_pbm.mail.intake import store_mail
from abalone_pbm.mail.listener import sender_problem
from abalone_pbm.server import _service_hooks
from abalone_pbm.worker import Worker

from .hostile_mail import Delivery
from .intake_check import Findings


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.lines: list[str] = []
        self.setFormatter(OneLineFormatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:  # somebody logged a traceback
            self.lines.append("Traceback logged by " + record.name + ": " + record.getMessage())
        self.lines.append(self.format(record))


class InProcessIntake:
    def __init__(self, db_url: str, tmp_path: Path, *, daily_reply_cap: int = 100,
                 sender_daily_mails: int = 500) -> None:
        self.settings = Settings(database_url=db_url, maildir=str(tmp_path / "outgoing"),
                                 robot_budget=0.05, daily_reply_cap=daily_reply_cap,
                                 sender_daily_mails=sender_daily_mails)
        self.database = Database(db_url)
        self.database.ensure_schema()
        self.clock = ManualClock()
        handle, _ = _service_hooks(self.settings, self.database)
        self.worker = Worker(self.database, self.settings, self.clock, handle)
        self.capture = _Capture()
        logging.getLogger().addHandler(self.capture)
        self._old_level = logging.getLogger().level
        logging.getLogger().setLevel(logging.INFO)
        self.refused = 0
        self.stored = 0
        self.redeliveries = 0

    def close(self) -> None:
        logging.getLogger().removeHandler(self.capture)
        logging.getLogger().setLevel(self._old_level)
        self.database.dispose()

    def deliver(self, delivery: Delivery) -> str:
        if sender_problem(delivery.envelope_from) is not None:
            self.refused += 1
            return "refused sender"
        if not is_our_address(delivery.recipient, self.settings.address):
            self.refused += 1
            return "refused recipient"
        sender = "" if delivery.envelope_from in ("", "<>") else delivery.envelope_from
        _, created = store_mail(self.database, delivery.raw, sender, [delivery.recipient],
                                self.clock)
        if created:
            self.stored += 1
            return "stored"
        self.redeliveries += 1
        return "redelivery"

    def process(self, limit: int = 100_000) -> int:
        return self.worker.run_pending(limit)

    def findings(self) -> Findings:
        found = Findings.collect(self.database, self.capture.lines)
        found.waiting.extend(sorted(self.worker.set_aside))
        return found
