"""The daily digest: once a day, to every user who asked for it (``digest ... on``), one
mail listing every board that awaits their move.  Run by the clock (``serve`` every
minute, ``abalone-pbm tick``); beside the per-move mails, not instead of them.

A user gets a digest when it is on, they are not on vacation, the last one is a day
old (or there was none), and at least one board awaits their move; a day with nothing
to move sends nothing.  Each user is handled in a write transaction of their own,
decided again with the user's row locked, so two server processes never send twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from ..config import Settings
from ..db.models import Game, Seat, User
from ..db.session import Database
from ..render.digest import DigestEntry, digest_mail
from .context import MailContext, Outgoing
from .games import load_board
from .unsubscribe import Unsubscription
from .views import game_view

log = logging.getLogger(__name__)

INTERVAL = timedelta(days=1)


def _awaiting(session: Session, user: User) -> list[tuple[Game, Seat]]:
    """The active games whose player to move is ``user``, by board number."""
    rows = session.execute(
        select(Game, Seat)
        .join(Seat, Seat.game_id == Game.id)
        .where(
            Game.status == "active",
            Seat.user_id == user.id,
            Seat.resigned.is_(False),
            Game.to_move == Seat.seat,
        )
        .order_by(Game.number)
    )
    return [(game, seat) for game, seat in rows]


def _due(user: User, now: datetime) -> bool:
    return (
        user.digest
        and not user.vacation
        and not user.disabled
        and user.robot is None
        and (user.digest_sent_at is None or now - user.digest_sent_at >= INTERVAL)
    )


def due_users(database: Database, now: datetime) -> list[int]:
    with database.read() as session:
        return list(
            session.scalars(
                select(User.id)
                .where(
                    User.digest.is_(True),
                    or_(User.digest_sent_at.is_(None), User.digest_sent_at <= now - INTERVAL),
                )
                .order_by(User.id)
            )
        )


def send_digest(session: Session, settings: Settings, now: datetime, user_id: int) -> int:
    """Send one user's digest if it is due; returns the number of boards listed."""
    user = session.scalars(select(User).where(User.id == user_id).with_for_update()).first()
    if user is None or not _due(user, now):
        return 0
    ctx = MailContext(session=session, settings=settings, now=now, sender=settings.address)
    entries = []
    for game, seat in _awaiting(session, user):
        entries.append(
            DigestEntry(
                game=game_view(ctx, game),
                board=load_board(game),
                reply_address=ctx.reply_address(game.number, seat.reply_token),
                waiting_days=max(0, (now - game.turn_started_at).days),
            )
        )
    if not entries:
        return 0
    subject, text, html = digest_mail(user.userid, entries)
    reply_to = entries[0].reply_address if len(entries) == 1 else None
    for entry in user.addresses:
        ctx.send(Outgoing(entry.address, subject, text, reply_to=reply_to,
                          auto_submitted="auto-generated", html=html,
                          unsubscribe=Unsubscription("d", user.id, user.userid)))
    user.digest_sent_at = now
    ctx.flush()
    return len(entries)


def run(database: Database, now: datetime, settings: Settings) -> int:
    """Every digest that is due; returns how many were sent."""
    sent = 0
    for user_id in due_users(database, now):
        try:
            with database.write() as session:
                if send_digest(session, settings, now, user_id):
                    sent += 1
        except Exception:
            log.exception("digest: user %d failed", user_id)
    return sent


__all__ = ["INTERVAL", "due_users", "run", "send_digest"]
