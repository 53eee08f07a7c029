"""One thread per board (issue 22): every mail about a board refers to the first mail
about it that its recipient got, so threading mail programs group a game.

Each (board, address) has a root id, ``<abalone.board-<n>.<tag>@<domain>>``, the tag
an HMAC of the board number and the address under the server's key (``server_key``):
the same in every process and after restarts, unguessable, and no table remembers it.
The first mail about a board to an address (none in the outbox carries that id yet)
takes it as its Message-ID; every later one names it first in its References. So a
player's thread starts at their new-game mail, an observer's at the first board mail
they were sent (whoever joined later still has their thread's first mail), and a
Message-ID is never used twice (a mail program drops a second mail with the same id).

The board a mail is about is the one its Subject names in pbmserv's form (``Abalone
Board 101 ...``, ``New Abalone Board 101``, ``Nag: Abalone Board 101``): every board
mail, error, chat, reminder and answer about a board is written that way; a mail whose
Subject does not say it names it in ``Outgoing.board``. The Subjects stay pbmserv's,
so mail programs that group by Subject alone (Gmail's conversations need both) see
each move on its own, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..config import Settings
from ..db.models import OutboxMail
from .server_key import server_key, signature


class Outgoing(Protocol):
    """What a thread is told of a mail (``context.Outgoing``)."""

    to: str
    subject: str
    board: int | None

__all__ = ["Roots", "board_of", "root_id"]

#: The board named by a server Subject (pbmserv's form).
_BOARD_SUBJECT = re.compile(r"(?:New |Nag: )?Abalone Board (\d{1,9})\b")
#: Root ids looked up in the outbox with one query each this many.
_LOOKUP_CHUNK = 500


def board_of(mail: Outgoing) -> int | None:
    """The board ``mail`` is about, or None."""
    if mail.board is not None:
        return mail.board
    found = _BOARD_SUBJECT.match(mail.subject)
    return int(found.group(1)) if found else None


def root_id(key: bytes, settings: Settings, board: int, address: str) -> str:
    """The thread root id of ``board`` for mail to ``address``."""
    tag = signature(key, "thread", board, address.strip().lower(), length=20)
    return f"<abalone.board-{board}.{tag}@{settings.address_domain}>"


class Roots:
    """The thread roots of the mails of one flush: which mail opens its thread (takes
    the root as its Message-ID) and which refers to it. One outbox read per flush."""

    def __init__(self, session: Session, settings: Settings,
                 mails: Iterable[Outgoing]) -> None:
        self._roots: dict[int, str] = {}
        key: bytes | None = None
        for mail in mails:
            board = board_of(mail)
            if board is None:
                continue
            key = key or server_key(session, settings)
            self._roots[id(mail)] = root_id(key, settings, board, mail.to)
        self._used: set[str] = set()
        wanted = sorted(set(self._roots.values()))
        for start in range(0, len(wanted), _LOOKUP_CHUNK):
            chunk = wanted[start:start + _LOOKUP_CHUNK]
            self._used.update(session.scalars(
                select(OutboxMail.message_id).where(OutboxMail.message_id.in_(chunk))))

    def place(self, mail: Outgoing) -> tuple[str | None, str | None]:
        """(the Message-ID ``mail`` takes, the root its References name): (root, None)
        for the first mail of its thread, (None, root) for a later one, (None, None)
        for a mail about no board."""
        root = self._roots.get(id(mail))
        if root is None:
            return None, None
        if root in self._used:
            return None, root
        self._used.add(root)
        return root, None
