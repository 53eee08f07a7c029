"""Received mail is kept for a bounded time: ``prune_inbox`` blanks old raw copies.

Every received mail is stored whole in the inbox (its headers, its body, the reply
address it was sent to). Once it has been processed (``done`` or ``dropped``) and is
older than ``ABALONE_PBM_INBOX_RETENTION_DAYS`` (default 28), its raw copy is emptied
and the reply tokens of its envelope recipients masked. The row itself stays as a small
record, its id, status, dates, Message-ID, sender, note and ``dedup_key``, so a
redelivery of that mail is still recognised and not processed again, and the answers
in the outbox keep their link to it. Parked mail (and mail not processed yet) keeps its
copy until the admin replays it (``abalone-pbm mail replay``); once processed, it is
pruned like any other.

The work per call is bounded whatever the size of the inbox (``BATCH`` rows in each of
two steps, each an index range on the primary key), and the call is made by every tick
of the clock:

- the frontier (the ``counters`` row ``inbox_retention_frontier``) walks the inbox in id
  order up to the first mail younger than the limit, blanking each processed mail it
  passes: every mail is pruned within a tick of growing old enough;
- the sweep (``inbox_retention_sweep``) walks the rows behind the frontier again, round
  and round, and blanks what has been processed since the frontier passed it (a parked
  mail replayed, a mail that waited a long time).

On SQLite the transaction runs with ``PRAGMA secure_delete``, so the freed pages of the
copies are overwritten rather than left in the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from ..redact import mask_reply_tokens
from .models import InboxMail, ServerCounter

if TYPE_CHECKING:  # pragma: no cover
    from .session import Database

__all__ = ["BATCH", "FINAL", "FRONTIER", "SWEEP", "PruneResult", "RetentionState",
           "prune_inbox", "read_retention"]

#: The most inbox rows each step looks at in one call.
BATCH = 500
#: The statuses of processed mail, whose copy may go.
FINAL = ("done", "dropped")
#: The ``counters`` rows that remember how far each step has come (an inbox id).
FRONTIER = "inbox_retention_frontier"
SWEEP = "inbox_retention_sweep"

_INBOX = cast(Table, InboxMail.__table__)
_BLANK = (
    update(_INBOX)
    # Spelt out: an IN list cannot be used with many rows' parameters at once.
    .where(_INBOX.c.id == bindparam("row_id"),
           or_(*(_INBOX.c.status == status for status in FINAL)))
    .values(raw=b"", envelope_to=bindparam("masked_to"))
    .execution_options(synchronize_session=False)
)


@dataclass(frozen=True)
class PruneResult:
    """What one call did: copies blanked, and where the two steps stand now."""

    pruned: int
    frontier: int
    sweep: int


@dataclass(frozen=True)
class RetentionState:
    """For ``status``: how far pruning has come, and what is still waiting for it."""

    frontier: int
    #: Processed mail older than the limit whose copy is still kept (a backlog).
    overdue: int


def _counter(session: Session, name: str, now: datetime) -> ServerCounter:
    query = select(ServerCounter).where(ServerCounter.name == name)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()  # two servers' clocks take turns
    counter = session.scalars(query).first()
    if counter is None:
        counter = ServerCounter(name=name, value=0, updated_at=now)
        session.add(counter)
        session.flush()
    return counter


def _rows(session: Session, after: int, up_to: int | None, limit: int) -> list[Any]:
    """(id, status, received_at, has a copy, envelope_to) of the next ``limit`` rows."""
    query = (
        select(_INBOX.c.id, _INBOX.c.status, _INBOX.c.received_at,
               func.length(_INBOX.c.raw) > 0, _INBOX.c.envelope_to)
        .where(_INBOX.c.id > after)
        .order_by(_INBOX.c.id)
        .limit(limit)
    )
    if up_to is not None:
        query = query.where(_INBOX.c.id <= up_to)
    return list(session.execute(query))


def _blank(session: Session, rows: list[Any]) -> int:
    doomed = [{"row_id": row[0], "masked_to": mask_reply_tokens(row[4] or "")}
              for row in rows if row[1] in FINAL and row[3]]
    if doomed:
        session.execute(_BLANK, doomed)
    return len(doomed)


def _prune(session: Session, now: datetime, keep: timedelta, batch: int) -> PruneResult:
    cutoff = now - keep
    frontier = _counter(session, FRONTIER, now)
    sweep = _counter(session, SWEEP, now)
    pruned = 0
    # The frontier: rows old enough, in id order, up to the first young one.
    passed = []
    for row in _rows(session, frontier.value, None, batch):
        if row[2] >= cutoff:
            break
        passed.append(row)
    if passed:
        pruned += _blank(session, passed)
        frontier.value = passed[-1][0]
        frontier.updated_at = now
    # The sweep: rows behind the frontier processed since it passed them.
    behind = _rows(session, sweep.value, frontier.value, batch)
    pruned += _blank(session, behind)
    sweep.value = behind[-1][0] if len(behind) == batch else 0  # round again
    sweep.updated_at = now
    session.flush()
    return PruneResult(pruned, frontier.value, sweep.value)


def prune_inbox(database: Database, now: datetime, keep: timedelta,
                batch: int = BATCH) -> PruneResult:
    """Blank the raw copies of processed mail received before ``now - keep``; at most
    ``2 * batch`` rows are looked at, in one write transaction."""
    if keep <= timedelta(0):
        raise ValueError("the inbox retention must be a positive time")
    with database.write() as session:
        if database.is_sqlite:
            raw = session.connection().connection.driver_connection
            assert raw is not None
            raw.execute("PRAGMA secure_delete = ON")
            try:
                return _prune(session, now, keep, batch)
            finally:
                raw.execute("PRAGMA secure_delete = OFF")
        return _prune(session, now, keep, batch)


def read_retention(session: Session, now: datetime, keep: timedelta) -> RetentionState:
    """Where pruning stands: the frontier, and how many processed mails old enough are
    still kept just beyond it (counted among the next ``BATCH`` rows only: a monitoring
    check stays cheap; ``overdue`` equal to ``BATCH`` means at least that many)."""
    frontier = int(session.scalar(
        select(ServerCounter.value).where(ServerCounter.name == FRONTIER)) or 0)
    cutoff = now - keep
    overdue = 0
    for row in _rows(session, frontier, None, BATCH):
        if row[2] >= cutoff:
            break
        overdue += row[1] in FINAL and bool(row[3])
    return RetentionState(frontier, overdue)
