"""Delivering the outbox: to the site's relay over SMTP, or into a Maildir.

Each due row is claimed in a short write transaction (its ``next_attempt_at`` is pushed
forward by a lease, so another sender process skips it), sent outside any transaction,
and then marked in its own small transaction: ``sent``; a temporary failure is retried
with exponential backoff (``mark_retry``); a permanent ``5xx`` from the relay marks it
``failed`` at once. A crash between sending and marking sends that mail again after
the lease (mail is delivered at least once, never lost).

The mail's bytes go to the relay untouched (its Message-ID included); the envelope
sender is the server address and there is exactly one recipient. Only ids, recipients
and subjects are logged, never bodies.
"""

from __future__ import annotations

import asyncio
import logging
import mailbox
import os
import threading
from dataclasses import dataclass
from datetime import timedelta
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from typing import TYPE_CHECKING, Callable

import aiosmtplib

from ..clock import Clock
from ..config import Settings
from ..db.models import OutboxMail

if TYPE_CHECKING:  # pragma: no cover
    from ..db.session import Database

__all__ = ["Sender", "Outcome"]

log = logging.getLogger(__name__)

#: How long a claimed row is hidden from other senders while it is being sent.
LEASE = timedelta(minutes=10)


@dataclass(frozen=True)
class _Item:
    id: int
    message_id: str
    sender: str
    recipient: str
    raw: bytes

    @property
    def subject(self) -> str:
        try:
            headers = BytesHeaderParser(policy=default_policy).parsebytes(self.raw)
            return " ".join(str(headers.get("Subject", "")).split())[:120]
        except Exception:
            return "?"


@dataclass(frozen=True)
class Outcome:
    """How one delivery went: sent, or an error that is permanent or worth a retry."""

    error: str | None = None
    permanent: bool = False

    @property
    def sent(self) -> bool:
        return self.error is None


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split()) or error.__class__.__name__
    return f"{error.__class__.__name__}: {text}"[:500]


def _outcome_of(error: BaseException) -> Outcome:
    """Classify a relay error: 5xx to our mail is permanent, anything else is retried."""
    if isinstance(error, aiosmtplib.SMTPRecipientsRefused):
        codes = [refused.code for refused in error.recipients]
        permanent = bool(codes) and all(500 <= code < 600 for code in codes)
        return Outcome(_describe(error), permanent)
    if isinstance(
        error,
        (
            aiosmtplib.SMTPRecipientRefused,
            aiosmtplib.SMTPSenderRefused,
            aiosmtplib.SMTPDataError,
        ),
    ):
        return Outcome(f"{error.code} {_describe(error)}", 500 <= error.code < 600)
    if isinstance(error, ValueError):  # an address aiosmtplib will not send to
        return Outcome(_describe(error), True)
    return Outcome(_describe(error), False)


class Sender:
    """Drains due outbox rows to ``settings.relay`` (``smtp://host:port``) or the Maildir."""

    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        *,
        timeout: float = 60.0,
    ) -> None:
        self.database = database
        self.settings = settings
        self.clock = clock
        self.timeout = timeout

    # -- where mail goes ------------------------------------------------------------

    @property
    def destination(self) -> str:
        """A sentence for the start-up message: the relay or the Maildir path."""
        relay = self.settings.relay_host_port
        if relay:
            return f"relay smtp://{relay[0]}:{relay[1]}"
        return f"Maildir {os.path.abspath(self.settings.maildir)}"

    # -- the outbox -----------------------------------------------------------------

    def _claim(self, limit: int) -> list[_Item]:
        from ..db.repository import due_outbox

        now = self.clock.now()
        with self.database.write() as session:
            rows = due_outbox(session, now, limit=limit)
            items = [
                _Item(row.id, row.message_id, row.sender, row.recipient, bytes(row.raw))
                for row in rows
            ]
            for row in rows:
                row.next_attempt_at = now + LEASE
        return items

    def _record(self, item: _Item, outcome: Outcome) -> None:
        from ..db.repository import mark_failed, mark_retry, mark_sent

        now = self.clock.now()
        with self.database.write() as session:
            row = session.get(OutboxMail, item.id)
            if row is None or row.status != "pending":
                return
            if outcome.sent:
                mark_sent(session, row, now)
            elif outcome.permanent:
                mark_failed(session, row, outcome.error or "refused", now)
            else:
                mark_retry(session, row, outcome.error or "unknown error", now)
            gave_up = row.status == "failed"
        if outcome.sent:
            log.info("outbox %s: sent %s to %s (%s)", item.id, item.message_id,
                     item.recipient, item.subject)
        elif gave_up:
            log.error("outbox %s: %s to %s (%s) failed for good: %s", item.id,
                      item.message_id, item.recipient, item.subject, outcome.error)
        else:
            log.warning("outbox %s: %s to %s (%s) will be retried: %s", item.id,
                        item.message_id, item.recipient, item.subject, outcome.error)

    def _send_batch(self, limit: int) -> tuple[int, int]:
        """Claim and send up to ``limit`` due rows; returns (claimed, sent)."""
        items = self._claim(limit)
        if not items:
            return 0, 0
        if self.settings.relay_host_port:
            outcomes = asyncio.run(self._relay(items))
        else:
            outcomes = self._to_maildir(items)
        return len(items), sum(1 for outcome in outcomes if outcome.sent)

    def send_due(self, limit: int = 50) -> int:
        """Send the outbox rows that are due (at most ``limit``); returns how many were sent."""
        return self._send_batch(limit)[1]

    def drain(self, limit: int = 50) -> tuple[int, int]:
        """Send batches until nothing is due; returns (sent, not sent this time).

        Rows that failed are not due again until their backoff has passed, so this ends.
        """
        sent = failed = 0
        while True:
            claimed, batch_sent = self._send_batch(limit)
            if not claimed:
                return sent, failed
            sent += batch_sent
            failed += claimed - batch_sent

    def run_forever(
        self,
        stop: threading.Event,
        wake: threading.Event | None = None,
        *,
        idle: float = 2.0,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Send until ``stop`` is set; sleep ``idle`` seconds (or until ``wake``) when idle."""
        wake = wake or threading.Event()
        while not stop.is_set():
            try:
                busy = self._send_batch(50)[0] > 0
            except Exception as error:  # the database may be away for a moment
                log.exception("sender: could not drain the outbox")
                if on_error is not None:
                    on_error(error)
                busy = False
            if busy:
                continue
            wake.wait(idle)
            wake.clear()

    # -- delivery -------------------------------------------------------------------

    async def _relay(self, items: list[_Item]) -> list[Outcome]:
        relay = self.settings.relay_host_port
        assert relay is not None
        host, port = relay
        outcomes: list[Outcome] = []
        client: aiosmtplib.SMTP | None = None
        try:
            for index, item in enumerate(items):
                if client is None or not client.is_connected:
                    client = aiosmtplib.SMTP(
                        hostname=host,
                        port=port,
                        timeout=self.timeout,
                        use_tls=False,
                        start_tls=False,
                        local_hostname=self.settings.address_domain,
                    )
                    try:
                        await client.connect()
                    except Exception as error:
                        # The relay is down: everything left is retried later.
                        outcome = Outcome(f"relay {host}:{port}: {_describe(error)}", False)
                        for rest in items[index:]:
                            self._record(rest, outcome)
                            outcomes.append(outcome)
                        client = None
                        return outcomes
                try:
                    await client.sendmail(
                        item.sender or self.settings.address, [item.recipient], item.raw
                    )
                    outcome = Outcome()
                except Exception as error:
                    outcome = _outcome_of(error)
                    if not isinstance(error, aiosmtplib.SMTPResponseException) and not isinstance(
                        error, (aiosmtplib.SMTPRecipientsRefused, ValueError)
                    ):
                        # A broken connection: start a fresh one for the next mail.
                        try:
                            client.close()
                        except Exception:
                            pass
                        client = None
                self._record(item, outcome)
                outcomes.append(outcome)
        finally:
            if client is not None and client.is_connected:
                try:
                    await client.quit()
                except Exception:
                    client.close()
        return outcomes

    def _maildir(self) -> mailbox.Maildir:
        path = os.path.abspath(self.settings.maildir)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        box = mailbox.Maildir(path, create=True)
        for sub in ("tmp", "new", "cur"):
            os.makedirs(os.path.join(path, sub), exist_ok=True)
        return box

    def _to_maildir(self, items: list[_Item]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        try:
            box = self._maildir()
        except OSError as error:
            box = None
            failure = Outcome(f"Maildir {self.settings.maildir}: {_describe(error)}", False)
        for item in items:
            if box is None:
                outcome = failure
            else:
                try:
                    # On disk a Maildir message has Unix line ends.
                    box.add(item.raw.replace(b"\r\n", b"\n"))
                    outcome = Outcome()
                except OSError as error:
                    outcome = Outcome(_describe(error), False)
            self._record(item, outcome)
            outcomes.append(outcome)
        return outcomes
