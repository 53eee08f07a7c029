"""Building the server's outgoing mail: one text/plain message per recipient.

Every mail the server sends carries ``Message-ID``, ``Date``, ``Auto-Submitted`` and
``X-Loop`` (DESIGN §2.3); an answer also carries ``In-Reply-To``/``References`` so that the
player's mail program threads it under their command.
"""

from __future__ import annotations

import secrets
import time
from datetime import datetime, timezone
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import format_datetime, getaddresses

__all__ = ["compose", "new_message_id", "one_address", "MAX_LINE"]

#: Longest line RFC 5322 allows (without CRLF); a longer body line forces quoted-printable.
MAX_LINE = 998


def new_message_id(domain: str) -> str:
    """A fresh, globally unique ``<…@domain>`` Message-ID (time + 80 random bits)."""
    domain = (domain or "localhost").strip().strip("<>").rsplit("@", 1)[-1] or "localhost"
    return f"<{int(time.time() * 1000):x}.{secrets.token_hex(10)}@{domain}>"


def one_address(text: str) -> str:
    """The single mail address in ``text`` (``"Fred <fred@x>"`` → ``fred@x``).

    Raises ValueError when ``text`` holds no address or more than one: the server never
    sends one mail to many people.
    """
    if "\r" in text or "\n" in text:
        raise ValueError("an address may not contain line breaks")
    found = [addr for _, addr in getaddresses([text]) if addr]
    if len(found) != 1 or "@" not in found[0]:
        raise ValueError(f"exactly one recipient address is needed, not {text!r}")
    return found[0]


def _domain_of(address: str) -> str:
    return address.rsplit("@", 1)[1] if "@" in address else "localhost"


def _one_line(text: str) -> str:
    """Header text on one line (a subject may quote what a player wrote)."""
    return " ".join(text.split())


def _body_text(body: str) -> str:
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") else text + "\n"


def _transfer_encoding(text: str) -> str:
    """7bit for plain ASCII (readable diagrams in any mail reader), else quoted-printable."""
    if text.isascii() and all(len(line) <= MAX_LINE for line in text.split("\n")):
        return "7bit"
    return "quoted-printable"


def _header_address(text: str) -> str:
    """Keep a display name if given (``Fred <fred@x>``) but insist on one address."""
    one_address(text)
    return text.strip()


def compose(
    *,
    sender: str,
    to: str,
    subject: str,
    body: str,
    reply_to: str | None = None,
    in_reply_to: str | None = None,
    references: list[str] | None = None,
    auto_submitted: str = "auto-replied",
    loop_token: str,
    date: datetime,
    message_id: str | None = None,
) -> EmailMessage:
    """One text/plain UTF-8 mail from the server to exactly one recipient.

    ``in_reply_to`` is the Message-ID of the mail being answered; ``references`` its own
    References chain (the answered Message-ID is appended to it when missing).
    ``loop_token`` goes into ``X-Loop`` (the server address), ``auto_submitted`` into
    ``Auto-Submitted`` (``auto-replied`` for answers, ``auto-generated`` for reminders).
    """
    one_address(sender)
    message = EmailMessage(policy=default_policy)
    message["From"] = _header_address(sender)
    message["To"] = _header_address(to)
    message["Subject"] = _one_line(subject)
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)
    message["Date"] = format_datetime(date)
    message["Message-ID"] = message_id or new_message_id(_domain_of(one_address(sender)))
    if reply_to:
        message["Reply-To"] = _header_address(reply_to)
    chain = [ref for ref in (references or []) if ref and ref.strip()]
    if in_reply_to and in_reply_to.strip():
        answered = in_reply_to.strip()
        message["In-Reply-To"] = answered
        if answered not in chain:
            chain.append(answered)
    if chain:
        message["References"] = " ".join(_one_line(ref) for ref in chain)
    message["Auto-Submitted"] = _one_line(auto_submitted) or "auto-replied"
    message["X-Loop"] = _one_line(loop_token)
    text = _body_text(body)
    message.set_content(text, subtype="plain", charset="utf-8", cte=_transfer_encoding(text))
    return message
