"""A mail sent to an unsubscribe address (``service.unsubscribe``): whatever it says,
its token is the whole request."""

from __future__ import annotations

from .. import render
from ..db.models import Tournament, User
from .context import MailContext
from .unsubscribe import Unsubscription, apply, describe, token_user

__all__ = ["answer_by_mail"]


def _undo_hint(ctx: MailContext, what: Unsubscription) -> str:
    if what.kind in ("o", "s"):
        again = f'"abalone subscribe {what.scope} {what.userid} <password>"'
        if what.kind == "s":
            again += f' (and "abalone subscribe {what.userid} <password> all")'
        return f"{again} starts it again."
    if what.kind == "n":
        return f'"abalone notify {what.userid} <password>" starts it again.'
    if what.kind == "d":
        return f'"digest {what.userid} <password> on" starts it again.'
    if what.kind == "t":
        return (f'"abalone tournament mail {_tournament_name(ctx, what.scope)} '
                f'{what.userid} <password> on" starts it again.')
    return ("Messages sent to you by name still come; broadcasts no longer do.")


def _tournament_name(ctx: MailContext, tournament_id: int) -> str:
    found = ctx.session.get(Tournament, tournament_id)
    return found.name if found is not None else "<name>"


def answer_by_mail(ctx: MailContext, token: str) -> None:
    """A mail sent to an unsubscribe address: whatever it says, stop what its token
    names, and tell the user at their confirmed addresses (a forged or outdated token
    is answered to the sender, and nothing changes)."""
    what = token_user(ctx.session, ctx.settings, token)
    if what is None:
        ctx.reply(*render.answer_mail(
            "Abalone unsubscribe",
            f"The address your mail went to is not a valid unsubscribe address of "
            f"{ctx.settings.address} (it may have been changed on the way, or its user no "
            "longer exists), so nothing was changed.  Every subscribed mail of the server "
            "names its own unsubscribe address at its end."))
        return
    apply(ctx.session, what, ctx.now)
    user = ctx.session.get(User, what.user_id)
    if user is None:
        return
    subject, body = render.answer_mail(
        "Abalone unsubscribe",
        f"{what.userid} {describe(what)}.  Nothing else changed: games and other "
        f"subscriptions go on.  {_undo_hint(ctx, what)}")
    ctx.send_to_users([user], subject, body)
