"""Drive the server's mail path in-process: store a mail in the inbox, run the worker
(loop guards, mailroom, one transaction), read what landed in the outbox.

The same path a mail takes after the SMTP listener has stored it; the listener and the
sender have tests of their own (tests/mail, tests/e2e).
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass, field
from email.message import EmailMessage
from itertools import count

from sqlalchemy import select

from abalone_pbm.clock import ManualClock
from abalone_pbm.config import Settings
from abalone_pbm.mail import intake
from abalone_pbm.db.models import OutboxMail
from abalone_pbm.db.session import Database
from abalone_pbm.server import _service_hooks, password_hook, robot_hook
from abalone_pbm.worker import Worker

_ids = count(1)


@dataclass
class Sent:
    """One mail the server wrote."""

    to: str
    subject: str
    body: str
    message: EmailMessage

    @property
    def html(self) -> str | None:
        """The HTML part of a multipart/alternative mail, None for text only."""
        part = self.message.get_body(("html",))
        return None if part is None else str(part.get_content())

    @property
    def reply_to(self) -> str | None:
        value = self.message["Reply-To"]
        return str(value) if value else None


@dataclass
class Harness:
    database: Database
    settings: Settings
    clock: ManualClock = field(default_factory=ManualClock)

    def __post_init__(self) -> None:
        handle, tick = _service_hooks(self.settings, self.database)
        self.tick_hook = tick
        #: Boards the worker said may wait for a robot, as ``serve`` is told them.
        self.robot_boards: set[int] = set()
        self.worker = Worker(self.database, self.settings, self.clock, handle,
                             passwords=password_hook(self.settings),
                             robot_turns=self.robot_boards.update)
        self.robots = robot_hook(self.settings, self.database, self.clock)

    def mail(
        self,
        sender: str,
        subject: str,
        body: str = "",
        *,
        to: str | None = None,
        headers: dict[str, str] | None = None,
        message_id: str | None = None,
    ) -> list[Sent]:
        """Deliver one mail, process it, and return every mail it caused."""
        message = EmailMessage()
        message["From"] = sender
        message["To"] = to or self.settings.address
        message["Subject"] = subject
        message["Message-ID"] = message_id or f"<t{next(_ids)}@players.test>"
        for name, value in (headers or {}).items():
            message[name] = value
        message.set_content(body or "\n")
        return self.deliver(sender, to or self.settings.address, message.as_bytes())

    def deliver(self, envelope_from: str, to: str, raw: bytes) -> list[Sent]:
        with self.database.write() as session:
            intake.store_inbox(session, raw, envelope_from, [to], self.clock.now())
        return self.run()

    def run(self) -> list[Sent]:
        """Process the inbox, then let the robots play their turns, until all is quiet.

        As in ``serve``, the robots look only at the boards the worker named (a robot
        turn it failed to name would hang there, and the robot tests would see it)."""
        while True:
            while self.worker.run_once():
                pass
            boards = set(self.robot_boards)
            self.robot_boards.clear()
            if not boards or not self.robots(boards):
                break
        return self.take_outbox()

    def tick(self) -> list[Sent]:
        assert self.tick_hook is not None, "the service layer has no tick"
        self.tick_hook(self.clock.now())
        self.robots(None)  # as in serve: after a tick the robots look at every game
        return self.run()

    def take_outbox(self) -> list[Sent]:
        """Pending outbox mails, marked sent so each is returned once."""
        out = []
        with self.database.write() as session:
            rows = session.scalars(
                select(OutboxMail).where(OutboxMail.status == "pending").order_by(OutboxMail.id)
            )
            for row in rows:
                message = email.message_from_bytes(bytes(row.raw), policy=email.policy.default)
                text = message.get_body(("plain",))
                assert text is not None, "every mail has a text/plain part"
                out.append(Sent(row.recipient, str(message["Subject"]), text.get_content(), message))
                row.status = "sent"
        return out

    # -- conveniences for the usual set-up ----------------------------------------
    def signup(self, userid: str, password: str | None = None, address: str | None = None) -> str:
        address = address or f"{userid}@example.org"
        sent = self.mail(address, f"signup {userid} {password or userid + '-pw'}")
        assert any(s.subject.startswith("Abalone signup") for s in sent), sent
        return address

    def challenge(self, *userids: str, options: str = "", by: str | None = None) -> dict[str, Sent]:
        """Start a game; returns the new-board mail of each player by userid."""
        sender = by or f"{userids[0]}@example.org"
        sent = self.mail(sender, f"abalone challenge {options} {' '.join(userids)}".replace("  ", " "))
        mails = {}
        for s in sent:
            if s.subject.startswith("New Abalone Board"):
                mails[s.to.split("@")[0]] = s
        assert mails, [(s.subject, s.body[:300]) for s in sent]
        return mails


def make_harness(db_url: str, tmp_path, **settings) -> Harness:  # type: ignore[no-untyped-def]
    settings.setdefault("robot_budget", 0.05)
    config = Settings(database_url=db_url, maildir=str(tmp_path / "outgoing"), **settings)
    database = Database(db_url)
    database.ensure_schema()
    return Harness(database, config)
