"""Delivering the outbox: to the site's relay over SMTP, or into a Maildir.

Mail reaches the sender two ways:

- handed over: in ``serve`` the worker writes a mail's outbox rows already leased to
  this sender (``repository.Handoff``) and, once its transaction has committed, puts
  them in the sender's queue (``hand_over``), which wakes the sender at once;
- leased from the database: rows that are due (new ones queued by the clock or the
  robots, retries whose backoff has passed, and rows whose lease names a sender that
  is no longer alive, ``db.leases``) are leased in one short write transaction.

Each batch is sent outside any transaction over relay connections that stay open
between batches (``relay_connections`` of them, side by side: a slow answer from the
relay for one mail does not hold up the others; every recipient keeps to one
connection, so its mail arrives in the order it was written), then recorded in one
small transaction: ``sent``; a temporary
failure is retried with exponential backoff (``mark_retry``); a permanent ``5xx``
marks that one mail ``failed``. A crash between sending and recording sends those
mails again (at least once, never lost).

One bad mail never harms another: an address with a control character is refused
before the SMTP transaction starts; after any failure the SMTP transaction is reset
(``RSET``), or the connection replaced when that fails, so the next mail starts
clean. A non-ASCII address is sent with ``SMTPUTF8`` when the relay offers it and
fails permanently, saying why, when it does not.

The mail's bytes go to the relay untouched (its Message-ID included); the envelope
sender is the server address and there is exactly one recipient. Each mail is
logged by its outbox id, Message-ID, recipient and kind (``mail_kind``: "board 101",
"address confirmation"...), never by its Subject or body: a Subject can carry a
one-time code (``confirm address <code>``) and a body a code or a reply token.
"""

from __future__ import annotations

import logging
import mailbox
import os
import queue
import re
import smtplib
import ssl
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable, Iterable

from ..clock import Clock
from ..config import RelayTarget, Settings
from ..db.leases import HEARTBEAT_INTERVAL, STALE_AFTER, ProcessIdentity
from ..db.models import OutboxMail
from ..db.repository import OutgoingRow
from sqlalchemy.orm import Session

from .dkim import DkimSigner, load_key

if TYPE_CHECKING:  # pragma: no cover
    from ..db.session import Database

__all__ = ["Sender", "Outcome", "LEASE", "mail_kind", "probe_relay", "RelayProblem"]

log = logging.getLogger(__name__)

#: How long a leased row is hidden from other live senders while it is being sent.
LEASE = timedelta(minutes=10)
#: Most mails leased or sent in one batch.
BATCH = 50
#: Seconds an idle relay connection is kept open before it is closed.
IDLE_CONNECTION = 30.0

_SUBJECT = re.compile(rb"^Subject:[ \t]*(.*(?:\r?\n[ \t].*)*)", re.IGNORECASE | re.MULTILINE)
#: Characters no address sent to a relay may hold (controls, blanks, angle brackets).
_BAD_ADDRESS = re.compile(r"[\x00-\x20\x7f<>]")
#: The kinds of the server's own Subjects, first match wins; "{board}" is the board
#: number. Nothing else of a Subject reaches the log.
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), kind) for pattern, kind in (
        (r"^New Abalone Board (?P<board>\d+)\b", "new board {board}"),
        (r"^Nag: Abalone Board (?P<board>\d+)\b", "reminder for board {board}"),
        (r"^Abalone Board (?P<board>\d+) Error\b", "error on board {board}"),
        (r"^Abalone Board (?P<board>\d+) preview\b", "preview of board {board}"),
        (r"^Abalone Board (?P<board>\d+)\b", "board {board}"),
        (r"^Abalone preview\b", "preview"),
        (r"^Abalone error\b", "error"),
        (r"^Abalone help\b", "help"),
        (r"^Abalone digest\b", "digest"),
        (r"^Abalone password reset\b", "password reset"),
        (r"^confirm address\b", "address confirmation"),
    )
)


def mail_kind(raw: bytes) -> str:
    """What kind of mail ``raw`` is, for the log: a fixed word or two and at most a
    board number, read from the server's own Subject ("answer" for any other)."""
    head = raw[:16384].split(b"\r\n\r\n", 1)[0]
    found = _SUBJECT.search(head)
    subject = "" if found is None else " ".join(
        found.group(1)[:400].decode("ascii", "replace").split())
    for pattern, kind in _KINDS:
        match = pattern.search(subject)
        if match is not None:
            return kind.format(**match.groupdict())
    return "answer"


@dataclass(frozen=True)
class Outcome:
    """How one delivery went: sent, or an error that is permanent or worth a retry."""

    error: str | None = None
    permanent: bool = False
    #: Not this mail's fault: the relay is away or refuses our TLS or login; the
    #: log says so in one line for all the mails that wait for it.
    relay_problem: bool = False
    #: The relay refused the recipient at RCPT for good: a bounce of the address
    #: (``service.bounces.record_refusal``).
    refused_at_rcpt: bool = False

    @property
    def sent(self) -> bool:
        return self.error is None


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split()) or error.__class__.__name__
    return f"{error.__class__.__name__}: {text}"[:500]


def _outcome_of(error: BaseException) -> Outcome:
    """Classify a relay error: 5xx to our mail is permanent, anything else is retried."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _message in error.recipients.values()]
        permanent = bool(codes) and all(500 <= code < 600 for code in codes)
        detail = "; ".join(f"{code} {message.decode('utf-8', 'replace')}"
                           for code, message in error.recipients.values())
        return Outcome(f"recipient refused: {detail}"[:500], permanent,
                       refused_at_rcpt=permanent)
    if isinstance(error, (smtplib.SMTPSenderRefused, smtplib.SMTPDataError,
                          smtplib.SMTPResponseException)):
        message = error.smtp_error
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        return Outcome(f"{error.smtp_code} {error.__class__.__name__}: {' '.join(text.split())}"
                       [:500], 500 <= error.smtp_code < 600)
    return Outcome(_describe(error), False)


def signer_of(settings: Settings) -> DkimSigner | None:
    """The DKIM signer the settings ask for (None: no key file set); DkimError (a
    ValueError) says what is wrong with the key."""
    if not settings.dkim_key_file:
        return None
    return DkimSigner(load_key(settings.dkim_key_file, settings.dkim_signing_domain,
                               settings.dkim_selector))


def address_problem(address: str) -> str | None:
    """Why ``address`` cannot be given to a relay at all, or None."""
    if not address or "@" not in address:
        return f"not a mail address: {address!r}"
    if len(address) > 320:
        return "address longer than 320 characters"
    if _BAD_ADDRESS.search(address):
        return f"address with a control character, blank or angle bracket: {address!r}"
    return None


class RelayProblem(smtplib.SMTPException):
    """The relay cannot be used as configured (TLS, certificate, login): one sentence
    for the log, the outbox's last error and ``status``, naming the setting to check."""


@dataclass(frozen=True)
class RelayAccess:
    """How to reach the relay: where, with what TLS and which login (from the settings)."""

    target: RelayTarget
    #: "required", "opportunistic" or "off" (``Settings.relay_starttls``).
    starttls: str
    local_hostname: str
    password: str = field(default="", repr=False)
    password_file: str = ""
    ca_file: str = ""

    @classmethod
    def of(cls, settings: Settings) -> RelayAccess:
        target = settings.relay_target
        assert target is not None
        return cls(target, settings.relay_starttls, settings.address_domain,
                   settings.relay_password, settings.relay_password_file,
                   settings.relay_ca_file)

    @property
    def name(self) -> str:
        """The relay as the log names it: ``host:port`` (the login is named apart)."""
        host = f"[{self.target.host}]" if ":" in self.target.host else self.target.host
        return f"{host}:{self.target.port}"

    def tls_context(self) -> ssl.SSLContext:
        """``required``: the certificate must verify for the relay's name (the system's
        CAs, or ABALONE_PBM_RELAY_CA_FILE's); ``opportunistic``: any certificate, as
        Postfix's "may" (encryption against listeners, not against an impostor)."""
        if self.starttls == "opportunistic":
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            return context
        try:
            return ssl.create_default_context(cafile=self.ca_file or None)
        except (OSError, ssl.SSLError) as error:
            raise RelayProblem(f"relay {self.name}: ABALONE_PBM_RELAY_CA_FILE "
                               f"{self.ca_file} unusable: {_describe(error)}") from None

    def read_password(self) -> str:
        """The password, read from its file at each login: a corrected file is used at
        the next try, without a restart."""
        if not self.password_file:
            return self.password
        try:
            with open(self.password_file, encoding="utf-8") as handle:
                return handle.read(4096).strip("\r\n")
        except (OSError, UnicodeError) as error:
            raise RelayProblem(f"relay {self.name}: ABALONE_PBM_RELAY_PASSWORD_FILE "
                               f"{self.password_file} cannot be read: "
                               f"{getattr(error, 'strerror', None) or error}") from None


def open_relay(access: RelayAccess, timeout: float,
               note: Callable[[str], None] = lambda text: None) -> tuple[smtplib.SMTP, str]:
    """A connection to the relay, greeted, encrypted and logged in as configured, and a
    few words on how ("STARTTLS, certificate verified, AUTH as bob"). Raises
    ``RelayProblem`` for what the admin must fix, OSError/SMTPException when the relay
    is away; ``note`` hears what is worth saying once (mail sent unencrypted)."""
    target = access.target
    client: smtplib.SMTP
    how: list[str] = []
    # Given the host, the constructor connects (and closes again on failure); it also
    # keeps the host as the name the certificate must match, for STARTTLS too.
    try:
        if target.implicit_tls:
            client = smtplib.SMTP_SSL(target.host, target.port, timeout=timeout,
                                      local_hostname=access.local_hostname,
                                      context=access.tls_context())
        else:
            client = smtplib.SMTP(target.host, target.port, timeout=timeout,
                                  local_hostname=access.local_hostname)
    except ssl.SSLError as error:
        raise _tls_problem(access, error) from None
    try:
        client.ehlo_or_helo_if_needed()
        encrypted = target.implicit_tls
        if target.implicit_tls:
            how.append("TLS" + (", certificate verified" if access.starttls == "required"
                                else ", certificate not checked"))
        elif access.starttls != "off":
            if client.has_extn("starttls"):
                try:
                    client.starttls(context=access.tls_context())
                except ssl.SSLError as error:
                    raise _tls_problem(access, error) from None
                client.ehlo()
                encrypted = True
                how.append("STARTTLS" + (", certificate verified"
                                         if access.starttls == "required"
                                         else ", certificate not checked"))
            elif access.starttls == "required":
                raise RelayProblem(f"relay {access.name} offers no STARTTLS, and "
                                   "ABALONE_PBM_RELAY_STARTTLS is required: mail waits")
            else:
                note(f"relay {access.name} offers no STARTTLS: mail goes to it unencrypted "
                     "(ABALONE_PBM_RELAY_STARTTLS=opportunistic)")
                how.append("unencrypted: no STARTTLS offered")
        else:
            how.append("unencrypted (ABALONE_PBM_RELAY_STARTTLS=off)")
        if target.user:
            _log_in(client, access, encrypted)
            how.append(f"AUTH as {target.user}")
    except BaseException:
        client.close()
        raise
    return client, ", ".join(how)


def probe_relay(settings: Settings, timeout: float = 10.0) -> tuple[str, str]:
    """Connect to the settings' relay as the sender does (TLS, login), send nothing,
    say goodbye, for ``status``: ("ok", how it is reached), ("refused", what the admin
    must fix: certificate, TLS, login) or ("away", why no connection)."""
    access = RelayAccess.of(settings)
    try:
        client, how = open_relay(access, timeout)
    except RelayProblem as problem:
        return "refused", str(problem)
    except (OSError, smtplib.SMTPException) as error:
        return "away", f"relay {access.name}: {_describe(error)}"
    try:
        client.quit()
    except (OSError, smtplib.SMTPException):
        client.close()
    return "ok", f"{access.target} answering ({how})"


def _tls_problem(access: RelayAccess, error: ssl.SSLError) -> RelayProblem:
    if isinstance(error, ssl.SSLCertVerificationError):
        reason = error.verify_message or error.reason or str(error)
        return RelayProblem(f"relay {access.name}: TLS certificate not accepted ({reason}): "
                            "fix the relay's certificate, or name its CA in "
                            "ABALONE_PBM_RELAY_CA_FILE")
    return RelayProblem(f"relay {access.name}: TLS handshake failed: {_describe(error)}")


def _log_in(client: smtplib.SMTP, access: RelayAccess, encrypted: bool) -> None:
    user = access.target.user
    if not encrypted and access.starttls != "off":
        raise RelayProblem(f"relay {access.name}: the password is not sent unencrypted "
                           "(the relay offers no STARTTLS; ABALONE_PBM_RELAY_STARTTLS=off "
                           "would allow it)")
    if not client.has_extn("auth"):
        raise RelayProblem(f"relay {access.name} offers no AUTH, but "
                           f"ABALONE_PBM_RELAY_USER is {user!r}")
    password = access.read_password()
    # One mechanism, PLAIN if offered, else LOGIN (smtplib's ``login`` would try the
    # next after a refusal, and a refused password is no better in another encoding).
    offered = (client.esmtp_features.get("auth") or "").upper().split()
    mechanism = "PLAIN" if "PLAIN" in offered else "LOGIN" if "LOGIN" in offered else None
    if mechanism is None:
        raise RelayProblem(f"relay {access.name} offers AUTH {' '.join(offered)[:80]}, "
                           "neither PLAIN nor LOGIN")
    client.user, client.password = user, password
    try:
        if mechanism == "PLAIN":
            client.auth("PLAIN", client.auth_plain)
        else:
            client.auth("LOGIN", client.auth_login, initial_response_ok=False)
    except smtplib.SMTPAuthenticationError as error:
        text = error.smtp_error.decode("utf-8", "replace") \
            if isinstance(error.smtp_error, bytes) else str(error.smtp_error)
        raise RelayProblem(f"relay {access.name} refused the login of {user!r}: "
                           f"{error.smtp_code} {' '.join(text.split())[:200]} (check "
                           "ABALONE_PBM_RELAY_USER and the password)") from None
    except smtplib.SMTPException as error:
        if isinstance(error, smtplib.SMTPServerDisconnected):
            raise
        raise RelayProblem(f"relay {access.name}: no login possible: "
                           f"{_describe(error)}") from None


class _Relay:
    """One SMTP connection to the relay, opened when first needed and kept open."""

    def __init__(self, access: RelayAccess, timeout: float,
                 note: Callable[[str], None] = lambda text: None) -> None:
        self.access = access
        self.host, self.port = access.target.host, access.target.port
        self.timeout = timeout
        self.note = note
        self.client: smtplib.SMTP | None = None
        self.last_used = 0.0

    def _connect(self) -> smtplib.SMTP:
        client, _how = open_relay(self.access, self.timeout, self.note)
        return client

    def close(self, polite: bool = True) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        try:
            if polite:
                client.quit()
        except Exception:
            pass
        finally:
            client.close()

    def close_if_idle(self) -> None:
        if self.client is not None and time.monotonic() - self.last_used > IDLE_CONNECTION:
            self.close()

    def _reset(self) -> None:
        """Start the next mail clean: RSET, or a new connection when that fails."""
        if self.client is None:
            return
        try:
            code, _ = self.client.rset()
            if code != 250:
                raise smtplib.SMTPException(f"RSET answered {code}")
        except Exception:
            self.close(polite=False)

    def send(self, item: OutgoingRow, fallback_sender: str, raw: bytes) -> Outcome:
        """Send ``raw``, the bytes of ``item`` as they go out (signed); raises
        OSError/SMTPException only when the relay is away or unusable."""
        sender = item.sender or fallback_sender
        for address in (sender, item.recipient):
            problem = address_problem(address)
            if problem:
                return Outcome(problem, True)
        fresh = self.client is None
        if self.client is None:
            self.client = self._connect()
        for attempt in (1, 2):
            client = self.client
            assert client is not None
            options: list[str] = []
            if not (sender.isascii() and item.recipient.isascii()):
                if not client.has_extn("smtputf8"):
                    return Outcome(f"the relay does not offer SMTPUTF8, needed for the "
                                   f"address {item.recipient!r}", True)
                options.append("SMTPUTF8")
            try:
                client.sendmail(sender, [item.recipient], raw, mail_options=options)
                self.last_used = time.monotonic()
                return Outcome()
            except smtplib.SMTPServerDisconnected as error:
                self.close(polite=False)
                if attempt == 1 and not fresh:
                    # A kept connection the relay closed while idle: once more, anew.
                    self.client = self._connect()
                    fresh = True
                    continue
                return Outcome(_describe(error), False)
            except (OSError, smtplib.SMTPException, UnicodeError, ValueError) as error:
                outcome = _outcome_of(error)
                self._reset()
                self.last_used = time.monotonic()
                return outcome
        raise AssertionError("unreachable")  # pragma: no cover


class _Recorder:
    """Records the outcomes of sent batches in a thread of its own, several batches in
    one transaction when they wait; a batch whose transaction fails is tried again
    (its rows stay leased to the sender meanwhile), so no outcome is dropped."""

    #: Seconds between two tries when the database is away.
    RETRY_AFTER = 1.0

    def __init__(self, record: Callable[[list[tuple[OutgoingRow, Outcome]]], None]) -> None:
        self._record = record
        #: Outcomes to record; an Event is set once all before it are recorded; None ends.
        self._queue: queue.SimpleQueue[
            list[tuple[OutgoingRow, Outcome]] | threading.Event | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="abalone-pbm-sender-record",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, done: list[tuple[OutgoingRow, Outcome]]) -> None:
        self._queue.put(done)

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until everything queued so far is recorded (False: not in time)."""
        if not self._thread.is_alive():
            return True
        recorded = threading.Event()
        self._queue.put(recorded)
        return recorded.wait(timeout)

    def finish(self, timeout: float = 60.0) -> None:
        """Record what is queued, then end the thread."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)

    def _run(self) -> None:
        waiting: list[tuple[OutgoingRow, Outcome]] = []
        flushed: list[threading.Event] = []
        stopping = False
        while True:
            if not waiting and not flushed:
                if stopping:
                    return
                stopping = self._take(self._queue.get(), waiting, flushed)
            while not stopping:  # and everything else that waits, in one transaction
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                stopping = self._take(item, waiting, flushed)
            try:
                if waiting:
                    self._record(waiting)
                    waiting = []
            except Exception:
                log.exception("sender: could not record %d outcomes; trying again",
                              len(waiting))
                if stopping:
                    # The rows stay leased to this sender, which is stopping: the next
                    # sender sends them again (at least once, never lost).
                    return
                time.sleep(self.RETRY_AFTER)
                continue
            for event in flushed:
                event.set()
            flushed = []

    @staticmethod
    def _take(item: list[tuple[OutgoingRow, Outcome]] | threading.Event | None,
              waiting: list[tuple[OutgoingRow, Outcome]],
              flushed: list[threading.Event]) -> bool:
        """Sort one queued item; True when it says stop."""
        if item is None:
            return True
        if isinstance(item, threading.Event):
            flushed.append(item)
        else:
            waiting.extend(item)
        return False


#: ``(session, settings, recipient, the relay's answer, now)``: a recipient the relay
#: refused for good at RCPT (see ``Sender.refused``).
RefusalRecorder = Callable[[Session, Settings, str, str, datetime], object]


class Sender:
    """Drains the outbox to ``settings.relay`` (``smtp://host:port``) or the Maildir."""

    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        *,
        timeout: float = 60.0,
        identity: ProcessIdentity | None = None,
        refused: RefusalRecorder | None = None,
    ) -> None:
        self.database = database
        self.settings = settings
        self.clock = clock
        self.timeout = timeout
        #: Counts a relay's permanent refusal of a recipient at RCPT against the
        #: address, in the transaction that records the outcome (``serve`` and ``send``
        #: give the service's ``bounces.record_refusal``; None: not counted).
        self.refused = refused
        self.identity = identity or ProcessIdentity()
        #: Rows handed over by the worker after its commit, already leased to us.
        self._handed: queue.SimpleQueue[list[OutgoingRow]] = queue.SimpleQueue()
        self._wake = threading.Event()
        #: Whether the database may hold due mail (see ``poke``).
        self._look = True
        #: One kept connection per lane, and threads to run the lanes side by side.
        self._relays: list[_Relay] = []
        self._lanes: ThreadPoolExecutor | None = None
        self._started_at: datetime | None = None
        self._last_beat = float("-inf")
        #: ``run_forever``'s recorder of outcomes (None: ``_deliver`` records them).
        self._recorder: _Recorder | None = None
        #: Waiting for ``release_orphans``: each set once it is done.
        self._orphan_requests: queue.SimpleQueue[threading.Event] = queue.SimpleQueue()
        #: Has another writer record mails as sent (``serve``'s worker process on
        #: SQLite: ``WorkerProcess.record_sent``); False: it could not, record here.
        self.record_sent_elsewhere: Callable[[list[int], datetime], bool] | None = None
        #: How the relay is reached (None: the Maildir).
        self.access = RelayAccess.of(settings) if settings.relay else None
        #: Signs every mail as it goes out (None: no DKIM key set); a key that cannot
        #: be used stops the start here, with a sentence naming the setting.
        self.signer = signer_of(settings)
        self._notes: set[str] = set()
        self._notes_lock = threading.Lock()

    # -- where mail goes ------------------------------------------------------------

    @property
    def destination(self) -> str:
        """A sentence for the start-up message: the relay or the Maildir path."""
        if self.access is not None:
            # The default (TLS when offered) goes unsaid; the URL names the login.
            tls = {"required": " (TLS required)", "opportunistic": "",
                   "off": " (no TLS)"}[self.access.starttls]
            where = f"relay {self.access.target}{tls}"
        else:
            where = f"Maildir {os.path.abspath(self.settings.maildir)}"
        if self.signer is not None:
            key = self.signer.key
            where += (f", DKIM-signed for {key.domain} with selector {key.selector} "
                      f"({key.description})")
        return where

    def _note_once(self, text: str) -> None:
        """Log ``text`` the first time it is said (each lane's connection may say it)."""
        with self._notes_lock:
            if text in self._notes:
                return
            self._notes.add(text)
        log.warning("sender: %s", text)

    def _outgoing_bytes(self, item: OutgoingRow) -> bytes:
        """The bytes that leave: the stored mail, signed when a DKIM key is set."""
        return item.raw if self.signer is None else self.signer.sign(item.raw)

    @property
    def owner(self) -> str:
        """The name this sender's leases carry."""
        return self.identity.owner

    # -- being alive ----------------------------------------------------------------

    def heartbeat(self) -> None:
        """Say that this sender is alive; clear away dead senders of this host."""
        from ..db.leases import beat, bury_dead_neighbours

        now = self.clock.now()
        if self._started_at is None:
            self._started_at = now
        with self.database.write() as session:
            beat(session, self.identity, now, self._started_at)
            bury_dead_neighbours(session, self.identity, now)
        self._last_beat = time.monotonic()

    def _beat_if_due(self) -> None:
        if time.monotonic() - self._last_beat >= HEARTBEAT_INTERVAL:
            self.heartbeat()

    def retire(self) -> None:
        """This sender stops: close the relay connection and drop the heartbeat row."""
        from ..db.leases import forget

        self._close_relays()
        if self._lanes is not None:
            self._lanes.shutdown(wait=False)
            self._lanes = None
        try:
            with self.database.write() as session:
                forget(session, self.identity)
        except Exception:
            log.exception("sender: could not remove its heartbeat")

    # -- the outbox -----------------------------------------------------------------

    def hand_over(self, rows: list[OutgoingRow]) -> None:
        """Mail the worker committed, leased to us (``repository.Handoff``): send it next."""
        if rows:
            self._handed.put(rows)
            self._wake.set()

    def release_orphans(self) -> threading.Event:
        """The worker process that wrote rows leased to this sender died: the rows of
        its last commit may never have been handed over, and would wait for their lease
        to run out. ``run_forever`` first sends and records everything it was handed,
        so that its remaining leases are exactly those, then makes them due. The Event
        is set when that is done."""
        done = threading.Event()
        self._orphan_requests.put(done)
        self._wake.set()
        return done

    def _release_orphans_now(self) -> None:
        from ..db.repository import release_leases

        if self._recorder is not None:
            self._recorder.flush()
        with self.database.write() as session:
            count = release_leases(session, self.owner, self.clock.now())
        if count:
            log.warning("sender: %d mails of a worker that died are sent now", count)
        self._look = True
        while True:
            try:
                self._orphan_requests.get_nowait().set()
            except queue.Empty:
                return

    def handoff_lease(self) -> tuple[str, datetime]:
        """The owner and lease end the worker writes into the rows it hands over."""
        return self.owner, self.clock.now() + LEASE

    def _take_handed(self, limit: int) -> list[OutgoingRow]:
        items: list[OutgoingRow] = []
        while len(items) < limit:
            try:
                items.extend(self._handed.get_nowait())
            except queue.Empty:
                break
        return items

    def _claim(self, limit: int) -> list[OutgoingRow]:
        """Lease up to ``limit`` due rows (see ``repository.lease_due_outbox``)."""
        from ..db.leases import bury_dead_neighbours
        from ..db.repository import lease_due_outbox

        self._beat_if_due()
        now = self.clock.now()
        with self.database.write() as session:
            # Cheap (a few rows), and frees a dead neighbour's leases for this very claim.
            bury_dead_neighbours(session, self.identity, now)
            return lease_due_outbox(session, now, self.owner, now + LEASE,
                                    now - STALE_AFTER, limit)

    def _record(self, done: list[tuple[OutgoingRow, Outcome]]) -> None:
        """Record a batch's outcomes in one transaction, then log them."""
        from ..db.repository import mark_failed, mark_retry, record_sent

        now = self.clock.now()
        gave_up: set[int] = set()
        sent = [item.id for item, outcome in done if outcome.sent]
        if sent and self.record_sent_elsewhere is not None \
                and self.record_sent_elsewhere(sent, now):
            sent = []
        failed = [(item, outcome) for item, outcome in done if not outcome.sent]
        if sent or failed:
            with self.database.write() as session:
                record_sent(session, sent, now)
                for item, outcome in failed:
                    row = session.get(OutboxMail, item.id)
                    if row is None or row.status != "pending":
                        continue
                    if outcome.permanent:
                        mark_failed(session, row, outcome.error or "refused", now)
                        if outcome.refused_at_rcpt and self.refused is not None:
                            self.refused(session, self.settings, item.recipient,
                                         outcome.error or "refused", now)
                    else:
                        mark_retry(session, row, outcome.error or "unknown error", now)
                    if row.status == "failed":
                        gave_up.add(item.id)
        waiting: dict[str, list[int]] = {}
        for item, outcome in done:
            if outcome.relay_problem and item.id not in gave_up:
                waiting.setdefault(outcome.error or "relay away", []).append(item.id)
                continue
            if outcome.sent:
                log.info("outbox %s: sent %s to %s (%s)", item.id, item.message_id,
                         item.recipient, mail_kind(item.raw))
            elif item.id in gave_up:
                log.error("outbox %s: %s to %s (%s) failed for good: %s", item.id,
                          item.message_id, item.recipient, mail_kind(item.raw), outcome.error)
            else:
                log.warning("outbox %s: %s to %s (%s) will be retried: %s", item.id,
                            item.message_id, item.recipient, mail_kind(item.raw),
                            outcome.error)
        for error, ids in waiting.items():
            # One line for every mail the relay's absence or refusal holds back.
            shown = ", ".join(str(number) for number in ids[:10])
            more = f" and {len(ids) - 10} more" if len(ids) > 10 else ""
            log.error("sender: %s; outbox %s%s wait and will be retried", error, shown, more)

    def _deliver(self, items: list[OutgoingRow]) -> int:
        """Send ``items`` and record how it went; returns how many were sent.

        While ``run_forever`` runs, the outcomes are recorded by its recorder thread
        and this returns as soon as the mails are sent: the next batch does not wait
        for the database's write lock (which the worker may hold for a group of
        mails) nor for the synced commit. Until recorded, the rows stay leased to
        this sender, so no other sender takes them.
        """
        if self.settings.relay_host_port:
            done = self._to_relay(items)
        else:
            done = self._to_maildir(items)
        recorder = self._recorder
        if recorder is not None:
            recorder.put(done)
        else:
            self._record(done)
        return sum(1 for _item, outcome in done if outcome.sent)

    def _send_batch(self, limit: int) -> tuple[int, int]:
        """Send what was handed over, else lease and send due rows; (taken, sent)."""
        items = self._take_handed(limit) or self._claim(limit)
        if not items:
            return 0, 0
        return len(items), self._deliver(items)

    def send_due(self, limit: int = BATCH) -> int:
        """Send the outbox rows that are due (at most ``limit``); returns how many were sent."""
        return self._send_batch(limit)[1]

    def drain(self, limit: int = BATCH) -> tuple[int, int]:
        """Send batches until nothing is due; returns (sent, not sent this time).

        Rows that failed are not due again until their backoff has passed, so this ends.
        """
        sent = failed = 0
        try:
            while True:
                claimed, batch_sent = self._send_batch(limit)
                if not claimed:
                    return sent, failed
                sent += batch_sent
                failed += claimed - batch_sent
        finally:
            self._close_relays()

    def poke(self) -> None:
        """Mail may be due in the database (queued by the clock or the robots): look."""
        self._look = True
        self._wake.set()

    def run_forever(
        self,
        stop: threading.Event,
        wake: threading.Event | None = None,
        *,
        idle: float = 2.0,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Send until ``stop`` is set (then call ``poke`` to end the wait at once).

        Handed-over mail is sent as soon as it arrives; the database is looked at after
        ``poke``, every ``idle`` seconds, and each time ``wake`` (if given) is set.
        """
        always_look = wake is not None
        if wake is not None:
            self._wake = wake
        self._look = True
        heart = threading.Thread(target=self._keep_beating, args=(stop,),
                                 name="abalone-pbm-sender-heartbeat", daemon=True)
        recorder = _Recorder(self._record)
        try:
            self.heartbeat()
            heart.start()
            recorder.start()
            self._recorder = recorder
            while not stop.is_set():
                try:
                    items = self._take_handed(BATCH)
                    if not items and not self._orphan_requests.empty():
                        self._release_orphans_now()
                    if not items and self._look:
                        self._look = False
                        items = self._claim(BATCH)
                        self._look = len(items) == BATCH
                    if items:
                        self._deliver(items)
                        continue
                except Exception as error:  # the database may be away for a moment
                    log.exception("sender: could not drain the outbox")
                    if on_error is not None:
                        on_error(error)
                    self._look = True
                    stop.wait(min(idle, 1.0))
                    continue
                for relay in self._relays:
                    relay.close_if_idle()
                woken = self._wake.wait(idle)
                self._wake.clear()
                if not woken or always_look:
                    self._look = True
            # Stopping: what was handed over still goes out (the worker stopped first,
            # see Server.stop); a batch the relay refuses is retried by the next start.
            while items := self._take_handed(BATCH):
                self._deliver(items)
        finally:
            self._recorder = None
            recorder.finish()
            self.retire()

    def _keep_beating(self, stop: threading.Event) -> None:
        while not stop.wait(HEARTBEAT_INTERVAL):
            try:
                self.heartbeat()
            except Exception:
                log.exception("sender: heartbeat failed")

    # -- delivery -------------------------------------------------------------------

    def _close_relays(self) -> None:
        for relay in self._relays:
            relay.close()

    def _to_relay(self, items: list[OutgoingRow]) -> list[tuple[OutgoingRow, Outcome]]:
        """Send ``items`` over the kept connections, each recipient's over one of them."""
        access = self.access
        assert access is not None
        count = self.settings.relay_connections
        while len(self._relays) < count:
            self._relays.append(_Relay(access, self.timeout, self._note_once))
        lanes: dict[int, list[OutgoingRow]] = {}
        for item in items:
            # A stable choice (not hash(), which varies between processes and runs).
            lane = zlib.crc32(item.recipient.lower().encode("utf-8", "replace")) % count
            lanes.setdefault(lane, []).append(item)
        if len(lanes) == 1:
            ((lane, lane_items),) = lanes.items()
            outcomes = dict(self._send_lane(self._relays[lane], lane_items))
        else:
            if self._lanes is None:
                self._lanes = ThreadPoolExecutor(count, "abalone-pbm-sender-relay")
            outcomes = {}
            for done in self._lanes.map(lambda pair: self._send_lane(self._relays[pair[0]],
                                                                     pair[1]),
                                        lanes.items()):
                outcomes.update(done)
        return [(item, outcomes[item.id]) for item in items]

    def _send_lane(self, relay: _Relay, items: list[OutgoingRow]) -> list[tuple[int, Outcome]]:
        """Send ``items`` one after the other over ``relay``; (row id, outcome) each."""
        done: list[tuple[int, Outcome]] = []
        for index, item in enumerate(items):
            try:
                outcome = relay.send(item, self.settings.address, self._outgoing_bytes(item))
            except (OSError, smtplib.SMTPException) as error:
                # The relay is away or refuses our TLS or login: everything left waits.
                relay.close(polite=False)
                reason = str(error) if isinstance(error, RelayProblem) \
                    else f"relay {relay.access.name}: {_describe(error)}"
                away = Outcome(reason[:500], False, relay_problem=True)
                done.extend((rest.id, away) for rest in items[index:])
                break
            done.append((item.id, outcome))
        return done

    def _maildir(self) -> mailbox.Maildir:
        path = os.path.abspath(self.settings.maildir)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        box = mailbox.Maildir(path, create=True)
        for sub in ("tmp", "new", "cur"):
            os.makedirs(os.path.join(path, sub), exist_ok=True)
        return box

    def _to_maildir(self, items: Iterable[OutgoingRow]) -> list[tuple[OutgoingRow, Outcome]]:
        done: list[tuple[OutgoingRow, Outcome]] = []
        try:
            box: mailbox.Maildir | None = self._maildir()
            failure = Outcome()
        except OSError as error:
            box = None
            failure = Outcome(f"Maildir {self.settings.maildir}: {_describe(error)}", False)
        for item in items:
            if box is None:
                outcome = failure
            else:
                try:
                    # On disk a Maildir message has Unix line ends.
                    box.add(self._outgoing_bytes(item).replace(b"\r\n", b"\n"))
                    outcome = Outcome()
                except OSError as error:
                    outcome = Outcome(_describe(error), False)
            done.append((item, outcome))
        return done
