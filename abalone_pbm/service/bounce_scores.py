"""Bounce scores (DESIGN §2.8; the rules are ``service.bounces``'s module text): counting
an address's permanent failures, whether it is still mailed, and forgetting it.

Kept apart from ``service.bounces`` so that ``MailContext.flush``, which asks
``suppressed_among`` for every mail it sends, depends on nothing that sends mail.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import Session

from ..config import Settings
from ..db.models import Address, BounceScore, User
from ..db.repository import read_core

__all__ = ["record_failure", "suppressed_among", "before_sending", "clear", "clear_after_command",
           "bouncing", "key", "SUPPRESSED", "COUNTED_ONCE_IN"]

log = logging.getLogger(__name__)

#: At most one bounce of an address is counted in this time.
COUNTED_ONCE_IN = timedelta(days=1)
#: Characters of a reason kept with the score.
REASON_KEPT = 500

_SCORES = BounceScore.__table__
#: The suppressed ones among some addresses, with since when they bounce.
SUPPRESSED = (select(_SCORES.c.address, _SCORES.c.first_at)
              .where(_SCORES.c.address.in_(bindparam("addresses", expanding=True)),
                     _SCORES.c.suppressed_at.is_not(None)))


#: Every score among some addresses: (address, suppressed) — one read for what a mail
#: needs to know before it sends (``before_sending``).
_SCORED = (select(_SCORES.c.id, _SCORES.c.address, _SCORES.c.suppressed_at)
           .where(_SCORES.c.address.in_(bindparam("addresses", expanding=True))))


def before_sending(session: Session, senders: Iterable[str], recipients: Iterable[str],
                   *, valid_command: bool) -> set[str]:
    """What one processed mail's answers need, in one read: the scores of its senders
    are forgotten when it was a valid command (``clear_after_command``), and the
    recipients that are no longer mailed are returned (``suppressed_among``), in lower
    case. The table is nearly always empty: one small indexed read a mail."""
    sender_keys = {key(a) for a in senders if a} if valid_command else set()
    wanted = sender_keys | {key(a) for a in recipients}
    if not wanted:
        return set()
    rows = list(read_core(session, _SCORED, {"addresses": sorted(wanted)}))
    if not rows:
        return set()
    cleared = {row.address for row in rows if row.address in sender_keys}
    if cleared:
        clear_after_command(session, cleared)
    return {row.address for row in rows
            if row.suppressed_at is not None and row.address not in cleared}


def key(address: str) -> str:
    """An address as scores are kept: bare, lower case (a ``+tag`` is kept: it may be
    a mailbox of its own)."""
    return address.strip().strip("<>").strip().lower()


def record_failure(session: Session, settings: Settings, address: str, reason: str,
                   now: datetime) -> BounceScore:
    """Count one permanent failure of mail to ``address`` (see the module text):
    at most one a day, from nothing again after ``bounce_stale_days`` without one;
    at the threshold the address is suppressed (``service.bounces`` tells its owner)."""
    bare = key(address)
    row = session.scalars(select(BounceScore).where(BounceScore.address == bare)).first()
    reason = " ".join(reason.split())[:REASON_KEPT]
    if row is None:
        row = BounceScore(address=bare, score=0, first_at=now, last_at=now, last_reason=reason)
        session.add(row)
    elif row.score and now - row.last_at < COUNTED_ONCE_IN:
        row.last_reason = reason  # counted today already
        session.flush()
        return row
    elif row.suppressed_at is None and now - row.last_at > timedelta(
            days=settings.bounce_stale_days):
        row.score, row.first_at = 0, now  # forgotten: a new run of bounces
    row.score += 1
    row.last_at = now
    row.last_reason = reason
    session.flush()
    log.info("bounce counted for %s (%d of %d): %s", bare, row.score,
             settings.bounce_threshold, reason)
    if row.suppressed_at is None and row.score >= settings.bounce_threshold:
        row.suppressed_at = now
        session.flush()
        log.warning("mail to %s bounces since %s: no longer mailed (abalone-pbm bounces)",
                    bare, row.first_at.isoformat(timespec="minutes"))
    return row


def suppressed_among(session: Session, addresses: Iterable[str]) -> set[str]:
    """Which of ``addresses`` (any case) are no longer mailed, in lower case."""
    wanted = {key(a) for a in addresses}
    if not wanted:
        return set()
    return {row.address for row in read_core(session, SUPPRESSED,
                                             {"addresses": sorted(wanted)})}


def clear(session: Session, address: str) -> BounceScore | None:
    """Forget the score of ``address`` (it is mailed again); the row it had, or None."""
    row = session.scalars(select(BounceScore).where(BounceScore.address == key(address))
                          ).first()
    if row is not None:
        session.execute(delete(BounceScore).where(BounceScore.id == row.id))
        session.expunge(row)
    return row


def clear_after_command(session: Session, addresses: Iterable[str]) -> list[str]:
    """A valid command came from these addresses: their bounces are forgotten. Returns
    the addresses that were no longer mailed and are again."""
    keys = {key(a) for a in addresses if a}
    if not keys:
        return []
    rows = session.scalars(select(BounceScore).where(BounceScore.address.in_(sorted(keys))))
    again = []
    for row in list(rows):
        if row.suppressed_at is not None:
            again.append(row.address)
            log.info("mail to %s no longer bounces: a valid command came from it",
                     row.address)
        session.execute(delete(BounceScore).where(BounceScore.id == row.id))
        session.expunge(row)
    return again


def bouncing(session: Session) -> list[tuple[BounceScore, list[str]]]:
    """Every address with a score, suppressed ones first, with the userids that have it."""
    rows = list(session.scalars(select(BounceScore).order_by(
        BounceScore.suppressed_at.is_(None), BounceScore.address)))
    owners: dict[str, list[str]] = {}
    if rows:
        for address, userid in session.execute(
                select(Address.address, User.userid).join(User, User.id == Address.user_id)
                .where(Address.address.in_([r.address for r in rows]))):
            owners.setdefault(address, []).append(userid)
    return [(row, sorted(owners.get(row.address, []))) for row in rows]
