"""Server counters: one row per name, with when it last changed (the last broadcast of
a user, the start of a vacation)."""

from __future__ import annotations

from sqlalchemy import select

from ..db.models import ServerCounter
from .context import MailContext


def read_counter(ctx: MailContext, name: str) -> ServerCounter | None:
    """The counter, locked for this transaction on PostgreSQL."""
    query = select(ServerCounter).where(ServerCounter.name == name)
    if ctx.session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    return ctx.session.scalars(query).first()


def touch_counter(ctx: MailContext, name: str, counter: ServerCounter | None) -> None:
    """Count one more, now (the counter as read, or None to create it)."""
    if counter is None:
        ctx.session.add(ServerCounter(name=name, value=1, updated_at=ctx.now))
    else:
        counter.value = (counter.value or 0) + 1
        counter.updated_at = ctx.now
    ctx.session.flush()
