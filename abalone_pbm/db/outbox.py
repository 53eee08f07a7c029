"""The admin's view of outgoing mail: what waits or failed, and sending a mail again.

(The sender's own claim/mark functions are in ``repository``; these are for people.)
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import OutboxMail

__all__ = ["unsent_outbox", "retry_outbox", "failed_outbox_ids"]


def unsent_outbox(session: Session, *, limit: int = 200) -> list[OutboxMail]:
    """Outgoing mail not sent yet (waiting or given up), oldest first."""
    query = (select(OutboxMail).where(OutboxMail.status.in_(("pending", "failed")))
             .order_by(OutboxMail.id).limit(limit))
    return list(session.scalars(query))


def failed_outbox_ids(session: Session) -> list[int]:
    query = select(OutboxMail.id).where(OutboxMail.status == "failed").order_by(OutboxMail.id)
    return [int(i) for i in session.scalars(query)]


def retry_outbox(session: Session, outbox_id: int, now: datetime) -> OutboxMail:
    """Make one waiting or failed mail due now, with all its tries again (same
    Message-ID). Raises LookupError when there is no such mail, ValueError when it was
    sent already (sending it again would be a duplicate)."""
    row = session.get(OutboxMail, outbox_id)
    if row is None:
        raise LookupError(f"there is no outgoing mail {outbox_id}")
    if row.status == "sent":
        raise ValueError(f"outgoing mail {outbox_id} to {row.recipient} was sent already")
    row.status = "pending"
    row.attempts = 0
    row.next_attempt_at = now
    session.flush()
    return row
