"""What the database says about the server's health: mail waiting, parked, failing.

``read_health(database, now)`` gathers the facts in one read transaction (a handful of
indexed COUNT/MIN queries, cheap enough for a monitoring check every minute);
``abalone_pbm.status`` judges them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, func, select

from .models import InboxMail, OutboxMail

if TYPE_CHECKING:  # pragma: no cover
    from .session import Database

__all__ = ["DatabaseHealth", "LastError", "read_health", "RECENT"]

#: Parked and failed mail counts as a problem for this long after it arrived.
RECENT = timedelta(hours=24)


@dataclass(frozen=True)
class LastError:
    """The newest error of an outgoing mail that has not gone out."""

    outbox_id: int
    recipient: str
    status: str
    error: str


@dataclass(frozen=True)
class DatabaseHealth:
    revision: str | None
    head: str | None
    #: Inbox mail stored but not processed yet, and the oldest one's arrival.
    inbox_waiting: int
    oldest_waiting: datetime | None
    #: Inbox mail the worker gave up on (all, and those of the last ``RECENT``).
    inbox_parked: int
    inbox_parked_recent: int
    #: Outgoing mail not sent yet; of those, the ones that failed at least once.
    outbox_waiting: int
    outbox_retrying: int
    oldest_outbox_waiting: datetime | None
    #: The oldest outgoing mail that has failed at least once and is still waiting.
    oldest_retrying: datetime | None
    #: Outgoing mail given up on (all, and those queued in the last ``RECENT``).
    outbox_failed: int
    outbox_failed_recent: int
    last_error: LastError | None

    @property
    def schema_current(self) -> bool:
        return self.revision is not None and self.revision == self.head


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=timezone.utc)


def read_health(database: Database, now: datetime) -> DatabaseHealth:
    """The facts, read in one transaction; raises when the database cannot be read."""
    head = database.head()
    revision = database.current()
    recent = now - RECENT
    with database.read() as session:
        def scalar(query: Select[Any]) -> Any:
            return session.execute(query).scalar()

        inbox_new = InboxMail.status == "new"
        waiting = session.execute(
            select(func.count(), func.min(InboxMail.received_at)).where(inbox_new)
        ).one()
        parked = scalar(select(func.count()).where(InboxMail.status == "parked"))
        parked_recent = scalar(select(func.count()).where(
            InboxMail.status == "parked", InboxMail.received_at >= recent))
        pending = OutboxMail.status == "pending"
        outbox = session.execute(
            select(func.count(), func.min(OutboxMail.created_at)).where(pending)
        ).one()
        retrying = session.execute(
            select(func.count(), func.min(OutboxMail.created_at))
            .where(pending, OutboxMail.attempts > 0)
        ).one()
        failed = scalar(select(func.count()).where(OutboxMail.status == "failed"))
        failed_recent = scalar(select(func.count()).where(
            OutboxMail.status == "failed", OutboxMail.created_at >= recent))
        last = session.execute(
            select(OutboxMail.id, OutboxMail.recipient, OutboxMail.status,
                   OutboxMail.last_error)
            .where(OutboxMail.status.in_(("pending", "failed")),
                   OutboxMail.last_error.is_not(None))
            .order_by(OutboxMail.id.desc()).limit(1)
        ).first()
    last_error = None
    if last is not None:
        last_error = LastError(int(last[0]), str(last[1]), str(last[2]), str(last[3]))
    return DatabaseHealth(
        revision=revision,
        head=head,
        inbox_waiting=int(waiting[0]),
        oldest_waiting=_utc(waiting[1]),
        inbox_parked=int(parked or 0),
        inbox_parked_recent=int(parked_recent or 0),
        outbox_waiting=int(outbox[0]),
        outbox_retrying=int(retrying[0]),
        oldest_outbox_waiting=_utc(outbox[1]),
        oldest_retrying=_utc(retrying[1]),
        outbox_failed=int(failed or 0),
        outbox_failed_recent=int(failed_recent or 0),
        last_error=last_error,
    )
