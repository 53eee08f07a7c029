"""Storing accepted mail in the inbox: used by the listener and by ``abalone-pbm process``.

A mail is stored in its own committed write transaction; ``store_inbox`` deduplicates
by Message-ID (or the bytes' hash), so a mail the MTA delivers twice is stored once.
"""

from __future__ import annotations

import logging
import re
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from email.utils import getaddresses
from typing import TYPE_CHECKING, Callable

from ..clock import Clock

if TYPE_CHECKING:  # pragma: no cover
    from ..db.session import Database

__all__ = ["store_mail", "make_store", "split_from_line", "envelope_sender_from_headers"]

log = logging.getLogger(__name__)

_FROM_LINE = re.compile(rb"^From (\S+)")


def store_mail(
    database: Database,
    raw: bytes,
    envelope_from: str,
    envelope_to: list[str],
    clock: Clock,
) -> tuple[int | None, bool]:
    """Commit one mail to the inbox; returns (inbox id, False when it was a redelivery).

    Raises on any failure: the caller must then not acknowledge the mail.
    """
    from ..db.repository import store_inbox

    with database.write() as session:
        mail, created = store_inbox(session, raw, envelope_from, list(envelope_to), clock.now())
        session.flush()
        mail_id = mail.id if mail is not None else None
    if created:
        log.info("inbox %s: stored a mail from %r (%d bytes)", mail_id, envelope_from, len(raw))
    else:
        log.info("inbox %s: a redelivery from %r, already stored", mail_id, envelope_from)
    return mail_id, created


def make_store(
    database: Database, clock: Clock
) -> Callable[[bytes, str, list[str]], tuple[int | None, bool]]:
    """The blocking ``store(raw, mail_from, rcpt_tos)`` the listener runs in a thread."""

    def store(raw: bytes, envelope_from: str, envelope_to: list[str]) -> tuple[int | None, bool]:
        return store_mail(database, raw, envelope_from, envelope_to, clock)

    return store


def split_from_line(raw: bytes) -> tuple[bytes, str | None]:
    """Remove a leading mbox ``From sender date`` line (procmail, Postfix pipe flag F).

    Returns the message without it and the envelope sender it named (``""`` for
    ``MAILER-DAEMON``-style null senders written as ``<>``), or None when there was none.
    """
    if not raw.startswith(b"From "):
        return raw, None
    line, sep, rest = raw.partition(b"\n")
    match = _FROM_LINE.match(line)
    sender = match.group(1).decode("utf-8", "replace") if match else ""
    return (rest if sep else b""), ("" if sender in {"<>", ""} else sender)


def envelope_sender_from_headers(raw: bytes) -> str | None:
    """The envelope sender an MTA wrote into ``Return-Path`` (``""`` for ``<>``), or None."""
    headers = BytesHeaderParser(policy=default_policy).parsebytes(raw)
    value = headers.get("Return-Path")
    if value is None:
        return None
    text = str(value).strip()
    if text in {"<>", ""}:
        return ""
    found = [addr for _, addr in getaddresses([text]) if addr]
    return found[0] if found else ""


def first_from_address(raw: bytes) -> str:
    """The first address of the From header, or ``""``."""
    headers = BytesHeaderParser(policy=default_policy).parsebytes(raw)
    try:
        values = [str(v) for v in headers.get_all("From", [])]
    except Exception:
        return ""
    found = [addr for _, addr in getaddresses(values) if addr]
    return found[0] if found else ""
