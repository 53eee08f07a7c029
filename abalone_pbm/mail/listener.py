"""The SMTP/LMTP edge: validate recipients, store the mail durably, only then say 250.

The listener does no game work (compare GNU Mailman's LMTP runner): it checks the
recipients at RCPT time, hands the bytes to a blocking ``store`` function in a worker
thread so the event loop never blocks, and answers ``250`` only after ``store`` has
returned (the mail is committed). Any internal fault is answered ``451`` so that the
sending MTA keeps the mail and retries; a ``5xx`` would bounce a player's move.

Every client is a stranger, so a session costs at most bounded time and one of a
bounded number of file descriptors: the listener holds at most ``smtp_max_sessions``
sessions, ``smtp_max_sessions_per_client`` from one client (``mail.limits``), answers
the rest ``421`` (a real MTA retries later) and closes them; a session waits
``smtp_idle_timeout`` seconds for a command and ``smtp_data_timeout`` for a whole
DATA. Refused connections and failed accepts (out of file descriptors) are counted
and logged once per ``refused_log_interval``, not once each.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
from typing import Any, Callable

from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import MISSING, SMTP, Envelope, Session

from ..config import Settings
from ..verp import BOUNCE_WORD
from .guards import is_our_address
from .limits import (
    LISTEN_BACKLOG,
    ConnectionCaps,
    ConnectionCounter,
    RefusalLog,
    client_key,
    listener_caps,
    needed_open_files,
)
from .validation import MAX_ADDRESS_LENGTH, error_summary, has_unsafe_characters

__all__ = [
    "IntakeHandler",
    "IntakeController",
    "make_accepts",
    "start_listener",
    "stop_listener",
    "TEMPFAIL",
]

log = logging.getLogger(__name__)

Store = Callable[[bytes, str, list[str]], Any]
Accepts = Callable[[str], bool]

TEMPFAIL = "451 4.3.0 Temporary failure, please retry"
#: The answer to a connection over a cap: a 4xx, so that a real MTA tries again later.
TOO_MANY_CONNECTIONS = "421 4.7.0 Too many connections, try again later"
UNKNOWN_RECIPIENT = "550 5.1.1 Recipient address rejected: no such user here"
TOO_BIG = "552 5.3.4 Message size exceeds fixed maximum message size"
ACCEPTED = "250 2.0.0 OK"
BAD_SENDER = "553 5.1.7 Sender address rejected: {}"
#: Most recipients of one transaction (we have one address; many is a sign of abuse).
MAX_RECIPIENTS = 100


def sender_problem(address: str) -> str | None:
    """Why an envelope sender cannot be taken at all (None: it can).

    Only what the server could neither store nor ever answer is refused here, at MAIL
    time, so that the sending MTA tells its user at once; an address that is merely
    odd is accepted and the worker decides where (or whether) to answer.
    """
    bare = address.strip()
    if bare in {"", "<>"}:
        return None  # the null sender of bounces
    if has_unsafe_characters(bare) or "\ufffd" in bare:
        return "it contains control characters or bytes that are not UTF-8"
    if any(c.isspace() for c in bare):
        return "it contains blanks"
    if len(bare.strip("<>")) > MAX_ADDRESS_LENGTH:
        return f"it is longer than {MAX_ADDRESS_LENGTH} characters"
    return None


def make_accepts(settings: Settings) -> Accepts:
    """Our addresses: the server address and ``<local>+<anything>@<domain>`` (any case)."""

    def accepts(address: str) -> bool:
        return is_our_address(address, settings.address)

    return accepts


class IntakeHandler:
    """aiosmtpd handler that stores each accepted mail before answering it.

    ``store(raw, mail_from, rcpt_tos)`` is blocking (a database transaction) and runs in
    the event loop's thread pool; it must raise when the mail is not durably stored.
    ``accepts(address)`` says whether a recipient is ours (cheap; runs on the loop).
    ``notify()`` (optional) is called after each stored mail, e.g. to wake the worker.
    With ``lmtp=True`` the DATA answer is one line per accepted recipient (RFC 2033).
    """

    def __init__(
        self,
        store: Store,
        accepts: Accepts,
        max_bytes: int,
        *,
        lmtp: bool = False,
        notify: Callable[[], None] | None = None,
        bounce_is_known: Accepts | None = None,
    ) -> None:
        self.store = store
        self.accepts = accepts
        #: Whether a bounce address (``verp``) is one of a mail we sent: a database
        #: read, run in the thread pool; None: bounce addresses are taken as ``accepts``
        #: says.
        self.bounce_is_known = bounce_is_known
        self.max_bytes = max_bytes
        self.lmtp = lmtp
        self.notify = notify

    async def handle_MAIL(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        mail_options: list[str],
    ) -> str:
        problem = sender_problem(address)
        if problem is not None:
            log.info("refused sender (%d characters): %s", len(address), problem)
            return BAD_SENDER.format(problem)
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 2.1.0 OK"

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        try:
            ours = self.accepts(address)
        except Exception as error:
            log.error("recipient check failed for %r: %s", address, error_summary(error))
            return TEMPFAIL
        if not ours:
            log.info("refused recipient %r from %r", address, envelope.mail_from)
            return UNKNOWN_RECIPIENT
        # The string test here; only a bounce address costs a database read (in a
        # thread: never on the event loop), not every reply address.
        if self.bounce_is_known is not None and _names_bounce(address):
            try:
                loop = asyncio.get_running_loop()
                if not await loop.run_in_executor(None, self.bounce_is_known, address):
                    log.info("refused unknown bounce address %r from %r", address,
                             envelope.mail_from)
                    return UNKNOWN_RECIPIENT
            except Exception as error:
                log.error("bounce address check failed for %r: %s", address,
                          error_summary(error))
                return TEMPFAIL
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 2.1.5 OK"

    def _answer(self, envelope: Envelope, status: str) -> str:
        if self.lmtp:
            # RFC 2033: one reply per recipient that was accepted at RCPT time.
            return "\r\n".join(status for _ in envelope.rcpt_tos) or status
        return status

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content
        if raw is None:
            raw = envelope.content if isinstance(envelope.content, bytes) else b""
        if isinstance(raw, str):  # pragma: no cover - we never enable decode_data
            raw = raw.encode("utf-8", "surrogateescape")
        if self.max_bytes and len(raw) > self.max_bytes:
            return self._answer(envelope, TOO_BIG)
        mail_from = envelope.mail_from or ""
        if mail_from.strip() == "<>":  # the null sender of bounces
            mail_from = ""
        rcpt_tos = list(envelope.rcpt_tos)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, self.store, bytes(raw), mail_from, rcpt_tos)
        except Exception as error:
            log.error(
                "could not store a mail from %r to %r (%d bytes); answered 451: %s",
                mail_from,
                rcpt_tos,
                len(raw),
                error_summary(error),
            )
            return self._answer(envelope, TEMPFAIL)
        log.info("stored a mail from %r to %r (%d bytes)", mail_from, rcpt_tos, len(raw))
        if self.notify is not None:
            try:
                self.notify()
            except Exception as error:  # the mail is stored; a failed wake-up only delays it
                log.error("notify after storing failed: %s", error_summary(error))
        return self._answer(envelope, ACCEPTED)

    async def handle_exception(self, error: Exception) -> str:
        log.error("SMTP session error: %s", error_summary(error))
        return TEMPFAIL


class SessionLimits:
    """What every session of one listener shares: the connection counts and caps, the
    DATA deadline, and the log of refused connections."""

    def __init__(self, caps: ConnectionCaps, data_timeout: float,
                 refusals: RefusalLog) -> None:
        self.counter = ConnectionCounter(caps)
        self.data_timeout = data_timeout
        self.refusals = refusals

    @classmethod
    def of(cls, settings: Settings, caps: ConnectionCaps | None = None) -> SessionLimits:
        """The limits ``settings`` name (``caps``: fitted ones to use instead)."""
        return cls(
            caps or ConnectionCaps(settings.smtp_max_sessions,
                                   settings.smtp_max_sessions_per_client),
            settings.smtp_data_timeout,
            RefusalLog("LMTP listener" if settings.lmtp else "SMTP listener",
                       settings.refused_log_interval),
        )

    def record_refusal(self, loop: asyncio.AbstractEventLoop, subject: str,
                       reason: str) -> None:
        """Count one refusal; the first of an interval schedules the interval's log."""
        if self.refusals.record(subject, reason):
            loop.call_later(self.refusals.interval, self.refusals.flush)


#: The line that ends a DATA, after a line end (RFC 5321 4.5.2).
_DATA_END = b".\r\n"
#: aiosmtpd's answers to data over its limits (RFC 5321 4.5.3.1.6 and 4.5.3.1.10).
LINE_TOO_LONG = "500 Line too long (see RFC5321 4.5.3.1.6)"
DATA_TOO_MUCH = "552 Error: Too much mail data"


async def read_data(reader: asyncio.StreamReader, size_limit: int | None,
                    line_limit: int) -> tuple[bytes, str | None]:
    """The data of a DATA command, read up to its end line and without the dots that
    stuff its lines (RFC 5321 4.5.2), and the refusal when it breaks a limit (then no
    data): a line longer than ``line_limit`` bytes with its CRLF, or more than
    ``size_limit`` bytes, whichever comes first, as aiosmtpd reads them line by line.

    The reader's own limit (aiosmtpd sets it to ``line_limit``) bounds each search for
    an end: each piece is the bytes up to the next ".\r\n" or what the reader holds,
    so a mail costs a coroutine step for each line that ends in a full stop and each
    buffer of the socket, not one for each line. Past ``size_limit`` nothing is kept
    (a client sending without end costs no memory)."""
    kept: list[bytes] = []
    received = 0
    # The last two bytes of the data so far (a line end before the first line).
    last = b"\r\n"
    refusal: str | None = None
    while True:
        try:
            piece = await reader.readuntil(_DATA_END)
            body = piece[:-len(_DATA_END)]
            ended = (last + body).endswith(b"\r\n")
        except asyncio.LimitOverrunError as over:
            piece = await reader.readexactly(over.consumed)
            body, ended = piece, False
        data = body if ended else piece
        if data:
            last = (last + data)[-2:]
        received += len(data)
        if refusal is None:
            kept.append(data)
            if size_limit and received > size_limit:
                refusal = _refusal(b"".join(kept), size_limit, line_limit) or DATA_TOO_MUCH
                kept = []
        if ended:
            break
    if refusal is not None:
        return b"", refusal
    content = b"".join(kept)
    if max(map(len, content.split(b"\r\n"))) + 2 > line_limit:
        refusal = _refusal(content, size_limit, line_limit)
        if refusal is not None:
            return b"", refusal
    if content.startswith(b"."):
        content = content[1:]
    return content.replace(b"\r\n.", b"\r\n"), None


def _refusal(data: bytes, size_limit: int | None, line_limit: int) -> str | None:
    """Which limit the lines of ``data`` break first, read as aiosmtpd reads them: a
    line whose text is longer than the reader's limit (``line_limit``) is refused as
    soon as the reader holds that much, before its bytes are counted; the size, then
    the line's length, after each line; None when none does."""
    received = 0
    lines = data.split(b"\r\n")
    for number, line in enumerate(lines, start=1):
        if len(line) > line_limit:
            return LINE_TOO_LONG
        # (The last piece is what follows the last line end: a line begun, or nothing.)
        length = len(line) + (2 if number < len(lines) else 0)
        received += length
        if size_limit and received > size_limit:
            return DATA_TOO_MUCH
        if length > line_limit:
            return LINE_TOO_LONG
    return None


class _LimitedSession(SMTP):
    """aiosmtpd's session with the listener's caps and deadlines.

    Over a cap, the connection is answered 421 and closed before any session starts
    (no greeting, no task, nothing logged but its count). The idle timeout is
    aiosmtpd's own ``timeout`` (rearmed by each valid command); DATA gets a deadline
    of its own for the whole transfer, and the time the handler spends storing the
    mail (our work, not the client's) is not counted.
    """

    def __init__(self, handler: Any, *, limits: SessionLimits, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.limits = limits
        self.client: str | None = None
        self.refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._original_transport is not None:  # STARTTLS: the same session goes on
            super().connection_made(transport)
            return
        peer = transport.get_extra_info("peername")
        host = peer[0] if isinstance(peer, tuple) and peer else str(peer or "")
        client = client_key(str(host))
        reason = self.limits.counter.admit(client)
        if reason is not None:
            self.refused = True
            assert isinstance(transport, asyncio.WriteTransport)
            transport.write(TOO_MANY_CONNECTIONS.encode("ascii") + b"\r\n")
            transport.close()
            self.limits.record_refusal(
                self.loop, f"refused {{count}} connection{{s}} from {client}", reason)
            return
        self.client = client
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        if self.refused:
            return
        if self.client is not None:
            self.limits.counter.release(self.client)
            self.client = None
        super().connection_lost(error)

    async def smtp_DATA(self, arg: str) -> None:
        self._reset_timeout(self.limits.data_timeout)
        if "DATA" in self._handle_hooks and not self._decode_data:
            await self._data_in_pieces(arg)
        else:  # (not the listener's handler: aiosmtpd's own DATA)
            await super().smtp_DATA(arg)
        if self.transport is not None:
            self._reset_timeout()  # the idle timeout again, until the next command

    async def _data_in_pieces(self, arg: str) -> None:
        """aiosmtpd's DATA (its checks, answers and handler call), the data read by
        ``read_data`` in a few large pieces instead of a coroutine step a line (a
        reply quoting a board is some 600 lines)."""
        if await self.check_helo_needed() or await self.check_auth_needed("DATA"):
            return
        assert self.envelope is not None
        if not self.envelope.rcpt_tos:
            await self.push("503 Error: need RCPT command")
            return
        if arg:
            await self.push("501 Syntax: DATA")
            return
        await self.push("354 End data with <CR><LF>.<CR><LF>")
        try:
            content, refusal = await read_data(self._reader, self.data_size_limit,
                                               self.line_length_limit)
        except asyncio.CancelledError:
            log.info("connection lost during DATA")
            self._writer.close()
            raise
        if refusal is not None:
            await self.push(refusal)
            self._set_post_data_state()  # type: ignore[no-untyped-call]
            return
        self.envelope.content = content
        self.envelope.original_content = content
        status = await self._call_handler_hook("DATA")
        self._set_post_data_state()  # type: ignore[no-untyped-call]
        await self.push("250 OK" if status is MISSING else status)

    async def _call_handler_hook(self, command: str, *args: Any) -> Any:
        if command != "DATA" or self._timeout_handle is None:
            return await super()._call_handler_hook(command, *args)
        self._timeout_handle.cancel()
        try:
            return await super()._call_handler_hook(command, *args)
        finally:
            if self.transport is not None:
                # Rearmed for sending the answer: a client that stops reading it
                # must not hold its session for ever.
                self._reset_timeout()


class _LMTPServer(_LimitedSession, LMTP):
    """LMTP whose own DATA errors (too big, line too long) get one reply per recipient.

    aiosmtpd answers those with a single line even in LMTP, which would leave an LMTP
    client such as Postfix waiting for the remaining per-recipient replies.
    """

    async def push(self, status: Any) -> None:
        envelope = self.envelope
        if (
            isinstance(status, str)
            and status[:3] in {"552", "500"}
            and envelope is not None
            and len(envelope.rcpt_tos) > 1
            and "\r\n" not in status
            and ("mail data" in status or "Line too long" in status)
        ):
            status = "\r\n".join(status for _ in envelope.rcpt_tos)
        await super().push(status)


class IntakeController(Controller):
    """aiosmtpd's threaded Controller, speaking LMTP on request, and port 0 = any free
    port; its sessions share ``limits`` (default: those of the default settings)."""

    def __init__(self, handler: Any, *, limits: SessionLimits | None = None,
                 lmtp: bool = False, backlog: int = LISTEN_BACKLOG, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.lmtp = lmtp
        self.backlog = backlog
        self.limits = limits or SessionLimits.of(Settings(lmtp=lmtp))
        self._last_accept_pause: float | None = None
        self.loop.set_exception_handler(self._loop_exception)

    def start(self) -> None:
        """Start listening; a port that cannot be bound is an ``OSError`` at once."""
        # aiosmtpd binds in its thread and, when that fails, waits out its whole ready
        # timeout before it says so (5 s for a busy port).
        check_bindable(self.hostname, self.port)
        super().start()

    def _create_server(self) -> Any:
        # aiosmtpd's own, with a listen backlog for bursts of connections.
        return self.loop.create_server(self._factory_invoker, host=self.hostname,
                                       port=self.port, ssl=self.ssl_context,
                                       backlog=self.backlog)

    def factory(self) -> SMTP:
        server_class = _LMTPServer if self.lmtp else _LimitedSession
        return server_class(self.handler, limits=self.limits, **self.SMTP_kwargs)

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """Failed accepts (out of file descriptors) are counted, not logged one by one.

        asyncio then stops accepting for a second, so they cannot spin; but it reports
        the failure once for each of the up to 100 accepts it tries in that turn, so
        one pause is counted once.
        """
        error = context.get("exception")
        message = str(context.get("message", ""))
        if isinstance(error, OSError) and message.startswith("socket.accept() out of"):
            now = loop.time()
            if self._last_accept_pause is None or now - self._last_accept_pause >= 0.5:
                self._last_accept_pause = now
                self.limits.record_refusal(
                    loop, "accepting paused {count} time{s}",
                    f"accept failed: {os.strerror(error.errno or 0)}; each pause is a second")
            return
        loop.default_exception_handler(context)

    def _trigger_server(self) -> None:
        if self.port == 0 and self.server is not None:
            sockets = getattr(self.server, "sockets", None) or []
            if sockets:
                self.port = sockets[0].getsockname()[1]
        super()._trigger_server()  # type: ignore[no-untyped-call]

    @property
    def protocol(self) -> str:
        return "LMTP" if self.lmtp else "SMTP"


def check_bindable(host: str | None, port: int) -> None:
    """Bind (and let go) every address asyncio's ``create_server`` would listen on for
    ``host`` and ``port``, with its socket options: ``OSError`` (``EADDRINUSE`` for a
    busy port) when one cannot be bound.  Port 0 (any free port) always can."""
    if port == 0:
        return
    seen = set()
    for family, kind, proto, _name, address in socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE):
        if (family, address) in seen:
            continue
        seen.add((family, address))
        with socket.socket(family, kind, proto) as trial:
            trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                trial.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                trial.bind(address)
            except OSError as error:
                # As asyncio does: an address of a family not enabled here is skipped.
                if error.errno != errno.EADDRNOTAVAIL:
                    raise


def start_listener(
    settings: Settings,
    store: Store,
    accepts: Accepts | None = None,
    *,
    notify: Callable[[], None] | None = None,
    bounce_is_known: Accepts | None = None,
) -> IntakeController:
    """Start listening on ``settings.listen`` (SMTP, or LMTP when ``settings.lmtp``).

    Returns the running controller; ``controller.hostname``/``controller.port`` say where
    (``port`` is the real one when ``listen`` asked for port 0). Stop it with
    ``stop_listener``.
    """
    handler = IntakeHandler(
        store,
        accepts or make_accepts(settings),
        settings.max_message_bytes,
        lmtp=settings.lmtp,
        notify=notify,
        bounce_is_known=bounce_is_known,
    )
    caps = listener_caps(settings)
    if caps.smtp != ConnectionCaps(settings.smtp_max_sessions,
                                   settings.smtp_max_sessions_per_client):
        log.warning(
            "the open files limit (RLIMIT_NOFILE) is %d: the %s listener holds at most %d "
            "sessions, %d per client (not %d and %d); raise the limit to %d or more "
            "(LimitNOFILE= in the systemd unit) to keep the settings",
            caps.open_files_limit, "LMTP" if settings.lmtp else "SMTP", caps.smtp.total,
            caps.smtp.per_client, settings.smtp_max_sessions,
            settings.smtp_max_sessions_per_client, needed_open_files(settings),
        )
    limits = SessionLimits.of(settings, caps.smtp)
    controller = IntakeController(
        handler,
        limits=limits,
        lmtp=settings.lmtp,
        backlog=caps.smtp_backlog,
        hostname=settings.listen_host,
        port=settings.listen_port,
        # Shown in the greeting; avoids a slow getfqdn() lookup at each connection.
        server_hostname=settings.address_domain,
        ident="abalone-pbm",
        # Refused at MAIL (SIZE=) or after DATA with 552; advertised as SIZE in EHLO/LHLO.
        data_size_limit=settings.max_message_bytes,
        enable_SMTPUTF8=True,
        # Between commands (RFC 5321's 5 minutes are for the slowest of links; an MTA
        # sends its next command at once, and an idle session holds a file descriptor).
        timeout=settings.smtp_idle_timeout,
    )
    controller.start()
    log.info("%s listener: at most %d sessions, %d per client; %g s for a command, %g s "
             "for a DATA; listen backlog %d", controller.protocol, caps.smtp.total,
             caps.smtp.per_client, settings.smtp_idle_timeout, settings.smtp_data_timeout,
             caps.smtp_backlog)
    return controller


def stop_listener(controller: Controller) -> None:
    """Stop accepting mail; a transaction in progress is cut off (and retried by its MTA)."""
    controller.stop()
    if isinstance(controller, IntakeController):
        controller.limits.refusals.flush()  # what was refused since the last log


def _names_bounce(address: str) -> bool:
    """Whether ``address`` has the shape of a bounce address (``<local>+bounce.…``);
    whether a mail of ours has it is ``bounce_is_known``'s to say."""
    local = address.strip().strip("<>").rpartition("@")[0].lower()
    return "+" + BOUNCE_WORD + "." in local
