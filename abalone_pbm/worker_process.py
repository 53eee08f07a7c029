"""``serve``'s worker in a process of its own, linked to ``serve`` by pipes.

One Python process runs one thread at a time, and the worker (parse, play, render,
compose, commit) takes most of ``serve``'s CPU. With the worker in a child process the
listener and the sender of ``serve`` run beside it on another core
(``ABALONE_PBM_WORKER_PROCESS``, on by default).

On SQLite the worker process is the one writer of the mail path: it stores the mails
``serve``'s listener received and records what ``serve``'s sender sent, in its own
transactions (``ServeRequests``), so that no mail waits for the write
lock while a thread of ``serve`` holding it waits for its turn at the interpreter. A
stored mail is taken and processed in the very transaction that stores it, and the
listener acknowledges it (250) once that has committed. What the worker does not
confirm in time, or at all because it died, ``serve`` writes itself: a mail the worker
stored meanwhile is then found stored (its deduplication key), and a mail recorded as
sent twice is no different.

Two pipes and a socket link them; they carry news, never the only copy of anything:

* *wake*, ``serve`` -> worker: a byte when the listener has stored a mail. Its end (the
  pipe closed: ``serve`` stops, or died) stops the worker after the mails it holds, so
  a worker never outlives its server.
* *requests*, ``serve`` -> worker (on SQLite; a socket that keeps each message whole):
  the rows of mails to store, and the ids of mails sent; one too large for it is
  written by ``serve`` itself.
* *news*, worker -> ``serve``: after each commit, the outbox rows it wrote (written
  leased to ``serve``'s sender, as the worker thread hands them over in one process),
  the boards whose turn went to a computer player, and its answers to the requests.
  Each message is a 4-byte length and a pickle (both ends are this program).

A worker killed at any moment loses nothing: its transaction rolls back and the mail
stays in the inbox. Only the rows of a commit whose news never arrived would wait for
their lease to run out; so when the worker dies, ``serve``'s sender first sends all it
was handed, then frees its own remaining leases (``Sender.release_orphans``), and only
then is a new worker started.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from .config import Settings, settings_environment
from .db.repository import OutgoingRow, record_sent
from .mail.sender import LEASE
from .mail.validation import error_summary

__all__ = ["WorkerProcess", "Link", "PipeHandoff", "ServeRequests", "RESTART_DELAY",
           "RECORD_WAIT", "STORE_WAIT"]

log = logging.getLogger(__name__)

#: Seconds before a worker that died is started again (a crash loop stays slow).
RESTART_DELAY = 1.0

#: Seconds ``serve``'s sender waits for the worker to confirm a record of sent mails
#: before it writes the record itself (a group of the worker's takes tens of ms).
RECORD_WAIT = 5.0

#: Seconds the listener waits for the worker to confirm that it stored the mails it
#: was given before it stores them itself (a mail is acknowledged only once stored).
STORE_WAIT = 5.0
#: Send buffer asked for on the requests socket (the kernel may give less; a request
#: that does not fit is written by ``serve`` itself).
_REQUESTS_BUFFER = 4 << 20

_LENGTH = 4

#: A request of ``serve``'s to the worker: its number, its kind, what it carries.
Request = tuple[int, str, Any]


def _frame(kind: str, value: Any) -> bytes:
    body = pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL)
    return len(body).to_bytes(_LENGTH, "big") + body


def _read(fd: int) -> bytes:
    """What the pipe holds (waiting for it); empty at its end, or when it is closed."""
    try:
        return os.read(fd, 1 << 20)
    except OSError:
        return b""


@dataclass
class _Asked:
    """A request sent to the worker, waiting for its answer: ``written`` once it has
    committed what was asked, and what the writing returned (see ``ServeRequests``)."""

    done: threading.Event = field(default_factory=threading.Event)
    written: bool = False
    result: Any = None


class WorkerProcess:
    """``serve``'s side: starts ``abalone-pbm work --linked``, wakes it, acts on its news,
    and starts another when it dies."""

    def __init__(
        self,
        *,
        owner: str,
        on_rows: Callable[[list[OutgoingRow]], None],
        on_robot_boards: Callable[[set[int]], None],
        on_lost: Callable[[], threading.Event],
        stop_event: threading.Event,
        settings: Settings,
        command: list[str] | None = None,
    ) -> None:
        self.owner = owner
        self.on_rows = on_rows
        self.on_robot_boards = on_robot_boards
        self.on_lost = on_lost
        self.stop_event = stop_event
        self.command = command or [sys.executable, "-m", "abalone_pbm", "work"]
        if logging.getLogger().isEnabledFor(logging.DEBUG):
            self.command = [*self.command, "--verbose"]
        # Exactly serve's settings, whether they came from the environment or a file.
        self.environment = {**os.environ, **settings_environment(settings)}
        self.process: subprocess.Popen[bytes] | None = None
        self._wake_fd: int | None = None
        self._news_fd: int | None = None
        self._requests: socket.socket | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: Requests the worker has not answered yet, by number.
        self._asked: dict[int, _Asked] = {}
        self._last_request = 0
        self._stalled = False  # see :attr:`stalled`

    @property
    def stalled(self) -> bool:
        """Whether a request went unanswered in its wait and no answer came since."""
        return self._stalled

    @property
    def pid(self) -> int | None:
        process = self.process
        return process.pid if process is not None else None

    def start(self) -> None:
        """Start the worker (``OSError`` when it cannot be), and the thread that
        reads its news and starts another when it dies."""
        self._launch()
        self._thread = threading.Thread(target=self._run, name="abalone-pbm-worker-link",
                                        daemon=True)
        self._thread.start()

    def _launch(self) -> None:
        wake_read, wake_write = os.pipe()
        news_read, news_write = os.pipe()
        # Requests go over a socket that keeps each message whole (a pipe would not,
        # for one larger than PIPE_BUF); one that cannot be sent in time, or is too
        # large for it, is written by serve itself.
        requests, requests_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            requests.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _REQUESTS_BUFFER)
        except OSError:
            pass
        requests.settimeout(STORE_WAIT)
        try:
            process = subprocess.Popen(
                [*self.command, "--linked",
                 f"{wake_read},{news_write},{requests_end.fileno()},{self.owner}"],
                pass_fds=(wake_read, news_write, requests_end.fileno()), env=self.environment,
                # Every mail waits for the worker, the one step that runs one at a time:
                # in a session of its own Linux schedules it as a group of its own
                # (autogroup), so serve's many threads cannot crowd it out of a core.
                # It still ends with serve (its wake pipe) and ignores a terminal's ^C.
                start_new_session=True,
            )
        except BaseException:
            for fd in (wake_write, news_read):
                os.close(fd)
            requests.close()
            raise
        finally:
            os.close(wake_read)
            os.close(news_write)
            requests_end.close()
        os.set_blocking(wake_write, False)
        with self._lock:
            self.process = process
            self._wake_fd = wake_write
            self._news_fd = news_read
            self._requests = requests
            self._stalled = False
        log.info("worker process %s started", process.pid)

    def wake(self) -> None:
        """A mail was stored: tell the worker (never blocks; a full pipe is awake)."""
        with self._lock:
            fd = self._wake_fd
            if fd is None:
                return
            try:
                os.write(fd, b"w")
            except (BlockingIOError, BrokenPipeError):
                pass

    def record_sent(self, ids: list[int], now: datetime, wait: float = RECORD_WAIT) -> bool:
        """Have the worker record these mails as sent in its next transaction; True once
        it has committed that, False when it cannot (see ``_ask``): the caller then
        records them itself."""
        written, _result = self._ask("sent", (now, ids), wait)
        return written

    def store_mails(self, rows: list[dict[str, Any]], wait: float = STORE_WAIT
                    ) -> list[tuple[int | None, bool]] | None:
        """Have the worker store these inbox rows (``intake.inbox_values``) in its next
        transaction; each one's (inbox id, whether it was new) once the worker has
        committed them, None when it cannot (see ``_ask``): the caller stores them
        itself (a mail the worker stored meanwhile is found stored already)."""
        written, result = self._ask("mails", rows, wait)
        return result if written else None

    def _ask(self, kind: str, payload: Any, wait: float) -> tuple[bool, Any]:
        """Send one request and wait for its answer: (whether the worker committed it,
        what the writing returned); (False, None) when there is no worker, the request
        is too large for the socket or cannot be sent in time, or no answer comes
        within ``wait`` seconds or before the worker dies.

        A request left unanswered in its wait marks the worker :attr:`stalled` (stopped,
        stuck, or busier than the wait): until it answers that request or any other, or
        another worker starts, nothing more is asked and the caller writes at once, so
        that a stalled worker costs one wait, not one a mail."""
        with self._lock:
            requests = self._requests
            if requests is None or self._stalled:
                return False, None
            self._last_request += 1
            number = self._last_request
            asked = self._asked[number] = _Asked()
        try:
            # One message, whole or not at all; the socket's timeout bounds the wait.
            requests.send(pickle.dumps((number, kind, payload),
                                       protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            pass  # not sent: nobody will answer it
        else:
            if not asked.done.wait(wait):
                with self._lock:
                    # (Its answer may have come since the wait ended: then it is no stall,
                    # and no later answer would end one.)
                    if not (asked.done.is_set() or self._stalled
                            or self._requests is not requests):
                        self._stalled = True
                        log.warning("worker process: no answer in %.1f s; serve writes "
                                    "what it would have asked until it answers", wait)
        with self._lock:
            self._asked.pop(number, None)
        return asked.written, asked.result

    def _answered(self, answers: list[tuple[int, bool, Any]]) -> None:
        """The worker committed (True) or could not write (False) these requests."""
        with self._lock:
            if self._stalled:
                self._stalled = False
                log.info("worker process: answers again")
            for number, written, result in answers:
                asked = self._asked.get(number)
                if asked is not None:
                    asked.written, asked.result = written, result
                    asked.done.set()

    def _run(self) -> None:
        while True:
            with self._lock:
                news = self._news_fd
            if news is not None:
                self._read_news(news)
            code = self._reap()
            if self.stop_event.is_set():
                return
            log.error("worker process exited (%s); its mails stay in the inbox, another "
                      "starts", code)
            # Whatever the dead worker committed without telling goes out now.
            self.on_lost().wait(60)
            if self.stop_event.wait(RESTART_DELAY):
                return
            try:
                self._launch()
            except OSError as error:
                log.error("worker process: could not start: %s", error)

    def _read_news(self, fd: int) -> None:
        """Until the worker closes its end (it exits): act on each message."""
        pending = bytearray()
        while chunk := _read(fd):
            pending += chunk
            start = 0
            while len(pending) - start >= _LENGTH:
                end = start + _LENGTH + int.from_bytes(pending[start:start + _LENGTH], "big")
                if len(pending) < end:
                    break
                kind, value = pickle.loads(pending[start + _LENGTH:end])
                start = end
                try:
                    if kind == "rows":
                        self.on_rows(value)
                    elif kind == "robots":
                        self.on_robot_boards(set(value))
                    elif kind == "answered":
                        self._answered(value)
                except Exception:
                    log.exception("worker process: acting on its news failed")
            del pending[:start]  # once a read: a message of many rows is not copied again

    def _reap(self) -> int | None:
        with self._lock:
            process, self.process = self.process, None
            wake, self._wake_fd = self._wake_fd, None
            news, self._news_fd = self._news_fd, None
            requests, self._requests = self._requests, None
            if requests is not None:
                requests.close()
            # Requests it never answered: serve writes them itself.
            for asked in self._asked.values():
                asked.done.set()
        for fd in (wake, news):
            if fd is not None:
                os.close(fd)
        if process is None:
            return None
        try:
            return process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def stop(self, timeout: float = 60.0) -> None:
        """After ``stop_event`` is set: close the wake pipe (the worker finishes the
        mails it holds and exits), then wait for it and for the news."""
        with self._lock:
            fd, self._wake_fd = self._wake_fd, None
            requests, self._requests = self._requests, None
            process = self.process
        if requests is not None:
            requests.close()
        if fd is not None:
            os.close(fd)
        if process is not None:
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log.error("worker process %s did not stop; killed", process.pid)
                process.kill()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
            self._thread = None


class Link:
    """The worker's side of the pipes (``abalone-pbm work --linked``)."""

    def __init__(self, wake_fd: int, news_fd: int, stop: threading.Event,
                 wake: threading.Event, requests_fd: int | None = None) -> None:
        self.wake_fd = wake_fd
        self.news_fd = news_fd
        self.stop = stop
        self.wake = wake
        self.requests = socket.socket(fileno=requests_fd) if requests_fd is not None else None
        self._write_lock = threading.Lock()
        #: ``serve``'s requests, in the order they came, for the next transaction.
        self._waiting: list[Request] = []
        self._waiting_lock = threading.Lock()

    def install_signals(self) -> None:
        """The worker runs in a session of its own, so a terminal's Ctrl-C reaches only
        ``serve``, which then closes the wake pipe: the worker ends after the mails it
        holds (SIGINT is ignored should it come anyway). SIGTERM (systemd stopping the
        unit's processes) ends it the same way at once."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda signum, frame: self._stop())

    def start(self) -> None:
        threading.Thread(target=self._listen, name="abalone-pbm-worker-wake",
                         daemon=True).start()
        if self.requests is not None:
            threading.Thread(target=self._receive, name="abalone-pbm-worker-requests",
                             daemon=True).start()

    def _stop(self) -> None:
        self.stop.set()
        self.wake.set()

    def _listen(self) -> None:
        """Wake the worker for each byte; stop it at the pipe's end."""
        while _read(self.wake_fd):
            self.wake.set()
        self._stop()

    def _receive(self) -> None:
        """Take ``serve``'s requests, each message whole, and wake the worker for them."""
        assert self.requests is not None
        buffer = bytearray(2 * _REQUESTS_BUFFER)
        while True:
            try:
                size, _ancillary, flags, _address = self.requests.recvmsg_into([buffer])
            except OSError:
                return
            if size == 0:
                return  # serve closed it
            if flags & socket.MSG_TRUNC:
                # Cut short (larger than the buffer): never answered, so serve writes it
                # itself when its wait is over.
                log.error("worker process: a request from serve was too large")
                continue
            request: Request = pickle.loads(bytes(buffer[:size]))
            with self._waiting_lock:
                self._waiting.append(request)
            self.wake.set()

    def take_requests(self) -> list[Request]:
        """The requests that came since the last call."""
        with self._waiting_lock:
            taken, self._waiting = self._waiting, []
        return taken

    def peek_requests(self) -> list[Request]:
        """The requests waiting for the next transaction, left there."""
        with self._waiting_lock:
            return list(self._waiting)

    def put_back(self, requests: list[Request]) -> None:
        """Requests whose transaction rolled back: first for the next one."""
        with self._waiting_lock:
            self._waiting[:0] = requests

    def tell(self, kind: str, value: Any) -> None:
        data = _frame(kind, value)
        with self._write_lock:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.news_fd, view):]
            except BrokenPipeError:
                # serve is gone: stop after this group (its rows wait for the next serve).
                self._stop()

    def robot_turns(self, boards: set[int]) -> None:
        """The worker's commit gave these boards' turn to a computer player."""
        self.tell("robots", sorted(boards))


class PipeHandoff:
    """The worker writes its replies leased to ``serve``'s sender and sends them up."""

    def __init__(self, link: Link, owner: str, now: Callable[[], datetime]) -> None:
        self.link = link
        self.owner = owner
        self.now = now

    def handoff_lease(self) -> tuple[str, datetime]:
        return self.owner, self.now() + LEASE

    def hand_over(self, rows: list[OutgoingRow]) -> None:
        if rows:
            self.link.tell("rows", rows)


def _store_mails(session: Session, rows: list[dict[str, Any]]
                 ) -> list[tuple[int | None, bool]]:
    from .mail.intake import insert_inbox_row

    return [insert_inbox_row(session, row) for row in rows]


def _record_sent(session: Session, payload: tuple[datetime, list[int]]) -> None:
    now, ids = payload
    record_sent(session, ids, now)


#: How the worker writes each kind of request.
_WRITERS: dict[str, Callable[[Session, Any], Any]] = {
    "mails": _store_mails,
    "sent": _record_sent,
}


class ServeRequests:
    """``serve``'s requests written in the worker's transactions (``worker.RideAlong``):
    the mails its listener received (stored, then taken and processed in the same
    transaction, and acknowledged by the listener once it has committed) and what its
    sender sent. Each request in a savepoint of its own; one that cannot be written is
    answered at once, for ``serve`` to write itself (never the worker's mail's problem).
    """

    def __init__(self, link: Link) -> None:
        self.link = link

    def write(self, session: Session) -> list[tuple[Request, Any]] | None:
        written: list[tuple[Request, Any]] = []
        refused: list[tuple[int, bool, Any]] = []
        for request in self.link.take_requests():
            number, kind, payload = request
            try:
                with session.begin_nested():
                    written.append((request, _WRITERS[kind](session, payload)))
            except Exception as error:
                log.error("worker: could not write a request of serve's (%s): %s", kind,
                          error_summary(error, limit=300))
                refused.append((number, False, None))
        if refused:
            self.link.tell("answered", refused)
        return written or None

    def waiting_mails(self) -> list[dict[str, Any]]:
        """The inbox rows the next ``write`` stores (the worker reads them first)."""
        return [row for _number, kind, payload in self.link.peek_requests()
                if kind == "mails" for row in payload]

    def committed(self, written: object) -> None:
        assert isinstance(written, list)
        self.link.tell("answered", [(request[0], True, result) for request, result in written])

    def rolled_back(self, written: object) -> None:
        assert isinstance(written, list)
        self.link.put_back([request for request, _result in written])
