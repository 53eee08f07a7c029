"""Double opt-in for mail addresses (DESIGN §2.6).

The address a mail came from (its envelope sender) is confirmed by that mail. Every
other address a user names (``signup``, ``add``, ``change address``) gets one mail, a
confirmation request whose Subject is ``confirm address <code>``, and nothing else
until its owner replies to it (or sends that Subject). Only confirmed addresses get
board mails, messages, notices or codes (``queries.user_addresses``; the outgoing gate
in ``MailContext.flush`` drops anything else).

Consent is a person's act: an auto-reply (an out-of-office that quotes the request's
Subject) never confirms, whatever marks it (``mail.guards.auto_reply_reason``).  The
worker drops such mail before it gets here; ``confirm`` asks again, because an address
confirmed by a machine would let a signup mail a stranger.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Iterable
from datetime import timedelta
from email.parser import BytesHeaderParser
from email.policy import default as default_policy

from sqlalchemy import select

from .. import render
from ..db.models import Address, InboxMail, User
from ..mail.guards import auto_reply_reason
from ..protocol import ConfirmAddress
from . import limits, rates
from .context import CommandError, MailContext, Outgoing

#: Codes: 16 signs of 31 (lower-case letters and digits without look-alikes), ~79 bits.
_CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
_CODE_LENGTH = 16

log = logging.getLogger(__name__)


def code_hash(code: str) -> str:
    return hashlib.sha256(code.strip().lower().encode()).hexdigest()


def sent_from(ctx: MailContext, address: str) -> bool:
    """Whether ``address`` is the one this mail came from (the envelope sender)."""
    return bool(ctx.envelope_sender) and address.lower() == ctx.envelope_sender.lower()


def attach(ctx: MailContext, user: User, addresses: Iterable[str]) -> tuple[list[str], list[str]]:
    """Give ``user`` these addresses (lower case, checked): the sender's is confirmed at
    once, each other one is asked to confirm. Returns (confirmed now, awaiting)."""
    confirmed: list[str] = []
    awaiting: list[str] = []
    by_address = {a.address: a for a in user.addresses}
    for address in addresses:
        entry = by_address.get(address)
        if entry is None:
            entry = Address(address=address, confirmed=False)
            user.addresses.append(entry)
            by_address[address] = entry
        if entry.confirmed:
            confirmed.append(address)
            continue
        if sent_from(ctx, address):
            entry.confirmed = True
            entry.confirm_code_hash = None
            confirmed.append(address)
            continue
        awaiting.append(address)
        _request(ctx, user, entry)
    ctx.session.flush()
    return confirmed, awaiting


def _request(ctx: MailContext, user: User, entry: Address) -> None:
    """Mail one confirmation request to an unconfirmed address (if it may get one)."""
    if entry.confirm_sent_at is not None and ctx.now - entry.confirm_sent_at < rates.DAY:
        return  # one request a day for one address of one user is enough
    if not limits.confirmation_allowed(ctx, entry.address):
        return
    code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(_CODE_LENGTH))
    entry.confirm_code_hash = code_hash(code)
    entry.confirm_sent_at = ctx.now
    valid_until = ctx.now + timedelta(days=ctx.settings.confirmation_days)
    body = render.tidy(render.wrap_text(
        f"Someone asked to have the mail of the Abalone userid {user.userid} sent to "
        f"this address ({entry.address}).\n\n"
        "Nothing will be sent here unless you confirm.  To confirm, simply reply to this "
        f"mail, keeping its Subject, or send a mail to {ctx.settings.address} with the "
        "Subject\n\n"
        f"    confirm address {code}\n\n"
        f"The code is valid until {rates.when(valid_until)}.\n\n"
        "If you did not ask for this, ignore this mail: you will get nothing more from "
        "this server.\n"
    ))
    ctx.send(Outgoing(entry.address, f"confirm address {code}", body, confirmation=True))


def _sent_by_a_responder(ctx: MailContext) -> str | None:
    """Why the mail being processed is an auto-reply, or None (a person's mail, or no
    stored mail to look at).  Its headers only are parsed: linear in their size."""
    if ctx.inbox_id is None:
        return None
    mail = ctx.session.get(InboxMail, ctx.inbox_id)
    if mail is None:
        return None
    headers = BytesHeaderParser(policy=default_policy).parsebytes(bytes(mail.raw))
    return auto_reply_reason(headers)


def confirm(ctx: MailContext, command: ConfirmAddress) -> None:
    """``confirm address <code>``: the address the code was mailed to gets mail; never
    by an auto-reply, which is not answered either."""
    responder = _sent_by_a_responder(ctx)
    if responder is not None:
        log.info("inbox %s: confirm address ignored, the mail is an auto-reply (%s)",
                 ctx.inbox_id, responder)
        return
    entry = ctx.session.scalars(
        select(Address).where(Address.confirm_code_hash == code_hash(command.code))
    ).first()
    lifetime = timedelta(days=ctx.settings.confirmation_days)
    if (entry is None or entry.confirmed or entry.confirm_sent_at is None
            or ctx.now - entry.confirm_sent_at > lifetime or entry.user.disabled):
        raise CommandError(
            "That confirmation code is not valid: it is wrong, used or expired.  The owner "
            'of the account can ask for a new one with "add <userid> <password> <address>".'
        )
    entry.confirmed = True
    entry.confirm_code_hash = None
    user = entry.user
    text = (f"Thank you: {entry.address} is confirmed and now gets the mail of the Abalone "
            f"userid {user.userid}.\n")
    subject, body = render.text_mail("Abalone address confirmed", text)
    ctx.reply(subject, body)
    if rates.normalise_address(entry.address) != rates.normalise_address(ctx.sender):
        ctx.send(Outgoing(entry.address, subject, body))
