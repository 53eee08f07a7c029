"""Counting for the rate limits: rows of ``rate_events`` (scope, subject, time).

A limit is the number (or the time) of one scope's events for one subject within a
window. The subject of an address limit is the address normalised by
:func:`normalise_address` (lower case, no ``+tag``), so varying the case or a tag does
not make a new address. The scopes:

- ``answer``: a mail written for an incoming mail to its own sender (the daily reply
  cap); board mails that other players' moves cause are not answers.
- ``mail``: a mail processed for a sender (envelope address).
- ``relay-from`` (userid) / ``relay-to`` (address): text written by one user (message,
  chat, broadcast) mailed to others.
- ``confirm``: a confirmation request mailed to an address.
- ``challenge``: a challenge issued by a sender; ``challenged``: a player named in a
  challenge by somebody else.
- ``pw-user`` / ``pw-sender`` and ``pw-ok-user`` / ``pw-ok-sender``: wrong and right
  passwords; ``pw-notice``: the owner was told about wrong passwords.

This module is the bottom of the limits: it knows the database and the settings, not
the mail context (``limits`` builds the policies on it, ``context`` its outgoing gate).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast
from datetime import datetime, timedelta
from email.message import EmailMessage, Message

from sqlalchemy import Table, bindparam, delete, func, insert, or_, select
from sqlalchemy.orm import Session

from ..config import Settings
from ..db.column_checks import check_values
from ..db.repository import read_core
from ..db.models import Address, OutboxMail, RateEvent
from ..mail.guards import answer_address

DAY = timedelta(days=1)
#: Events are kept this long (the longest window, with a margin), then pruned.
KEEP = timedelta(days=2)

ANSWER = "answer"
MAIL = "mail"
RELAY_FROM = "relay-from"
RELAY_TO = "relay-to"
CONFIRM = "confirm"
CHALLENGE = "challenge"
CHALLENGED = "challenged"
ANALYSIS = "analysis"
SIGNUP = "signup"
SIGNUP_ANY = "signup-any"
PW_USER = "pw-user"
PW_SENDER = "pw-sender"
PW_OK_USER = "pw-ok-user"
PW_OK_SENDER = "pw-ok-sender"
PW_NOTICE = "pw-notice"

SUBJECT_LENGTH = 320

#: Events not yet written: (scope, subject, time).
Pending = Sequence[tuple[str, str, datetime]]


def normalise_address(address: str) -> str:
    """The address as limits count it: lower case, without a ``+tag`` in the local part."""
    bare = address.strip().strip("<>").strip().lower()
    local, at, domain = bare.rpartition("@")
    if not at:
        return bare[:SUBJECT_LENGTH]
    base = local.split("+", 1)[0] or local
    return f"{base}@{domain}"[:SUBJECT_LENGTH]


def when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


# ------------------------------------------------------------------------ counting
_EVENTS = cast(Table, RateEvent.__table__)
_ADDRESSES = Address.__table__
# Built once: the worker counts and records events for every mail.
_COUNT = select(func.count(_EVENTS.c.id)).where(
    _EVENTS.c.scope == bindparam("scope"), _EVENTS.c.subject == bindparam("subject"),
    _EVENTS.c.at > bindparam("since"))
_LATEST = select(func.max(_EVENTS.c.at)).where(
    _EVENTS.c.scope == bindparam("scope"), _EVENTS.c.subject == bindparam("subject"))
_RECORD = insert(_EVENTS)
# A run of failures: those after ``since`` and after the last success, their time,
# and the last success, in one query (the password throttle reads it for every check).
_OK_EVENTS = _EVENTS.alias("ok_events")
_LAST_OK = (select(func.max(_OK_EVENTS.c.at))
            .where(_OK_EVENTS.c.scope == bindparam("ok_scope"),
                   _OK_EVENTS.c.subject == bindparam("subject"))
            .correlate(None).scalar_subquery())
_RUN = select(func.count(_EVENTS.c.id), func.max(_EVENTS.c.at), _LAST_OK).where(
    _EVENTS.c.scope == bindparam("scope"), _EVENTS.c.subject == bindparam("subject"),
    _EVENTS.c.at > bindparam("since"), or_(_LAST_OK.is_(None), _EVENTS.c.at > _LAST_OK))
_CONFIRMED = select(_ADDRESSES.c.address).where(
    _ADDRESSES.c.address.in_(bindparam("addresses", expanding=True)),
    _ADDRESSES.c.confirmed.is_(True))
_ANSWERED = select(OutboxMail.__table__.c.recipient).where(
    OutboxMail.__table__.c.inbox_id == bindparam("inbox_id"))


def count(session: Session, scope: str, subject: str, since: datetime,
          pending: Pending = ()) -> int:
    """Events of ``scope`` for ``subject`` after ``since``, the ``pending`` included."""
    subject = subject[:SUBJECT_LENGTH]
    stored = read_core(session, _COUNT,
                       {"scope": scope, "subject": subject, "since": since}).scalar()
    extra = sum(1 for s, subj, at in pending if s == scope and subj == subject and at > since)
    return int(stored or 0) + extra


def latest(session: Session, scope: str, subject: str, pending: Pending = ()) -> datetime | None:
    """The time of the last event of ``scope`` for ``subject``, or None."""
    subject = subject[:SUBJECT_LENGTH]
    stored = read_core(session, _LATEST, {"scope": scope, "subject": subject}).scalar()
    moments = [stored] if stored is not None else []
    moments += [at for s, subj, at in pending if s == scope and subj == subject]
    return max(moments) if moments else None


def run_since_ok(session: Session, fail_scope: str, ok_scope: str, subject: str,
                 since: datetime, pending: Pending = ()) -> tuple[int, datetime | None]:
    """The events of ``fail_scope`` for ``subject`` after ``since`` and after its last
    event of ``ok_scope`` (``pending`` included): how many, and the time of the last
    one (None when there is none)."""
    subject = subject[:SUBJECT_LENGTH]
    row: tuple[int | None, datetime | None, datetime | None] = tuple(read_core(session, _RUN, {
        "scope": fail_scope, "ok_scope": ok_scope, "subject": subject, "since": since,
    }).one())
    stored = row[0] or 0
    stored_last, last_ok = row[1], row[2]
    pending_ok = [at for s, subj, at in pending if s == ok_scope and subj == subject]
    if pending_ok and max(pending_ok) > max(since, last_ok or since):
        # A success not written yet ends the run later than the stored ones say.
        since = max(pending_ok)
        stored = count(session, fail_scope, subject, since)
        stored_last = latest(session, fail_scope, subject) if stored else None
    elif last_ok is not None and last_ok > since:
        since = last_ok
    pending_fail = [at for s, subj, at in pending
                    if s == fail_scope and subj == subject and at > since]
    moments = ([stored_last] if stored and stored_last is not None else []) + pending_fail
    return stored + len(pending_fail), max(moments) if moments else None


def record(session: Session, scope: str, subject: str, now: datetime) -> None:
    """Count one event now, in the current transaction (or savepoint)."""
    values = {"scope": scope, "subject": subject[:SUBJECT_LENGTH], "at": now}
    check_values(_EVENTS, values)  # as the ORM checks what it writes (db.column_checks)
    session.execute(_RECORD, values)


def prune(session: Session, now: datetime) -> int:
    """Forget events older than every window; returns how many rows went."""
    result = session.execute(delete(RateEvent).where(RateEvent.at < now - KEEP))
    return int(getattr(result, "rowcount", 0) or 0)


# ------------------------------------------------------------------ addresses
def confirmed_among(session: Session, addresses: Iterable[str]) -> set[str]:
    """Which of ``addresses`` (lower case) are confirmed addresses of some user."""
    wanted = {a.lower() for a in addresses}
    if not wanted:
        return set()
    return set(read_core(session, _CONFIRMED, {"addresses": list(wanted)}).scalars())


def answer_target(session: Session, message: EmailMessage, envelope_from: str) -> str:
    """Where answers to a mail go: the envelope sender, the address it came from. Its
    Reply-To or From header may point elsewhere only to another confirmed address of
    the same player (a header can name anybody, so a stranger's mail cannot send the
    server's answers to someone else)."""
    envelope = answer_address(Message(), envelope_from)  # normalised, "" when unusable
    preferred = answer_address(message, envelope_from)
    if not envelope or not preferred or preferred == envelope:
        return preferred or envelope
    owners = [
        set(session.scalars(select(Address.user_id).where(
            Address.address == address, Address.confirmed.is_(True))))
        for address in (preferred, envelope)
    ]
    return preferred if owners[0] & owners[1] else envelope


# ----------------------------------------------------------- the worker's daily caps
def reason_to_drop(session: Session, settings: Settings, answer_to: str, envelope_from: str,
                   now: datetime, *, count_it: bool = True) -> str | None:
    """Why a mail must not be processed at all (its answer address or its sender has
    had its day's share), or None; counts the mail when it may be processed (unless
    ``count_it`` is False: only a look, writing nothing)."""
    since = now - DAY
    cap = settings.daily_reply_cap
    target = normalise_address(answer_to)
    if cap and target and count(session, ANSWER, target, since) >= cap:
        return f"daily reply cap ({cap}) reached for {target}"
    sender = normalise_address(envelope_from)
    mails = settings.sender_daily_mails
    if mails and sender and count(session, MAIL, sender, since) >= mails:
        return f"daily mail limit ({mails}) reached for sender {sender}"
    if sender and count_it:
        record(session, MAIL, sender, now)
    return None


def answer_room(session: Session, settings: Settings, recipient: str, already: int,
                now: datetime) -> bool:
    """Whether one more answer may go to ``recipient`` today, ``already`` of this
    mail's answers to it counted (the worker records them: :func:`record_answers`)."""
    cap = settings.daily_reply_cap
    target = normalise_address(recipient)
    return not cap or count(session, ANSWER, target, now - DAY) + already < cap


def record_answers(session: Session, inbox_id: int, answer_to: str, envelope_from: str,
                   now: datetime) -> int:
    """Count the mails written for one incoming mail to its own sender (the address
    answers go to, or the envelope sender): the daily reply cap counts these, never the
    board mails that other players' moves cause. Returns how many."""
    own = {normalise_address(a) for a in (answer_to, envelope_from) if a}
    recipients = read_core(session, _ANSWERED, {"inbox_id": inbox_id}).scalars()
    counted = 0
    for recipient in list(recipients):
        target = normalise_address(recipient)
        if target in own:
            record(session, ANSWER, target, now)
            counted += 1
    return counted
