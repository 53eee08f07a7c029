"""Accounts: signup, add, change password/address, signoff, delete, password reset/set."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import select

from ... import protocol, render
from ...db import repository
from ...db.models import Seat, User
from ...mail import validation
from ...protocol.masking import NOT_USERIDS
from .. import limits, optin
from ..context import CommandError, MailContext, Outgoing
from ..mails import signup_confirmation, text_answer
from ..views import when
from ..passwords import hash_password, verify_password
from ..queries import active_games, authenticate, find_user, user_addresses

#: A password-reset code is valid this long ...
RESET_CODE_LIFETIME = timedelta(hours=24)
#: ... and a new one can be asked for after this long (so nobody floods a mailbox).
RESET_CODE_INTERVAL = timedelta(hours=1)
#: Reset codes: lower-case letters and digits without look-alikes (31 signs), 10 of
#: them: about 50 bits, plenty for a code that is tried by mail and expires in a day.
_CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
_CODE_LENGTH = 10


def normalise_address(address: str) -> str:
    """The address as stored (mail.validation); a clear CommandError when unusable."""
    try:
        return validation.normalise_address(address)
    except validation.ValueFreeError as problem:
        shown = address if len(address) <= 60 else address[:57] + "..."
        raise CommandError(f"{shown!r} is not a usable mail address: {problem}") from None


def _unique(items: list[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


# ----------------------------------------------------------------- signing up and in
def _named(ctx: MailContext, addresses: Sequence[str], *, most: int, what: str) -> list[str]:
    """The addresses a command names, checked, each once; refused when too many."""
    if len(addresses) > most:
        raise CommandError(f"{what} names at most {most} addresses (this one named "
                           f"{len(addresses)}); nothing was changed or sent")
    return _unique([normalise_address(a) for a in addresses])


def _awaiting_text(awaiting: list[str]) -> str:
    if not awaiting:
        return ""
    return (
        "\n" + render.wrap_text(
            "Waiting for confirmation: each of these addresses got one mail asking its "
            "owner to confirm, and gets nothing else from this server until then:")
        + "\n" + "".join(f"    {a}\n" for a in awaiting)
    )


def signup(ctx: MailContext, c: protocol.Signup) -> None:
    most = ctx.settings.signup_max_addresses
    wanted = _named(ctx, c.addresses, most=most, what="A signup") or [normalise_address(ctx.sender)]
    if repository.get_user(ctx.session, c.userid) is not None:
        raise CommandError(f"Userid {c.userid} is already taken; please choose another")
    if c.userid in NOT_USERIDS:
        # After a command word such a word begins a sentence, not a userid: the masking
        # of passwords reads it so (protocol.masking, rule 3).
        raise CommandError(f'"{c.userid}" is a common English word, which cannot be a '
                           "userid; please choose another")
    limits.check_signup_allowed(ctx)
    user = repository.add_user(ctx.session, c.userid, hash_password(c.password), [], ctx.now)
    # Only the address the mail came from is confirmed by it; the others are asked.
    optin.attach(ctx, user, wanted)
    ctx.send(signup_confirmation(ctx, user, ctx.sender))


def add_addresses(ctx: MailContext, c: protocol.AddAddress) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if not c.addresses:
        raise CommandError('Syntax is "add <userid> <password> <address> ..."')
    most = ctx.settings.max_addresses
    wanted = _named(ctx, c.addresses, most=most, what="An add")
    if len({a.address for a in user.addresses} | set(wanted)) > most:
        raise CommandError(f"A user can have at most {most} addresses")
    _confirmed, awaiting = optin.attach(ctx, user, wanted)
    ctx.reply(
        "Abalone addresses added",
        f"Mail for {user.userid} now goes to:\n"
        + "".join(f"  {a}\n" for a in user_addresses(user))
        + _awaiting_text(awaiting),
    )


def change_password(ctx: MailContext, c: protocol.ChangePassword) -> None:
    user = authenticate(ctx, c.userid, c.old)
    user.password_hash = hash_password(c.new)
    ctx.reply("Abalone password changed", f"The password of {user.userid} has been changed.\n")


def change_addresses(ctx: MailContext, c: protocol.ChangeAddress) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if not c.addresses:
        raise CommandError('Syntax is "change address <userid> <password> <address> ..."')
    most = ctx.settings.max_addresses
    wanted = _named(ctx, c.addresses, most=most, what="A change address")
    # Addresses named again keep their state (confirmed or not); the others go.
    for entry in [a for a in user.addresses if a.address not in wanted]:
        user.addresses.remove(entry)
    ctx.session.flush()
    _confirmed, awaiting = optin.attach(ctx, user, wanted)
    ctx.reply(
        "Abalone address changed",
        f"Mail for {user.userid} now goes to:\n"
        + "".join(f"  {a}\n" for a in user_addresses(user))
        + _awaiting_text(awaiting),
    )


# ---------------------------------------------------------------------- leaving
def signoff(ctx: MailContext, c: protocol.Signoff) -> None:
    user = authenticate(ctx, c.userid, c.password)
    _refuse_with_active_games(ctx, user, "sign off")
    user.disabled = True
    ctx.reply(
        "Abalone signoff",
        f"{user.userid} is signed off: you will get no more challenges or mail.\n"
        "Your finished games and ratings are kept.\n",
    )


def delete(ctx: MailContext, c: protocol.Delete) -> None:
    user = authenticate(ctx, c.userid, c.password)
    _refuse_with_active_games(ctx, user, "delete your account")
    played = ctx.session.scalar(select(Seat.id).where(Seat.user_id == user.id).limit(1))
    reply_to = ctx.sender
    if played is None:
        ctx.session.delete(user)
        text = f"The account {c.userid} has been deleted.\n"
    else:
        # Finished games keep the userid in their history; the account itself is emptied.
        user.disabled = True
        user.addresses.clear()
        user.password_hash = "!deleted"
        text = (
            f"The account {user.userid} has been deleted. The userid stays in the "
            "history of the games it played and cannot be taken again.\n"
        )
    ctx.send_to(reply_to, "Abalone account deleted", text)


def _refuse_with_active_games(ctx: MailContext, user: User, what: str) -> None:
    games = active_games(ctx, user)
    if games:
        numbers = ", ".join(str(g.number) for g in games)
        raise CommandError(
            f"You cannot {what} while you play in active games ({numbers}); "
            "finish or resign them first"
        )


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
                f"until {when(expires)}); a new one can be asked for from "
                f"{when(issued + RESET_CODE_INTERVAL)}"
            )
    code = new_code()
    user.reset_code_hash = hash_password(code)
    user.reset_code_expires = ctx.now + RESET_CODE_LIFETIME
    body = render.tidy(render.wrap_text(
        f"Someone (probably you) asked for a new password for the Abalone userid "
        f"{user.userid}.\n\n"
        f"Your one-time code is:   {code}\n\n"
        f"To choose a new password, send this as the Subject of a mail to "
        f"{ctx.settings.address}:\n\n"
        f"  password set {user.userid} {code} <new-password>\n\n"
        f"The code is valid until {when(user.reset_code_expires)} and works once.  If "
        "you did not ask for it, ignore this mail: your password stays as it is.\n"
    ))
    for address in addresses:
        ctx.send(Outgoing(address, f"Abalone password reset for {user.userid}", body))
    if ctx.sender.lower() not in addresses:
        text_answer(
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
    live = user.robot is None and stored is not None and expires is not None and ctx.now < expires
    valid = False
    if live and stored is not None:
        # Guessing codes is throttled like guessing passwords.
        owner = user_addresses(user)
        refusal = limits.password_refusal(ctx, user, owner)
        if refusal is not None:
            raise CommandError(refusal)
        valid = verify_password(stored, c.code.strip().lower())
        limits.password_checked(ctx, user, valid, owner)
    if not valid:
        raise CommandError(
            f"That code is not valid for {user.userid}: it is wrong, used or expired.  "
            f'Send "password reset {user.userid}" for a new code.'
        )
    user.password_hash = hash_password(c.new_password)
    user.reset_code_hash = None
    user.reset_code_expires = None
    text_answer(ctx, "Abalone password changed",
                f"The password of {user.userid} has been changed.")
    notice = render.tidy(
        f"The password of the Abalone userid {user.userid} was changed with a one-time "
        f"code on {when(ctx.now)}.  If that was not you, send \"password reset "
        f"{user.userid}\" to {ctx.settings.address} to choose a new one.\n"
    )
    ctx.send_to_users([user], "Abalone password changed", notice, skip=[ctx.sender])
