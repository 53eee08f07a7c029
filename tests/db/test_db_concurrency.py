"""Transactions that meet: SQLite writers queue up, PostgreSQL processes share the work."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

import pytest
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from abalone_pbm.db import repository
from abalone_pbm.mail import intake
from abalone_pbm.db.models import Game, InboxMail, Seat, ServerCounter
from abalone_pbm.db.session import Database

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
START = "11111/111111/..111../......../........./......../..222../222222/22222 1 0,0"


def run_threads(targets: list[Callable[[], None]], timeout: float = 20.0) -> list[BaseException]:
    """Run the targets in threads at once; the exceptions they raised."""
    errors: list[BaseException] = []

    def wrap(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as error:  # noqa: BLE001 - reported to the test
                errors.append(error)
        return run

    threads = [threading.Thread(target=wrap(t), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a thread hung"
    return errors


def store_mails(database: Database, count: int) -> list[int]:
    ids = []
    with database.write() as session:
        for n in range(count):
            raw = f"Message-ID: <m{n}@e>\r\nSubject: {n}\r\n\r\nx\r\n".encode()
            row, _ = intake.store_inbox(session, raw, "f@e", ["a@l"], NOW)
            assert row is not None
            ids.append(row.id)
    return ids


# -- both backends ----------------------------------------------------------------------


def test_write_rolls_back_on_error(database: Database) -> None:
    with pytest.raises(RuntimeError):
        with database.write() as session:
            session.add(ServerCounter(name="c", value=1, updated_at=NOW))
            session.flush()
            raise RuntimeError("boom")
    with database.read() as session:
        assert session.scalars(select(ServerCounter)).all() == []


def test_read_transactions_cannot_write(database: Database) -> None:
    with pytest.raises(DBAPIError):
        with database.read() as session:
            session.add(ServerCounter(name="c", value=1, updated_at=NOW))
            session.flush()
    # The pooled connection is a writer again afterwards.
    with database.write() as session:
        session.add(ServerCounter(name="c", value=1, updated_at=NOW))
    with database.read() as session:
        assert session.scalars(select(ServerCounter.value)).all() == [1]


def test_concurrent_writers_serialise(database: Database) -> None:
    """Read-modify-write from several threads: no lost update, no "database is locked"."""
    with database.write() as session:
        session.add(ServerCounter(name="c", value=0, updated_at=NOW))

    def increment() -> None:
        for _ in range(5):
            with database.write() as session:
                counter = session.scalars(
                    select(ServerCounter).where(ServerCounter.name == "c").with_for_update()
                ).one()
                seen = counter.value
                time.sleep(0.002)  # let the others try to come in between
                counter.value = seen + 1

    assert run_threads([increment] * 4) == []
    with database.read() as session:
        assert session.scalars(select(ServerCounter.value)).one() == 20


# -- SQLite -----------------------------------------------------------------------------


def test_sqlite_readers_do_not_wait_for_a_writer(sqlite_url: str) -> None:
    database = Database(sqlite_url)
    try:
        database.ensure_schema()
        store_mails(database, 1)
        with database.write() as session:
            assert repository.claim_next_inbox(session) is not None  # holds the write lock
            started = time.monotonic()
            with database.read() as reader:
                assert len(reader.scalars(select(InboxMail)).all()) == 1
            assert time.monotonic() - started < 1.0
    finally:
        database.dispose()


def test_sqlite_second_writer_waits_for_the_first(sqlite_url: str) -> None:
    database = Database(sqlite_url)
    try:
        database.ensure_schema()
        ids = store_mails(database, 2)
        first_claimed = threading.Event()
        order: list[str] = []
        claimed: list[int] = []

        def first() -> None:
            with database.write() as session:
                mail = repository.claim_next_inbox(session)
                assert mail is not None
                claimed.append(mail.id)
                first_claimed.set()
                time.sleep(0.3)
                repository.mark_inbox(session, mail, "done", now=NOW)
                order.append("first done")

        def second() -> None:
            assert first_claimed.wait(10)
            with database.write() as session:
                # BEGIN IMMEDIATE (on the first statement) waits for the first writer.
                mail = repository.claim_next_inbox(session)
                order.append("second claims")
                assert mail is not None
                claimed.append(mail.id)
                repository.mark_inbox(session, mail, "done", now=NOW)

        assert run_threads([first, second]) == []
        assert order == ["first done", "second claims"]
        assert claimed == ids
    finally:
        database.dispose()


# -- PostgreSQL ---------------------------------------------------------------------------


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[Database]:
    database = Database(postgres_url)
    database.ensure_schema()
    yield database
    database.dispose()


def test_postgresql_claims_skip_locked_rows(pg_database: Database) -> None:
    ids = store_mails(pg_database, 2)
    with pg_database.write() as a, pg_database.write() as b, pg_database.write() as c:
        mail_a = repository.claim_next_inbox(a)
        mail_b = repository.claim_next_inbox(b)
        assert mail_a is not None and mail_b is not None
        assert [mail_a.id, mail_b.id] == ids
        assert repository.claim_next_inbox(c) is None
        repository.mark_inbox(a, mail_a, "done", now=NOW)
    # b never marked its mail: it is new again for the next worker.
    with pg_database.write() as session:
        again = repository.claim_next_inbox(session)
        assert again is not None and again.id == ids[1]


def test_postgresql_due_outbox_skips_locked_rows(pg_database: Database) -> None:
    from email.message import EmailMessage

    with pg_database.write() as session:
        for n in range(3):
            msg = EmailMessage()
            msg["From"], msg["To"], msg["Message-ID"] = "a@l", f"p{n}@e", f"<o{n}@l>"
            msg.set_content("x")
            repository.enqueue_outbox(session, msg, NOW)
    with pg_database.write() as a, pg_database.write() as b:
        first = repository.due_outbox(a, NOW, limit=2)
        rest = repository.due_outbox(b, NOW, limit=2)
        assert len(first) == 2 and len(rest) == 1
        assert not {r.id for r in first} & {r.id for r in rest}


def test_postgresql_game_lock_makes_the_second_mover_wait(pg_database: Database) -> None:
    with pg_database.write() as session:
        fred = repository.add_user(session, "fred", "h", ["f@e"], NOW)
        wilma = repository.add_user(session, "wilma", "h", ["w@e"], NOW)
        game = Game(number=101, layout="standard", players=2, options="{}",
                    start_position=START, position=START, status="active",
                    created_at=NOW, updated_at=NOW, turn_started_at=NOW)
        game.seats = [Seat(seat=1, user=fred, reply_token="t1"),
                      Seat(seat=2, user=wilma, reply_token="t2")]
        session.add(game)
    locked = threading.Event()
    seen: list[int] = []

    def mover(wait_first: bool) -> None:
        if wait_first:
            assert locked.wait(10)
        with pg_database.write() as session:
            locked_game = repository.get_game(session, 101, for_update=True)
            assert locked_game is not None
            seen.append(locked_game.ply)
            if not wait_first:
                locked.set()
                time.sleep(0.3)
            locked_game.ply += 1

    assert run_threads([lambda: mover(False), lambda: mover(True)]) == []
    assert seen == [0, 1]
    with pg_database.read() as session:
        final = repository.get_game(session, 101)
        assert final is not None and final.ply == 2 and final.version == 3


def test_postgresql_board_numbers_are_handed_out_one_at_a_time(pg_database: Database) -> None:
    with pg_database.write() as session:
        repository.add_user(session, "fred", "h", ["f@e"], NOW)
    numbered = threading.Event()
    numbers: list[int] = []

    def challenge(wait_first: bool) -> None:
        if wait_first:
            assert numbered.wait(10)
        with pg_database.write() as session:
            number = repository.next_board_number(session)
            numbers.append(number)
            session.add(Game(number=number, layout="standard", players=2, options="{}",
                             start_position=START, position=START, status="active",
                             created_at=NOW, updated_at=NOW, turn_started_at=NOW))
            session.flush()
            if not wait_first:
                numbered.set()
                time.sleep(0.3)

    assert run_threads([lambda: challenge(False), lambda: challenge(True)]) == []
    assert numbers == [101, 102]
