"""What a fuzz run of the intake must show, read from the server's database and log.

``Findings.collect(database, log_lines)`` counts, after a run: mails still waiting
(a wedge), parked mails, mails processed without any answer and without a drop reason,
log lines that are tracebacks (or any record spread over several lines), and every
password of ``hostile_mail.PASSWORDS`` that got out — in an outgoing mail (decoded, to
the sender or to anybody else), in the log, or in an inbox note or error — and every
one the masking rule reads as a password in a processed mail's stored copy, decoded as
a lenient mail program shows it (every header, every text part, the bytes where the
library cannot take the mail apart).
"""

from __future__ import annotations

import email
import email.policy
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import func, select

from abalone_pbm.db.models import InboxMail, OutboxMail
from abalone_pbm.db.session import Database
from abalone_pbm.protocol.masking import find_passwords, markup_words

from .hostile_mail import PASSWORDS


def _passwords_in(text: str) -> set[str]:
    return {password for password in PASSWORDS if password in text}


def _shown_text(raw: bytes) -> str:
    """A stored mail as a lenient mail program shows it: every header decoded, every
    text part, and the body's bytes as text where the library finds no text part."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    shown = []
    for name, value in message.raw_items():
        try:
            shown.append(str(email.policy.default.header_fetch_parse(name, value)))
        except Exception:  # a header the modern policy cannot build: as it stands
            shown.append(str(value))
    texts = [part for part in message.walk() if part.get_content_maintype() == "text"]
    for part in texts:
        try:
            shown.append(str(part.get_content()))
        except Exception:
            shown.append(raw.decode("utf-8", "replace"))
    if not texts:
        shown.append(raw.decode("utf-8", "replace"))
    return "\n".join(shown)


def _stored_passwords(raw: bytes) -> set[str]:
    """The fuzz passwords the masking rule reads in a stored copy (as text and as the
    words of its markup)."""
    shown = _shown_text(raw)
    return {word for word in find_passwords(shown) | find_passwords(markup_words(shown))
            if word in PASSWORDS}


@dataclass
class Findings:
    inbox: Counter[str] = field(default_factory=Counter)
    outbox: Counter[str] = field(default_factory=Counter)
    drop_reasons: Counter[str] = field(default_factory=Counter)
    failed_reasons: Counter[str] = field(default_factory=Counter)
    unanswered: list[int] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)
    parked: list[int] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    passwords_out: list[str] = field(default_factory=list)

    @classmethod
    def collect(cls, database: Database, log_lines: list[str]) -> Findings:
        found = cls()
        with database.read() as session:
            answered = dict(
                session.execute(
                    select(OutboxMail.inbox_id, func.count(OutboxMail.id))
                    .group_by(OutboxMail.inbox_id)
                ).all()
            )
            for mail_id, status, note, error, raw in session.execute(
                select(InboxMail.id, InboxMail.status, InboxMail.note, InboxMail.last_error,
                       InboxMail.raw)
            ):
                found.inbox[status] += 1
                if status == "new":
                    found.waiting.append(mail_id)
                elif status == "parked":
                    found.parked.append(mail_id)
                elif status == "dropped":
                    found.drop_reasons[(note or "?").split("(")[0].strip()[:60]] += 1
                elif status == "done" and not answered.get(mail_id):
                    found.unanswered.append(mail_id)
                for password in _passwords_in(f"{note or ''} {error or ''}"):
                    found.passwords_out.append(f"inbox {mail_id} note/error: {password}")
                if status in ("done", "dropped", "parked"):
                    for password in sorted(_stored_passwords(bytes(raw))):
                        found.passwords_out.append(
                            f"inbox {mail_id} ({status}) stored copy: {password}")
            for out_id, status, recipient, raw, error in session.execute(
                select(OutboxMail.id, OutboxMail.status, OutboxMail.recipient,
                       OutboxMail.raw, OutboxMail.last_error)
            ):
                found.outbox[status] += 1
                if status == "failed":
                    found.failed_reasons[(error or "?")[:80]] += 1
                for password in _passwords_in(_shown_text(bytes(raw))):
                    found.passwords_out.append(f"outbox {out_id} to {recipient}: {password}")
        for line in log_lines:
            if line.startswith("Traceback") or line.startswith("  File ") or "\n" in line:
                found.tracebacks.append(line[:200])
            for password in _passwords_in(line):
                found.passwords_out.append(f"log: {password}")
        return found

    @property
    def clean(self) -> bool:
        return not (self.waiting or self.parked or self.tracebacks or self.passwords_out
                    or self.unanswered)

    def report(self) -> str:
        lines = [
            f"inbox: {dict(self.inbox)}",
            f"outbox: {dict(self.outbox)}",
            f"wedges (mails still waiting): {len(self.waiting)}",
            f"parked: {len(self.parked)}",
            f"processed without answer or drop reason: {len(self.unanswered)}",
            f"tracebacks / multi-line log records: {len(self.tracebacks)}",
            f"passwords out: {len(self.passwords_out)}",
            "drop reasons: " + ", ".join(f"{k} x{v}" for k, v in self.drop_reasons.most_common(8)),
            "outbox failures: " + ", ".join(
                f"{k} x{v}" for k, v in self.failed_reasons.most_common(5)),
        ]
        for title, items in (("waiting", self.waiting), ("parked", self.parked),
                             ("unanswered", self.unanswered), ("tracebacks", self.tracebacks),
                             ("passwords", self.passwords_out)):
            if items:
                lines.append(f"  first {title}: {items[:5]}")
        return "\n".join(lines)
