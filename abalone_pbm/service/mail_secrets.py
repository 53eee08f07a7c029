"""The passwords of one mail (DESIGN §2.6), found before it is handled: what the server
writes because of the mail is cleaned of them (``MailContext.secrets``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy.orm import Session

from .. import protocol
from ..config import Settings
from ..db import repository
from ..protocol.words import MAX_USERID_LENGTH

#: Lines of a body searched for passwords: more than a multiple runs and an answer
#: quotes (a comment masks itself, however long).
_SECRET_LINES = 250


def secrets_of_mail(session: Session, settings: Settings, raw_subject: str,
                    body: str) -> set[str]:
    """Every password of the mail (DESIGN §2.6): what its commands read as passwords,
    and every word standing where a password stands (protocol.masking), the words
    after a userid in ``games``/``history``/``challenge`` that name no user included."""
    known: dict[str, bool] = {}

    def is_userid(word: str) -> bool:
        key = word.lower()
        if key not in known:
            known[key] = (len(key) <= MAX_USERID_LENGTH
                          and repository.get_user(session, key) is not None)
        return known[key]

    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")[:_SECRET_LINES]
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
