"""On SQLite ``serve``'s worker process is the one writer: it stores the mails
``serve``'s listener received and records what ``serve``'s sender sent, in its next
transaction, and confirms them after the commit. What it does not confirm in time, or
at all because it died, ``serve`` writes itself: a mail stored meanwhile is found
stored, and recording a mail as sent twice changes nothing. Through a real
``abalone-pbm work --linked`` child."""

from __future__ import annotations

import os
import signal
import threading
import time
from datetime import timedelta

import pytest
from mail_helpers import OURS, person_mail, wait_for
from sqlalchemy import select

from abalone_pbm.db.models import InboxMail, OutboxMail
from abalone_pbm.mail.intake import GroupStore, inbox_values
from abalone_pbm.db.repository import HANDOFF, Handoff, enqueue_outbox
from abalone_pbm.mail.compose import compose
from abalone_pbm.mail.sender import LEASE
from abalone_pbm.worker_process import Link, WorkerProcess

OWNER = "serve-under-test"


def _leased_rows(database, clock, count: int) -> list[int]:
    """Outbox rows leased to OWNER, as the worker writes them for serve's sender."""
    handoff = Handoff(OWNER, clock.now() + LEASE, [])
    with database.write() as session:
        session.info[HANDOFF] = handoff
        for number in range(count):
            message = compose(sender="abalone@example.org", to=f"p{number}@example.net",
                              subject=f"Abalone Board {101 + number}", body="the board\n",
                              loop_token="abalone@example.org", date=clock.now())
            enqueue_outbox(session, message, clock.now())
    return [row.id for row in handoff.rows]


def _statuses(database) -> dict[int, tuple[str, str | None]]:
    with database.read() as session:
        return {row.id: (row.status, row.lease_owner)
                for row in session.scalars(select(OutboxMail))}


@pytest.fixture
def worker_process(database, make_settings):
    stop = threading.Event()
    linked = WorkerProcess(owner=OWNER, on_rows=lambda rows: None,
                           on_robot_boards=lambda boards: None,
                           on_lost=lambda: _set(threading.Event()), stop_event=stop,
                           settings=make_settings())
    linked.start()
    yield linked
    stop.set()
    if linked.process is not None and linked.process.poll() is None:
        os.kill(linked.process.pid, signal.SIGCONT)
    linked.stop()


def _set(event: threading.Event) -> threading.Event:
    event.set()
    return event


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_worker_records_the_sent_mails_and_confirms(database, clock, worker_process):
    ids = _leased_rows(database, clock, 3)
    assert worker_process.record_sent(ids, clock.now() + timedelta(seconds=1))
    assert _statuses(database) == {row: ("sent", None) for row in ids}


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_record_the_worker_does_not_confirm_in_time_is_left_to_the_sender(
        database, clock, worker_process):
    first, second = _leased_rows(database, clock, 2)
    assert worker_process.record_sent([first], clock.now())  # the worker is up
    process = worker_process.process
    os.kill(process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        assert not worker_process.record_sent([second], clock.now(), wait=0.5)
        assert time.monotonic() - started < 5
        # Stalled: the next record is not asked for at all, however long it may wait.
        assert worker_process.stalled
        started = time.monotonic()
        assert not worker_process.record_sent([second], clock.now(), wait=60)
        assert time.monotonic() - started < 1
    finally:
        os.kill(process.pid, signal.SIGCONT)
    # The worker still writes it when it wakes up: sent once, recorded twice, no harm;
    # its answer, late, ends the stall.
    wait_for(lambda: _statuses(database)[second] == ("sent", None))
    wait_for(lambda: not worker_process.stalled)
    assert worker_process.record_sent([second], clock.now())


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_worker_that_dies_fails_the_records_it_was_given_at_once(
        database, clock, worker_process):
    (row,) = _leased_rows(database, clock, 1)
    answer = _asked_of_a_worker_that_dies(
        worker_process, lambda: worker_process.record_sent([row], clock.now(), wait=60))
    assert answer is False
    assert _statuses(database)[row] == ("pending", OWNER)  # for the sender to record


def _asked_of_a_worker_that_dies(worker_process, ask):  # type: ignore[no-untyped-def]
    """What ``ask()`` answers when the worker, frozen while it is asked, is killed: at
    once, not when the wait is over."""
    process = worker_process.process
    os.kill(process.pid, signal.SIGSTOP)  # it is asked, and never answers
    answers: list[object] = []
    waiting = threading.Thread(target=lambda: answers.append(ask()))
    waiting.start()
    time.sleep(0.3)
    started = time.monotonic()
    os.kill(process.pid, signal.SIGKILL)
    waiting.join(20)
    assert len(answers) == 1 and time.monotonic() - started < 15
    return answers[0]


def test_the_link_takes_requests_whole_and_in_order_and_wakes_for_each():
    """Wake bytes come over a pipe; serve's requests over a socket that keeps each
    message whole, however large; the pipe's end stops the worker."""
    import pickle
    import socket

    wake_read, wake_write = os.pipe()
    news_read, news_write = os.pipe()
    serve_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stop, wake = threading.Event(), threading.Event()
    link = Link(wake_read, news_write, stop, wake, worker_end.detach())
    link.start()
    requests = [(1, "sent", ("now", [11, 12])), (2, "sent", ("later", list(range(3000))))]
    try:
        for byte in b"www":
            os.write(wake_write, bytes([byte]))
        assert wake.wait(10)
        for request in requests:
            serve_end.send(pickle.dumps(request))
        wait_for(lambda: len(link._waiting) == 2)
        assert link.take_requests() == requests and link.take_requests() == []
        assert not stop.is_set()
        os.close(wake_write)  # serve is gone: the worker stops
        assert stop.wait(10)
    finally:
        serve_end.close()
        for fd in (news_read, news_write):
            os.close(fd)


def _rows(clock, *numbers: int) -> list[dict]:
    return [inbox_values(person_mail(n), "fred@example.net", [OURS], clock.now())
            for n in numbers]


def _inbox_ids(database) -> list[int]:
    with database.read() as session:
        return list(session.scalars(select(InboxMail.id).order_by(InboxMail.id)))


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_worker_stores_the_mails_the_listener_received(database, clock, worker_process):
    stored = worker_process.store_mails(_rows(clock, 1, 2))
    assert stored is not None and [created for _id, created in stored] == [True, True]
    assert _inbox_ids(database) == [mail_id for mail_id, _created in stored]
    # The same delivery again (an MTA that lost our 250): found, not stored twice.
    assert worker_process.store_mails(_rows(clock, 2)) == [(stored[1][0], False)]
    assert len(_inbox_ids(database)) == 2


@pytest.mark.parametrize("backend", ["sqlite"])
def test_mails_the_worker_does_not_confirm_in_time_are_stored_by_the_listener(
        database, clock, worker_process):
    process = worker_process.process
    os.kill(process.pid, signal.SIGSTOP)
    try:
        store = GroupStore(database, clock,
                           delegate=lambda rows: worker_process.store_mails(rows, wait=0.5))
        started = time.monotonic()
        mail_id, created = store(person_mail(3), "fred@example.net", [OURS])
        assert created and time.monotonic() - started < 5
        assert _inbox_ids(database) == [mail_id]
        # While the worker is stalled the listener stores each further mail at once.
        slow = GroupStore(database, clock,
                          delegate=lambda rows: worker_process.store_mails(rows, wait=60))
        started = time.monotonic()
        more = [slow(person_mail(n), "fred@example.net", [OURS])[0] for n in (7, 8, 9)]
        assert time.monotonic() - started < 5
        assert _inbox_ids(database) == [mail_id, *more]
    finally:
        os.kill(process.pid, signal.SIGCONT)
    # The worker, awake, finds it stored already: one row; and is asked again.
    wait_for(lambda: not worker_process.stalled)
    assert worker_process.store_mails(_rows(clock, 3)) == [(mail_id, False)]
    assert _inbox_ids(database) == [mail_id, *more]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_mail_too_large_for_the_link_is_left_to_the_listener_at_once(
        database, clock, worker_process):
    huge = person_mail(4) + b"x" * (32 << 20)
    rows = [inbox_values(huge, "fred@example.net", [OURS], clock.now())]
    started = time.monotonic()
    assert worker_process.store_mails(rows) is None
    assert time.monotonic() - started < 2
    assert worker_process.store_mails(_rows(clock, 5)) is not None  # the link still works


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_worker_that_dies_fails_the_mails_it_was_given_at_once(
        database, clock, worker_process):
    answer = _asked_of_a_worker_that_dies(
        worker_process, lambda: worker_process.store_mails(_rows(clock, 6), wait=60))
    assert answer is None
    assert _inbox_ids(database) == []  # for the listener to store
