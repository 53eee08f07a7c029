"""Storing accepted mail in the inbox: used by the listener and by ``abalone-pbm process``.

A mail is stored in a committed write transaction before it is acknowledged: its own
(``store_mail``, ``process``), or one shared with the mails the listener received at the
same moment (``GroupStore``); ``store_inbox`` deduplicates by Message-ID (or the bytes'
hash), so a mail the MTA delivers twice is stored once.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.policy import default as default_policy
from email.utils import getaddresses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, cast

from sqlalchemy import Table, bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import Executable

from ..clock import Clock
from ..db.models import InboxMail
from ..protocol.grammar import command_line
from ..protocol.registry import match_spec, matched_length
from ..protocol.reply import parse_reply_address
from ..protocol.words import BARE_GAME_COMMANDS, GAME_WORD, board_number
from .idempotency import clean_message_id, inbox_key
from .validation import decode_encoded_words, one_line

if TYPE_CHECKING:  # pragma: no cover
    from ..db.session import Database

__all__ = [
    "store_inbox",
    "store_inbox_id",
    "inbox_values",
    "board_named",
    "board_of_reply_address",
    "board_of_subject",
    "insert_inbox_row",
    "store_mail",
    "make_store",
    "GroupStore",
    "split_from_line",
    "envelope_sender_from_headers",
]

log = logging.getLogger(__name__)

_FROM_LINE = re.compile(rb"^From (\S+)")


def store_inbox(
    session: Session,
    raw: bytes,
    envelope_from: str,
    envelope_to: list[str],
    now: datetime,
) -> tuple[InboxMail | None, bool]:
    """Store an accepted mail; ``(row, True)``, or ``(earlier row, False)`` if seen before.

    A redelivery (same envelope sender and Message-ID, or the same bytes of a traced
    delivery when there is none; see ``mail.idempotency``) is not stored again, and the surrounding transaction stays usable (``ON CONFLICT DO NOTHING``).
    The earlier row can be None when another transaction stores it at this moment.
    """
    mail_id, created = store_inbox_id(session, raw, envelope_from, envelope_to, now)
    return (session.get(InboxMail, mail_id) if mail_id is not None else None), created


_INBOX = cast(Table, InboxMail.__table__)  # (a declarative class's table is a Table)
_INBOX_BY_KEY = select(_INBOX.c.id).where(_INBOX.c.dedup_key == bindparam("key"))
#: INSERT ... ON CONFLICT (dedup_key) DO NOTHING RETURNING id, built once a dialect.
_INBOX_INSERTS: dict[str, Executable] = {}


def _inbox_insert(dialect: str) -> Executable:
    statement = _INBOX_INSERTS.get(dialect)
    if statement is None:
        from sqlalchemy.dialects import postgresql, sqlite

        insert_for = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = (insert_for(_INBOX).on_conflict_do_nothing(index_elements=["dedup_key"])
                     .returning(_INBOX.c.id))
        _INBOX_INSERTS[dialect] = statement
    return statement


#: How much of a Subject is looked at for its board: the command words and the board
#: number come first (a longer run of ``Re:`` only means the board is not known early).
_SUBJECT_PREFIX_READ = 1000


def board_of_reply_address(envelope_to: Sequence[str]) -> int | None:
    """The board of the first envelope recipient that is a player's reply address
    (``abalone+101.k3x9q7mf2a@host``), or None. Any local part before the ``+`` is
    taken: the listener accepted the recipient, and a wrong guess only orders the
    mail behind another board's mails (the worker checks the address)."""
    for address in envelope_to:
        local = address.strip().strip("<>").rpartition("@")[0] or address
        base, plus, _rest = local.partition("+")
        if plus:
            found = parse_reply_address(local, base)
            if found is not None:
                return found[0]
    return None


def board_of_subject(subject: str) -> int | None:
    """The board a Subject's command names right after its command words
    (``Re: abalone move 101 fred pw c3-c4``, ``abalone show 101#5``, ``accept 101 fred
    pw``, ``[EXTERNAL] Odp: abalone show 101``: the line the grammar reads), or None:
    the command names none there, or its board is in the body (``multiple``; an empty
    Subject, whose command is the body's first line)."""
    head = command_line(subject[:_SUBJECT_PREFIX_READ])
    words = head.split(maxsplit=4)[:4]
    lowered = [word.lower() for word in words]
    spec = match_spec(lowered)
    if spec is None and lowered[:1] and lowered[0] in BARE_GAME_COMMANDS:
        words, lowered = [GAME_WORD, *words], [GAME_WORD, *lowered]
        spec = match_spec(lowered)
    if spec is None:
        return None
    after = words[matched_length(spec, lowered):]
    if after[:1] and after[0].lower() == "board":  # "abalone show board 101"
        after = after[1:]
    return board_number(after[0].partition("#")[0]) if after else None


def _subject_text(headers: Message) -> str:
    """The first Subject as text, its RFC 2047 words decoded (from a bounded prefix)."""
    value = headers.get("Subject")
    if value is None:
        return ""
    return decode_encoded_words(str(value)[:4 * _SUBJECT_PREFIX_READ])  # as the worker does


#: Where the worker looks for the reply address of a mail delivered without its
#: envelope (a pipe without recipients): ``service.precheck.reply_target``.
_RECIPIENT_HEADERS = ("Delivered-To", "X-Original-To", "To", "Cc")
#: How much of those headers is looked at: the first values of each, a bounded prefix
#: of each value (a reply address comes first; a mail of thousands of recipients is
#: no player's reply, and a wrong guess only orders the mail, see above).
_RECIPIENT_VALUES_READ = 8
_RECIPIENT_VALUE_PREFIX = 1024


def board_named(headers: Message, envelope_to: Sequence[str]) -> int | None:
    """The board a mail concerns as its envelope or headers name it, known without
    reading its body: the reply address it was sent to (the envelope's recipients;
    without them, those of the headers the worker reads then), else its Subject's
    command (the worker reads them in this order too). None: known only once the
    body is read, or about no board."""
    recipients: Sequence[str] = [address for address in envelope_to if address.strip()]
    board = board_of_reply_address(recipients)
    if not recipients:
        for name in _RECIPIENT_HEADERS:
            values = [str(value)[:_RECIPIENT_VALUE_PREFIX]
                      for value in headers.get_all(name, [])[:_RECIPIENT_VALUES_READ]]
            board = board_of_reply_address(
                [address for _name, address in getaddresses(values) if address])
            if board is not None:
                break
    return board if board is not None else board_of_subject(_subject_text(headers))


#: The two bytes an empty line begins with after the line before it (a line ends in
#: CRLF, LF or a CR alone, as the parser reads lines), as ``quick_mime`` finds them: one
#: search that stops at the first (a pair a CRLF mail lacks is not sought through it).
_EMPTY_LINE_RE = re.compile(rb"\n\n|\n\r|\r\r")


def header_block(raw: bytes) -> bytes:
    """``raw`` up to the end of its first empty line (the end of the headers), so that
    a header parser does not read the body's lines one by one after them; ``raw``
    when it has none."""
    found = _EMPTY_LINE_RE.search(raw)
    return raw[:found.start() + 3] if found else raw


def inbox_values(
    raw: bytes, envelope_from: str, envelope_to: list[str], now: datetime
) -> dict[str, Any]:
    """The inbox row of one delivery (its headers are parsed here: ``GroupStore`` does
    it before it waits for the write lock)."""
    headers = BytesHeaderParser(policy=compat32).parsebytes(header_block(raw))
    return {
        "received_at": now,
        "dedup_key": inbox_key(raw, envelope_from, envelope_to, headers),
        "message_id": clean_message_id(raw, headers),
        "board": board_named(headers, envelope_to),
        # Clean text that fits (an unusable sender is refused later, with a reason).
        "envelope_from": one_line(envelope_from, limit=320),
        "envelope_to": ",".join(one_line(address) for address in envelope_to),
        "raw": raw,
        "status": "new",
        "attempts": 0,
    }


def store_inbox_id(
    session: Session,
    raw: bytes,
    envelope_from: str,
    envelope_to: list[str],
    now: datetime,
    values: dict[str, Any] | None = None,
) -> tuple[int | None, bool]:
    """``store_inbox`` for the listener: the row's id, without loading it as an object
    (one INSERT built once; loading the row back cost several times the INSERT).
    ``values``: the row as ``inbox_values`` made it already."""
    if values is None:
        values = inbox_values(raw, envelope_from, envelope_to, now)
    return insert_inbox_row(session, values)


def insert_inbox_row(session: Session, values: dict[str, Any]) -> tuple[int | None, bool]:
    """Store the inbox row ``inbox_values`` made: (its id, True), or (the id of the row
    stored already with its deduplication key, False)."""
    key = values["dedup_key"]
    dialect = session.get_bind().dialect.name
    stored: int | None
    if dialect in ("postgresql", "sqlite"):
        stored = session.execute(_inbox_insert(dialect), values).scalar()
    else:
        try:
            with session.begin_nested():
                row = InboxMail(**values)
                session.add(row)
            stored = row.id
        except IntegrityError:
            stored = None
    if stored is not None:
        return int(stored), True
    existing = session.execute(_INBOX_BY_KEY, {"key": key}).scalar()
    return (int(existing) if existing is not None else None), False


def store_mail(
    database: Database,
    raw: bytes,
    envelope_from: str,
    envelope_to: list[str],
    clock: Clock,
) -> tuple[int | None, bool]:
    """Commit one mail to the inbox; returns (inbox id, False when it was a redelivery).

    Raises on any failure: the caller must then not acknowledge the mail.
    """
    with database.write() as session:
        mail_id, created = store_inbox_id(session, raw, envelope_from, list(envelope_to),
                                          clock.now())
    if created:
        log.info("inbox %s: stored a mail from %r (%d bytes)", mail_id, envelope_from, len(raw))
    else:
        log.info("inbox %s: a redelivery from %r, already stored", mail_id, envelope_from)
    return mail_id, created


@dataclass
class _Waiting:
    """One mail handed to ``GroupStore``, and what became of it."""

    raw: bytes
    envelope_from: str
    envelope_to: list[str]
    #: Its inbox row, made before the write lock is waited for (``inbox_values``).
    values: dict[str, Any]
    done: bool = False
    result: tuple[int | None, bool] = (None, False)
    error: BaseException | None = None


class GroupStore:
    """The blocking ``store(raw, mail_from, rcpt_tos)`` the listener runs in its threads,
    committing the mails that arrive together in one transaction (a group commit).

    Each call returns only once its mail is committed (or raises, and then no mail of
    its group is stored: every sender is answered 4xx and tries again), so a mail is
    still durable before its 250.  Whoever finds no commit under way commits every mail
    waiting at that moment; the others wait for that commit, and while it syncs to disk
    the next group gathers.  A synced commit costs milliseconds of disk time that one
    mail after another would each pay in turn.
    """

    def __init__(self, database: Database, clock: Clock, *, most: int = 64,
                 delegate: Callable[[list[dict[str, Any]]],
                                    list[tuple[int | None, bool]] | None] | None = None
                 ) -> None:
        self.database = database
        self.clock = clock
        #: Stores a group's rows elsewhere (``serve``'s worker process on SQLite:
        #: ``WorkerProcess.store_mails``) and says how it went; None: it could not,
        #: the group is stored here.
        self.delegate = delegate
        #: The most mails committed in one transaction.
        self.most = most
        self._waiting: list[_Waiting] = []
        self._lock = threading.Lock()
        self._committed = threading.Condition(self._lock)
        self._committing = False

    def __call__(
        self, raw: bytes, envelope_from: str, envelope_to: list[str]
    ) -> tuple[int | None, bool]:
        # Parsed here, in the caller's thread: not while the group holds the write lock.
        mine = _Waiting(raw, envelope_from, list(envelope_to),
                        inbox_values(raw, envelope_from, list(envelope_to), self.clock.now()))
        with self._lock:
            self._waiting.append(mine)
            while not mine.done:
                if not self._committing:
                    group, self._waiting = self._waiting[:self.most], self._waiting[self.most:]
                    self._committing = True
                    self._lock.release()
                    try:
                        self._commit(group)
                    finally:
                        self._lock.acquire()
                        self._committing = False
                        self._committed.notify_all()
                else:
                    self._committed.wait()
        if mine.error is not None:
            raise mine.error
        return mine.result

    def _commit(self, group: list[_Waiting]) -> None:
        if self.delegate is not None:
            stored = self.delegate([one.values for one in group])
            if stored is not None and len(stored) == len(group):
                self._done(group, stored)
                return
        self._store_here(group)

    def _store_here(self, group: list[_Waiting]) -> None:
        results: list[tuple[int | None, bool]] = []
        try:
            with self.database.write() as session:
                for one in group:
                    results.append(store_inbox_id(session, one.raw, one.envelope_from,
                                                  one.envelope_to, one.values["received_at"],
                                                  values=one.values))
        except Exception as error:
            if len(group) == 1:
                group[0].error, group[0].done = error, True
                return
            # One mail that cannot be stored must not fail the others: each alone.
            for one in group:
                self._store_here([one])
            return
        except BaseException as error:
            for one in group:
                one.error, one.done = error, True
            raise
        self._done(group, results)

    @staticmethod
    def _done(group: list[_Waiting], results: list[tuple[int | None, bool]]) -> None:
        for one, result in zip(group, results):
            one.result, one.done = result, True
            mail_id, created = result
            if created:
                log.info("inbox %s: stored a mail from %r (%d bytes)", mail_id,
                         one.envelope_from, len(one.raw))
            else:
                log.info("inbox %s: a redelivery from %r, already stored", mail_id,
                         one.envelope_from)


def make_store(
    database: Database, clock: Clock,
    delegate: Callable[[list[dict[str, Any]]], list[tuple[int | None, bool]] | None]
    | None = None,
) -> Callable[[bytes, str, list[str]], tuple[int | None, bool]]:
    """The blocking ``store(raw, mail_from, rcpt_tos)`` the listener runs in a thread
    (mails arriving together are committed together, see ``GroupStore``)."""
    return GroupStore(database, clock, delegate=delegate)


def split_from_line(raw: bytes) -> tuple[bytes, str | None]:
    """Remove a leading mbox ``From sender date`` line (procmail, Postfix pipe flag F).

    Returns the message without it and the envelope sender it named (``""`` for
    ``MAILER-DAEMON``-style null senders written as ``<>``), or None when there was none.
    """
    if not raw.startswith(b"From "):
        return raw, None
    line, sep, rest = raw.partition(b"\n")
    match = _FROM_LINE.match(line)
    sender = match.group(1).decode("utf-8", "replace") if match else ""
    return (rest if sep else b""), ("" if sender in {"<>", ""} else sender)


def envelope_sender_from_headers(raw: bytes) -> str | None:
    """The envelope sender an MTA wrote into ``Return-Path`` (``""`` for ``<>``), or None."""
    headers = BytesHeaderParser(policy=default_policy).parsebytes(raw)
    value = headers.get("Return-Path")
    if value is None:
        return None
    text = str(value).strip()
    if text in {"<>", ""}:
        return ""
    found = [addr for _, addr in getaddresses([text]) if addr]
    return found[0] if found else ""


def first_from_address(raw: bytes) -> str:
    """The first address of the From header, or ``""``."""
    headers = BytesHeaderParser(policy=default_policy).parsebytes(raw)
    try:
        values = [str(v) for v in headers.get_all("From", [])]
    except Exception:
        return ""
    found = [addr for _, addr in getaddresses(values) if addr]
    return found[0] if found else ""
