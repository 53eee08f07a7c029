"""The queries of the server, as plain functions of a Session.

They run inside the caller's transaction (``Database.write()`` / ``read()``) and never
commit. On PostgreSQL the functions that hand out work lock the rows they return
(``FOR UPDATE SKIP LOCKED``) so that several server processes can share the inbox and
the outbox; on SQLite the write transaction itself is exclusive (``BEGIN IMMEDIATE``).
In a ``Database.read()`` session nothing is locked (a read-only transaction cannot).
"""

from __future__ import annotations

import email.policy
import heapq
from collections import deque
from typing import Any, Protocol, cast
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import getaddresses

from sqlalchemy import (
    Engine, Select, Table, and_, bindparam, func, insert, inspect, or_, select, text, update,
)
from sqlalchemy.engine import CursorResult, Result
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.sql.expression import Executable
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.orm.attributes import set_committed_value

from ..verp import bounce_address
from .column_checks import check_values
from .models import (
    WRITTEN_DIRECTLY, Address, Game, InboxMail, MailSender, OutboxMail, Seat, User,
    note_robot_turn, seat_to_move,
)



class ComposedMail(Protocol):
    """What the outbox stores of a mail ready to go (``mail.compose`` makes them): the
    bytes as sent and the envelope. A protocol, so the database layer needs nothing
    from the mail layer above it."""

    @property
    def message_id(self) -> str: ...
    @property
    def sender(self) -> str: ...
    @property
    def recipient(self) -> str: ...
    @property
    def raw(self) -> bytes: ...

__all__ = [
    "INBOX_STATUSES",
    "OUTBOX_STATUSES",
    "RETRY_FIRST_DELAY",
    "RETRY_MAX_DELAY",
    "RETRY_GIVE_UP_AFTER",
    "read_core",
    "claim_next_inbox",
    "mark_inbox",
    "parked_mails",
    "requeue_inbox",
    "enqueue_outbox",
    "enqueue_composed",
    "enqueue_composed_many",
    "html_wanted",
    "OutgoingRow",
    "Handoff",
    "HANDOFF",
    "lease_due_outbox",
    "record_sent",
    "due_outbox",
    "mark_sent",
    "mark_retry",
    "mark_failed",
    "retry_delay",
    "replies_sent_today",
    "get_user",
    "find_user_by_address",
    "add_user",
    "next_board_number",
    "get_game",
    "write_game",
    "seat_by_token",
    "games_of_user",
]

INBOX_STATUSES = ("new", "done", "dropped", "parked")
OUTBOX_STATUSES = ("pending", "sent", "failed")

#: Backoff of the outbox: 1 min after the first failure, then 2, 4, 8 ... at most 1 h;
#: a mail still not delivered after about a day of retries is given up ("failed").
RETRY_FIRST_DELAY = timedelta(minutes=1)
RETRY_MAX_DELAY = timedelta(hours=1)
RETRY_GIVE_UP_AFTER = timedelta(hours=24)

#: The first board number.
FIRST_BOARD = 101
#: Key of the PostgreSQL advisory lock that hands out board numbers one at a time.
_BOARD_NUMBER_LOCK = 0x0AB41011



def read_core(session: Session, statement: Executable,
              params: dict[str, Any] | None = None) -> Result[Any]:
    """Run a Core query (a statement built once, on the tables) in the session, after
    the session's autoflush as an ORM query would: changes made to objects in this
    transaction are seen, while the ORM's per-statement work is saved."""
    if session.autoflush:
        session.flush()  # returns at once when nothing has changed
    return session.execute(statement, params)


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _is_postgresql(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _locks_rows(session: Session) -> bool:
    """Whether to lock rows: on PostgreSQL, in a write transaction (not ``read()``)."""
    bind = session.get_bind()
    if bind.dialect.name != "postgresql":
        return False
    options = bind.get_execution_options() if isinstance(bind, Engine) else {}
    return not options.get("postgresql_readonly", False)


def _skip_locked(session: Session, query: Select) -> Select:  # type: ignore[type-arg]
    """Rows another transaction works on are left to it (PostgreSQL)."""
    if _locks_rows(session):
        return query.with_for_update(skip_locked=True)
    return query


# -- inbox ----------------------------------------------------------------------------


#: How many waiting mails the worker looks at to choose the next one fairly.
FAIR_WINDOW = 200


def _sender_key(envelope_from: str | None) -> str:
    """Who a mail is from, for fairness: the envelope address in lower case without a
    ``+tag`` (so a flood cannot pass for many senders by varying the tag)."""
    bare = (envelope_from or "").strip().strip("<>").lower()
    local, at, domain = bare.rpartition("@")
    return f"{local.split('+', 1)[0] or local}@{domain}" if at else bare


_INBOX = cast(Table, InboxMail.__table__)

#: The hot path's statements are built once (building one costs several times more
#: than running it); values come as bound parameters.
_WAITING = (select(_INBOX.c.id, _INBOX.c.envelope_from, _INBOX.c.board)
            .where(_INBOX.c.status == "new").order_by(_INBOX.c.id).limit(FAIR_WINDOW))
_CLAIM = (select(InboxMail)
          .where(InboxMail.id == bindparam("mail_id"), InboxMail.status == "new")
          .execution_options(populate_existing=True))
_CLAIM_SKIP_LOCKED = _CLAIM.with_for_update(skip_locked=True)


@dataclass(frozen=True)
class _Waiting:
    """One waiting mail as the claim orders it: its sender (``_sender_key``) and the
    queues (lanes) it waits in, each taken in acceptance order (id)."""

    id: int
    sender: str
    lanes: tuple[tuple[str, object], ...]


def claim_next_inbox(session: Session, exclude: Iterable[int] = ()) -> InboxMail | None:
    """The next unprocessed mail, locked for this transaction (None: nothing to do).

    Each waiting mail stands in its sender's queue and, when its board is known
    (``InboxMail.board``), in its board's queue; it may be taken only when it is the
    oldest waiting mail (lowest id: accepted first) of each. So one sender's mails
    keep their order, and so do the mails about one board (a move accepted before
    the opponent's is applied first, also when a backlog waits after an outage).
    Among the mails that may be taken it is fair between senders (DESIGN §2.6: a
    flood from one sender never delays other people's mail by more than seconds): the
    sender with fewest mails waiting first, among the oldest ``FAIR_WINDOW`` waiting.

    The caller processes it and calls ``mark_inbox`` in the same transaction. A row
    another process works on (locked, PostgreSQL) is passed over, and so is every
    later mail of its board (its sender's others are not: several processes may
    work for one sender at once). Ids in ``exclude`` (mails the worker had to set
    aside until it restarts) are passed over and hold nothing up.
    """
    claim = _CLAIM_SKIP_LOCKED if _locks_rows(session) else _CLAIM
    held: set[tuple[str, object]] = set()  # queues whose oldest mail was passed over
    for mail in _waiting_in_turn(session, exclude):
        if held.intersection(mail.lanes):
            continue
        found = session.scalars(claim, {"mail_id": mail.id}).first()
        if found is not None:
            return found
        # Locked by another process: its board's later mails wait for it. Its
        # sender's mails about other boards may be processed alongside.
        held.update(lane for lane in mail.lanes if lane[0] == "board")
    return None


def _waiting_in_turn(session: Session, exclude: Iterable[int]) -> Iterator[_Waiting]:
    """The waiting mails in the order ``claim_next_inbox`` takes them, one after the
    other, when none is locked and none arrives: each time, of the mails that may be
    taken (the oldest of each of their queues: so at most one a sender), the one
    whose sender has fewest mails waiting at that moment, then the oldest. So a
    sender with many mails waiting goes after those with few, and the list is the
    claims one by one (what the worker reads ahead). Made as it is asked for (a claim
    mostly takes the first): O(n) for the window, O(log n) a mail after."""
    query = _WAITING
    skipped = list(exclude)
    if skipped:
        query = query.where(_INBOX.c.id.not_in(skipped))
    # Each queue's mails, oldest first (the window comes in id order).
    queues: dict[tuple[str, object], deque[int]] = {}
    mails: dict[int, _Waiting] = {}
    senders: dict[str | None, str] = {}  # _sender_key of each envelope sender seen
    window = cast(Iterable[tuple[int, str | None, int | None]], read_core(session, query))
    for mail_id, envelope_from, board in window:
        sender = senders.get(envelope_from)
        if sender is None:
            sender = senders[envelope_from] = _sender_key(envelope_from)
        lanes: tuple[tuple[str, object], ...] = (("sender", sender),)
        if board is not None:
            lanes += (("board", board),)
        mails[mail_id] = _Waiting(mail_id, sender, lanes)
        for lane in lanes:
            queue = queues.get(lane)
            if queue is None:
                queue = queues[lane] = deque()
            queue.append(mail_id)
    # How many each sender has waiting: a sender's count changes only when its one
    # mail that may be taken is taken, so no key in the heap is ever out of date.
    waiting = {sender: len(queues["sender", sender]) for sender in senders.values()}

    def ready(mail: _Waiting) -> bool:
        return all(queues[lane][0] == mail.id for lane in mail.lanes)

    # A mail that may be taken is the oldest of its sender's: those are looked at.
    fronts = (mails[queues["sender", sender][0]] for sender in waiting)
    heap = [(waiting[mail.sender], mail.id) for mail in fronts if ready(mail)]
    heapq.heapify(heap)
    while heap:
        mail = mails[heapq.heappop(heap)[1]]
        yield mail
        waiting[mail.sender] -= 1
        for lane in mail.lanes:
            queue = queues[lane]
            queue.popleft()
            # The next of this queue may be taken now, unless another queue holds it
            # (it is pushed once: when the last of its queues lets it go).
            if queue and ready(mails[queue[0]]):
                following = mails[queue[0]]
                heapq.heappush(heap, (waiting[following.sender], following.id))


_MAILS = select(InboxMail).where(InboxMail.id.in_(bindparam("ids", expanding=True)))


def next_waiting_inbox(session: Session, most: int, exclude: Iterable[int] = (),
                       known: Iterable[int] = ()) -> list[InboxMail]:
    """The next ``most`` waiting mails as ``claim_next_inbox`` would take them, not
    claimed (read only: another worker may take any of them first); of those in
    ``known`` (the caller has them) none is loaded."""
    had = set(known)
    ids = [mail.id for mail in islice(_waiting_in_turn(session, exclude), max(most, 0))
           if mail.id not in had]
    if not ids:
        return []
    found = {mail.id: mail for mail in session.scalars(_MAILS, {"ids": ids})}
    return [found[mail_id] for mail_id in ids if mail_id in found]


_MARK_INBOX = update(_INBOX).where(_INBOX.c.id == bindparam("mail_id")).values(
    status=bindparam("status"), attempts=bindparam("attempts"),
    processed_at=bindparam("processed_at"))


def mark_inbox(
    session: Session,
    mail: InboxMail,
    status: str,
    note: str | None = None,
    error: str | None = None,
    now: datetime | None = None,
) -> None:
    """Record one processing attempt of ``mail``: its new status, why, and any error.

    ``attempts`` counts the calls; ``last_error`` is set to ``error`` when given;
    ``processed_at`` is set (to ``now``, default: the present) unless the status is
    ``new`` (to be tried again).
    """
    if status not in INBOX_STATUSES:
        raise ValueError(f"inbox status must be one of {', '.join(INBOX_STATUSES)}")
    values: dict[str, object] = {
        "status": status,
        "attempts": (mail.attempts or 0) + 1,
        "processed_at": None if status == "new" else now or datetime.now(timezone.utc),
    }
    if note is not None:
        values["note"] = note
    if error is not None:
        values["last_error"] = error
    # One UPDATE now (the worker's every mail): cheaper than the unit of work's flush
    # of a changed object; the object is told the values as the database has them.
    check_values(_INBOX, values)  # as the ORM checks what it writes (column_checks)
    if len(values) == 3:
        session.execute(_MARK_INBOX, {"mail_id": mail.id, **values})
    else:
        session.execute(update(_INBOX).where(_INBOX.c.id == mail.id).values(values))
    for name, value in values.items():
        set_committed_value(mail, name, value)


def parked_mails(session: Session) -> list[InboxMail]:
    """Mails the worker gave up on, oldest first, for the admin."""
    query = select(InboxMail).where(InboxMail.status == "parked").order_by(InboxMail.id)
    return list(session.scalars(query))


def requeue_inbox(session: Session, id: int, *, force: bool = False) -> InboxMail | None:
    """Put a parked (or dropped) mail back in the queue; None when there is no such mail.

    A mail that was processed (``done``) is only requeued with ``force=True``: its
    replies were sent already.
    """
    mail = session.get(InboxMail, id, with_for_update=_locks_rows(session) or None)
    if mail is None:
        return None
    if mail.status == "done" and not force:
        raise ValueError(f"inbox mail {id} was processed already; requeue it with force")
    mail.status = "new"
    mail.processed_at = None
    session.flush()
    return mail


# -- outbox ---------------------------------------------------------------------------


def _address(value: str | None) -> str:
    pairs = [addr for _name, addr in getaddresses([value or ""]) if addr]
    return pairs[0] if pairs else ""


def enqueue_outbox(
    session: Session,
    message: EmailMessage,
    now: datetime,
    inbox_id: int | None = None,
) -> OutboxMail:
    """Queue one composed mail to its single recipient, in the current transaction.

    The Message-ID is the message's own (it is kept on every retry); the envelope
    sender is the Return-Path address if the message has one, else a bounce address
    of its own under its From address (``verp``);
    the recipient is the one To address (a mail to several people, or with Cc/Bcc,
    is refused: every recipient gets a copy of their own).
    """
    message_id = " ".join(str(message.get("Message-ID", "")).split())
    if not message_id:
        raise ValueError("an outgoing mail needs a Message-ID")
    recipients = [addr for _name, addr in getaddresses(message.get_all("To", [])) if addr]
    if len(recipients) != 1:
        raise ValueError(f"an outgoing mail has exactly one To address, not {len(recipients)}")
    if message.get("Cc") or message.get("Bcc"):
        raise ValueError("an outgoing mail has no Cc or Bcc; send each recipient a copy")
    sender = _address(message.get("Return-Path"))
    if not sender:
        sender = _address(message.get("From"))
        if not sender:
            raise ValueError("an outgoing mail needs a From address")
        sender = bounce_address(sender)
    handoff: Handoff | None = session.info.get(HANDOFF)
    # An internationalised address can only be written in UTF-8 (RFC 6532); such a
    # mail goes out with SMTPUTF8, everything else stays 7-bit clean.
    policy = email.policy.SMTP if recipients[0].isascii() else email.policy.SMTPUTF8
    row = OutboxMail(
        created_at=now,
        message_id=message_id,
        sender=sender,
        recipient=recipients[0],
        raw=message.as_bytes(policy=policy),
        status="pending",
        attempts=0,
        next_attempt_at=handoff.until if handoff else now,
        lease_owner=handoff.owner if handoff else None,
        inbox_id=inbox_id,
    )
    session.add(row)
    session.flush()
    if handoff is not None:
        handoff.rows.append(OutgoingRow(row.id, row.message_id, row.sender, row.recipient,
                                        bytes(row.raw)))
    return row


@dataclass(frozen=True)
class OutgoingRow:
    """What a sender needs of one outbox row."""

    id: int
    message_id: str
    sender: str
    recipient: str
    raw: bytes


@dataclass
class Handoff:
    """Set as ``session.info[HANDOFF]`` by a worker whose process sends its own mail:
    the outbox rows written in the transaction are leased to ``owner`` right away and
    collected in ``rows``, for the sender to have once the transaction commits (no
    claiming transaction, no polling). If the process dies first, the lease names a
    dead owner and any other sender takes the rows at once (``lease_due_outbox``)."""

    owner: str
    until: datetime
    rows: list[OutgoingRow]


#: The ``Session.info`` key of a ``Handoff``.
HANDOFF = "abalone_pbm.outbox_handoff"

_OUTBOX = cast(Table, OutboxMail.__table__)
_INSERT_OUTBOX = insert(_OUTBOX).returning(_OUTBOX.c.id, sort_by_parameter_order=True)


def _outbox_row(mail: ComposedMail, now: datetime, inbox_id: int | None,
                handoff: Handoff | None) -> dict[str, object]:
    """The outbox row of one composed mail, leased to ``handoff`` when there is one."""
    return {
        "created_at": now,
        "message_id": mail.message_id,
        "sender": mail.sender,
        "recipient": mail.recipient,
        "raw": mail.raw,
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": handoff.until if handoff else now,
        "lease_owner": handoff.owner if handoff else None,
        "inbox_id": inbox_id,
    }


def enqueue_composed(
    session: Session, mail: ComposedMail, now: datetime, inbox_id: int | None = None
) -> int:
    """Queue one composed mail (``mail.compose.compose_mail``); returns the row's id.

    A plain INSERT (the ORM's unit of work costs more than the mail is worth here);
    the row is leased to the session's ``Handoff`` when it has one.
    """
    handoff: Handoff | None = session.info.get(HANDOFF)
    values = _outbox_row(mail, now, inbox_id, handoff)
    row_id = int(session.execute(insert(_OUTBOX).values(values).returning(_OUTBOX.c.id))
                 .scalar_one())
    if handoff is not None:
        handoff.rows.append(
            OutgoingRow(row_id, mail.message_id, mail.sender, mail.recipient, mail.raw))
    return row_id


def enqueue_composed_many(
    session: Session, mails: Sequence[ComposedMail], now: datetime,
    inbox_id: int | None = None,
) -> list[int]:
    """``enqueue_composed`` for several mails in one INSERT; their row ids in order."""
    if len(mails) <= 1:
        return [enqueue_composed(session, mail, now, inbox_id) for mail in mails]
    handoff: Handoff | None = session.info.get(HANDOFF)
    rows = [_outbox_row(mail, now, inbox_id, handoff) for mail in mails]
    ids = [int(row_id) for row_id in session.execute(_INSERT_OUTBOX, rows).scalars()]
    if handoff is not None:
        handoff.rows.extend(
            OutgoingRow(row_id, mail.message_id, mail.sender, mail.recipient, mail.raw)
            for row_id, mail in zip(ids, mails))
    return ids


def html_wanted(session: Session, addresses: Iterable[str]) -> dict[str, bool]:
    """For each address (lower case): False when a user who has it chose text-only
    mail (``format ... text``), else True (also for an address no user has)."""
    wanted = {address: True for address in addresses}
    if wanted:
        for address in read_core(session, _TEXT_ONLY, {"addresses": list(wanted)}).scalars():
            wanted[address] = False
    return wanted


_ADDRESSES = Address.__table__
_USERS = User.__table__
_TEXT_ONLY = (select(_ADDRESSES.c.address)
              .join(_USERS, _USERS.c.id == _ADDRESSES.c.user_id)
              .where(_ADDRESSES.c.address.in_(bindparam("addresses", expanding=True)),
                     _USERS.c.mail_format == "text"))


def lease_due_outbox(
    session: Session,
    now: datetime,
    owner: str,
    until: datetime,
    stale_before: datetime,
    limit: int = 50,
) -> list[OutgoingRow]:
    """Lease up to ``limit`` pending mails to ``owner`` until ``until``, oldest first.

    Due are the mails whose time has come, and the mails leased by a sender that is
    no longer alive: its heartbeat (``mail_senders``) is older than ``stale_before``
    or gone. One UPDATE ... RETURNING; on PostgreSQL rows locked by another
    transaction are skipped.
    """
    live = select(MailSender.owner).where(MailSender.heartbeat_at > _utc(stale_before))
    orphaned = and_(_OUTBOX.c.lease_owner.is_not(None), _OUTBOX.c.lease_owner.not_in(live))
    chosen = (
        select(_OUTBOX.c.id)
        .where(_OUTBOX.c.status == "pending",
               or_(_OUTBOX.c.next_attempt_at <= _utc(now), orphaned))
        .order_by(_OUTBOX.c.id)
        .limit(limit)
    )
    if _locks_rows(session):
        chosen = chosen.with_for_update(skip_locked=True)
    statement = (
        update(_OUTBOX)
        .where(_OUTBOX.c.id.in_(chosen.scalar_subquery()))
        .values(next_attempt_at=_utc(until), lease_owner=owner)
        .returning(_OUTBOX.c.id, _OUTBOX.c.message_id, _OUTBOX.c.sender,
                   _OUTBOX.c.recipient, _OUTBOX.c.raw)
    )
    rows = [OutgoingRow(r.id, r.message_id, r.sender, r.recipient, bytes(r.raw))
            for r in session.execute(statement)]
    rows.sort(key=lambda row: row.id)
    return rows


def release_leases(session: Session, owner: str, now: datetime) -> int:
    """Make the pending rows leased to ``owner`` due now, for any sender; returns how
    many. For a sender that knows it holds none of them (``Sender.release_orphans``)."""
    result = session.execute(
        update(_OUTBOX)
        .where(_OUTBOX.c.lease_owner == owner, _OUTBOX.c.status == "pending")
        .values(lease_owner=None, next_attempt_at=_utc(now))
    )
    return int(getattr(result, "rowcount", 0) or 0)


def record_sent(session: Session, ids: Sequence[int], now: datetime) -> int:
    """Mark these pending mails sent (one UPDATE); returns how many were pending."""
    if not ids:
        return 0
    result = cast(CursorResult[Any], session.execute(
        update(_OUTBOX)
        .where(_OUTBOX.c.id.in_(list(ids)), _OUTBOX.c.status == "pending")
        .values(status="sent", sent_at=_utc(now), attempts=_OUTBOX.c.attempts + 1,
                lease_owner=None)
    ))
    return int(result.rowcount or 0)


def due_outbox(session: Session, now: datetime, limit: int = 50) -> list[OutboxMail]:
    """Pending mails whose time has come, oldest first (locked for this transaction)."""
    query = (
        select(OutboxMail)
        .where(OutboxMail.status == "pending", OutboxMail.next_attempt_at <= now)
        .order_by(OutboxMail.id)
        .limit(limit)
        .execution_options(populate_existing=True)
    )
    return list(session.scalars(_skip_locked(session, query)))


def mark_sent(session: Session, row: OutboxMail, now: datetime) -> None:
    row.lease_owner = None
    row.status = "sent"
    row.sent_at = now
    row.attempts = (row.attempts or 0) + 1
    session.flush()


def retry_delay(attempts: int) -> timedelta:
    """How long to wait after the ``attempts``-th failed delivery (1, 2, 4 ... 60 min)."""
    exponent = min(max(attempts, 1) - 1, 16)
    delay: timedelta = RETRY_FIRST_DELAY * 2**exponent
    return min(delay, RETRY_MAX_DELAY)


def _retry_span(attempts: int) -> timedelta:
    """Total waiting time scheduled by the first ``attempts`` failures."""
    return sum((retry_delay(n) for n in range(1, attempts + 1)), timedelta())


def mark_retry(session: Session, row: OutboxMail, error: str, now: datetime) -> None:
    """A delivery failed for now: try again later, or give up after about a day.

    The day is counted in retries (1 min, 2, 4 ... then hourly, about 29 tries), not
    from when the mail was queued, so a mail queued while the relay was down for a
    long time still gets its full day of tries.
    """
    row.attempts = (row.attempts or 0) + 1
    row.last_error = error
    row.lease_owner = None
    if _retry_span(row.attempts) >= RETRY_GIVE_UP_AFTER:
        row.status = "failed"
    else:
        row.next_attempt_at = _utc(now) + retry_delay(row.attempts)
    session.flush()


def mark_failed(session: Session, row: OutboxMail, error: str, now: datetime) -> None:
    """A delivery failed for good (the relay answered 5xx): no more tries."""
    row.attempts = (row.attempts or 0) + 1
    row.last_error = error
    row.lease_owner = None
    row.status = "failed"
    session.flush()


def replies_sent_today(session: Session, recipient: str, now: datetime) -> int:
    """How many mails were queued to ``recipient`` in the 24 hours before ``now``.

    The address matches as written or in lower case (registered addresses are
    stored in lower case).
    """
    variants = {recipient, recipient.lower()}
    query = select(func.count(OutboxMail.id)).where(
        OutboxMail.recipient.in_(variants),
        OutboxMail.created_at > _utc(now) - timedelta(hours=24),
    )
    return int(session.scalar(query) or 0)


# -- users ----------------------------------------------------------------------------


def get_user(session: Session, userid: str) -> User | None:
    """The user with this userid (any case), or None."""
    return session.scalars(_USER, {"userid": userid.lower()}).first()


_USER = select(User).where(User.userid == bindparam("userid"))
_USERS_BY_ADDRESS = (select(User).join(Address, Address.user_id == User.id)
                     .where(Address.address == bindparam("address")).order_by(User.id))


def find_user_by_address(session: Session, address: str) -> list[User]:
    """The users who registered this mail address (any case), oldest first."""
    return list(session.scalars(_USERS_BY_ADDRESS, {"address": address.strip().lower()}))


def add_user(
    session: Session,
    userid: str,
    password_hash: str,
    addresses: Iterable[str],
    now: datetime,
) -> User:
    """Register a user; ValueError when the userid is taken (the transaction survives)."""
    wanted: list[str] = []
    for address in addresses:
        lowered = address.strip().lower()
        if lowered and lowered not in wanted:
            wanted.append(lowered)
    user = User(
        userid=userid.lower(),
        password_hash=password_hash,
        created_at=now,
        disabled=False,
        vacation=False,
        accepts_challenges=True,
        subscribe_all=False,
        rating=1600.0,
        rated_games=0,
        wins=0,
        losses=0,
        draws=0,
        addresses=[Address(address=a) for a in wanted],
    )
    try:
        with session.begin_nested():
            session.add(user)
    except IntegrityError:
        raise ValueError(f"userid {userid.lower()} is taken") from None
    return user


# -- games ----------------------------------------------------------------------------


def next_board_number(session: Session) -> int:
    """The number for a new game: 101 for the first, then one more than the highest.

    Call it in the write transaction that creates the game. On PostgreSQL it takes a
    transaction-long advisory lock, so two challenges at once get different numbers.
    """
    if _is_postgresql(session):
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _BOARD_NUMBER_LOCK})
    highest = session.scalar(select(func.max(Game.number)))
    return FIRST_BOARD if highest is None else max(FIRST_BOARD, highest + 1)


#: A game with its seats, their users and the users' addresses, read in one query:
#: every command on a board reads them (whose turn, who gets the board mails), and
#: reading them one lazy load at a time cost more than the rest of a move.
GAME_WITH_PLAYERS = (
    joinedload(Game.seats).joinedload(Seat.user).joinedload(User.addresses),
)


def get_game(session: Session, number: int, for_update: bool = False) -> Game | None:
    """The game with this board number, its seats, their users and addresses;
    ``for_update`` locks it (PostgreSQL) until commit."""
    query = _GAME
    if for_update:
        query = _GAME_LOCKED if _locks_rows(session) else _GAME_FRESH
    return session.scalars(query, {"number": number}).unique().one_or_none()


_GAME = select(Game).where(Game.number == bindparam("number")).options(*GAME_WITH_PLAYERS)
_GAME_FRESH = _GAME.execution_options(populate_existing=True)
# Only the game's row is locked: the seats are joined on the nullable side.
_GAME_LOCKED = _GAME_FRESH.with_for_update(of=Game)


def write_game(session: Session, game: Game, values: dict[str, Any]) -> None:
    """Change these columns of ``game`` now, by one UPDATE built once, as a flush of the
    changed object would: the version checked and bumped (``StaleDataError`` when
    another transaction changed the game), ``to_move`` kept with the position, the
    values checked against their columns, a robot whose turn it may be noted; the
    object is told the values as written. A flush costs several times the UPDATE, and
    every move writes its game. An object with other changes pending, or not yet
    written, is changed as usual (its flush writes everything together)."""
    state = inspect(game)
    if state.modified or state.pending or state.transient or "version" in state.unloaded:
        for name, value in values.items():
            setattr(game, name, value)
        return
    values = dict(values)
    if "position" in values:
        values["to_move"] = seat_to_move(values["position"])
    check_values(_GAMES, values)
    names = tuple(sorted(values))
    statement = _GAME_UPDATES.get(names)
    if statement is None:
        statement = (update(_GAMES)
                     .where(_GAMES.c.id == bindparam("game_id"),
                            _GAMES.c.version == bindparam("old_version"))
                     .values({**{name: bindparam(name) for name in names},
                              "version": bindparam("new_version")}))
        _GAME_UPDATES[names] = statement
    old_version = game.version
    result = cast(CursorResult[Any], session.execute(
        statement, {**values, "game_id": game.id, "old_version": old_version,
                    "new_version": old_version + 1}))
    if result.rowcount != 1:
        raise StaleDataError(f"game {game.number}: changed by another transaction "
                             f"(version {old_version} expected)")
    session.info.setdefault(WRITTEN_DIRECTLY, []).append(game)
    for name, value in values.items():
        set_committed_value(game, name, value)
    set_committed_value(game, "version", old_version + 1)
    note_robot_turn(session, game)


_GAMES = cast(Table, Game.__table__)
#: The UPDATE of each set of columns ``write_game`` wrote (few: the move's).
_GAME_UPDATES: dict[tuple[str, ...], Executable] = {}


def seat_by_token(session: Session, token: str) -> Seat | None:
    """The seat whose reply address carries this token."""
    return session.scalars(select(Seat).where(Seat.reply_token == token)).first()


def games_of_user(
    session: Session, user: User, status: str | Sequence[str] | None = None
) -> list[Game]:
    """The games ``user`` has a seat in, by board number; optionally of some status."""
    seated = select(Seat.game_id).where(Seat.user_id == user.id)
    query = select(Game).where(Game.id.in_(seated))
    if isinstance(status, str):
        query = query.where(Game.status == status)
    elif status is not None:
        query = query.where(Game.status.in_(list(status)))
    return list(session.scalars(query.order_by(Game.number)))
