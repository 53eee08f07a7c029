"""Connection limits shared by the SMTP/LMTP listener and the policy service.

Every client is a stranger: each open connection costs the process a file descriptor
(and, in the policy service, a thread), so both listeners cap the connections they hold,
in total and per client, and refuse the rest at once. A flood of refused connections
is logged once per interval with a count per client (``RefusalLog``), never once per
connection. The caps must fit the process's open files limit (RLIMIT_NOFILE): at start
``fit_to_open_files`` lowers them when the limit is too small, and says so.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import resource
import socket
import socketserver
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..config import Settings

__all__ = [
    "ConnectionCaps",
    "ConnectionCounter",
    "RefusalLog",
    "ListenerCaps",
    "client_key",
    "fit_to_open_files",
    "listener_caps",
    "RESERVED_FILES",
    "LISTEN_BACKLOG",
]

log = logging.getLogger(__name__)

#: Open files the process needs besides the listeners' connections: the database pool
#: (SQLite: three files a connection), the worker process's pipes, the relay
#: connections, log files, the listening sockets themselves.
RESERVED_FILES = 128
#: Distinct clients counted in one interval of a ``RefusalLog``; refusals from further
#: clients are counted together (a flood from many addresses must not grow memory).
MOST_CLIENTS_COUNTED = 1000
#: Clients named in the log at the end of an interval; the rest are summed in one line.
MOST_CLIENTS_LOGGED = 10
#: Connections the kernel holds for a listener until it accepts them. A burst beyond
#: the queue has its SYNs dropped, and each of those clients waits a second or more to
#: try again (asyncio's default is 100, socketserver's 5); Linux caps it at somaxconn.
LISTEN_BACKLOG = 1024
#: The least backlog the SMTP listener is given, however few open files are left.
MIN_BACKLOG = 64


@dataclass(frozen=True)
class ConnectionCaps:
    """Most connections held at once: in all, and from one client."""

    total: int
    per_client: int


def client_key(host: str) -> str:
    """The client a connection is counted for: its IPv4 address, or its IPv6 /64.

    One IPv6 host usually has a whole /64 to itself, so counting single IPv6 addresses
    would let it open as many connections as it likes.
    """
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class ConnectionCounter:
    """The connections open now, in all and per client (safe across threads)."""

    def __init__(self, caps: ConnectionCaps) -> None:
        self.caps = caps
        self._lock = threading.Lock()
        self._total = 0
        self._per_client: dict[str, int] = {}

    def admit(self, client: str) -> str | None:
        """Count a new connection from ``client``; or, over a cap, why it is refused
        (it is then not counted)."""
        with self._lock:
            if self._total >= self.caps.total:
                return f"over the total cap ({self.caps.total} connections)"
            held = self._per_client.get(client, 0)
            if held >= self.caps.per_client:
                return f"over the per-client cap ({self.caps.per_client} connections)"
            self._total += 1
            self._per_client[client] = held + 1
            return None

    def release(self, client: str) -> None:
        """A connection ``admit`` counted has closed."""
        with self._lock:
            held = self._per_client.get(client, 0)
            if held <= 0:
                return
            self._total -= 1
            if held == 1:
                del self._per_client[client]
            else:
                self._per_client[client] = held - 1

    @property
    def total(self) -> int:
        with self._lock:
            return self._total

    def held_by(self, client: str) -> int:
        with self._lock:
            return self._per_client.get(client, 0)


class RefusalLog:
    """Refused connections (or failed accepts), counted and logged once per interval.

    ``record`` only counts; the owner calls ``flush`` when an interval has passed
    (``record`` returns True when it opens one, so an event loop can schedule the
    flush; a polling loop calls ``flush_if_due``). Each interval logs one line per
    client and reason: ``SMTP listener: refused 1,034 connections from 10.0.0.5 in the
    last 60 s: over the per-client cap (30 connections)``.
    """

    def __init__(self, what: str, interval: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], int] = {}
        #: Refusals from clients beyond MOST_CLIENTS_COUNTED, per reason.
        self._uncounted: dict[str, int] = {}
        self._opened: float | None = None

    def record(self, subject: str, reason: str) -> bool:
        """Count one event; ``subject`` says what and whose, its count written where
        ``{count}`` is and a plural s where ``{s}`` is (``refused {count} connection{s}
        from 10.0.0.5``). True when this event opened a new interval."""
        with self._lock:
            opened = self._opened is None
            if opened:
                self._opened = self._clock()
            key = (subject, reason)
            if key in self._counts or len(self._counts) < MOST_CLIENTS_COUNTED:
                self._counts[key] = self._counts.get(key, 0) + 1
            else:
                self._uncounted[reason] = self._uncounted.get(reason, 0) + 1
            return opened

    def flush_if_due(self) -> None:
        with self._lock:
            due = self._opened is not None and self._clock() - self._opened >= self.interval
        if due:
            self.flush()

    def flush(self) -> None:
        """Log what was counted since the interval opened, and start afresh."""
        with self._lock:
            if self._opened is None:
                return
            seconds = max(1, round(self._clock() - self._opened))
            counts, uncounted = self._counts, self._uncounted
            self._counts, self._uncounted, self._opened = {}, {}, None
        ranked = sorted(counts.items(), key=lambda item: -item[1])
        for (subject, reason), count in ranked[:MOST_CLIENTS_LOGGED]:
            text = subject.replace("{count}", f"{count:,}").replace("{s}", "s" * (count != 1))
            log.warning("%s: %s in the last %d s: %s", self.what, text, seconds, reason)
        rest: dict[str, tuple[int, int]] = {}
        for (_, reason), count in ranked[MOST_CLIENTS_LOGGED:]:
            events, clients = rest.get(reason, (0, 0))
            rest[reason] = (events + count, clients + 1)
        for reason, count in uncounted.items():
            events, clients = rest.get(reason, (0, 0))
            rest[reason] = (events + count, clients)
        for reason, (events, clients) in rest.items():
            others = f"{clients:,} other clients" + (" or more" if reason in uncounted else "")
            log.warning("%s: refused %s more connections from %s in the last %d s: %s",
                        self.what, f"{events:,}", others, seconds, reason)


@dataclass(frozen=True)
class ListenerCaps:
    """The caps both listeners run with, once fitted to the open files limit."""

    smtp: ConnectionCaps
    policy: ConnectionCaps
    open_files_limit: int
    lowered: bool
    #: The SMTP listener's backlog: asyncio also accepts up to this many connections
    #: in one turn of its loop, each a file until its session starts (or is refused
    #: and closed, a turn later), so it must fit in the files the caps leave free.
    smtp_backlog: int


def open_files_limit() -> int:
    """The process's soft RLIMIT_NOFILE (what ``accept`` runs into)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft


def fit_to_open_files(smtp: ConnectionCaps, policy: ConnectionCaps | None,
                      limit: int) -> tuple[ConnectionCaps, ConnectionCaps | None]:
    """The caps lowered, in proportion, so that both listeners' connections and
    RESERVED_FILES fit in ``limit`` open files (unchanged when they fit;
    ``resource.RLIM_INFINITY`` or any negative limit means no limit)."""
    wanted = smtp.total + (policy.total if policy is not None else 0)
    if limit < 0 or limit == resource.RLIM_INFINITY or wanted + RESERVED_FILES <= limit:
        return smtp, policy
    available = max(limit - RESERVED_FILES, 2)

    def scaled(caps: ConnectionCaps) -> ConnectionCaps:
        total = max(1, available * caps.total // wanted)
        return ConnectionCaps(total, min(caps.per_client, total))

    return scaled(smtp), scaled(policy) if policy is not None else None


def listener_caps(settings: Settings, limit: int | None = None, *,
                  with_policy: bool | None = None) -> ListenerCaps:
    """The caps of ``settings`` fitted to ``limit`` open files (default: the process's
    own limit); the policy service counts when ``with_policy`` (default: when it is
    configured)."""
    limit = open_files_limit() if limit is None else limit
    if with_policy is None:
        with_policy = settings.policy_listen is not None
    smtp = ConnectionCaps(settings.smtp_max_sessions, settings.smtp_max_sessions_per_client)
    policy = ConnectionCaps(settings.policy_max_connections,
                            settings.policy_max_connections_per_client)
    fitted_smtp, fitted_policy = fit_to_open_files(
        smtp, policy if with_policy else None, limit)
    held = fitted_smtp.total + (fitted_policy.total if fitted_policy is not None else 0)
    unlimited = limit < 0 or limit == resource.RLIM_INFINITY
    free = LISTEN_BACKLOG if unlimited else limit - RESERVED_FILES - held
    return ListenerCaps(
        smtp=fitted_smtp,
        policy=fitted_policy if fitted_policy is not None else policy,
        open_files_limit=limit,
        lowered=fitted_smtp != smtp or (fitted_policy is not None and fitted_policy != policy),
        smtp_backlog=max(MIN_BACKLOG, min(LISTEN_BACKLOG, free)),
    )


def needed_open_files(settings: Settings, *, with_policy: bool | None = None) -> int:
    """The open files limit at which ``settings``' caps are kept as they are."""
    if with_policy is None:
        with_policy = settings.policy_listen is not None
    policy = settings.policy_max_connections if with_policy else 0
    return settings.smtp_max_sessions + policy + RESERVED_FILES


#: Pause after an accept failed for want of file descriptors: the listening socket
#: stays readable, so retrying at once would spin.
ACCEPT_RETRY_SECONDS = 1.0
_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class CappedThreadingServer(socketserver.ThreadingTCPServer):
    """A thread per connection, within a ``ConnectionCounter``'s caps (total and per
    client): a connection over them is closed at once and counted in a ``RefusalLog``
    (one line per interval). ``start()`` serves in a thread named ``thread_name``,
    ``stop()`` ends it. The policy service and the HTTP listener are ones."""

    daemon_threads = True
    allow_reuse_address = True
    #: The serving thread's name.
    thread_name = "abalone-pbm-listener"

    def __init__(self, host: str, port: int, handler: Any, counter: ConnectionCounter,
                 refusals: RefusalLog) -> None:
        self.counter = counter
        self.refusals = refusals
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), handler)
        self._thread: threading.Thread | None = None

    def record_refusal(self, subject: str, reason: str) -> None:
        """Count one refused or closed connection; logged with the others of its
        interval by ``service_actions``."""
        self.refusals.record(subject, reason)

    # socketserver's hooks, all but process_request_thread run in the serving thread.

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return super().get_request()
        except OSError as error:
            if error.errno in _OUT_OF_RESOURCES:
                self.refusals.record(
                    "accepting paused {count} time{s}",
                    f"accept failed: {os.strerror(error.errno or 0)}; each pause is "
                    f"{ACCEPT_RETRY_SECONDS:g} s")
                time.sleep(ACCEPT_RETRY_SECONDS)
            raise  # socketserver drops the attempt

    def verify_request(self, request: Any, client_address: Any) -> bool:
        client = client_key(str(client_address[0]))
        reason = self.counter.admit(client)
        if reason is None:
            return True
        self.record_refusal(f"refused {{count}} connection{{s}} from {client}", reason)
        return False  # socketserver closes it

    def process_request(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: it will not release its count
            self.counter.release(client_key(str(client_address[0])))
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.counter.release(client_key(str(client_address[0])))

    def service_actions(self) -> None:
        self.refusals.flush_if_due()

    @property
    def host_port(self) -> tuple[str, int]:
        host, port = self.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever,
                                        kwargs={"poll_interval": 0.5},
                                        name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self.refusals.flush()
