"""What a person could read of a mail, and the mails a ``serve`` wrote: for the tests
that no password is shown (DESIGN §2.3, §2.6)."""

from __future__ import annotations

import email
import email.policy
import html
import re
from pathlib import Path

from sqlalchemy import select

from abalone_pbm.db.models import InboxMail
from tests.service.harness import Harness

_TAG_RE = re.compile(r"<[^>]*>")


def readable(raw: bytes) -> str:
    """Everything a person opening the mail could read: its bytes, its headers decoded,
    each text part decoded (base64 and quoted-printable hide a word from a search of
    the bytes), and each HTML part as a browser shows it (tags out, entities undone)."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    texts = [raw.decode("utf-8", "replace"),
             *(f"{name}: {value}" for name, value in message.items())]
    for part in message.walk():
        if part.get_content_maintype() == "text":
            text = str(part.get_content())
            texts.append(text)
            if part.get_content_subtype() == "html":
                texts.append(html.unescape(_TAG_RE.sub("", text)))
    return "\n".join(texts)


def outgoing(workdir: Path) -> list[bytes]:
    """The mails ``serve`` wrote to its Maildir (``var/outgoing``, no relay set)."""
    folder = workdir / "var" / "outgoing"
    return [path.read_bytes() for sub in ("new", "cur") if (folder / sub).is_dir()
            for path in sorted((folder / sub).iterdir()) if path.is_file()]


def last_stored_copy(harness: Harness) -> str:
    """What a person could read of the mail the server stored last (its inbox row)."""
    with harness.database.read() as session:
        stored = session.scalars(select(InboxMail).order_by(InboxMail.id.desc())).first()
        assert stored is not None
        return readable(bytes(stored.raw))
