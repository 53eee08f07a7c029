"""Server commands of issue 4: list, message, broadcast, all show, vacation, password reset
and password set.

``HANDLERS`` is merged into :data:`abalone_pbm.service.mailroom.HANDLERS` when the mailroom
is imported.  Every handler runs in the savepoint of its command: a ``CommandError``
undoes whatever it changed and mails the error instead.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from .. import protocol, render
from ..db import repository
from ..db.models import Game, ServerCounter, User
from .accounts import authenticate, find_user, user_addresses
from .context import CommandError, MailContext, Outgoing
from .games import load_board
from .passwords import hash_password, verify_password

#: One broadcast per user in this span.
BROADCAST_INTERVAL = timedelta(hours=24)
#: A password-reset code is valid this long ...
RESET_CODE_LIFETIME = timedelta(hours=24)
#: ... and a new one can be asked for after this long (so nobody floods a mailbox).
RESET_CODE_INTERVAL = timedelta(hours=1)
#: Reset codes: lower-case letters and digits without look-alikes (31 signs), 10 of
#: them: about 50 bits, plenty for a code that is tried by mail and expires in a day.
_CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
_CODE_LENGTH = 10


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _text_reply(ctx: MailContext, subject: str, text: str) -> None:
    ctx.reply(*render.text_mail(subject, text))


# -------------------------------------------------------------------------- counters
def _counter(ctx: MailContext, name: str) -> ServerCounter | None:
    query = select(ServerCounter).where(ServerCounter.name == name)
    if ctx.session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    return ctx.session.scalars(query).first()


def _touch_counter(ctx: MailContext, name: str, counter: ServerCounter | None) -> None:
    if counter is None:
        ctx.session.add(ServerCounter(name=name, value=1, updated_at=ctx.now))
    else:
        counter.value = (counter.value or 0) + 1
        counter.updated_at = ctx.now
    ctx.session.flush()


# ------------------------------------------------------------------------------ list
def list_users(ctx: MailContext, _command: protocol.List | None = None) -> None:
    users = list(
        ctx.session.scalars(select(User).where(User.disabled.is_(False)).order_by(User.userid))
    )
    lines = [f"The registered players of this Abalone server ({len(users)}):", ""]
    if users:
        lines.append(f"  {'userid':<20} {'rating':>7} {'games':>5}  {'won':>4} {'lost':>4} "
                     f"{'drawn':>5}  notes")
    for user in users:
        notes = []
        if user.robot is not None:
            notes.append("computer player")
        if user.vacation:
            notes.append("on vacation")
        provisional = "*" if user.rated_games < 20 else " "
        lines.append(
            f"  {user.userid:<20} {round(user.rating):>6}{provisional} {user.rated_games:>5}  "
            f"{user.wins:>4} {user.losses:>4} {user.draws:>5}  {', '.join(notes)}".rstrip()
        )
    if not users:
        lines.append("  nobody yet")
    else:
        lines += [
            "",
            "* provisional rating (fewer than 20 rated games).",
            "Players on vacation cannot be challenged until they are back; "
            '"help robots" describes the computer players.',
        ]
    _text_reply(ctx, "Abalone players", "\n".join(lines))


# --------------------------------------------------------------------------- message
def _recipients(ctx: MailContext, userids: Iterable[str]) -> list[User]:
    """The users named, in order and once each; every problem named in one error."""
    found: list[User] = []
    unknown: list[str] = []
    unreachable: list[str] = []
    for userid in dict.fromkeys(u.lower() for u in userids):
        user = repository.get_user(ctx.session, userid)
        if user is None:
            unknown.append(userid)
        elif user.disabled or user.robot is not None or not user.addresses:
            unreachable.append(userid)
        else:
            found.append(user)
    problems = []
    if unknown:
        problems.append(
            f"There is no user {render.and_list(unknown)}" if len(unknown) == 1
            else f"There are no users {render.and_list(unknown)}"
        )
    if unreachable:
        problems.append(
            f"{render.and_list(unreachable)} cannot get messages "
            "(a computer player, or no longer active)"
        )
    if problems:
        raise CommandError("; ".join(problems) + ". Nothing was sent.")
    return found


def _relay(ctx: MailContext, users: Iterable[User], subject: str, body: str,
           skip: Iterable[str] = ()) -> int:
    """One mail per address of the users (each address once); returns how many."""
    return len(ctx.send_to_users(users, subject, body, skip=skip))


def _message_body(sender: User, text: str, how_to_answer: str) -> str:
    # Not tidied: the "-- " line (the signature mark) keeps its blank.
    return f"From {sender.userid}:\n\n{text.strip()}\n\n-- \n{render.wrap_text(how_to_answer)}\n"


def message(ctx: MailContext, c: protocol.Message) -> None:
    sender = authenticate(ctx, c.userid, c.password)
    recipients = _recipients(ctx, c.to)
    text = c.text.strip()
    if not text:
        raise CommandError(
            "Your message is empty: write it in the body of the mail "
            "(quoted text and your signature are not sent)"
        )
    answer = (
        f'To answer, mail the server a "message <your userid> <password> {sender.userid}" '
        "with your answer in the body.  Addresses are never shown to either side."
    )
    _relay(
        ctx, recipients, f"Abalone message from {sender.userid}",
        _message_body(sender, text, answer),
    )
    names = render.and_list([u.userid for u in recipients])
    _text_reply(ctx, "Abalone message sent", f"Your message was sent to {names}.")


# ------------------------------------------------------------------------- broadcast
def broadcast(ctx: MailContext, c: protocol.Broadcast) -> None:
    sender = authenticate(ctx, c.userid, c.password)
    text = c.text.strip()
    if not text:
        raise CommandError(
            "Your broadcast is empty: write it in the body of the mail "
            "(quoted text and your signature are not sent)"
        )
    name = f"broadcast:{sender.userid}"
    counter = _counter(ctx, name)
    if counter is not None and ctx.now - counter.updated_at < BROADCAST_INTERVAL:
        allowed = counter.updated_at + BROADCAST_INTERVAL
        raise CommandError(
            f"You may send one broadcast in {BROADCAST_INTERVAL.total_seconds() / 3600:.0f} "
            f"hours; your last was at {_when(counter.updated_at)}, the next is allowed from "
            f"{_when(allowed)}"
        )
    _touch_counter(ctx, name, counter)
    users = ctx.session.scalars(
        select(User)
        .where(User.disabled.is_(False), User.robot.is_(None), User.id != sender.id)
        .order_by(User.userid)
    )
    answer = (
        f'This was sent to every player of the server.  To answer {sender.userid} alone, mail '
        f'the server a "message <your userid> <password> {sender.userid}" with your answer '
        "in the body."
    )
    count = _relay(
        ctx, users, f"Abalone broadcast from {sender.userid}",
        _message_body(sender, text, answer), skip=user_addresses(sender),
    )
    _text_reply(
        ctx, "Abalone broadcast sent",
        f"Your broadcast was sent to {count} address{'es' if count != 1 else ''}.  "
        f"The next one is allowed from {_when(ctx.now + BROADCAST_INTERVAL)}.",
    )


# -------------------------------------------------------------------------- all show
def all_show(ctx: MailContext, c: protocol.AllShow) -> None:
    from . import mails  # mails imports the play layer; keep the import graph flat

    user = find_user(ctx, c.userid)
    selection = c.filter or "active"
    games = repository.games_of_user(ctx.session, user, "active")
    if selection == "next":
        games = [g for g in games if _on_turn(g, user)]
    if not games:
        what = "no game where it is their turn" if selection == "next" else "no active games"
        _text_reply(ctx, "Abalone boards", f"{user.userid} has {what}.")
        return
    for game in games:
        ctx.send(mails.show_mail(ctx, game, None))


def _on_turn(game: Game, user: User) -> bool:
    board = load_board(game)
    return any(s.seat == board.turn and s.user_id == user.id and not s.resigned
               for s in game.seats)


# -------------------------------------------------------------------------- vacation
def _vacation_counter_name(user: User) -> str:
    return f"vacation:{user.userid}"


def vacation(ctx: MailContext, c: protocol.Vacation) -> None:
    user = authenticate(ctx, c.userid, c.password)
    name = _vacation_counter_name(user)
    if c.on:
        if user.vacation:
            _text_reply(ctx, "Abalone vacation", f"{user.userid} is on vacation already.")
            return
        user.vacation = True
        counter = _counter(ctx, name)
        _touch_counter(ctx, name, counter)  # updated_at: when the vacation began
        _text_reply(
            ctx, "Abalone vacation",
            f"Vacation is on for {user.userid}: you are neither reminded nor forfeited in "
            "any game, and nobody can challenge you.  Your games go on when you move; the "
            f'clock of a game waiting for you stands still.  Send "vacation {user.userid} '
            '<password> off" when you are back.',
        )
        return
    if not user.vacation:
        _text_reply(ctx, "Abalone vacation", f"{user.userid} is not on vacation.")
        return
    user.vacation = False
    counter = _counter(ctx, name)
    began = counter.updated_at if counter is not None else ctx.now
    waiting = _restart_clocks(ctx, user, began)
    text = f"Welcome back, {user.userid}: vacation is off, you can be challenged again."
    if waiting:
        numbers = ", ".join(str(n) for n in waiting)
        text += (f"  It is your turn on board{'s' if len(waiting) > 1 else ''} {numbers}; "
                 "the time you were away does not count against you.")
    _text_reply(ctx, "Abalone vacation", text)


def _restart_clocks(ctx: MailContext, user: User, began: datetime) -> list[int]:
    """Games waiting for ``user``: the vacation does not count as thinking time."""
    waiting = []
    for game in repository.games_of_user(ctx.session, user, "active"):
        if not _on_turn(game, user):
            continue
        paused = ctx.now - max(game.turn_started_at, began)
        if paused > timedelta(0):
            game.turn_started_at = min(game.turn_started_at + paused, ctx.now)
        game.last_nag_at = None
        waiting.append(game.number)
    return waiting


# -------------------------------------------------------------------- password reset
def new_code() -> str:
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))


def password_reset(ctx: MailContext, c: protocol.PasswordReset) -> None:
    user = find_user(ctx, c.userid)
    if user.disabled:
        raise CommandError(f"Userid {user.userid} is no longer active")
    if user.robot is not None:
        raise CommandError(f"{user.userid} is a computer player and has no password")
    addresses = user_addresses(user)
    if not addresses:
        raise CommandError(f"{user.userid} has no mail address to send a code to")
    expires = user.reset_code_expires
    if user.reset_code_hash and expires is not None:
        issued = expires - RESET_CODE_LIFETIME
        if ctx.now - issued < RESET_CODE_INTERVAL:
            raise CommandError(
                f"A code for {user.userid} was mailed less than an hour ago (it is valid "
                f"until {_when(expires)}); a new one can be asked for from "
                f"{_when(issued + RESET_CODE_INTERVAL)}"
            )
    code = new_code()
    user.reset_code_hash = hash_password(code)
    user.reset_code_expires = ctx.now + RESET_CODE_LIFETIME
    body = render.tidy(
        f"Someone (probably you) asked for a new password for the Abalone userid "
        f"{user.userid}.\n\n"
        f"Your one-time code is:   {code}\n\n"
        f"To choose a new password, send this as the Subject of a mail to "
        f"{ctx.settings.address}:\n\n"
        f"  password set {user.userid} {code} <new-password>\n\n"
        f"The code is valid until {_when(user.reset_code_expires)} and works once.  If "
        "you did not ask for it, ignore this mail: your password stays as it is.\n"
    )
    for address in addresses:
        ctx.send(Outgoing(address, f"Abalone password reset for {user.userid}", body))
    if ctx.sender.lower() not in addresses:
        _text_reply(
            ctx, "Abalone password reset",
            f"A one-time code has been mailed to the registered addresses of {user.userid}. "
            f'With it, "password set {user.userid} <code> <new-password>" sets a new '
            "password.  The code is valid for 24 hours.",
        )


def password_set(ctx: MailContext, c: protocol.PasswordSet) -> None:
    user = find_user(ctx, c.userid)
    if user.disabled:
        raise CommandError(f"Userid {user.userid} is no longer active")
    stored, expires = user.reset_code_hash, user.reset_code_expires
    valid = (
        user.robot is None
        and stored is not None
        and expires is not None
        and ctx.now < expires
        and verify_password(stored, c.code.strip().lower())
    )
    if not valid:
        raise CommandError(
            f"That code is not valid for {user.userid}: it is wrong, used or expired.  "
            f'Send "password reset {user.userid}" for a new code.'
        )
    user.password_hash = hash_password(c.new_password)
    user.reset_code_hash = None
    user.reset_code_expires = None
    _text_reply(ctx, "Abalone password changed",
                f"The password of {user.userid} has been changed.")
    notice = render.tidy(
        f"The password of the Abalone userid {user.userid} was changed with a one-time "
        f"code on {_when(ctx.now)}.  If that was not you, send \"password reset "
        f"{user.userid}\" to {ctx.settings.address} to choose a new one.\n"
    )
    _relay(ctx, [user], "Abalone password changed", notice, skip=[ctx.sender])


HANDLERS: dict[type, Callable[[MailContext, Any], None]] = {
    protocol.List: list_users,
    protocol.Message: message,
    protocol.Broadcast: broadcast,
    protocol.AllShow: all_show,
    protocol.Vacation: vacation,
    protocol.PasswordReset: password_reset,
    protocol.PasswordSet: password_set,
}
