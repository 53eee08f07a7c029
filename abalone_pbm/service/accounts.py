"""Server commands about accounts: signup, add, change password/address, signoff, delete."""

from __future__ import annotations

import re

from sqlalchemy import select

from ..db import repository
from ..db.models import Address, Game, Seat, User
from .context import CommandError, MailContext
from .passwords import hash_password, verify_password

_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$|^[^@\s<>]+@localhost$", re.IGNORECASE)
MAX_ADDRESSES = 5


def normalise_address(address: str) -> str:
    address = address.strip().strip("<>").strip()
    if not _ADDRESS.match(address):
        raise CommandError(f"{address!r} is not a mail address")
    return address.lower()


def find_user(ctx: MailContext, userid: str) -> User:
    user = repository.get_user(ctx.session, userid)
    if user is None:
        raise CommandError(f"Invalid userid entered: there is no user {userid}")
    return user


def authenticate(ctx: MailContext, userid: str, password: str) -> User:
    """The user, if the password is right; otherwise the command fails."""
    user = find_user(ctx, userid)
    if user.disabled:
        raise CommandError(f"Userid {user.userid} is no longer active")
    if user.robot is not None or not verify_password(user.password_hash, password):
        raise CommandError("Invalid password entered")
    return user


def active_games(ctx: MailContext, user: User) -> list[Game]:
    query = (
        select(Game)
        .join(Seat, Seat.game_id == Game.id)
        .where(Seat.user_id == user.id, Game.status == "active", Seat.resigned.is_(False))
        .order_by(Game.number)
    )
    return list(ctx.session.scalars(query))


def signup(ctx: MailContext, userid: str, password: str, addresses: list[str]) -> None:
    if repository.get_user(ctx.session, userid) is not None:
        raise CommandError(f"Userid {userid} is already taken; please choose another")
    wanted = [normalise_address(a) for a in addresses] or [normalise_address(ctx.sender)]
    user = repository.add_user(
        ctx.session, userid, hash_password(password), _unique(wanted), ctx.now
    )
    from .mails import signup_confirmation

    for address in user_addresses(user):
        ctx.send(signup_confirmation(ctx, user, address))


def add_addresses(ctx: MailContext, userid: str, password: str, addresses: list[str]) -> None:
    user = authenticate(ctx, userid, password)
    if not addresses:
        raise CommandError('Syntax is "add <userid> <password> <address> ..."')
    known = set(user_addresses(user))
    new = [a for a in _unique([normalise_address(a) for a in addresses]) if a not in known]
    if len(known) + len(new) > MAX_ADDRESSES:
        raise CommandError(f"A user can have at most {MAX_ADDRESSES} addresses")
    for address in new:
        user.addresses.append(Address(address=address))
    ctx.reply(
        "Abalone addresses added",
        f"Mail for {user.userid} now goes to:\n"
        + "".join(f"  {a}\n" for a in user_addresses(user)),
    )


def change_password(ctx: MailContext, userid: str, old: str, new: str) -> None:
    user = authenticate(ctx, userid, old)
    user.password_hash = hash_password(new)
    ctx.reply("Abalone password changed", f"The password of {user.userid} has been changed.\n")


def change_addresses(ctx: MailContext, userid: str, password: str, addresses: list[str]) -> None:
    user = authenticate(ctx, userid, password)
    if not addresses:
        raise CommandError('Syntax is "change address <userid> <password> <address> ..."')
    wanted = _unique([normalise_address(a) for a in addresses])
    if len(wanted) > MAX_ADDRESSES:
        raise CommandError(f"A user can have at most {MAX_ADDRESSES} addresses")
    user.addresses.clear()
    ctx.session.flush()
    for address in wanted:
        user.addresses.append(Address(address=address))
    ctx.reply(
        "Abalone address changed",
        f"Mail for {user.userid} now goes to:\n" + "".join(f"  {a}\n" for a in wanted),
    )


def signoff(ctx: MailContext, userid: str, password: str) -> None:
    user = authenticate(ctx, userid, password)
    _refuse_with_active_games(ctx, user, "sign off")
    user.disabled = True
    ctx.reply(
        "Abalone signoff",
        f"{user.userid} is signed off: you will get no more challenges or mail.\n"
        "Your finished games and ratings are kept.\n",
    )


def delete(ctx: MailContext, userid: str, password: str) -> None:
    user = authenticate(ctx, userid, password)
    _refuse_with_active_games(ctx, user, "delete your account")
    played = ctx.session.scalar(select(Seat.id).where(Seat.user_id == user.id).limit(1))
    reply_to = ctx.sender
    if played is None:
        ctx.session.delete(user)
        text = f"The account {userid} has been deleted.\n"
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


def user_addresses(user: User) -> list[str]:
    return [a.address for a in user.addresses]


def _unique(items: list[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
