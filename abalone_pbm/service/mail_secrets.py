"""The passwords of one mail (DESIGN §2.6), found before it is handled: what the server
writes because of the mail is cleaned of them (``MailContext.secrets``), and the inbox
keeps a copy of the mail with them masked (``mail.stored_copy``).

Both cost up to hundreds of milliseconds for a big mail, so the worker computes them
before its write transaction (``mask_ahead``, in a short read session) and the
transaction takes them (``taken_ahead``). The passwords depend on the mail's text and on
which of its words name a user (``is_userid``): the answers the reading got are asked
again in the transaction, in one query, and the passwords are read again there only when
one of them changed (a user signed up or left meanwhile). Given the same answers the
reading, which is deterministic, finds the same passwords.
"""

from __future__ import annotations

import dataclasses
from email.message import EmailMessage
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from .. import protocol
from ..config import Settings
from ..db import repository
from ..db.models import InboxMail, User
from ..mail.stored_copy import masked_raw
from ..protocol.words import MAX_USERID_LENGTH
from .precheck import read_mail

#: Lines of a body searched for passwords: more than a multiple runs and an answer
#: quotes (a comment masks itself, however long).
_SECRET_LINES = 250


@dataclasses.dataclass(frozen=True)
class MaskedAhead:
    """A mail's passwords and its masked stored copy, computed before the transaction."""

    #: The row it was computed for (None: a mail still to be stored, read for a row of
    #: its envelope and no id) and the bytes it was computed from.
    inbox_id: int | None
    raw: bytes
    secrets: frozenset[str]
    #: Each word the reading asked about (lower case, no longer than a userid) and
    #: whether it named a user then.
    asked: dict[str, bool]
    #: ``raw`` with its passwords masked (``stored_copy.masked_raw``).
    stored_copy: bytes


#: What ``mask_ahead`` computed, per message object (parsed anew for each attempt, so
#: it never outlives the bytes it was made from).
_ahead: WeakKeyDictionary[EmailMessage, MaskedAhead] = WeakKeyDictionary()


def mask_ahead(session: Session, mail: InboxMail, message: EmailMessage, raw: bytes,
               settings: Settings) -> None:
    """Find the passwords of the mail parsed from ``raw`` and mask its stored copy now,
    in ``session`` (a read session before the write transaction), for ``taken_ahead``
    to use in it; ``mail``: its row (of no id: a mail still to be stored)."""
    done = _ahead.get(message)
    if done is not None and done.inbox_id in (mail.id, None) and done.raw == raw:
        return  # masked when it was read to be stored: the stored row's copy
    reading = read_mail(mail, message, settings)
    asked: dict[str, bool] = {}
    secrets = secrets_of_mail(session, settings, str(message.get("Subject") or ""),
                              reading.body, asked=asked)
    _ahead[message] = MaskedAhead(mail.id, raw, frozenset(secrets), asked,
                                  masked_raw(raw, secrets, parsed=message))


def taken_ahead(session: Session, mail: InboxMail,
                message: EmailMessage) -> MaskedAhead | None:
    """What ``mask_ahead`` computed for this very mail (same message object, same row
    or one stored from the same bytes), when every word it asked about still names a
    user or not as it did then; None otherwise (computed in the transaction)."""
    ahead = _ahead.get(message)
    if ahead is None or ahead.inbox_id not in (mail.id, None) or ahead.raw != bytes(mail.raw):
        return None
    if _users_among(session, ahead.asked) != {w for w, named in ahead.asked.items() if named}:
        return None
    return ahead


#: How many words one query asks about (SQLite's oldest limit on parameters is 999).
_QUERY_WORDS = 500
_USERIDS_IN = select(User.__table__.c.userid).where(
    User.__table__.c.userid.in_(bindparam("userids", expanding=True)))


def _users_among(session: Session, words: dict[str, bool]) -> set[str]:
    """Which of ``words`` (lower case) name a user now."""
    listed = sorted(words)
    named: set[str] = set()
    for start in range(0, len(listed), _QUERY_WORDS):
        chunk = listed[start:start + _QUERY_WORDS]
        named |= {row.userid for row in repository.read_core(session, _USERIDS_IN,
                                                             {"userids": chunk})}
    return named


def secrets_of_mail(session: Session, settings: Settings, raw_subject: str,
                    body: str, *, asked: dict[str, bool] | None = None) -> set[str]:
    """Every password of the mail (DESIGN §2.6): what its commands read as passwords,
    and every word standing where a password stands (protocol.masking), the words
    after a userid in ``games``/``history``/``challenge`` that name no user included.
    ``asked``: filled with each word looked up as a userid and the answer."""
    known: dict[str, bool] = {}
    looked_up: dict[str, bool] = asked if asked is not None else {}

    def is_userid(word: str) -> bool:
        key = word.lower()
        if key not in known:
            known[key] = False
            if len(key) <= MAX_USERID_LENGTH:  # (a longer word never names a user)
                known[key] = looked_up[key] = repository.get_user(session, key) is not None
        return known[key]

    if "\r" in body:  # (a search for CRLF in a 256 KB body without any costs 0.2 ms)
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    lines = body.split("\n")[:_SECRET_LINES]
    # The Subject apart from the body: a command there does not go on in the body.
    text = "\n\n".join([raw_subject, protocol.strip_subject_prefixes(raw_subject),
                         "\n".join(lines)])
    secrets = protocol.find_passwords(text, is_userid)
    if raw_subject.endswith("="):
        # A Subject cut at a soft line break (a bare CR in the header ends it there,
        # and the rest of the line becomes the body): the command runs on in the body.
        secrets |= protocol.find_passwords("\n".join([raw_subject, *lines]), is_userid)
    subject = protocol.strip_subject_prefixes(raw_subject)
    commands: list[Any] = []
    try:
        commands.append(protocol.parse_command(subject, "") if subject.strip() else None)
    except protocol.CommandSyntaxError:
        pass
    if not subject.strip() or isinstance(commands[-1:] and commands[-1], protocol.Multiple):
        # The lines a multiple runs (one more, for a Subject left empty).
        for line in protocol.multiple_lines("\n".join(lines))[:settings.multiple_max_lines + 1]:
            try:
                commands.append(protocol.parse_command(line, ""))
            except protocol.CommandSyntaxError:
                continue
    for command in commands:
        if command is None or not dataclasses.is_dataclass(command):
            continue
        for each in dataclasses.fields(command):
            value = getattr(command, each.name, None)
            if not each.repr and isinstance(value, str) and value:
                secrets.add(value)  # a field kept out of repr is a secret
    return secrets
