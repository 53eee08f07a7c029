"""The intake of a real `abalone-pbm serve` under attack, over SMTP, on SQLite and
PostgreSQL: Message-ID squatting, mail without Message-ID, redelivery, hostile bytes,
fields longer than their columns, internationalised addresses."""

from __future__ import annotations

import smtplib
import time
from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from abalone_pbm.db.models import InboxMail, OutboxMail
from abalone_pbm.db.session import Database
from tests.e2e.conftest import LiveServer, RelaySink, free_port, live_server, server_env

__all__ = ["live_server", "server_env"]  # fixtures used by these tests

FRED = "fred@example.org"
EVE = "eve@example.org"
OURS = "abalone@localhost"


@pytest.fixture
def relay(request: pytest.FixtureRequest) -> Iterator[tuple[RelaySink, int]]:
    """The relay sink; ``indirect`` parametrisation says whether it offers SMTPUTF8."""
    sink = RelaySink()
    port = free_port()
    smtputf8 = bool(getattr(request, "param", True))
    controller = Controller(sink, hostname="127.0.0.1", port=port, enable_SMTPUTF8=smtputf8)
    controller.start()
    try:
        yield sink, port
    finally:
        controller.stop()


def _raw(sender: str, subject: str, body: str = "hello", message_id: str | None = None,
         extra: str = "") -> bytes:
    lines = [f"From: {sender}", f"To: {OURS}", f"Subject: {subject}"]
    if message_id is not None:
        lines.append(f"Message-ID: {message_id}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n" + body + "\r\n").encode()


def _database(server: LiveServer) -> Database:
    return Database(server.env["ABALONE_PBM_DATABASE_URL"])


def _settle(server: LiveServer, timeout: float = 30.0) -> None:
    """Wait until the worker has taken every stored mail and the sender every answer."""
    database = _database(server)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            with database.read() as session:
                waiting = session.scalars(
                    select(InboxMail.id).where(InboxMail.status == "new")).all()
                pending = session.scalars(
                    select(OutboxMail.id).where(OutboxMail.status == "pending")).all()
            if not waiting and not pending:
                return
            time.sleep(0.2)
        raise AssertionError(f"still waiting: inbox {waiting}, outbox {pending}")
    finally:
        database.dispose()


def _inbox(server: LiveServer) -> list[InboxMail]:
    database = _database(server)
    try:
        with database.read() as session:
            return list(session.scalars(select(InboxMail).order_by(InboxMail.id)))
    finally:
        database.dispose()


def _outbox(server: LiveServer) -> list[OutboxMail]:
    database = _database(server)
    try:
        with database.read() as session:
            return list(session.scalars(select(OutboxMail).order_by(OutboxMail.id)))
    finally:
        database.dispose()


def _log_of(server: LiveServer) -> str:
    """Stop the server and read everything it logged."""
    server.process.terminate()
    output, _ = server.process.communicate(timeout=30)
    return output


def test_another_sender_cannot_squat_a_message_id(live_server: LiveServer) -> None:
    server = live_server
    # Eve has seen the Message-ID fred's mail program will use, and sends first.
    server.send_raw(EVE, OURS, _raw(EVE, "help", message_id="<fred-1@example.org>"))
    server.mailbox.wait_for(EVE, r"^Abalone help")
    server.send_raw(FRED, OURS, _raw(FRED, "signup fred Choc0late",
                                     message_id="<fred-1@example.org>"))
    server.mailbox.wait_for(FRED, r"^Abalone signup fred")
    assert [m.status for m in _inbox(server)] == ["done", "done"]


def test_every_mail_without_message_id_is_answered(live_server: LiveServer) -> None:
    server = live_server
    raw = _raw(FRED, "help")  # no Message-ID, no trace: the same bytes twice
    server.send_raw(FRED, OURS, raw)
    server.send_raw(FRED, OURS, raw)
    server.mailbox.wait_for(FRED, r"^Abalone help")
    server.mailbox.wait_for(FRED, r"^Abalone help")
    assert [m.status for m in _inbox(server)] == ["done", "done"]


def test_a_redelivery_is_processed_once(live_server: LiveServer) -> None:
    server = live_server
    signup = _raw(FRED, "signup fred Choc0late", message_id="<signup-1@example.org>")
    server.send_raw(FRED, OURS, signup)
    server.mailbox.wait_for(FRED, r"^Abalone signup fred")
    # The MTA lost our 250 and delivers again: same sender, same Message-ID.
    server.send_raw(FRED, OURS, signup)
    # A retried MTA queue file without Message-ID: the same bytes, trace included.
    traced = b"Received: from mx.example.org by here with ESMTP id 4Q7; now\r\n" + _raw(
        FRED, "help")
    server.send_raw(FRED, OURS, traced)
    server.send_raw(FRED, OURS, traced)
    _settle(server)
    assert len(_inbox(server)) == 2
    subjects = [str(m["Subject"]) for m in server.mailbox.all_to(FRED)]
    assert subjects.count("Abalone signup fred") == 1
    assert not any("taken" in s or "error" in s.lower() for s in subjects)
    assert sum(s.startswith("Abalone help") for s in subjects) == 1


HOSTILE = [
    # A Message-ID with one byte that is not UTF-8, in a stateful command.
    b"From: a1@example.org\r\nTo: abalone@localhost\r\nSubject: signup hostile1 pw1\r\n"
    b"Message-ID: <x\xff@example.org>\r\n\r\nhi\r\n",
    # Line feeds and a NUL hidden in encoded words.
    b"From: =?utf-8?q?A=0A2?= <a2@example.org>\r\nTo: abalone@localhost\r\n"
    b"Subject: =?utf-8?q?help=0Abcc=3A_x=00?=\r\nMessage-ID: <2@example.org>\r\n\r\nhi\r\n",
    # Numbers no integer column holds.
    b"From: a3@example.org\r\nTo: abalone@localhost\r\n"
    b"Subject: abalone show 99999999999999999999999\r\nMessage-ID: <3@example.org>\r\n\r\nx\r\n",
    b"From: a4@example.org\r\nTo: abalone@localhost\r\nSubject: abalone show 3000000000\r\n"
    b"Message-ID: <4@example.org>\r\n\r\nx\r\n",
    # 8-bit and control characters in From; a From of two addresses.
    b"From: j\xc3\xb6rg <a5@example.org>\r\nTo: abalone@localhost\r\nSubject: help\r\n"
    b"Message-ID: <5@example.org>\r\n\r\nx\r\n",
    b"From: a\x01b@example.org\r\nTo: abalone@localhost\r\nSubject: help\r\n"
    b"Message-ID: <6@example.org>\r\n\r\nx\r\n",
    b"From: a7@example.org, b7@example.org\r\nTo: abalone@localhost\r\nSubject: help\r\n"
    b"Message-ID: <7@example.org>\r\n\r\nx\r\n",
    # An unknown and a bytes-only charset, broken base64, a NUL in the body.
    b"From: a8@example.org\r\nTo: abalone@localhost\r\nSubject: help\r\nMessage-ID: <8@e.org>\r\n"
    b"Content-Type: text/plain; charset=x-bogus\r\n\r\nhi\xff\r\n",
    b"From: a9@example.org\r\nTo: abalone@localhost\r\nSubject: help\r\nMessage-ID: <9@e.org>\r\n"
    b"Content-Type: text/plain; charset=base64\r\nContent-Transfer-Encoding: base64\r\n\r\n!!a\r\n",
    b"From: a10@example.org\r\nTo: abalone@localhost\r\nSubject: signup hostile10 pw10\r\n"
    b"Message-ID: <10@e.org>\r\n\r\nnul \x00 here\r\n",
    # Encoded words in a charset nobody knows, where answers copy them (References).
    b"From: a12@example.org\r\nTo: abalone@localhost\r\nSubject: =?x-bogus?q?=FF?= help\r\n"
    b"Message-ID: <=?x-bogus?q?=FF=FE?=@e.org>\r\nReferences: =?unknown-8bit?q?=FF?=\r\n"
    b"\r\nx\r\n",
    # A References header holding a truncated encoded word (no closing ?=).
    b"From: a13@example.org\r\nTo: abalone@localhost\r\nSubject: help\r\n"
    b"Message-ID: <13@e.org>\r\nReferences: =?gb2312?Q?=E5=AD=97=07 d=00\r\n\r\nx\r\n",
    # Not a mail at all.
    (bytes(range(256)) + b"\r\n") * 4,
]


def test_hostile_bytes_never_stop_the_worker(live_server: LiveServer) -> None:
    server = live_server
    for number, raw in enumerate(HOSTILE, start=1):
        server.send_raw(f"a{number}@example.org", OURS, raw)
    # A player's ordinary mail after all of them is answered.
    server.send_raw(FRED, OURS, _raw(FRED, "help", message_id="<after@example.org>"))
    server.mailbox.wait_for(FRED, r"^Abalone help")
    _settle(server)
    inbox = _inbox(server)
    assert len(inbox) == len(HOSTILE) + 1
    assert all(m.status == "done" for m in inbox), [(m.id, m.status, m.last_error) for m in inbox]
    answered = {row.inbox_id for row in _outbox(server)}
    assert all(m.id in answered for m in inbox)  # every mail got an answer
    assert all(row.status == "sent" for row in _outbox(server))
    log = _log_of(server)
    assert "Traceback" not in log and "parked" not in log


def test_fields_longer_than_their_columns(live_server: LiveServer) -> None:
    server = live_server
    long_id = "<" + "m" * 300 + "@example.org>"
    server.send_raw(FRED, OURS, _raw(FRED, "signup fred Choc0late", message_id=long_id))
    server.mailbox.wait_for(FRED, r"^Abalone signup fred")
    # A From of 343 characters: answered at the envelope sender instead.
    long_from = "x" * 330 + "@example.org"
    server.send_raw(EVE, OURS, _raw(long_from, "help", message_id="<long-from@example.org>"))
    server.mailbox.wait_for(EVE, r"^Abalone help")
    # An address argument of 343 characters: a clear error, nothing stored.
    server.send_raw(EVE, OURS, _raw(EVE, f"signup eve Passw0rd {long_from}",
                                    message_id="<long-arg@example.org>"))
    error = server.mailbox.wait_for(EVE, r"^Abalone error")
    assert "longer than 254 characters" in error.get_content()
    # An envelope sender of 343 characters cannot be answered: refused at MAIL.
    with smtplib.SMTP(server.host, server.port, timeout=30) as client:
        with pytest.raises(smtplib.SMTPSenderRefused) as refused:
            client.sendmail(long_from, [OURS], _raw(long_from, "help"))
    assert refused.value.smtp_code == 553 and b"254" in refused.value.smtp_error
    _settle(server)
    assert [m.status for m in _inbox(server)] == ["done", "done", "done"]


@pytest.mark.parametrize("relay", [True, False], ids=["smtputf8", "ascii-relay"],
                         indirect=True)
def test_internationalised_addresses(live_server: LiveServer,
                                     relay: tuple[RelaySink, int]) -> None:
    server = live_server
    sink, _ = relay
    smtputf8 = "smtputf8" in relay_offers(server, sink).lower()
    with smtplib.SMTP(server.host, server.port, timeout=30) as client:
        client.sendmail("jörg@exämple.org", [OURS], _raw("jörg@exämple.org", "help",
                        message_id="<i18n@example.org>"),
                        mail_options=["SMTPUTF8"])
    # An ordinary player's mail goes through whatever happens to jörg's answer.
    server.send_raw(FRED, OURS, _raw(FRED, "help", message_id="<ascii@example.org>"))
    server.mailbox.wait_for(FRED, r"^Abalone help")
    _settle(server)
    (jorg_row,) = [row for row in _outbox(server) if row.recipient != FRED]
    assert jorg_row.recipient == "jörg@xn--exmple-cua.org"
    if smtputf8:
        answer = server.mailbox.wait_for("jörg@xn--exmple-cua.org", r"^Abalone help")
        assert "jörg@xn--exmple-cua.org" in str(answer["To"])
        assert jorg_row.status == "sent"
    else:
        assert jorg_row.status == "failed"
        assert "SMTPUTF8" in (jorg_row.last_error or "")
    assert [m.status for m in _inbox(server)] == ["done", "done"]


def relay_offers(server: LiveServer, sink: RelaySink) -> str:
    """The relay's EHLO answer (which extensions it offers)."""
    relay_url = server.env["ABALONE_PBM_RELAY"]
    host, port = relay_url.removeprefix("smtp://").rsplit(":", 1)
    with smtplib.SMTP(host, int(port), timeout=10) as client:
        client.ehlo()
        return str(client.esmtp_features)
