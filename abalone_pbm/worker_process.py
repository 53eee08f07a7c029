"""``serve``'s worker in a process of its own, linked to ``serve`` by pipes.

One Python process runs one thread at a time, and the worker (parse, play, render,
compose, commit) takes most of ``serve``'s CPU. With the worker in a child process the
listener and the sender of ``serve`` run beside it on another core
(``ABALONE_PBM_WORKER_PROCESS``, on by default).

On SQLite the worker process is the one writer of the mail path: it stores the mails
``serve``'s listener received and records what ``serve``'s sender sent, in its own
transactions (``IntakeRecords``, ``SentRecords``), so that no mail waits for the write
lock while a thread of ``serve`` holding it waits for its turn at the interpreter. A
stored mail is taken and processed in the very transaction that stores it, and the
listener acknowledges it (250) once that has committed. What the worker does not
confirm in time, or at all because it died, ``serve`` writes itself: a mail the worker
stored meanwhile is then found stored (its deduplication key), and a mail recorded as
sent twice is no different.

Two pipes and a socket link them; they carry news, never the only copy of anything:

* *wake*, ``serve`` -> worker: a byte ``w`` when the listener has stored a mail, and
  (on SQLite) the ids of mails ``serve``'s sender has sent (``s``, a 4-byte length and
  a pickle). Its end (the pipe closed: ``serve`` stops, or died) stops the worker after
  the mails it holds, so a worker never outlives its server.
* *intake*, ``serve`` -> worker (a socket that keeps each message whole): the rows of
  mails to store; a message too large for it is stored by the listener itself.
* *news*, worker -> ``serve``: after each commit, the outbox rows it wrote (written
  leased to ``serve``'s sender, as the worker thread hands them over in one process),
  the boards whose turn went to a computer player, and which mails it stored and which
  records of sent mails it committed. Each message is a 4-byte length and a pickle
  (both ends are this program).

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
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from .config import Settings, settings_environment
from .db.repository import OutgoingRow, record_sent
from .mail.sender import LEASE
from .mail.validation import error_summary

__all__ = ["WorkerProcess", "Link", "PipeHandoff", "SentRecords", "IntakeRecords",
           "RidesAlong", "RESTART_DELAY", "RECORD_WAIT", "STORE_WAIT"]

log = logging.getLogger(__name__)

#: Seconds before a worker that died is started again (a crash loop stays slow).
RESTART_DELAY = 1.0

#: Seconds ``serve``'s sender waits for the worker to confirm a record of sent mails
#: before it writes the record itself (a group of the worker's takes tens of ms).
RECORD_WAIT = 5.0

#: Seconds the listener waits for the worker to confirm that it stored the mails it
#: was given before it stores them itself (a mail is acknowledged only once stored).
STORE_WAIT = 5.0
#: Send buffer asked for on the intake socket (the kernel may give less; a mail that
#: does not fit is stored by the listener itself).
_INTAKE_BUFFER = 4 << 20

_LENGTH = 4
#: The wake pipe's messages: a stored mail, and mails sent (``s`` + a framed pickle).
_WAKE = b"w"
_SENT = b"s"
#: Ids in one message of sent mails: well under PIPE_BUF, so that each message is
#: written whole or not at all by one non-blocking write.
_IDS_PER_MESSAGE = 256


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
class _Record:
    """A message to the worker (sent mails to record, mails to store), waiting for the
    worker to confirm it committed what it asked for; ``result``: what the worker
    answered (for mails stored, each one's inbox id and whether it was new)."""

    done: threading.Event = field(default_factory=threading.Event)
    recorded: bool = False
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
        self._intake: socket.socket | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: Messages of sent mails the worker has not confirmed yet, by number.
        self._records: dict[int, _Record] = {}
        self._last_record = 0

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
        # Mails to store go over a socket that keeps each message whole (a pipe would
        # not, for a mail larger than PIPE_BUF); one that cannot be sent in time, or
        # is too large for it, is stored by the listener itself.
        intake, intake_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            intake.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _INTAKE_BUFFER)
        except OSError:
            pass
        intake.settimeout(STORE_WAIT)
        try:
            process = subprocess.Popen(
                [*self.command, "--linked",
                 f"{wake_read},{news_write},{intake_end.fileno()},{self.owner}"],
                pass_fds=(wake_read, news_write, intake_end.fileno()), env=self.environment,
                # Every mail waits for the worker, the one step that runs one at a time:
                # in a session of its own Linux schedules it as a group of its own
                # (autogroup), so serve's many threads cannot crowd it out of a core.
                # It still ends with serve (its wake pipe) and ignores a terminal's ^C.
                start_new_session=True,
            )
        except BaseException:
            for fd in (wake_write, news_read):
                os.close(fd)
            intake.close()
            raise
        finally:
            os.close(wake_read)
            os.close(news_write)
            intake_end.close()
        os.set_blocking(wake_write, False)
        with self._lock:
            self.process = process
            self._wake_fd = wake_write
            self._news_fd = news_read
            self._intake = intake
        log.info("worker process %s started", process.pid)

    def wake(self) -> None:
        """A mail was stored: tell the worker (never blocks; a full pipe is awake)."""
        with self._lock:
            fd = self._wake_fd
            if fd is None:
                return
            try:
                os.write(fd, _WAKE)
            except (BlockingIOError, BrokenPipeError):
                pass

    def record_sent(self, ids: list[int], now: datetime, wait: float = RECORD_WAIT) -> bool:
        """Have the worker record these mails as sent in its next transaction; True once
        it has committed that, False when it cannot (no worker, its pipe full, no
        confirmation within ``wait`` seconds): the caller then records them itself."""
        records: dict[int, _Record] = {}
        with self._lock:
            fd = self._wake_fd
            if fd is None:
                return False
            for start in range(0, len(ids), _IDS_PER_MESSAGE):
                self._last_record += 1
                number = self._last_record
                message = _SENT + _frame("sent", (number, now,
                                                  ids[start:start + _IDS_PER_MESSAGE]))
                assert len(message) <= select.PIPE_BUF
                try:
                    os.write(fd, message)  # whole or not at all (see _IDS_PER_MESSAGE)
                except OSError:
                    # What was written may still be recorded too: no harm.
                    for written in records:
                        del self._records[written]
                    return False
                records[number] = self._records[number] = _Record()
        deadline = time.monotonic() + wait
        for record in records.values():
            record.done.wait(max(0.0, deadline - time.monotonic()))
        with self._lock:
            for number in records:
                self._records.pop(number, None)
        return all(record.recorded for record in records.values())

    def store_mails(self, rows: list[dict[str, Any]], wait: float = STORE_WAIT
                    ) -> list[tuple[int | None, bool]] | None:
        """Have the worker store these inbox rows (``intake.inbox_values``) in its next
        transaction; each one's (inbox id, whether it was new) once the worker has
        committed them, None when it cannot (no worker, a mail too large for the
        socket, no confirmation within ``wait`` seconds): the caller stores them itself
        (a mail the worker stored meanwhile is found stored already)."""
        with self._lock:
            intake = self._intake
            if intake is None:
                return None
            self._last_record += 1
            number = self._last_record
            record = self._records[number] = _Record()
        try:
            # One message, whole or not at all; the socket's timeout bounds the wait.
            intake.send(pickle.dumps((number, rows), protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            with self._lock:
                self._records.pop(number, None)
            return None
        record.done.wait(wait)
        with self._lock:
            self._records.pop(number, None)
        return record.result if record.recorded else None

    def _confirmed(self, numbers: list[tuple[int, bool]]) -> None:
        """The worker committed (True) or could not write (False) these records."""
        self._answered([(number, recorded, None) for number, recorded in numbers])

    def _answered(self, answers: list[tuple[int, bool, Any]]) -> None:
        with self._lock:
            for number, recorded, result in answers:
                record = self._records.get(number)
                if record is not None:
                    record.recorded, record.result = recorded, result
                    record.done.set()

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
                    elif kind == "recorded":
                        self._confirmed(value)
                    elif kind == "stored":
                        self._answered(value)
                except Exception:
                    log.exception("worker process: acting on its news failed")
            del pending[:start]  # once a read: a message of many rows is not copied again

    def _reap(self) -> int | None:
        with self._lock:
            process, self.process = self.process, None
            wake, self._wake_fd = self._wake_fd, None
            news, self._news_fd = self._news_fd, None
            intake, self._intake = self._intake, None
            if intake is not None:
                intake.close()
            # Records it never confirmed: the sender writes them itself.
            for record in self._records.values():
                record.done.set()
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
            intake, self._intake = self._intake, None
            process = self.process
        if intake is not None:
            intake.close()
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
                 wake: threading.Event, intake_fd: int | None = None) -> None:
        self.wake_fd = wake_fd
        self.news_fd = news_fd
        self.stop = stop
        self.wake = wake
        self.intake = (socket.socket(fileno=intake_fd) if intake_fd is not None else None)
        self._write_lock = threading.Lock()
        #: Records of sent mails from ``serve``, for the next transaction (SentRecords).
        self._sent: list[tuple[int, datetime, list[int]]] = []
        #: Mails to store from ``serve``'s listener, for the next transaction
        #: (IntakeRecords): the message's number and its inbox rows.
        self._mails: list[tuple[int, list[dict[str, Any]]]] = []
        self._sent_lock = threading.Lock()

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
        if self.intake is not None:
            threading.Thread(target=self._receive_mails, name="abalone-pbm-worker-intake",
                             daemon=True).start()

    def _receive_mails(self) -> None:
        """Take the mails ``serve``'s listener sends to be stored, each message whole."""
        assert self.intake is not None
        buffer = bytearray(2 * _INTAKE_BUFFER)
        while True:
            try:
                size, _ancillary, flags, _address = self.intake.recvmsg_into([buffer])
            except OSError:
                return
            if size == 0:
                return  # serve closed it
            if flags & socket.MSG_TRUNC:
                # Cut short (larger than the buffer): never answered, so the listener
                # stores it itself when its wait is over.
                log.error("worker process: a message of mails to store was too large")
                continue
            number, rows = pickle.loads(bytes(buffer[:size]))
            with self._sent_lock:
                self._mails.append((number, rows))
            self.wake.set()

    def _stop(self) -> None:
        self.stop.set()
        self.wake.set()

    def _listen(self) -> None:
        """Wake the worker for each message; stop it at the pipe's end."""
        pending = bytearray()
        while chunk := _read(self.wake_fd):
            pending += chunk
            start = 0
            while start < len(pending):
                kind = pending[start:start + 1]
                if kind == _WAKE:
                    start += 1
                    continue
                if kind != _SENT:
                    log.error("worker process: a message it cannot read came from serve")
                    self._stop()
                    return
                head = start + 1 + _LENGTH
                if len(pending) < head:
                    break
                end = head + int.from_bytes(pending[start + 1:head], "big")
                if len(pending) < end:
                    break
                _kind, record = pickle.loads(pending[head:end])
                start = end
                with self._sent_lock:
                    self._sent.append(record)
            del pending[:start]
            self.wake.set()
        self._stop()

    def take_sent(self) -> list[tuple[int, datetime, list[int]]]:
        """The records of sent mails that arrived since the last call."""
        with self._sent_lock:
            taken, self._sent = self._sent, []
        return taken

    def put_back_sent(self, records: list[tuple[int, datetime, list[int]]]) -> None:
        """Records whose transaction rolled back: for the next one."""
        with self._sent_lock:
            self._sent[:0] = records

    def take_mails(self) -> list[tuple[int, list[dict[str, Any]]]]:
        """The mails to store that arrived since the last call."""
        with self._sent_lock:
            taken, self._mails = self._mails, []
        return taken

    def put_back_mails(self, mails: list[tuple[int, list[dict[str, Any]]]]) -> None:
        """Mails whose transaction rolled back: for the next one."""
        with self._sent_lock:
            self._mails[:0] = mails

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


class SentRecords:
    """``serve``'s sender's records of sent mails, written in the worker's transactions
    (``worker.RideAlong``) and confirmed to ``serve`` after the commit."""

    def __init__(self, link: Link) -> None:
        self.link = link

    def write(self, session: Session) -> list[tuple[int, datetime, list[int]]] | None:
        records = self.link.take_sent()
        if not records:
            return None
        try:
            with session.begin_nested():
                for _number, now, ids in records:
                    record_sent(session, ids, now)
        except Exception as error:
            # Never the worker's mail's problem: serve's sender records them itself.
            log.error("worker: could not record %d sent mails for serve: %s",
                      sum(len(ids) for _n, _now, ids in records),
                      error_summary(error, limit=300))
            self.link.tell("recorded", [(number, False) for number, _now, _ids in records])
            return None
        return records

    def committed(self, written: object) -> None:
        assert isinstance(written, list)
        self.link.tell("recorded", [(number, True) for number, _now, _ids in written])

    def rolled_back(self, written: object) -> None:
        assert isinstance(written, list)
        self.link.put_back_sent(written)


class IntakeRecords:
    """The mails ``serve``'s listener received, stored in the worker's transactions
    (``worker.RideAlong``): in a group's transaction they are stored, then taken and
    processed with it, and the listener acknowledges them once it has committed. With
    one writer, no mail waits for the write lock while the listener's threads take
    turns at their interpreter."""

    def __init__(self, link: Link) -> None:
        self.link = link

    def write(self, session: Session
              ) -> list[tuple[int, list[dict[str, Any]], list[Any]]] | None:
        from .mail.intake import store_inbox_id

        messages = self.link.take_mails()
        if not messages:
            return None
        stored: list[tuple[int, list[dict[str, Any]], list[Any]]] = []
        refused: list[tuple[int, bool, Any]] = []
        for number, rows in messages:
            try:
                with session.begin_nested():
                    results = [store_inbox_id(session, row["raw"], "", [], row["received_at"],
                                              values=row) for row in rows]
            except Exception as error:
                # The listener stores these itself (and fails them alone if it must).
                log.error("worker: could not store %d mails for serve: %s", len(rows),
                          error_summary(error, limit=300))
                refused.append((number, False, None))
                continue
            stored.append((number, rows, results))
        if refused:
            self.link.tell("stored", refused)
        return stored or None

    def committed(self, written: object) -> None:
        assert isinstance(written, list)
        self.link.tell("stored", [(number, True, results)
                                  for number, _rows, results in written])

    def rolled_back(self, written: object) -> None:
        assert isinstance(written, list)
        # Stored again by the next transaction.
        self.link.put_back_mails([(number, rows) for number, rows, _results in written])


class RidesAlong:
    """Several ``worker.RideAlong`` in one: each writes in turn and is told the end."""

    def __init__(self, *parts: Any) -> None:
        self.parts = parts

    def write(self, session: Session) -> list[object | None] | None:
        written = [part.write(session) for part in self.parts]
        return written if any(w is not None for w in written) else None

    def committed(self, written: object) -> None:
        assert isinstance(written, list)
        for part, mine in zip(self.parts, written):
            if mine is not None:
                part.committed(mine)

    def rolled_back(self, written: object) -> None:
        assert isinstance(written, list)
        for part, mine in zip(self.parts, written):
            if mine is not None:
                part.rolled_back(mine)
