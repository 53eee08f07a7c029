"""The worker: one transaction per mail, loop guards, reply cap, retries and parking."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from mail_helpers import OURS, person_mail, wait_for
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from abalone_pbm.db import repository
from abalone_pbm.db.models import InboxMail, OutboxMail
from abalone_pbm.mail.intake import store_mail
from abalone_pbm.worker import Worker


def _rows(database, model) -> list[SimpleNamespace]:
    """The table's rows as plain objects (a read session expires what it loaded)."""
    columns = [column.key for column in model.__table__.columns]
    with database.read() as session:
        rows = session.scalars(select(model).order_by(model.id))
        return [SimpleNamespace(**{c: getattr(row, c) for c in columns}) for row in rows]


def _inbox(database) -> list[SimpleNamespace]:
    return _rows(database, InboxMail)


def _outbox(database) -> list[SimpleNamespace]:
    return _rows(database, OutboxMail)


def _store(database, clock, raw: bytes, sender: str = "fred@example.net"):
    return store_mail(database, raw, sender, [OURS], clock)


def test_mails_are_processed_in_order_and_answered(database, make_settings, clock, echo):
    ids = [_store(database, clock, person_mail(n))[0] for n in range(1, 4)]
    worker = Worker(database, make_settings(), clock, echo)
    assert worker.run_pending() == 3
    assert worker.run_once() is False
    assert echo.calls == ids
    inbox = _inbox(database)
    assert [mail.status for mail in inbox] == ["done"] * 3
    assert all(mail.processed_at == clock.now() and mail.attempts == 1 for mail in inbox)
    outbox = _outbox(database)
    assert [row.inbox_id for row in outbox] == ids
    assert [row.recipient for row in outbox] == ["fred@example.net"] * 3


def test_a_redelivered_mail_is_stored_and_processed_once(database, make_settings, clock, echo):
    first = _store(database, clock, person_mail(1))
    again = _store(database, clock, person_mail(1))
    assert first[1] is True and again == (first[0], False)
    worker = Worker(database, make_settings(), clock, echo)
    worker.run_pending()
    # Delivered once more after it was processed: still nothing new.
    assert _store(database, clock, person_mail(1)) == (first[0], False)
    worker.run_pending()
    assert echo.calls == [first[0]]
    assert len(_outbox(database)) == 1


def _database_away() -> OperationalError:
    """What SQLAlchemy raises when the database fails under a statement (transient)."""
    return OperationalError("UPDATE inbox_mail ...", {}, Exception("database is locked"))


def test_game_change_replies_and_status_commit_together(
    database, make_settings, clock, echo, monkeypatch
):
    """If the database fails after the handler wrote its replies, none of it is kept,
    and the mail is tried again."""
    mail_id, _ = _store(database, clock, person_mail(1))
    real_mark = repository.mark_inbox

    def crash_when_done(session, mail, status, *args, **kwargs):
        if status == "done":
            raise _database_away()
        return real_mark(session, mail, status, *args, **kwargs)

    monkeypatch.setattr(repository, "mark_inbox", crash_when_done)
    worker = Worker(database, make_settings(), clock, echo)
    assert worker.run_once() is True
    assert echo.calls == [mail_id]
    assert _outbox(database) == []  # the reply the handler queued was rolled back
    (mail,) = _inbox(database)
    assert mail.status == "new" and mail.attempts == 1
    # The record names the error and where it happened, never a value it quoted.
    assert mail.last_error.startswith("OperationalError at ")
    assert "crash_when_done" in mail.last_error
    assert "database is locked" not in mail.last_error

    monkeypatch.setattr(repository, "mark_inbox", real_mark)
    assert worker.run_once() is True
    assert echo.calls == [mail_id, mail_id]
    assert len(_outbox(database)) == 1
    (mail,) = _inbox(database)
    assert mail.status == "done"


def test_a_handler_that_fails_parks_the_mail_at_once(database, make_settings, clock, echo):
    """A failure that is not the database's would only repeat: one attempt, parked."""
    calls: list[int] = []

    def broken(session, mail, message, now):
        calls.append(mail.id)
        echo(session, mail, message, now)  # writes a reply, then fails
        raise ValueError("the service layer has a bug")

    bad_id, _ = _store(database, clock, person_mail(1))
    good_id, _ = _store(database, clock, person_mail(2))
    worker = Worker(database, make_settings(), clock, broken)
    assert worker.run_once() is True
    mail = _inbox(database)[0]
    assert (mail.status, mail.attempts) == ("parked", 1)
    assert mail.last_error.startswith("ValueError at ")
    assert "in broken" in mail.last_error and "\n" not in mail.last_error
    assert "bug" not in mail.last_error and "replay" in mail.note
    assert calls == [bad_id]
    # What the handler wrote is gone; the sender is told the mail was kept, once.
    (told,) = _outbox(database)
    assert told.recipient == "fred@example.net" and told.inbox_id == bad_id
    assert b"could not be processed" in told.raw
    with database.read() as session:
        assert [m.id for m in repository.parked_mails(session)] == [bad_id]

    # The queue goes on with the next mail; the parked one is kept for the admin.
    echo.calls.clear()
    worker.handle = echo
    assert worker.run_pending() == 1
    assert echo.calls == [good_id]
    assert [m.status for m in _inbox(database)] == ["parked", "done"]


def test_a_database_that_keeps_failing_parks_the_mail_after_the_last_attempt(
        database, make_settings, clock, echo):
    calls: list[int] = []

    def locked(session, mail, message, now):
        calls.append(mail.id)
        echo(session, mail, message, now)
        raise _database_away()

    bad_id, _ = _store(database, clock, person_mail(1))
    worker = Worker(database, make_settings(), clock, locked)
    for attempt in (1, 2):
        assert worker.run_once() is True
        (mail,) = _inbox(database)
        assert (mail.status, mail.attempts) == ("new", attempt)
    assert worker.run_once() is True
    (mail,) = _inbox(database)
    assert (mail.status, mail.attempts) == ("parked", 3)
    assert calls == [bad_id] * 3
    (told,) = _outbox(database)
    assert told.inbox_id == bad_id and b"could not be processed" in told.raw


@pytest.mark.parametrize(
    ("raw", "envelope", "reason"),
    [
        (person_mail(1, headers="Auto-Submitted: auto-replied\r\n"), "fred@example.net",
         "Auto-Submitted"),
        (person_mail(2, headers="Precedence: bulk\r\n"), "fred@example.net", "Precedence"),
        (person_mail(3, headers=f"X-Loop: {OURS}\r\n"), "fred@example.net", "X-Loop"),
        (person_mail(4), "", "empty envelope sender"),
        (person_mail(5, sender="MAILER-DAEMON@mx.example.net"), "fred@example.net",
         "mailer-daemon"),
    ],
)
def test_loop_guarded_mail_is_dropped_unanswered(
    database, make_settings, clock, echo, raw, envelope, reason
):
    mail_id, _ = store_mail(database, raw, envelope, [OURS], clock)
    worker = Worker(database, make_settings(), clock, echo)
    assert worker.run_once() is True
    (mail,) = _inbox(database)
    assert mail.status == "dropped"
    assert reason.lower() in mail.note.lower()
    assert echo.calls == [] and _outbox(database) == []


def test_the_daily_reply_cap(database, make_settings, clock, echo):
    worker = Worker(database, make_settings(daily_reply_cap=2), clock, echo)
    for n in range(1, 4):
        _store(database, clock, person_mail(n))
    _store(database, clock, person_mail(9, sender="wilma@example.net"), "wilma@example.net")
    worker.run_pending()
    statuses = [(m.status, m.note) for m in _inbox(database)]
    assert [s for s, _ in statuses] == ["done", "done", "dropped", "done"]
    assert "daily reply cap" in statuses[2][1]
    # A day later fred is answered again.
    clock.advance(hours=24, seconds=1)
    _store(database, clock, person_mail(10))
    worker.run_pending()
    assert _inbox(database)[-1].status == "done"


def test_run_forever_wakes_up_for_new_mail(database, make_settings, clock, echo):
    worker = Worker(database, make_settings(), clock, echo)
    stop, wake = threading.Event(), threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop, wake), kwargs={"idle": 30})
    thread.start()
    try:
        mail_id, _ = _store(database, clock, person_mail(1))
        wake.set()
        wait_for(lambda: echo.calls == [mail_id], timeout=10)
    finally:
        stop.set()
        wake.set()
        thread.join(10)
    assert not thread.is_alive()


def test_several_workers_share_the_inbox_and_take_each_mail_once(
    database, make_settings, clock, echo
):
    count = 24
    ids = [_store(database, clock, person_mail(n, sender=f"p{n}@example.net"))[0]
           for n in range(count)]
    workers = [Worker(database, make_settings(), clock, echo) for _ in range(3)]
    threads = [threading.Thread(target=w.run_pending) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(echo.calls) == ids
    with database.read() as session:
        assert session.scalar(select(func.count(OutboxMail.id))) == count
        assert {m.status for m in session.scalars(select(InboxMail))} == {"done"}


KILLED_WORKER = """
import sys, time
from abalone_pbm.clock import SystemClock
from abalone_pbm.config import Settings
from abalone_pbm.db.repository import enqueue_outbox
from abalone_pbm.db.session import Database
from abalone_pbm.mail.compose import compose
from abalone_pbm.worker import Worker

url, flag = sys.argv[1:]
ours = "abalone@example.org"


def handle(session, mail, message, now):
    reply = compose(sender=ours, to="fred@example.net", subject="half done", body="x\\n",
                    loop_token=ours, date=now)
    enqueue_outbox(session, reply, now, inbox_id=mail.id)
    session.flush()
    open(flag, "w").write("in the middle of a mail")
    time.sleep(600)


Worker(Database(url), Settings(database_url=url, address=ours), SystemClock(), handle).run_once()
"""


def test_a_worker_killed_in_the_middle_loses_nothing_and_applies_nothing_twice(
    database, make_settings, clock, echo, tmp_path
):
    mail_id, _ = _store(database, clock, person_mail(1))
    flag = tmp_path / "flag"
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_WORKER, database.url, str(flag)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: flag.exists() or process.poll() is not None, timeout=60)
        assert flag.exists(), process.communicate()[1]
    finally:
        process.kill()  # SIGKILL: no cleanup of any kind
        process.wait(30)
    worker = Worker(database, make_settings(), clock, echo)
    # PostgreSQL notices the dead connection (and drops its row lock) within moments.
    wait_for(lambda: worker.run_once(), timeout=30)
    assert echo.calls == [mail_id]
    (mail,) = _inbox(database)
    assert mail.status == "done"
    outbox = _outbox(database)
    assert len(outbox) == 1 and b"half done" not in outbox[0].raw


def test_the_reply_cap_counts_the_address_answers_go_to(database, make_settings, clock, echo):
    """A stranger's Reply-To does not move the answers (nor the cap) elsewhere: they go
    to the envelope sender, and the cap counts that address, whatever the headers say."""
    worker = Worker(database, make_settings(daily_reply_cap=1), clock, echo)
    home = "Reply-To: fred@home.example.net\r\n"
    _store(database, clock, person_mail(1, headers=home))
    _store(database, clock, person_mail(2, headers=home))
    _store(database, clock, person_mail(3))
    worker.run_pending()
    assert [m.status for m in _inbox(database)] == ["done", "dropped", "dropped"]
    assert [r.recipient for r in _outbox(database)] == ["fred@example.net"]


class _NoteRides:
    """Another part's writes riding on the worker's transactions (``RideAlong``): one
    rate event per transaction; the worker then says whether it committed."""

    def __init__(self) -> None:
        self.ended: list[tuple[str, int]] = []
        self.rides = 0

    def write(self, session):
        from abalone_pbm.service import rates

        self.rides += 1
        rates.record(session, "ride-along", f"ride {self.rides}", datetime.now(timezone.utc))
        return self.rides

    def committed(self, written):
        self.ended.append(("committed", written))

    def waiting_mails(self):
        return []

    def rolled_back(self, written):
        self.ended.append(("rolled back", written))



def _rides(database) -> list[str]:
    from abalone_pbm.db.models import RateEvent

    with database.read() as session:
        return list(session.scalars(select(RateEvent.subject).where(
            RateEvent.scope == "ride-along").order_by(RateEvent.id)))


def test_writes_ride_along_with_the_mail_and_roll_back_only_when_the_database_fails(
        database, make_settings, clock, echo, monkeypatch):
    rides = _NoteRides()
    worker = Worker(database, make_settings(), clock, echo, ride_along=rides, max_attempts=5)
    assert worker.run_once() is False  # no mail: the ride still commits
    _store(database, clock, person_mail(1))
    assert worker.run_once() is True
    real_mark = repository.mark_inbox
    failure: list[Exception] = []

    def crash_when_done(session, mail, status, *args, **kwargs):
        if status == "done":
            raise failure[0]
        return real_mark(session, mail, status, *args, **kwargs)

    monkeypatch.setattr(repository, "mark_inbox", crash_when_done)
    # The mail's own failure: it is parked, and what rode along commits with that.
    _store(database, clock, person_mail(2))
    failure.append(RuntimeError("the mail's processing fails"))
    assert worker.run_once() is True
    # The database's: everything rolls back, what rode along is written alone first
    # next time.
    _store(database, clock, person_mail(3))
    failure[0] = _database_away()
    assert worker.run_once() is True
    assert rides.ended == [("committed", 1), ("committed", 2), ("committed", 3),
                           ("rolled back", 4)]
    assert [m.status for m in _inbox(database)] == ["done", "parked", "new"]
    monkeypatch.setattr(repository, "mark_inbox", real_mark)
    assert worker.run_once() is True
    assert rides.ended[4:] == [("committed", 5), ("committed", 6)]
    assert _rides(database) == ["ride 1", "ride 2", "ride 3", "ride 5", "ride 6"]
    assert [m.status for m in _inbox(database)] == ["done", "parked", "done"]


class _SlowChecks:
    """Password checks that take ``seconds`` (as argon2 does under load): every mail
    names one password, checked in a thread of its own."""

    def __init__(self, seconds: float) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.seconds = seconds
        self.pool = ThreadPoolExecutor(2)
        self.finished: list[float] = []

    def wanted(self, session, mail, message, budget=None):
        return [("fred", f"secret-{mail.id}")]

    def check_soon(self, pairs):
        import time as clock

        def check() -> bool:
            clock.sleep(self.seconds)
            self.finished.append(clock.monotonic())
            return True

        return {pair: self.pool.submit(check) for pair in pairs}

    def known(self, answers):
        from contextlib import nullcontext

        return nullcontext()


def test_what_rides_along_does_not_wait_for_a_password_check(
        database, make_settings, clock, echo):
    """Mails waiting to be stored (serve's listener, through the worker) are written
    while the worker waits for a mail's password check, not after it."""
    import time as clock_time

    class Stamped(_NoteRides):
        def __init__(self) -> None:
            super().__init__()
            self.committed_at: list[float] = []

        def committed(self, written):
            super().committed(written)
            self.committed_at.append(clock_time.monotonic())

    rides, checks = Stamped(), _SlowChecks(0.5)
    worker = Worker(database, make_settings(), clock, echo, ride_along=rides,
                    passwords=checks, look_ahead=0)
    _store(database, clock, person_mail(1))
    assert worker.run_once() is True
    # The mail's first transaction leaves for the check (its ride rolled back), the
    # ride is written alone at once, then the mail is processed with the next one.
    assert rides.ended == [("rolled back", 1), ("committed", 2), ("committed", 3)]
    assert rides.committed_at[0] < checks.finished[0]  # written before the check ended
    assert [m.status for m in _inbox(database)] == ["done"]
