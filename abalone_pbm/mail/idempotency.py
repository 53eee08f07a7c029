"""Which deliveries are the same mail (DESIGN §2.6 "Idempotency without squatting").

An MTA that lost our ``250`` delivers the same mail again, and it must be processed
once. But a Message-ID is chosen by the sender, so it alone cannot be the key: anyone
who saw (or guessed) another player's Message-ID could send a mail with it first and
the player's move would be taken for a redelivery. The key is therefore:

``mid:<sha256 of envelope sender and Message-ID>``
    A mail with a Message-ID. A redelivery comes from the same envelope sender with
    the same Message-ID; a mail with another sender's Message-ID has another key.
``bytes:<sha256 of envelope sender, recipients and the exact bytes>``
    A mail without Message-ID that carries a ``Received:`` trace. An MTA that retries
    sends the queued file again byte for byte, trace included (its own Received line,
    with its queue id and time, was written when it accepted the mail), so equal
    bytes are the same delivery; two mails written alike by a person went through the
    MTA at two moments and differ in that line.
``delivery:<random>``
    A mail without Message-ID and without any trace: it came straight from a client
    that adds neither, and nothing distinguishes a retry from a second mail written
    alike. Every such mail is processed (and answered): losing a command is worse
    than answering a retried one twice.

Every key is ASCII and at most 73 characters, whatever the mail holds.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import compat32

from .validation import clean_text, one_line

__all__ = ["inbox_key", "raw_message_id", "clean_message_id", "envelope_identity",
           "key_and_message_id"]

_MESSAGE_ID_COLUMN = 255


def _raw_headers(raw: bytes) -> Message:
    # compat32 keeps header text as it came (8-bit bytes as surrogate escapes).
    return BytesHeaderParser(policy=compat32).parsebytes(raw)


def _raw_value(headers: Message, name: str) -> str | None:
    for key, value in headers.raw_items():
        if key.strip().lower() == name:
            return str(value)
    return None


def raw_message_id(raw: bytes, headers: Message | None = None) -> str:
    """The first Message-ID header exactly as sent, unfolded and blank-trimmed (or "");
    ``headers``: the mail's headers when they are parsed already."""
    value = _raw_value(_raw_headers(raw) if headers is None else headers, "message-id")
    return " ".join(value.split()) if value is not None else ""


def clean_message_id(raw: bytes, headers: Message | None = None) -> str | None:
    """The Message-ID as clean text that fits its column, for the admin (None: none)."""
    text = one_line(raw_message_id(raw, headers), limit=_MESSAGE_ID_COLUMN)
    return text or None


def key_and_message_id(raw: bytes, envelope_from: str = "",
                       envelope_to: Sequence[str] = ()) -> tuple[str, str | None]:
    """``inbox_key`` and ``clean_message_id`` of one delivery, its headers parsed once."""
    headers = _raw_headers(raw)
    return (inbox_key(raw, envelope_from, envelope_to, headers),
            clean_message_id(raw, headers))


def envelope_identity(envelope_from: str) -> str:
    """The envelope sender as it takes part in the key (case and brackets ignored)."""
    return one_line(envelope_from).strip("<>").strip().lower()


def _digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big"))  # unambiguous concatenation
        hasher.update(part)
    return hasher.hexdigest()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def inbox_key(raw: bytes, envelope_from: str = "", envelope_to: Sequence[str] = (),
              headers: Message | None = None) -> str:
    """The inbox's deduplication key of one delivery (see the module text)."""
    if headers is None:
        headers = _raw_headers(raw)
    sender = _utf8(envelope_identity(envelope_from))
    message_id = _raw_value(headers, "message-id")
    message_id = " ".join(message_id.split()) if message_id is not None else ""
    if message_id:
        return "mid:" + _digest(sender, _utf8(message_id))
    if _raw_value(headers, "received") is not None:
        recipients = _utf8(",".join(sorted(clean_text(r).lower() for r in envelope_to)))
        return "bytes:" + _digest(sender, recipients, raw)
    return "delivery:" + secrets.token_hex(32)
