"""Shared helpers of the mail tests: a real SMTP relay sink, an echo service, mails."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from typing import Callable

import pytest

from abalone_pbm.db.models import InboxMail
from abalone_pbm.db.repository import enqueue_outbox
from abalone_pbm.mail.compose import compose
from abalone_pbm.mail.listener import IntakeController
from abalone_pbm.service.rates import answer_target

OURS = "abalone@example.org"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(condition: Callable[[], object], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def flood_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The connection caps' flood log lines captured so far."""
    return [r.getMessage() for r in caplog.records if r.name == "abalone_pbm.mail.limits"]


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    raw: bytes


@dataclass
class SinkHandler:
    """A relay that keeps every mail; ``refuse`` maps recipients to an RCPT answer."""

    received: list[Received] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: How many SMTP sessions greeted with EHLO (connections the sender opened).
    greetings: int = 0
    #: While set, DATA is not answered (a relay that hangs).
    stall: threading.Event = field(default_factory=threading.Event)

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        session.host_name = hostname
        with self.lock:
            self.greetings += 1
        return responses

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        import asyncio

        while self.stall.is_set():
            await asyncio.sleep(0.05)
        with self.lock:
            self.received.append(
                Received(envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content)
            )
        return "250 2.0.0 Ok: queued"


class Relay:
    """A live aiosmtpd relay sink on 127.0.0.1 (``url`` is what ABALONE_PBM_RELAY takes)."""

    def __init__(self, port: int = 0, *, smtputf8: bool = False) -> None:
        self.handler = SinkHandler()
        self.controller = IntakeController(
            self.handler, hostname="127.0.0.1", port=port, server_hostname="relay.test",
            enable_SMTPUTF8=smtputf8,
        )

    def start(self) -> Relay:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.controller.port}"

    @property
    def received(self) -> list[Received]:
        return self.handler.received


class Echo:
    """A stand-in for the service layer: answers every mail with one echo reply."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, session, mail: InboxMail, message: EmailMessage, now: datetime) -> None:
        with self.lock:
            self.calls.append(mail.id)
        answer = compose(
            sender=OURS,
            to=answer_target(session, message, mail.envelope_from),
            subject=f"Re: {message.get('Subject', '')}",
            body=f"You wrote:\n> {message.get_body(('plain',)).get_content().strip()}\n",
            in_reply_to=message.get("Message-ID"),
            loop_token=OURS,
            date=now,
        )
        enqueue_outbox(session, answer, now, inbox_id=mail.id)


def person_mail(number: int, *, sender: str = "fred@example.net", headers: str = "") -> bytes:
    return (
        f"From: Fred <{sender}>\r\n"
        f"To: {OURS}\r\n"
        f"Subject: abalone help {number}\r\n"
        f"Message-ID: <mail-{number}@example.net>\r\n"
        f"{headers}"
        f"\r\n"
        f"Mail number {number}.\r\n"
    ).encode()
