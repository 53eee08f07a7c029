"""The worker: takes stored mail from the inbox and processes each in ONE transaction.

For each mail the worker, in one write transaction, claims the oldest new inbox row,
parses it, applies the loop guards (DESIGN §2.4) and the daily reply cap, and calls the
service layer's ``handle(session, mail, message, now)``, which writes the game change
and every reply (outbox rows) into that same session; the worker then marks the row
``done`` and commits. Game state, replies and the inbox status therefore commit
together or not at all: a crash anywhere loses no accepted mail (the row stays ``new``)
and never applies a move twice (the row is ``done`` exactly when the move is stored).

A failing mail fails once. Each mail is processed in a savepoint of its own: when
reading or processing it raises, what it did is rolled back to that savepoint and, in
the same transaction, the mail is ``parked`` for the admin with the error (never
silently dropped), counted against its sender's daily share like any mail, and the
sender told so in one short answer where that is safe (``_answer_parked``); whatever
else the transaction holds (mails stored for the listener, other mails of a group)
commits with it. Trying such a mail again would only fail again: a bug, or a mail
built to break the server. Only a transient database failure (a lost connection, a
lock or statement timeout: ``is_transient``) rolls the whole transaction back; a small
transaction of its own then counts the attempt, and after ``max_attempts`` of them the
mail is parked the same way. The record of a failure never holds the failing value
(only the error's type and where it happened, see ``error_summary``), the log gets one
line with the mail id, and a mail whose failure cannot even be recorded is set aside
for this process's life: no single mail can stop the worker.

The mails the next transaction will take are parsed and read before it begins
(``_read_ahead``): the mails waiting in the inbox and those waiting to be stored by the
ride-along, a bounded number in a bounded time, kept by their deduplication key for
the transaction, which uses them when the row holds the very bytes that were read. A
mail whose reading raised is parked by the transaction without being read again in it.

``serve`` on SQLite takes the mails that wait in groups (``run_group``): several mails in one
transaction, each in a savepoint of its own, committed together with all their replies,
so that one synced commit serves them all; a mail that fails or needs an argon2 check
leaves the group and is taken first, alone, by the next one.

When a mail's passwords must be checked first, the checks that the next few waiting
mails will need are started too, in a small pool of threads (argon2 runs without the
GIL), within the password throttle's budget (``_look_ahead``): they run while the
worker processes the mails before them, so players who all send their first command
at once no longer wait for one check after another.

With a ``handoff`` (``serve``: the sender of the same process) the replies a mail
causes are written already leased to that sender and handed to it right after the
commit, so it sends them at once without a transaction of its own to find them. With
a ``ride_along`` another part's writes go into the worker's transactions (``serve``'s
worker process on SQLite: the mails its listener received, what its sender sent),
saving that part a write transaction of its own while the worker holds the one lock.
"""

from __future__ import annotations

import email
import email.parser
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
import threading
import time
from concurrent.futures import Future
from email.message import EmailMessage
from email.policy import EmailPolicy
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Callable, Protocol

from sqlalchemy.orm import Session

from .clock import Clock
from .config import Settings
from .db.models import ROBOT_TURNS, InboxMail
from .mail.stored_copy import dropped_copy
from .db.repository import HANDOFF, Handoff, OutgoingRow
from .mail.guards import answer_address_problem, reason_to_ignore
from .mail.validation import (
    decode_encoded_words,
    error_summary,
    has_unsafe_characters,
    message_ids,
    one_line,
)
from .service import rates

if TYPE_CHECKING:  # pragma: no cover
    from .db.session import Database

__all__ = ["Worker", "Handle", "Reader", "HandoffTarget", "RideAlong", "parse_mail",
           "parse_headers", "error_summary", "is_transient", "LEAN_POLICY", "group_most_for"]

log = logging.getLogger(__name__)

#: The service layer's processing function.
Handle = Callable[[Session, InboxMail, EmailMessage, datetime], None]
#: The service layer's reading of a parsed mail (kept with the message object), done
#: before the write transaction (see ``Worker._read_ahead``).
Reader = Callable[[InboxMail, EmailMessage, Settings], object]
#: The service layer's masking of a read mail (its passwords, its stored copy), done in
#: a read session before the write transaction, for the mail parsed from these bytes.
MaskAhead = Callable[[Session, InboxMail, EmailMessage, bytes, Settings], None]

MAX_ATTEMPTS = 3

#: ``serve``: the most mails one worker transaction takes when several wait, and for
#: how long it goes on taking more (see ``Worker.run_group``).
GROUP_MOST = 16
GROUP_SECONDS = 0.05


def group_most_for(database: Database) -> int:
    """How many mails one transaction of ``serve``'s worker takes: groups on SQLite,
    whose one writer at a time pays a synced commit each; one on PostgreSQL, where
    several processes lock games in any order, and a group holding some while waiting
    for others could deadlock with another's."""
    return GROUP_MOST if database.is_sqlite else 1


#: When a mail's passwords must be checked first, the checks the next ones waiting
#: will need are started too (at most this many mails; see ``Worker._look_ahead``).
LOOK_AHEAD = 16
#: The most answers checked ahead that are kept for mails not processed yet.
_AHEAD_KEPT = 256

#: The most mails kept read ahead for a transaction to come (the oldest go first), and
#: the most seconds one round of reading ahead takes: what is not read ahead is read in
#: the transaction, as before.
READ_AHEAD_KEPT = 64
READ_AHEAD_SECONDS = 0.05


#: Bytes that were not UTF-8, as the parser hands them over (surrogate escapes).
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]")


class _LeanPolicy(EmailPolicy):
    """The modern policy (EmailMessage, get_body, get_content), but a header is handed
    back as the plain text it says: unfolded, encoded words decoded, bytes that are not
    UTF-8 replaced. The modern policy's structured headers cost far more to build
    than a mail server that reads a few headers as text needs."""

    def header_fetch_parse(self, name: str, value: str) -> Any:
        text = "".join(value.splitlines())
        if not text.isascii() and _ESCAPED_BYTES.search(text):
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if "=?" in text:
            text = decode_encoded_words(text)
        if has_unsafe_characters(text):
            # A line feed or NUL hidden in an encoded word, or another control
            # character: the header becomes one clean line (mail.validation).
            return one_line(text, limit=None)
        return text.strip()


#: The policy the worker reads mail with (see ``_LeanPolicy``).
LEAN_POLICY = _LeanPolicy()


def parse_headers(raw: bytes) -> EmailMessage:
    """Only the stored bytes' headers (the body is left unread, as text): enough for the
    loop guards and the answer address, and linear in the size whatever the MIME
    structure, for answering a mail whose body could not be read."""
    message = email.parser.BytesParser(policy=LEAN_POLICY).parsebytes(raw, headersonly=True)
    assert isinstance(message, EmailMessage)
    return message


def is_transient(error: BaseException) -> bool:
    """Whether trying the mail again may succeed: the database failed (a lost connection,
    a lock, statement or pool timeout, a deadlock), not anything in the mail. Every
    other failure is the mail's, and parked at once (see the module text)."""
    from sqlalchemy.exc import DBAPIError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    for each in (error, error.__cause__):
        if isinstance(each, DBAPIError) and each.connection_invalidated:
            return True
        if isinstance(each, (OperationalError, PoolTimeout)):
            return True
    return False


def _read_mail(mail: InboxMail, message: EmailMessage, settings: Settings) -> object:
    """The mail room's reading (``service.precheck.read_mail``), cached with the message."""
    from .service.precheck import read_mail

    return read_mail(mail, message, settings)


def _mask_ahead(session: Session, mail: InboxMail, message: EmailMessage, raw: bytes,
                settings: Settings) -> None:
    """The mail room's passwords and stored copy (``service.mail_secrets.mask_ahead``)."""
    from .service.mail_secrets import mask_ahead

    mask_ahead(session, mail, message, raw, settings)


@dataclass
class _Read:
    """A mail parsed (and, once stored, read) before its write transaction."""

    #: What the reading depends on: the bytes and the envelope (a row is given this
    #: reading only when it holds the same).
    raw: bytes
    envelope: tuple[str, str]
    #: The parsed mail, or None when reading it raised.
    message: EmailMessage | None
    #: What reading it raised (``error_summary``), or None.
    failure: str | None
    #: The inbox row it was read for (None: read from the ride-along, not stored yet:
    #: read for a row of no id, which the reading of the row stored from these very
    #: bytes and envelope then is).
    inbox_id: int | None
    #: Whether the reader ran (on the stored row, or on the row to be stored).
    read: bool = False

    def holds(self, raw: bytes, envelope: tuple[str, str]) -> bool:
        """Whether this reading is of these bytes and envelope."""
        return self.raw == raw and self.envelope == envelope


class _ReadFailed(Exception):
    """The mail's reading ahead raised; its record (``summary``) parks the mail."""

    def __init__(self, summary: str) -> None:
        super().__init__("reading the mail ahead failed")
        self.summary = summary


def parse_mail(raw: bytes) -> EmailMessage:
    """The stored bytes as an EmailMessage (headers as plain text, get_body works), in
    time linear in their size and never raising: a mail nested too deep or with too
    many parts is read as far as a person's mail goes (``mail.mime.parse_bounded``)."""
    from .mail.mime import parse_bounded

    return parse_bounded(raw, LEAN_POLICY)


#: The note of a mail parked because it failed (the error is in ``last_error``).
_PARKED_NOTE = "failed; kept for the admin (`abalone-pbm mail replay ID` runs it again)"


class PasswordHook(Protocol):
    """The service layer's argon2 checks, run before the write transaction."""

    def wanted(self, session: Session, mail: InboxMail, message: EmailMessage,
               budget: dict[str, int] | None = None) -> list[tuple[str, str]]: ...

    def check_soon(self, pairs: list[tuple[str, str]]
                   ) -> dict[tuple[str, str], Future[bool]]: ...

    def known(self, answers: dict[tuple[str, str], bool]) -> AbstractContextManager[None]: ...


class _CheckFirst(Exception):
    """Leave the transaction (rolled back, nothing written), check these, come back."""

    def __init__(self, mail_id: int, pairs: list[tuple[str, str]]) -> None:
        super().__init__("passwords to check before the transaction")
        self.mail_id = mail_id
        self.pairs = pairs


class RideAlong(Protocol):
    """Writes another part of the server asks the worker to make in its next transaction
    (``serve``'s listener and sender: ``worker_process.ServeRequests``), so that they
    cost no write transaction of their own. ``write`` is called at the start of each of
    the worker's transactions, and before each further mail of a group, and returns
    what it wrote (None: nothing); after the transaction, ``committed`` or
    ``rolled_back`` is told which. ``waiting_mails`` shows the inbox rows (as
    ``mail.intake.inbox_values`` makes them) the next ``write`` will store, without
    taking them: the worker reads them before its transaction."""

    def write(self, session: Session) -> object | None: ...

    def waiting_mails(self) -> list[dict[str, Any]]: ...

    def committed(self, written: object) -> None: ...

    def rolled_back(self, written: object) -> None: ...


class HandoffTarget(Protocol):
    """The sender of this process, to which a worker hands the replies it commits."""

    def handoff_lease(self) -> tuple[str, datetime]: ...

    def hand_over(self, rows: list[OutgoingRow]) -> None: ...


class Worker:
    """Processes the inbox one mail per transaction (see the module text)."""

    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        handle: Handle,
        *,
        max_attempts: int = MAX_ATTEMPTS,
        after_commit: Callable[[], None] | None = None,
        handoff: HandoffTarget | None = None,
        passwords: PasswordHook | None = None,
        robot_turns: Callable[[set[int]], None] | None = None,
        group_most: int = 1,
        group_seconds: float = GROUP_SECONDS,
        look_ahead: int = LOOK_AHEAD,
        ride_along: RideAlong | None = None,
        reader: Reader = _read_mail,
        mask_ahead: MaskAhead | None = _mask_ahead,
    ) -> None:
        self.database = database
        self.settings = settings
        self.clock = clock
        self.handle = handle
        self.max_attempts = max_attempts
        #: Called after a mail was processed and committed (e.g. to wake the sender).
        self.after_commit = after_commit
        #: Where the replies go right after the commit (see the module text).
        self.handoff = handoff
        #: Finds and checks a mail's passwords before its write transaction.
        self.passwords = passwords
        #: Mails whose failure could not even be recorded: skipped until restart.
        self.set_aside: set[int] = set()
        #: Called after the commit with the boards whose turn may have passed to a
        #: computer player (``db.models.ROBOT_TURNS``), when there are any.
        self.robot_turns = robot_turns
        #: ``run_group`` (``run_forever``): the most mails, and the most seconds, of one
        #: transaction (see ``run_group``).
        self.group_most = group_most
        self.group_seconds = group_seconds
        #: The next group is one mail: the last one failed with a mail in it.
        self._alone_next = False
        #: The last group ended because no more mail was waiting (its last claim found
        #: none), so ``run_forever`` may sleep without a transaction to find that out.
        self.drained = False
        #: How many waiting mails have their checks started with those of a mail that
        #: needs some (0: none), and those checks, for mails not processed yet.
        self.look_ahead = look_ahead
        self._ahead: dict[tuple[str, str], Future[bool]] = {}
        # The throttle's budget spent on checks ahead, per user and per sender, kept
        # until every check ahead is used: a later look ahead, made before those
        # wrong passwords are counted, must not grant the same budget again.
        self._ahead_budget: dict[str, int] = {}
        #: Writes that ride on the worker's transactions (see ``RideAlong``).
        self.ride_along = ride_along
        #: A transaction rolled back with what rode along: the next one writes that
        #: alone first, so a mail it stored exists when its failure is counted.
        self._ride_first = False
        #: How a mail is read before its transaction, and the mails read ahead, by
        #: deduplication key (see ``_read_ahead``).
        self.reader = reader
        self._reads: OrderedDict[str, _Read] = OrderedDict()
        #: How a mail read ahead is masked ahead too (None: in the transaction).
        self.mask_ahead = mask_ahead

    def run_once(self) -> bool:
        """Process the next new inbox mail; False when there was none.

        When the mail names passwords, the transaction is left (nothing written) as
        soon as that is known, argon2 runs outside it, and the mail is taken again;
        the answers are used if the stored hashes are still the same.
        """
        return self.run_group(1) > 0

    def run_group(self, most: int | None = None) -> int:
        """Process up to ``most`` (default ``group_most``) waiting mails in one
        transaction; returns how many (0: none was waiting).

        The first mail is taken as ``run_once`` takes it.  Each further one is
        processed in a savepoint of its own while mail is waiting and the group is
        younger than ``group_seconds``; one that needs an argon2 check or fails is
        left as it was (rolled back to its savepoint) for the next group, which starts
        with it.  All of them commit together, their replies with them, so a mail is
        still done exactly when its move and answers are stored; what a group saves is
        the synced commit (milliseconds of disk) of every mail but one.
        """
        most = self.group_most if most is None else most
        if self._alone_next:
            most, self._alone_next = 1, False
        if self._ride_first:
            self._ride_first = False
            self._ride_alone()
        self._read_ahead(most)
        answers: dict[tuple[str, str], bool] = {}
        for tries_left in (2, 1, 0):
            try:
                return self._run_group(answers, may_leave=tries_left > 0, most=most)
            except _CheckFirst as wanted:
                assert self.passwords is not None
                # This mail's checks first (or those already under way), then the next
                # mails' (not waited for: they run while the worker goes on).
                soon = {pair: self._ahead.pop(pair) for pair in wanted.pairs
                        if pair in self._ahead}
                missing = [pair for pair in wanted.pairs if pair not in soon]
                if missing:
                    soon.update(self.passwords.check_soon(missing))
                self._check_ahead(wanted.mail_id, soon)
                if not all(future.done() for future in soon.values()):
                    # What rides along (mails waiting to be stored) does not wait for
                    # the checks: it is written now, in a transaction of its own.
                    self._ride_alone()
                for pair, future in soon.items():
                    answers[pair] = future.result()
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_ahead(self, first_id: int, soon: dict[tuple[str, str], Future[bool]]) -> None:
        """Start the checks the next waiting mails will need (``_look_ahead``), unless
        enough are under way already."""
        assert self.passwords is not None
        if sum(not future.done() for future in self._ahead.values()) >= self.look_ahead:
            return
        if not self._ahead:
            self._ahead_budget.clear()
        ahead = [pair for pair in self._look_ahead(first_id)
                 if pair not in self._ahead and pair not in soon]
        if ahead:
            self._ahead.update(self.passwords.check_soon(ahead))
        while len(self._ahead) > _AHEAD_KEPT:
            # The oldest go first: a mail another worker took never comes here.
            self._ahead.pop(next(iter(self._ahead))).cancel()

    def _answered_ahead(self, pair: tuple[str, str]) -> bool | None:
        """The answer checked ahead for ``pair`` when it is ready (None: not known)."""
        future = self._ahead.get(pair)
        if future is None or not future.done():
            return None
        del self._ahead[pair]
        if future.cancelled() or future.exception() is not None:
            return None
        return future.result()

    def _look_ahead(self, first_id: int) -> list[tuple[str, str]]:
        """The argon2 checks that the next waiting mails (after the one that needs
        some, ``first_id``) will need, to be started now (``PasswordHook.check_soon``):
        the first checks of players who all start at once then overlap with each other
        and with the processing of the mails before them.

        Mails that will be dropped are passed over, and the throttle's budget is
        shared by all of them: their wrong passwords are not counted yet, so a flood
        of guesses gets no more checks ahead than one mail would. Best effort: any
        error only means no checks ahead."""
        from .db.repository import next_waiting_inbox

        if self.look_ahead <= 0 or self.passwords is None:
            return []
        pairs: list[tuple[str, str]] = []
        budget = self._ahead_budget
        now = self.clock.now()
        try:
            with self.database.read() as session:
                first = session.get(InboxMail, first_id)
                # The first mail's own checks are taken from the budget first.
                mails = [first] if first is not None else []
                mails += next_waiting_inbox(session, self.look_ahead,
                                            exclude=self.set_aside | {first_id})
                for mail in mails:
                    message = self._read_stored(mail, session).message
                    if message is None:
                        continue  # its reading failed: parked when it is taken
                    if self._reason_to_drop(session, mail, message, now,
                                            count_it=False)[0] is not None:
                        continue
                    wanted = self.passwords.wanted(session, mail, message, budget=budget)
                    if mail.id != first_id:
                        pairs += wanted
        except Exception as error:
            log.info("no password checks ahead: %s",
                     error_summary(error, limit=300).strip().splitlines()[-1])
            return []
        return pairs


    def _read_ahead(self, most: int) -> None:
        """Parse and read, before the write transaction, the mails it will take: those
        the ride-along will store (parsed only: the reading is kept with a row's id)
        and the next ``most`` waiting in the inbox, within ``READ_AHEAD_SECONDS``.
        Best effort: a database error only means reading in the transaction."""
        from .db.repository import next_waiting_inbox

        deadline = time.monotonic() + READ_AHEAD_SECONDS
        if self.ride_along is not None:
            for row in self.ride_along.waiting_mails()[:most]:
                if time.monotonic() > deadline:
                    return
                self._read_row(row["dedup_key"], bytes(row["raw"]), row["envelope_from"],
                               row["envelope_to"], None)
        try:
            with self.database.read() as session:
                known = [read.inbox_id for read in self._reads.values()
                         if read.inbox_id is not None]
                waiting = next_waiting_inbox(session, most, exclude=self.set_aside,
                                             known=known)
        except Exception as error:
            log.info("no reading ahead: %s",
                     error_summary(error, limit=300).strip().splitlines()[-1])
            return
        for mail in waiting:
            if time.monotonic() > deadline:
                return
            self._read_stored(mail)

    def _read_stored(self, mail: InboxMail, session: Session | None = None) -> _Read:
        """``_read_row`` for a stored row."""
        return self._read_row(mail.dedup_key, bytes(mail.raw), mail.envelope_from or "",
                              mail.envelope_to or "", mail, session)

    def _read_row(self, key: str, raw: bytes, envelope_from: str, envelope_to: str,
                  mail: InboxMail | None, session: Session | None = None) -> _Read:
        """The mail read ahead (see ``_read_ahead``): found, or parsed, read and masked
        (``_mask_row``) now and kept; ``mail``: its stored row (None: not stored yet);
        ``session``: a read session to mask it in (None: a short one of its own). What
        reading raises is kept as the mail's failure, never raised here."""
        envelope = (envelope_from, envelope_to)
        read = self._reads.get(key)
        if read is not None and not read.holds(raw, envelope):
            read = None  # another delivery with the same key: read what is stored
        if read is None:
            read = _Read(raw, envelope, None, None, None)
            try:
                read.message = parse_mail(raw)
            except Exception as error:
                read.failure = error_summary(error)
        if read.failure is None and (not read.read or (mail is not None
                                                      and read.inbox_id is None)):
            assert read.message is not None
            # A mail still to be stored is read for a row of its envelope and no id
            # (the reading depends on nothing else of the row); the stored row then
            # finds that reading kept with the message.
            row = mail if mail is not None else InboxMail(envelope_from=envelope_from,
                                                          envelope_to=envelope_to)
            if mail is not None:
                read.inbox_id = mail.id
            try:
                self.reader(row, read.message, self.settings)
                read.read = True
            except Exception as error:
                read.message, read.failure = None, error_summary(error)
            else:
                self._mask_row(row, read.message, raw, session)
        if read.failure is not None and key not in self._reads:
            log.warning("inbox %s: reading the mail failed: %s",
                        read.inbox_id if read.inbox_id is not None else "(to be stored)",
                        read.failure)
        self._reads[key] = read
        self._reads.move_to_end(key)
        while len(self._reads) > READ_AHEAD_KEPT:
            self._reads.popitem(last=False)
        return read

    def _mask_row(self, row: InboxMail, message: EmailMessage, raw: bytes,
                  session: Session | None) -> None:
        """Mask a mail just read (``mask_ahead``) unless it will be dropped unanswered
        (whose body is not kept: a flood of them buys no masking). Best effort: what
        fails here is done again, and fails again, in the transaction."""
        if self.mask_ahead is None:
            return
        try:
            with nullcontext(session) if session is not None else self.database.read() as reading:
                if self._reason_to_drop(reading, row, message, self.clock.now(),
                                        count_it=False)[0] is None:
                    self.mask_ahead(reading, row, message, raw, self.settings)
        except Exception as error:
            log.info("inbox %s: not masked ahead: %s",
                     row.id if row.id is not None else "(to be stored)",
                     error_summary(error, limit=300).strip().splitlines()[-1])

    def _take_read(self, mail: InboxMail) -> _Read | None:
        """What was read ahead of this stored mail, if it was read from its very bytes."""
        read = self._reads.pop(mail.dedup_key, None)
        if read is None or not read.holds(bytes(mail.raw), (mail.envelope_from or "",
                                                            mail.envelope_to or "")):
            return None
        return read

    def _run_group(
        self, answers: dict[tuple[str, str], bool], may_leave: bool, most: int
    ) -> int:
        from .db.repository import claim_next_inbox

        first_id: int | None = None
        handoff: Handoff | None = None
        robot_boards: set[int] = set()
        outcomes: list[tuple[int, str]] = []
        grouped = False  # whether a second mail was taken into the transaction
        self.drained = False
        riding: list[object] = []  # what rode along, for ride_along to be told the end
        try:
            with self.database.write() as session:
                self._ride(session, riding)
                if self.handoff is not None:
                    owner, until = self.handoff.handoff_lease()
                    handoff = Handoff(owner, until, [])
                    session.info[HANDOFF] = handoff
                mail = claim_next_inbox(session, exclude=self.set_aside)
                if mail is not None:
                    first_id = mail.id
                    started = time.monotonic()
                    outcomes.append((mail.id, self._attempt(session, mail, answers, may_leave,
                                                            handoff)))
                    grouped = self._take_followers(session, handoff, outcomes, most, started,
                                                   riding)
                    robot_boards = session.info.get(ROBOT_TURNS, robot_boards)
        except _CheckFirst:
            self._rode(riding, committed=False)
            raise
        except Exception as error:
            self._rode(riding, committed=False)
            # What rode along is written alone first next time: a mail it stored is
            # then stored for good before it is tried again, and its failures counted.
            self._ride_first = bool(riding)
            if first_id is None:
                raise  # could not even claim a mail: the database is away
            if grouped:
                # The group could not commit: its first mail is tried again alone (and
                # so is any other), so that a failure counts against the mail causing it.
                log.warning("inbox %s: a group of mails failed to commit, tried again "
                            "one by one: %s", first_id,
                            error_summary(error).strip().splitlines()[-1])
                return self.run_group(1)
            self._failed(first_id, error)
            return 1
        self._rode(riding, committed=True)
        if first_id is None:
            return 0  # no mail was waiting
        for mail_id, outcome in outcomes:
            log.info("inbox %s: %s", mail_id, outcome)
        if handoff is not None and handoff.rows and self.handoff is not None:
            self.handoff.hand_over(handoff.rows)
        if robot_boards and self.robot_turns is not None:
            self.robot_turns(robot_boards)
        if self.after_commit is not None:
            try:
                self.after_commit()
            except Exception as error:
                log.error("after_commit hook failed: %s", error_summary(error, limit=500))
        return len(outcomes)

    def _take_followers(self, session: Session, handoff: Handoff | None,
                        outcomes: list[tuple[int, str]], most: int, started: float,
                        riding: list[object]) -> bool:
        """More waiting mails into the group's transaction, each in a savepoint of its
        own (see ``run_group``); their outcomes are added to ``outcomes``. What rides
        along is taken before each (mails stored meanwhile join the group). Returns
        whether a second mail was tried."""
        from .db.repository import claim_next_inbox

        grouped = False
        while len(outcomes) < most and time.monotonic() - started < self.group_seconds:
            grouped = True
            self._ride(session, riding)
            # Rows a rolled-back mail wrote must not reach the sender.
            handed = len(handoff.rows) if handoff is not None else 0
            follower: InboxMail | None = None
            savepoint = session.begin_nested()
            try:
                follower = claim_next_inbox(session, exclude=self.set_aside)
                if follower is None:
                    savepoint.rollback()
                    self.drained = True
                    break
                outcome = self._attempt(session, follower, {}, True, handoff)
                savepoint.commit()
            except _CheckFirst:
                savepoint.rollback()  # its passwords are checked when it is first
                if handoff is not None:
                    del handoff.rows[handed:]
                break
            except Exception as error:
                # The database failed (``_attempt`` parks what the mail itself causes).
                log.info("inbox %s: left for the next group, alone: %s",
                         follower.id if follower is not None else "?",
                         error_summary(error, limit=300).strip().splitlines()[-1])
                savepoint.rollback()  # tried again, alone, as the next group's first
                if handoff is not None:
                    del handoff.rows[handed:]
                self._alone_next = True
                break
            assert follower is not None
            outcomes.append((follower.id, outcome))
        return grouped

    def _ride_alone(self) -> None:
        """A transaction of what rides along only (nothing if nothing waits)."""
        if self.ride_along is None:
            return
        riding: list[object] = []
        try:
            with self.database.write() as session:
                self._ride(session, riding)
        except Exception as error:
            self._rode(riding, committed=False)
            log.error("worker: could not write what rode along: %s",
                      error_summary(error, limit=300))
            return
        self._rode(riding, committed=True)

    def _ride(self, session: Session, riding: list[object]) -> None:
        """Let ``ride_along`` write what waits, in this transaction."""
        if self.ride_along is not None:
            written = self.ride_along.write(session)
            if written is not None:
                riding.append(written)

    def _rode(self, riding: list[object], *, committed: bool) -> None:
        """Tell ``ride_along`` how the transaction it wrote in ended."""
        if self.ride_along is None:
            return
        for written in riding:
            try:
                if committed:
                    self.ride_along.committed(written)
                else:
                    self.ride_along.rolled_back(written)
            except Exception as error:
                log.error("worker: could not report the writes that rode along: %s",
                          error_summary(error, limit=300))

    def _attempt(
        self, session: Session, mail: InboxMail, answers: dict[tuple[str, str], bool],
        may_leave: bool, handoff: Handoff | None,
    ) -> str:
        """``_process`` in a savepoint of its own; its outcome for the log. When it
        raises, what it wrote is rolled back to the savepoint and the mail is parked
        right here, in this transaction (see the module text); only a transient
        database failure (and ``_CheckFirst``) is raised, for the whole transaction."""
        handed = len(handoff.rows) if handoff is not None else 0
        savepoint = session.begin_nested()
        try:
            outcome = self._process(session, mail, answers, may_leave)
            savepoint.commit()
            return outcome
        except Exception as error:
            if savepoint.is_active:
                savepoint.rollback()
            if handoff is not None:
                del handoff.rows[handed:]  # rows a rolled-back mail wrote never go out
            if isinstance(error, _CheckFirst) or is_transient(error):
                raise
            # Values the mail's processing set on the row (without the unit of work)
            # are read again as the rollback left them.
            session.expire(mail)
            return self._park(session, mail, error)

    def _park(self, session: Session, mail: InboxMail, error: Exception) -> str:
        """Park a mail whose reading or processing raised (rolled back already), in
        this transaction: recorded, counted against its sender, answered where safe."""
        from .db.repository import mark_inbox

        summary = error.summary if isinstance(error, _ReadFailed) else error_summary(error)
        now = self.clock.now()
        mark_inbox(session, mail, "parked", note=_PARKED_NOTE, error=summary, now=now)
        answered = self._answer_parked(session, mail, now)
        log.error("inbox %s: parked, it failed: %s (%s)", mail.id, summary, answered)
        return f"parked ({answered})"

    def _process(
        self, session: Session, mail: InboxMail, answers: dict[tuple[str, str], bool],
        may_leave: bool,
    ) -> str:
        """Process one claimed mail in ``session``; its outcome for the log."""
        from .db.repository import mark_inbox
        from .service.bounces import take_report

        now = self.clock.now()
        read = self._take_read(mail)
        if read is not None and read.failure is not None:
            raise _ReadFailed(read.failure)  # not read again in the transaction
        if read is not None and read.message is not None:
            message = read.message
        else:
            message = parse_mail(bytes(mail.raw))
        # A delivery report, or anything sent to a bounce address, is read and counted
        # (DESIGN §2.8), never answered.
        bounce = take_report(session, self.settings, mail, message, now)
        if bounce is not None:
            mark_inbox(session, mail, "dropped", note=bounce, now=now)
            return f"dropped: {bounce}"
        reason, answer_to = self._reason_to_drop(session, mail, message, now)
        if reason is not None:
            # Never replayed: its headers are kept, the Subject masked, not its body.
            mail.raw = dropped_copy(bytes(mail.raw))
            mark_inbox(session, mail, "dropped", note=reason, now=now)
            return f"dropped: {reason}"
        envelope = mail.envelope_from or ""
        if self.passwords is not None and may_leave:
            pairs = []
            for pair in self.passwords.wanted(session, mail, message):
                if pair in answers:
                    continue
                right = self._answered_ahead(pair)  # checked while earlier mails ran
                if right is not None:
                    answers = {**answers, pair: right}
                    continue
                pairs.append(pair)
            if pairs:
                if read is not None:
                    # Taken again after the checks: with this reading and masking.
                    self._reads[mail.dedup_key] = read
                raise _CheckFirst(mail.id, pairs)
        known = self.passwords.known(answers) if self.passwords else nullcontext()
        with known:
            self.handle(session, mail, message, now)
        rates.record_answers(session, mail.id, answer_to, envelope, now)
        mark_inbox(session, mail, "done", now=now)
        return "done"

    def _reason_to_drop(self, session: Session, mail: InboxMail, message: EmailMessage,
                        now: datetime, *, count_it: bool = True) -> tuple[str | None, str]:
        """(why the mail is dropped unanswered or None, the address answers go to); the
        mail is counted against its sender's daily share unless ``count_it`` is False."""
        reason = reason_to_ignore(message, mail.envelope_from or "", self.settings.address)
        if reason is not None:
            return reason, ""
        # The daily caps of the answer address and of the sender (§2.6).
        envelope = mail.envelope_from or ""
        answer_to = rates.answer_target(session, message, envelope)
        if not answer_to:
            problem = answer_address_problem(message, envelope)
            return f"no address to answer ({problem})", ""
        reason = rates.reason_to_drop(session, self.settings, answer_to, envelope, now,
                                      count_it=count_it)
        return reason, answer_to

    def _failed(self, mail_id: int, error: BaseException) -> None:
        """A transaction that rolled back as a whole (the database failed, or the mail's
        failure could not be recorded in it): count the attempt in a transaction of its
        own; park the mail after the last, or at once when retrying cannot help.

        Never raises because of the mail: when even recording fails, the mail is set
        aside (skipped by this worker until it restarts) and the failure logged.
        """
        summary = error_summary(error)
        try:
            parked, attempts = self._record_failure(mail_id, summary, is_transient(error))
        except Exception as record_error:
            self.set_aside.add(mail_id)
            log.error("inbox %s: failed (%s), and the failure could not be recorded (%s); "
                      "set aside until restart", mail_id, summary,
                      error_summary(record_error, limit=300))
            return
        if parked:
            log.error("inbox %s: parked after %d failed attempts: %s", mail_id, attempts,
                      summary)
        elif attempts:
            log.warning("inbox %s: attempt %d failed, will retry: %s", mail_id, attempts,
                        summary)
        else:
            # Stored by what rode along in the transaction that rolled back: stored
            # alone first next time (``_ride_first``), then tried again.
            log.warning("inbox %s: failed in the transaction that stored it: %s", mail_id,
                        summary)

    def _record_failure(self, mail_id: int, summary: str, transient: bool
                        ) -> tuple[bool, int]:
        """(parked, attempts so far); a parked mail is answered (``_answer_parked``)."""
        from .db.repository import mark_inbox

        with self.database.write() as session:
            mail = session.get(InboxMail, mail_id)
            if mail is None or mail.status != "new":
                return False, 0
            # mark_inbox counts the attempt; a transient failure leaves the mail new
            # until the last attempt.
            parked = not transient or (mail.attempts or 0) + 1 >= self.max_attempts
            now = self.clock.now()
            mark_inbox(session, mail, "parked" if parked else "new",
                       note=_PARKED_NOTE if parked else None, error=summary, now=now)
            attempts = mail.attempts
            if parked:
                self._answer_parked(session, mail, now)
        return parked, attempts

    def _answer_parked(self, session: Session, mail: InboxMail, now: datetime) -> str:
        """Count a parked mail against its sender's daily share as any mail is, and
        answer it where that is safe: the sender learns it was kept, not lost. Only its
        headers are read (its body may be what failed). Returns what was done, for the
        log; never raises."""
        from .db.repository import enqueue_outbox
        from .mail.compose import compose

        envelope = mail.envelope_from or ""
        try:
            with session.begin_nested():
                message = parse_headers(bytes(mail.raw))
                reason, answer_to = self._reason_to_drop(session, mail, message, now)
                if reason is not None:
                    return f"not answered: {reason}"
                ids = message_ids(str(message.get("Message-ID") or ""))
                message_id = ids[0] if ids else ""
                body = (
                    "Your mail could not be processed because of an error in the server.\n"
                    "Nothing it asked for was done. It has been kept for the administrator\n"
                    f"(inbox mail {mail.id}), who can run it again once the error is fixed.\n"
                )
                answer = compose(
                    sender=self.settings.address, to=answer_to,
                    subject="Abalone: your mail could not be processed", body=body,
                    in_reply_to=message_id or None, loop_token=self.settings.address,
                    date=now,
                )
                enqueue_outbox(session, answer, now, inbox_id=mail.id)
                rates.record_answers(session, mail.id, answer_to, envelope, now)
                return "its sender was told"
        except Exception as error:
            log.error("inbox %s: could not tell the sender it was parked: %s", mail.id,
                      error_summary(error, limit=300))
        # Counted all the same, by its envelope: a mail whose headers cannot be read
        # costs its sender a mail too.
        sender = rates.normalise_address(envelope)
        if sender:
            rates.record(session, rates.MAIL, sender, now)
        return "not answered: its headers could not be read"

    def run_pending(self, limit: int | None = None) -> int:
        """Process mail until the inbox has none new (or ``limit``); returns how many."""
        count = 0
        while (limit is None or count < limit) and self.run_once():
            count += 1
        return count

    def run_forever(
        self,
        stop_event: threading.Event,
        wake: threading.Event | None = None,
        *,
        idle: float = 1.0,
        retry_after: float = 5.0,
    ) -> None:
        """Process mail until ``stop_event`` is set.

        When the inbox is empty it sleeps ``idle`` seconds or until ``wake`` is set (the
        listener sets it after storing a mail); if the database fails it waits
        ``retry_after`` seconds and tries again.
        """
        wake = wake or threading.Event()
        while not stop_event.is_set():
            # Cleared before claiming: a mail stored after this claim's look at the
            # inbox sets it again (the listener wakes the worker after its commit).
            wake.clear()
            try:
                busy = self.run_group() > 0
            except Exception as error:
                log.error("worker: could not claim mail: %s", error_summary(error, limit=500))
                stop_event.wait(retry_after)
                continue
            if busy and not (self.drained and not wake.is_set()):
                continue
            # The inbox was found empty, and nothing was stored since.
            wake.wait(idle)
