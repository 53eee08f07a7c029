"""`abalone-pbm serve`: listener + worker + sender + clock in one process.

The listener (aiosmtpd, in its own thread) stores each accepted mail and wakes the
worker; the worker thread processes the inbox one transaction per mail and hands the
replies it committed straight to the sender; the sender thread sends them over its
kept relay connection (or into the Maildir), and also sends whatever else is due in
the outbox; the clock thread calls the service layer's ``tick(now)`` every minute
(reminders, forfeits).

The service layer plugs in through ``_service_hooks``: the module
``abalone_pbm.service.mailroom`` must provide

* ``process_mail(session, mail, message, now, settings) -> None`` — process one inbox
  mail, writing the game change and every reply (``repository.enqueue_outbox``) into
  ``session``; never commit, never open another transaction; raise to have the whole
  mail rolled back and retried (parked after 3 failures);
* optionally ``tick(database, now, settings) -> None`` — reminders, forfeits, robots;
  it opens its own transactions (``database.write()``).
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field
from datetime import datetime
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Callable, Protocol, TextIO

from .clock import Clock, SystemClock
from .config import Settings
from .mail.intake import make_store
from .mail.listener import IntakeController, make_accepts, start_listener, stop_listener
from .mail.policy import PolicyServer, start_policy_server
from .mail.sender import Sender
from .service.bounces import make_bounce_check, record_refusal
from .service.server_key import ensure_server_key
from .service.unsubscribe import make_unsubscribe_check
from .web import UnsubscribeServer, start_http_listener
from .worker import Handle, PasswordHook, Worker, group_most_for
from .worker_process import WorkerProcess

if TYPE_CHECKING:  # pragma: no cover
    from .db.session import Database

__all__ = [
    "ListenError",
    "Server", "Tick", "serve", "notify_systemd", "open_database", "install_stop_signals",
    "robot_hook", "password_hook", "_service_hooks"
]

log = logging.getLogger(__name__)


class ListenError(Exception):
    """A listening address could not be bound (busy port, no permission, no such
    address); the message names the setting, for a one-line answer without a traceback."""


def _bind_failure(error: OSError, where: str, variable: str) -> ListenError:
    reason = error.strerror or str(error)
    if error.errno == errno.EADDRINUSE:
        reason = "address already in use (is another abalone-pbm serve running?)"
    return ListenError(f"cannot listen on {where} ({variable}): {reason}")


Tick = Callable[[datetime], None]

#: Seconds after which a thread that wants the GIL asks the running one for it.
SWITCH_INTERVAL = 0.0005

#: Seconds between two calls of ``tick``.
TICK_INTERVAL = 60.0


def open_database(settings: Settings, *, upgrade: bool = True) -> Database:
    """The settings' database, created/upgraded when ``upgrade`` (SQLite: file and folder)."""
    from .db.session import Database

    database = Database(settings.database_url)
    if upgrade:
        database.ensure_schema()
    return database


def _service_hooks(settings: Settings, database: Database) -> tuple[Handle, Tick | None]:
    """The service layer's ``handle`` for the worker and ``tick`` for the clock thread."""
    from .service import mailroom, timeouts

    def handle(session: Any, mail: Any, message: Any, now: datetime) -> None:
        mailroom.process_mail(session, mail, message, now, settings)

    def tick(now: datetime) -> None:
        timeouts.tick(database, now, settings)

    return handle, tick


def password_hook(settings: Settings) -> PasswordHook:
    """The service layer's argon2 checks, for the worker to run before its transaction."""
    from .service.precheck import PasswordsInAdvance

    return PasswordsInAdvance(settings)


class RobotLanes(Protocol):
    """The robots' threads of ``serve`` (``service.robots.RobotLanes``)."""

    def want(self, boards: Collection[int] | None) -> None: ...

    def run(self, stop: threading.Event) -> None: ...

    def stop(self) -> None: ...


class Robots(Protocol):
    """The computer players: called, they play the pending turns on the given boards
    (None: wherever one waits) in the caller's thread and say how many moves and
    analyses they made; ``lanes`` gives ``serve`` its robot threads."""

    def __call__(self, boards: Collection[int] | None = None) -> int: ...

    def lanes(self, on_done: Callable[[], None]) -> RobotLanes: ...


def robot_hook(settings: Settings, database: Database, clock: Clock) -> Robots:
    """Register the computer players as users and return them (each move searched
    outside any transaction)."""
    from .service import robots

    with database.write() as session:
        robots.ensure_robot_users(session, clock)
    return robots.RobotPlayers(database, settings, clock)


@dataclass
class Server:
    """Everything ``serve`` runs; ``start()``, then ``stop()`` (or ``run(stop_event)``)."""

    settings: Settings
    database: Database
    handle: Handle
    tick: Tick | None = None
    clock: Clock = field(default_factory=SystemClock)
    #: Plays the computer players' pending turns; returns how many moves it made.
    robots: Robots | None = None
    #: Checks a mail's passwords before its transaction (``password_hook``).
    passwords: PasswordHook | None = None
    tick_interval: float = TICK_INTERVAL
    #: Seconds the worker and sender sleep when idle (they are also woken at once).
    idle: float = 1.0
    out: TextIO | None = None
    #: Run the worker in a process of its own (``abalone_pbm.worker_process``): only
    #: with the service layer's own hooks, which the child process loads itself.
    worker_process: bool = False

    def __post_init__(self) -> None:
        self.stop_event = threading.Event()
        #: The sender stops after the worker (``stop``), to send its last replies.
        self.sender_stop = threading.Event()
        self.worker_wake = threading.Event()
        self.sender = Sender(self.database, self.settings, self.clock, refused=record_refusal)
        #: The robots' dispatcher and lanes: told the boards whose turn the worker
        #: handed to a robot, or to look at every game (after a tick).
        self.robot_lanes: RobotLanes | None = \
            self.robots.lanes(on_done=self.sender.poke) if self.robots is not None else None
        #: The worker: a thread of this process, or its own process (``linked``).
        self.worker: Worker | None = None
        self.linked: WorkerProcess | None = None
        #: Stores the listener's mails in another process's transactions (None: here).
        self.store_elsewhere: Callable[[list[dict[str, Any]]],
                                       list[tuple[int | None, bool]] | None] | None = None
        if self.worker_process:
            self.linked = WorkerProcess(
                owner=self.sender.owner, on_rows=self.sender.hand_over,
                on_robot_boards=self._robot_turns, on_lost=self.sender.release_orphans,
                stop_event=self.stop_event, settings=self.settings)
            if self.database.is_sqlite:
                # One writer at a time: the worker process stores what the listener
                # receives and records what the sender sent (worker_process).
                self.store_elsewhere = self.linked.store_mails
                self.sender.record_sent_elsewhere = self.linked.record_sent
        else:
            self.worker = Worker(
                self.database, self.settings, self.clock, self.handle,
                handoff=self.sender, passwords=self.passwords, robot_turns=self._robot_turns,
                group_most=group_most_for(self.database),
            )
        self.listener: IntakeController | None = None
        self.policy: PolicyServer | None = None
        #: The one-click unsubscribe listener (``web``), when ``http_listen`` is set.
        self.http: UnsubscribeServer | None = None
        self.threads: list[threading.Thread] = []
        self._sender_thread: threading.Thread | None = None

    # -- life cycle -----------------------------------------------------------------

    def start(self) -> None:
        """Bind the listeners (``ListenError`` when one cannot), then start the threads."""
        self.stop_event.clear()
        self.sender_stop.clear()
        # The key of unsubscribe tokens and thread ids, committed before any reader.
        ensure_server_key(self.database, self.settings)
        bounce_is_known = make_bounce_check(self.settings, self.database)
        try:
            self.listener = start_listener(
                self.settings,
                make_store(self.database, self.clock, delegate=self.store_elsewhere),
                make_accepts(self.settings),
                notify=self._wake_worker,
                bounce_is_known=bounce_is_known,
            )
        except OSError as error:
            raise _bind_failure(error, self.settings.listen, "ABALONE_PBM_LISTEN") from None
        if self.settings.policy_listen is not None:
            try:
                self.policy = start_policy_server(
                    self.settings, self.database,
                    unsubscribe_is_valid=make_unsubscribe_check(self.settings, self.database),
                    bounce_is_known=bounce_is_known)
            except OSError as error:
                stop_listener(self.listener)
                self.listener = None
                raise _bind_failure(
                    error, self.settings.policy_listen, "ABALONE_PBM_POLICY_LISTEN"
                ) from None
        if self.settings.http_listen is not None:
            try:
                self.http = start_http_listener(self.settings, self.database)
            except OSError as error:
                self._stop_listeners()
                raise _bind_failure(
                    error, self.settings.http_listen, "ABALONE_PBM_HTTP_LISTEN") from None
        if self.linked is not None:
            try:
                self.linked.start()
            except OSError as error:
                self._stop_listeners()
                raise ListenError(f"cannot start the worker process: {error}") from None
        else:
            self._spawn("worker", self._run_worker)
        self._sender_thread = self._spawn("sender", self._run_sender)
        if self.robot_lanes is not None:
            self._spawn("robots", self._run_robots)
        if self.tick is not None:
            self._spawn("clock", self._run_clock)
        self._announce()

    def stop(self) -> None:
        """Stop accepting mail, let the worker finish the mails it holds, then the
        sender send every answer they caused (and whatever else it holds), join."""
        self.stop_event.set()
        self.worker_wake.set()
        if self.robot_lanes is not None:
            self.robot_lanes.stop()
        self._stop_listeners()
        if self.linked is not None:
            self.linked.stop()
        for thread in self.threads:
            if thread is not self._sender_thread:
                thread.join(timeout=60)
        # Only now: the worker's last replies are handed over.
        self.sender_stop.set()
        self.sender.poke()
        if self._sender_thread is not None:
            self._sender_thread.join(timeout=60)
        self.threads, self._sender_thread = [], None

    def _stop_listeners(self) -> None:
        if self.listener is not None:
            stop_listener(self.listener)
            self.listener = None
        if self.policy is not None:
            self.policy.stop()
            self.policy = None
        if self.http is not None:
            self.http.stop()
            self.http = None

    def run(self, stop_event: threading.Event | None = None) -> None:
        """Start, wait for ``stop_event`` (or ``self.stop_event``), stop."""
        self.start()
        stop = stop_event or self.stop_event
        try:
            while not stop.wait(0.5):  # a timed wait lets signal handlers run promptly
                pass
        finally:
            self.stop()

    @property
    def address(self) -> tuple[str, int]:
        """Where the listener listens (the real port when the settings said 0)."""
        assert self.listener is not None
        return self.listener.hostname, self.listener.port

    # -- the threads ----------------------------------------------------------------

    def _spawn(self, name: str, target: Callable[[], None]) -> threading.Thread:
        thread = threading.Thread(target=target, name=f"abalone-pbm-{name}", daemon=True)
        thread.start()
        self.threads.append(thread)
        return thread

    def _wake_worker(self) -> None:
        """The listener stored a mail."""
        if self.linked is not None:
            self.linked.wake()
        else:
            self.worker_wake.set()

    def _run_worker(self) -> None:
        assert self.worker is not None
        self.worker.run_forever(self.stop_event, self.worker_wake, idle=self.idle)

    def _robot_turns(self, boards: set[int]) -> None:
        """The worker committed a change that may give these boards' turn to a robot,
        or queued an analysis for them (a mail that does neither wakes no robot: the
        replies went to the sender with the commit, see Worker.handoff)."""
        if self.robot_lanes is not None:
            self.robot_lanes.want(boards)

    def _wake_robots_everywhere(self) -> None:
        if self.robot_lanes is not None:
            self.robot_lanes.want(None)

    def _run_robots(self) -> None:
        """Robots think in lanes of their own, so mail keeps flowing while they do, and
        one long think holds no other game (``service.robots.RobotLanes``)."""
        assert self.robot_lanes is not None
        self.robot_lanes.run(self.stop_event)

    def _run_sender(self) -> None:
        self.sender.run_forever(self.sender_stop, idle=self.idle)

    def _run_clock(self) -> None:
        assert self.tick is not None
        while not self.stop_event.is_set():
            try:
                self.tick(self.clock.now())
            except Exception:
                log.exception("clock: tick failed")
            # Reminders or forfeits may have queued mail or handed a turn to a robot.
            self.sender.poke()
            self._wake_robots_everywhere()
            self.stop_event.wait(self.tick_interval)

    def _announce(self) -> None:
        out = self.out if self.out is not None else sys.stdout
        host, port = self.address
        protocol = "LMTP" if self.settings.lmtp else "SMTP"
        print(f"abalone-pbm: listening for {protocol} on {host}:{port} "
              f"(mail to {self.settings.address})", file=out)
        if self.policy is not None:
            policy_host, policy_port = self.policy.host_port
            print(f"abalone-pbm: answering Postfix recipient checks (policy service) on "
                  f"{policy_host}:{policy_port}", file=out)
        if self.http is not None:
            http_host, http_port = self.http.host_port
            print(f"abalone-pbm: answering one-click unsubscribe (HTTP) on "
                  f"{http_host}:{http_port}", file=out)
        print(f"abalone-pbm: database {self.database.describe()}", file=out)
        if self.linked is not None:
            print(f"abalone-pbm: mail is processed by the worker process {self.linked.pid}",
                  file=out)
        print(f"abalone-pbm: outgoing mail goes to {self.sender.destination}", file=out)
        out.flush()


def notify_systemd(state: str) -> bool:
    """Tell systemd (a ``Type=notify`` unit) ``READY=1`` or ``STOPPING=1``; False outside
    systemd. The protocol is one datagram to the socket named in ``NOTIFY_SOCKET``."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return False
    if path.startswith("@"):  # an abstract socket
        path = "\0" + path[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(path)
            sock.sendall(state.encode())
    except OSError as error:
        log.warning("could not notify systemd (%s): %s", state, error)
        return False
    return True


def install_stop_signals(stop_event: threading.Event) -> None:
    """SIGINT and SIGTERM set ``stop_event`` (call from the main thread)."""

    def on_signal(signum: int, frame: Any) -> None:
        log.info("received signal %d, stopping", signum)
        stop_event.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def serve(
    settings: Settings,
    *,
    handle: Handle | None = None,
    tick: Tick | None = None,
    clock: Clock | None = None,
    stop_event: threading.Event | None = None,
    out: TextIO | None = None,
) -> int:
    """Run the server until SIGINT/SIGTERM (or ``stop_event``); the service hooks by default."""
    database = open_database(settings)
    # The threads hand the GIL to each other after every SQLite call and socket read;
    # at Python's default of 5 ms a thread that waits for it loses most of that time
    # (measured: 38 -> 59-72 moves/s at 16 clients with 1 ms and 0.2 ms).
    sys.setswitchinterval(SWITCH_INTERVAL)
    passwords: PasswordHook | None = None
    # Only the service layer's own hooks can run in a worker process (which loads them
    # itself); a handle given by the caller lives in this process.
    own_hooks = handle is None
    if handle is None:
        handle, default_tick = _service_hooks(settings, database)
        tick = tick or default_tick
        passwords = password_hook(settings)
    stop = stop_event or threading.Event()
    if threading.current_thread() is threading.main_thread():
        install_stop_signals(stop)
    clock = clock or settings.clock()
    robots = robot_hook(settings, database, clock)
    server = Server(settings, database, handle, tick, clock, robots=robots, out=out,
                    passwords=passwords, worker_process=settings.worker_process and own_hooks)
    try:
        server.start()
    except ListenError as error:
        print(f"abalone-pbm serve: {error}", file=sys.stderr)
        database.dispose()
        return 2
    notify_systemd("READY=1")
    try:
        while not stop.wait(0.5):  # a timed wait lets signal handlers run promptly
            pass
    finally:
        notify_systemd("STOPPING=1")
        server.stop()
    print("abalone-pbm: stopped", file=out if out is not None else sys.stdout)
    return 0
