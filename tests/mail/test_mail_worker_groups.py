"""The worker's groups (``serve``): the mails waiting are processed in one transaction,
each in a savepoint; one that fails is parked in its place, one that needs an argon2
check (or that the database fails) is left for the next group, which starts with it."""

from __future__ import annotations

from types import SimpleNamespace

from mail_helpers import OURS, Echo, person_mail
from sqlalchemy import event, select

from abalone_pbm.db.models import InboxMail, OutboxMail
from abalone_pbm.db.repository import OutgoingRow
from abalone_pbm.mail.intake import store_mail
from abalone_pbm.worker import Worker


def _rows(database, model) -> list[SimpleNamespace]:
    columns = [column.key for column in model.__table__.columns]
    with database.read() as session:
        rows = session.scalars(select(model).order_by(model.id))
        return [SimpleNamespace(**{c: getattr(row, c) for c in columns}) for row in rows]


def _store_all(database, clock, numbers) -> list[int]:
    return [store_mail(database, person_mail(n), "fred@example.net", [OURS], clock)[0]
            for n in numbers]


class _Handoff:
    def __init__(self, clock) -> None:  # type: ignore[no-untyped-def]
        self.clock = clock
        self.batches: list[list[OutgoingRow]] = []

    def handoff_lease(self):  # type: ignore[no-untyped-def]
        return "me", self.clock.now()

    def hand_over(self, rows: list[OutgoingRow]) -> None:
        self.batches.append(list(rows))


def test_waiting_mails_commit_together_with_their_replies(database, make_settings, clock):
    ids = _store_all(database, clock, range(1, 7))
    handoff = _Handoff(clock)
    worker = Worker(database, make_settings(), clock, Echo(), handoff=handoff, group_most=4,
                    group_seconds=30)
    commits: list[int] = []
    event.listen(database.engine, "commit", lambda _connection: commits.append(1))
    assert worker.run_group() == 4
    assert worker.run_group() == 2
    assert len(commits) == 2
    assert worker.run_group() == 0
    assert [m.status for m in _rows(database, InboxMail)] == ["done"] * 6
    outbox = _rows(database, OutboxMail)
    assert [row.inbox_id for row in outbox] == ids
    # Every reply goes to the sender with the commit of its group, none before.
    assert [[row.id for row in batch] for batch in handoff.batches] == [
        [row.id for row in outbox[:4]], [row.id for row in outbox[4:]]]


def test_run_once_takes_one_mail(database, make_settings, clock):
    _store_all(database, clock, range(1, 4))
    worker = Worker(database, make_settings(), clock, Echo(), group_most=16, group_seconds=30)
    assert worker.run_pending() == 3


def test_a_failing_mail_is_parked_in_its_group_and_the_group_goes_on(
        database, make_settings, clock):
    ids = _store_all(database, clock, range(1, 6))
    echo = Echo()
    bad = ids[2]

    def handle(session, mail, message, now):  # type: ignore[no-untyped-def]
        echo(session, mail, message, now)
        if mail.id == bad:
            raise RuntimeError("this one breaks")

    worker = Worker(database, make_settings(), clock, handle, group_most=16, group_seconds=30)
    assert worker.run_group() == 5
    assert echo.calls == ids  # tried once
    inbox = {m.id: m for m in _rows(database, InboxMail)}
    assert [inbox[i].status for i in ids] == ["done", "done", "parked", "done", "done"]
    assert inbox[bad].attempts == 1
    assert "RuntimeError" in (inbox[bad].last_error or "")  # its type, never its value
    assert "breaks" not in (inbox[bad].last_error or "")
    # No reply of the failing mail was kept (only the notice that it was parked); each
    # other mail has its one reply.
    outbox = _rows(database, OutboxMail)
    assert sorted(r.inbox_id for r in outbox if r.inbox_id != bad) == \
        [i for i in ids if i != bad]
    assert [b"Subject: Re: abalone help 3" in r.raw for r in outbox if r.inbox_id == bad] \
        == [False]


def test_a_mail_the_database_fails_leaves_the_group_and_is_tried_alone(
        database, make_settings, clock):
    from sqlalchemy.exc import OperationalError

    ids = _store_all(database, clock, range(1, 6))
    echo = Echo()
    bad = ids[2]
    failures = [OperationalError("SELECT ...", {}, Exception("database is locked"))]

    def handle(session, mail, message, now):  # type: ignore[no-untyped-def]
        echo(session, mail, message, now)
        if mail.id == bad and failures:
            raise failures.pop()

    worker = Worker(database, make_settings(), clock, handle, group_most=16, group_seconds=30)
    assert worker.run_group() == 2  # the two before it
    inbox = {m.id: m for m in _rows(database, InboxMail)}
    assert [inbox[i].status for i in ids] == ["done", "done", "new", "new", "new"]
    assert inbox[bad].attempts == 0  # not counted: it was not tried alone yet
    assert worker.run_group() == 1  # alone: the database is back
    assert worker.run_group() == 2
    inbox = {m.id: m for m in _rows(database, InboxMail)}
    assert [inbox[i].status for i in ids] == ["done"] * 5


def test_a_mail_that_needs_a_password_check_ends_the_group(database, make_settings, clock):
    ids = _store_all(database, clock, range(1, 5))
    checked: list[list[tuple[str, str]]] = []

    class Passwords:
        def wanted(self, session, mail, message, budget=None):  # type: ignore[no-untyped-def]
            return [("hash", "secret")] if mail.id == ids[2] else []

        def check_soon(self, pairs):  # type: ignore[no-untyped-def]
            from concurrent.futures import Future

            checked.append(list(pairs))
            answers = {pair: Future() for pair in pairs}
            for future in answers.values():
                future.set_result(True)
            return answers

        def known(self, answers):  # type: ignore[no-untyped-def]
            from contextlib import nullcontext
            return nullcontext()

    worker = Worker(database, make_settings(), clock, Echo(), passwords=Passwords(),
                    group_most=16, group_seconds=30)
    assert worker.run_group() == 2 and checked == []
    # The next group starts with it: checked outside the transaction, then processed.
    assert worker.run_group() == 2 and checked == [[("hash", "secret")]]
    assert [m.status for m in _rows(database, InboxMail)] == ["done"] * 4


def test_the_replies_of_a_mail_left_out_never_reach_the_sender(database, make_settings, clock):
    ids = _store_all(database, clock, range(1, 5))
    echo = Echo()

    def handle(session, mail, message, now):  # type: ignore[no-untyped-def]
        echo(session, mail, message, now)  # its reply is written, then it fails
        if mail.id == ids[2]:
            raise RuntimeError("this one breaks after answering")

    handoff = _Handoff(clock)
    worker = Worker(database, make_settings(), clock, handle, handoff=handoff,
                    group_most=16, group_seconds=30)
    assert worker.run_group() == 4
    outbox = _rows(database, OutboxMail)
    assert [row.inbox_id for row in outbox] == ids
    # The failing mail's own answer was rolled back: only the notice that it was parked.
    assert b"could not be processed" in outbox[2].raw
    assert [[row.id for row in batch] for batch in handoff.batches] == [
        [row.id for row in outbox]]
