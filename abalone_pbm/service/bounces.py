"""Bounces acted on (DESIGN §2.8): a score per address, mail stopped past a threshold,
the owner told, and the address cleared by a valid command from it.

GNU Mailman 3 is the model. Every permanent failure of a mail to an address (a
delivery report read by ``mail.bounces``, or the relay's 5xx at RCPT) counts one,
at most one a day (a mailbox that is down for an afternoon bounces every mail of that
afternoon, and that is one bad day, not ten). A score whose last counted bounce is
older than ``bounce_stale_days`` starts again from nothing: that is the decay. At
``bounce_threshold`` the address is *suppressed*: ``MailContext.flush``, the one gate
every mail passes, sends it nothing more; the owner's other confirmed addresses get
one notice; the game's other players and observers read in each board mail since when
the player's mail bounces and when the usual timeout will end the game
(``unreachable_players``). A bounce never pauses or forfeits a game: the timeouts do
what they always do.

A valid command from the address (``clear_after_command``), or the admin
(``abalone-pbm bounces clear``), clears it: its score is forgotten and it is mailed
again.

A report is tied to the mail it is about without trusting the report's word for the
address: at a bounce address (``verp``) the outbox row holding that address names
its recipient; at the game address (or a reply address) only the Message-ID of the
returned mail can, and it must be the Message-ID of a mail we sent to the address the
report names. A report that ties to nothing counts against nobody, so a stranger
cannot stop a player's mail by writing reports.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage, Message
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..config import Settings
from ..db.models import Address, BounceScore, Game, InboxMail, OutboxMail, User
from ..db.repository import read_core
from .bounce_scores import SUPPRESSED, key, record_failure, suppressed_among
from .. import verp
from ..mail.bounces import Recipient, Report, read_report, status_of

if TYPE_CHECKING:  # pragma: no cover
    from ..db.session import Database

__all__ = ["Unreachable", "take_report", "record_refusal", "count_failure",
           "unreachable_players", "make_bounce_check"]

log = logging.getLogger(__name__)


# -- counting -------------------------------------------------------------------------


def count_failure(session: Session, settings: Settings, address: str, reason: str,
                  now: datetime) -> BounceScore:
    """``bounce_scores.record_failure``, and the one notice to the owner when the
    address has just stopped being mailed."""
    row = record_failure(session, settings, address, reason, now)
    if row.suppressed_at is not None and row.notice_sent_at is None:
        _tell_owner(session, settings, row, now)
        row.notice_sent_at = now
        session.flush()
    return row


def record_refusal(session: Session, settings: Settings, address: str, error: str,
                   now: datetime) -> BounceScore | None:
    """The relay refused ``address`` at RCPT with ``error`` (``550 5.1.1 …``): counted
    as a report's failure would be (a 5.7.x policy refusal is not); None when not."""
    refusal = Recipient(key(address), "failed", status_of(error), error)
    if not refusal.counts:
        log.info("relay refused %s, not counted against it: %s", key(address), error)
        return None
    return count_failure(session, settings, address, f"refused by the relay: {error}", now)


def _tell_owner(session: Session, settings: Settings, row: BounceScore,
                now: datetime) -> None:
    """One notice to the other confirmed, still mailed addresses of every user who has
    the suppressed address."""
    from .context import MailContext, Outgoing

    users = session.scalars(
        select(User).join(Address, Address.user_id == User.id)
        .where(Address.address == row.address)).unique().all()
    ctx = MailContext(session=session, settings=settings, now=now, sender=settings.address)
    for user in users:
        others = [a.address for a in user.addresses if a.confirmed and a.address != row.address]
        suppressed = suppressed_among(session, others)
        others = [a for a in others if a not in suppressed]
        body = (
            f"Mail from the Abalone server to {row.address}, an address of {user.userid}, "
            f"bounces since {_when(row.first_at)} (the last time: {row.last_reason}).\n\n"
            f"The server sends no more mail to {row.address}; your board mails go to "
            f"{', '.join(others)}.  Your games go on as usual: nothing is paused, and the "
            "usual timeouts apply.\n\n"
            f"To have mail sent to {row.address} again, send any valid command from it, "
            f'for example the Subject "abalone games {user.userid}".\n'
        )
        for address in others:
            ctx.send(Outgoing(address, f"Abalone: mail to {row.address} bounces", body,
                              auto_submitted="auto-generated"))
    ctx.flush()


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


# -- reading what comes in --------------------------------------------------------------


def _envelope_recipients(mail: InboxMail) -> list[str]:
    return [r.strip() for r in (mail.envelope_to or "").split(",") if r.strip()][:100]


def _looks_like_report(message: Message, envelope_from: str) -> bool:
    """Whether a mail not sent to a bounce address may still be a report: a null
    envelope sender, a report's content type, or a mail system's From."""
    from ..mail.guards import addresses_in, local_part

    if not envelope_from.strip().strip("<>"):
        return True
    if message.get_content_type() == "multipart/report":
        return True
    return any(local_part(a) in ("mailer-daemon", "postmaster")
               for a in addresses_in(message, "From"))


def take_report(session: Session, settings: Settings, mail: InboxMail,
                message: EmailMessage, now: datetime) -> str | None:
    """Read ``mail`` as a delivery report when it is one, or was sent to a bounce
    address (never a command then); count what it says. Returns the note for the
    inbox (the mail is not answered), or None: not a report, process it as usual."""
    envelope_from = mail.envelope_from or ""
    tokens = [t for t in (verp.bounce_token(r, settings.address)
                          for r in _envelope_recipients(mail)) if t]
    if tokens:
        return _at_bounce_address(session, settings, message, envelope_from, tokens[0], now)
    if not _looks_like_report(message, envelope_from):
        return None
    report = read_report(message, envelope_from, settings.address_domain)
    if report is None:
        return None  # the loop guards say what it is (an auto-reply, a null sender)
    return "delivery report: " + _by_message_id(session, settings, report, now)


def _sent_with(session: Session, settings: Settings, token: str) -> OutboxMail | None:
    """The outbox row whose bounce address holds ``token`` (one indexed read)."""
    return session.scalars(
        select(OutboxMail).where(
            OutboxMail.sender == verp.canonical_bounce_address(token, settings.address))
        .limit(1)).first()


def _at_bounce_address(session: Session, settings: Settings, message: EmailMessage,
                       envelope_from: str, token: str, now: datetime) -> str:
    from ..mail.guards import auto_reply_reason

    sent = _sent_with(session, settings, token)
    if sent is None:
        return "mail to an unknown bounce address: not counted"
    report = read_report(message, envelope_from, settings.address_domain)
    why = auto_reply_reason(message, auto_submitted=False)
    if report is None or (report.form != "RFC 3464" and why):
        what = f"an auto-reply ({why})" if why else "no delivery report"
        return f"mail to the bounce address of outbox {sent.id}: {what}; not counted"
    return (f"delivery report ({report.form}) for outbox {sent.id}: "
            + _count(session, settings, report, report.counted, sent.recipient, now))


def _by_message_id(session: Session, settings: Settings, report: Report,
                   now: datetime) -> str:
    """A report that came to the game address: counted only for the recipient of the
    mail whose Message-ID it returns, when it names that recipient (or no address)."""
    if not report.message_ids:
        return f"{report.verdict()}; names no mail of ours, not counted"
    sent = session.scalars(
        select(OutboxMail).where(OutboxMail.message_id.in_(list(report.message_ids)))
        .limit(1)).first()
    if sent is None:
        return f"{report.verdict()}; returns no mail of ours, not counted"
    recipient = key(sent.recipient)
    counted = tuple(r for r in report.counted if r.address in ("", recipient))
    if report.counted and not counted:
        return (f"{report.verdict()}; names another address than outbox {sent.id}'s, "
                "not counted")
    return f"outbox {sent.id}: " + _count(session, settings, report, counted, recipient, now)


def _count(session: Session, settings: Settings, report: Report,
           counted: tuple[Recipient, ...], recipient: str, now: datetime) -> str:
    if not counted:
        return f"{report.verdict()}; not counted"
    row = count_failure(session, settings, recipient, counted[0].describe(), now)
    state = ("no longer mailed" if row.suppressed_at is not None
             else f"score {row.score} of {settings.bounce_threshold}")
    return f"{report.verdict()}; counted for {key(recipient)} ({state})"


# -- mailing, or not --------------------------------------------------------------------


@dataclass(frozen=True)
class Unreachable:
    """A player none of whose addresses is mailed any more."""

    userid: str
    #: Since when the player's mail bounces (the earliest of their addresses).
    since: datetime
    #: When the usual timeout ends the game for them (None: not their turn, or they are
    #: on vacation).
    forfeit_at: datetime | None


def unreachable_players(session: Session, game: Game) -> tuple[Unreachable, ...]:
    """The players of an active ``game`` whose every confirmed address bounces."""
    if game.status != "active":
        return ()
    seats = [s for s in game.seats if s.user.robot is None and not s.resigned]
    addresses = {s.seat: [a.address for a in s.user.addresses if a.confirmed] for s in seats}
    wanted = {key(a) for each in addresses.values() for a in each}
    if not wanted:
        return ()
    since = {row.address: row.first_at
             for row in read_core(session, SUPPRESSED, {"addresses": sorted(wanted)})}
    if not since:
        return ()
    from .games import GameOptions

    found = []
    for seat in seats:
        mine = [key(a) for a in addresses[seat.seat]]
        if not mine or any(a not in since for a in mine):
            continue
        forfeit_at = None
        if game.to_move == seat.seat and not seat.user.vacation:
            days = GameOptions.from_json(game.options).forfeittime
            forfeit_at = game.turn_started_at + timedelta(days=days)
        found.append(Unreachable(seat.user.userid, min(since[a] for a in mine), forfeit_at))
    return tuple(found)


def make_bounce_check(settings: Settings, database: Database) -> Callable[[str], bool]:
    """For RCPT: whether a bounce address is one of a mail we sent (one indexed read)."""

    def known(address: str) -> bool:
        token = verp.bounce_token(address, settings.address)
        if token is None:
            return False
        with database.read() as session:
            found = session.execute(
                select(OutboxMail.id).where(
                    OutboxMail.sender == verp.canonical_bounce_address(token, settings.address))
                .limit(1)).first()
        return found is not None

    return known
