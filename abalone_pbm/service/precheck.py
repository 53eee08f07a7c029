"""What the worker learns of a stored mail before its write transaction: the reply
address it was sent to, and the argon2 checks its commands will need.

Password checks cost tens of milliseconds each; running them before the transaction
(``PasswordsInAdvance``, the worker's ``passwords`` hook) keeps the database free
meanwhile. The throttle of wrong passwords applies here too, so a mail of guesses gets
no more argon2 runs in advance than its lines would get in the transaction.
"""

from __future__ import annotations

import functools
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import getaddresses
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from .. import protocol
from ..config import Settings
from ..db import repository
from ..db.models import InboxMail, User
from ..mail.decoding import html_part_text, plain_text, text_parts
from . import limits, passwords, rates
from .context import MailContext

__all__ = ["reply_target", "read_mail", "MailReading", "PasswordsInAdvance"]


@dataclass(frozen=True)
class MailReading:
    """A stored mail as the mail room reads it: read once, by the password checks
    before the transaction and by processing (the commands are frozen values)."""

    #: The Subject without its ``Re:``/``Fwd:`` prefixes, and the body's text.
    subject: str
    body: str
    #: (board, token) when the mail was sent to a player's reply address.
    target: tuple[int, str] | None
    #: The line read as the command: the Subject, or the body's first line when the
    #: Subject is blank (None when there is none), and the body that goes with it.
    command_subject: str | None
    command_body: str
    #: The command, or why that line is not one (both None: no command at all).
    command: protocol.Command | None
    error: protocol.CommandSyntaxError | None


#: The reading of each message being processed (a message object is parsed anew for
#: each attempt, so a reading never outlives the bytes it was made from).
_readings: WeakKeyDictionary[EmailMessage, tuple[int, MailReading]] = WeakKeyDictionary()


def read_mail(mail: InboxMail, message: EmailMessage, settings: Settings) -> MailReading:
    """The mail's reading (see ``MailReading``), made once per message object; a
    reading made for a row not stored yet (no id: the worker reads a mail while the
    listener's request to store it waits) is that of the row stored from it."""
    known = _readings.get(message)
    if known is not None and known[0] in (mail.id, None):
        return known[1]
    subject = protocol.strip_subject_prefixes(str(message.get("Subject") or ""))
    body = _body_text(message)
    target = reply_target(mail, message, settings)
    command_subject: str | None = subject
    command_body = body
    if not subject.strip():
        lines = protocol.multiple_lines(body)
        command_subject, command_body = (lines[0], "") if lines else (None, "")
    command: protocol.Command | None = None
    error: protocol.CommandSyntaxError | None = None
    if target is None and command_subject is not None:
        try:
            command = protocol.parse_command(command_subject, command_body)
        except protocol.CommandSyntaxError as syntax_error:
            error = syntax_error
    reading = MailReading(subject, body, target, command_subject, command_body, command,
                          error)
    _readings[message] = (mail.id, reading)
    return reading


def _body_text(message: EmailMessage) -> str:
    """The text part as a rule; the HTML part when only it holds the new text (a client
    that leaves the new text out of the text part, an HTML-only reply): what
    ``choose_reply_text`` chooses, the HTML part turned into text only if it needs it."""
    plain_part, markup_part = text_parts(message)
    return protocol.reply.choose_reply_text(
        None if plain_part is None else plain_text(plain_part),
        None if markup_part is None else functools.partial(html_part_text, markup_part))


def reply_target(
    mail: InboxMail, message: EmailMessage, settings: Settings
) -> tuple[int, str] | None:
    """(board, token) when the mail was sent to a player's reply address."""
    candidates = [a for a in mail.envelope_to.split(",") if a.strip()]
    if not candidates:
        # Delivered through a pipe without the envelope: fall back to the headers.
        for header in ("Delivered-To", "X-Original-To", "To", "Cc"):
            for _, address in getaddresses(message.get_all(header, [])):
                candidates.append(address)
    for address in candidates:
        local, _, domain = address.strip().strip("<>").rpartition("@")
        if domain.lower() != settings.address_domain.lower():
            continue
        found = protocol.parse_reply_address(local, settings.address_local)
        if found is not None:
            return found
    return None


class PasswordsInAdvance:
    """The worker's ``passwords`` hook: which argon2 checks a mail will need, so that
    they run before its write transaction (see ``passwords``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def wanted(
        self, session: Session, mail: InboxMail, message: EmailMessage,
        budget: dict[str, int] | None = None,
    ) -> list[tuple[str, str]]:
        """(stored hash, password) of every userid and password the mail's commands
        name that would need an argon2 run now; [] for anything unusual.

        With a ``budget`` (the worker looking at several waiting mails at once, whose
        wrong passwords are not counted yet) the checks it lets through are counted
        in it, per user and per sender, across those mails (see ``_within_throttle``).
        """
        try:
            named = _named_passwords(mail, message, self.settings)
        except Exception:  # processing will answer whatever is wrong with the mail
            return []
        if not named:
            return []
        userids = {userid.lower() for userid, _ in named}
        hashes: dict[str, str] = {
            row.userid: row.password_hash
            for row in repository.read_core(session, _HASHES, {"userids": list(userids)})}
        # A password remembered as right needs no argon2 run: the throttle, which the
        # transaction applies to every password anyway, is read here only for the
        # others (a player's moves after the first read it once a mail, not twice).
        costly = [(userid, password) for userid, password in named
                  if userid.lower() in hashes
                  and passwords.needs_check(hashes[userid.lower()], password)]
        if not costly:
            return []
        return [(hashes[userid.lower()], password) for userid, password
                in _within_throttle(session, self.settings, mail, costly, budget)]

    def check_soon(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], Future[bool]]:
        return passwords.check_soon(pairs)

    def known(self, answers: dict[tuple[str, str], bool]) -> AbstractContextManager[None]:
        return passwords.answers_known(answers)


_HASHES = select(User.__table__.c.userid, User.__table__.c.password_hash).where(
    User.__table__.c.userid.in_(bindparam("userids", expanding=True)))


def _within_throttle(session: Session, settings: Settings, mail: InboxMail,
                     named: list[tuple[str, str]],
                     budget: dict[str, int] | None = None) -> list[tuple[str, str]]:
    """The passwords worth checking in advance: none for a user the throttle refuses
    this sender now, and per user no more than the throttle lets through in one mail
    (the free failures and one more); any other is checked when its line runs.

    With a ``budget`` shared by several mails, no more than that per user and per
    sender across all of them: mails read before any of their wrong passwords is
    counted must not buy more argon2 runs than one mail could."""
    envelope = (mail.envelope_from or "").strip().strip("<>").lower()
    # As of its arrival (the worker's clock is not at hand; a throttle thought to hold
    # a little too long only moves that check into the transaction).
    ctx = MailContext(session=session, settings=settings, now=mail.received_at,
                      sender=envelope, envelope_sender=envelope)
    room = settings.password_free_failures + 1
    taken: dict[str, int] = {}
    out: list[tuple[str, str]] = []
    for userid, password in named:
        key = userid.lower()
        if key not in taken:
            user = repository.get_user(session, key)
            refused = user is None or limits.password_refusal(
                ctx, user, [a.address for a in user.addresses if a.confirmed]) is not None
            taken[key] = room if refused else 0
        if taken[key] >= room:
            continue
        if budget is not None:
            user_key = f"user {key}"
            sender_key = f"sender {rates.normalise_address(envelope)}"
            if budget.get(user_key, 0) >= room or budget.get(sender_key, 0) >= room:
                continue
            budget[user_key] = budget.get(user_key, 0) + 1
            budget[sender_key] = budget.get(sender_key, 0) + 1
        taken[key] += 1
        out.append((userid, password))
    return out


def _named_passwords(
    mail: InboxMail, message: EmailMessage, settings: Settings
) -> list[tuple[str, str]]:
    reading = read_mail(mail, message, settings)
    if reading.target is not None or reading.command is None:
        return []  # a reply carries no password; processing answers a mail it cannot read
    command = reading.command
    commands: list[Any] = [command]
    if isinstance(command, protocol.Multiple):
        commands = []
        for line in command.lines[: settings.multiple_max_lines]:
            try:
                commands.append(protocol.parse_command(line, ""))
            except protocol.CommandSyntaxError:
                continue
    named: list[tuple[str, str]] = []
    for each in commands:
        userid = getattr(each, "userid", None)
        if not isinstance(userid, str):
            continue
        for field_name in ("password", "old"):
            value = getattr(each, field_name, None)
            if isinstance(value, str) and value:
                named.append((userid, value))
    return named
