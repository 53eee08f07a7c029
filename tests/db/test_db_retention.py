"""Received mail is kept for a bounded time (``db.retention``), on SQLite and PostgreSQL,
with a fixed clock: processed mail older than the setting loses its raw copy and keeps
a small record (a redelivery is still recognised), parked and waiting mail keeps its
copy, each call does a bounded amount of work, and the clock's tick does it."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from abalone_pbm.clock import ManualClock
from abalone_pbm.config import Settings
from abalone_pbm.db import retention
from abalone_pbm.db.models import InboxMail
from abalone_pbm.db.repository import mark_inbox, requeue_inbox
from abalone_pbm.db.session import Database
from abalone_pbm.mail.intake import store_mail
from abalone_pbm.service import timeouts

KEEP = timedelta(days=28)
REPLY_TO = "abalone+101.k3x9q7mf2a55@localhost"


def _raw(number: int) -> bytes:
    return (f"From: fred@players.test\r\nTo: {REPLY_TO}\r\nSubject: signup fred pw{number}"
            f"\r\nMessage-ID: <m{number}@players.test>\r\n\r\nc3-c5,d4\r\n").encode()


def _store(database: Database, clock: ManualClock, number: int, status: str) -> int:
    mail_id, created = store_mail(database, _raw(number), "fred@players.test", [REPLY_TO],
                                  clock)
    assert created and mail_id is not None
    if status != "new":
        with database.write() as session:
            mark_inbox(session, session.get(InboxMail, mail_id), status, now=clock.now())
    return mail_id


def _rows(database: Database) -> dict[int, InboxMail]:
    with database.read() as session:
        return {row.id: row for row in session.scalars(select(InboxMail))}


def test_old_processed_mail_keeps_a_small_record(database: Database) -> None:
    clock = ManualClock()
    done = _store(database, clock, 1, "done")
    dropped = _store(database, clock, 2, "dropped")
    parked = _store(database, clock, 3, "parked")
    waiting = _store(database, clock, 4, "new")
    clock.advance(days=20)
    young = _store(database, clock, 5, "done")
    clock.advance(days=8, seconds=1)  # the first four are 28 days and a second old

    result = retention.prune_inbox(database, clock.now(), KEEP)
    assert result.pruned == 2
    rows = _rows(database)
    for pruned in (done, dropped):
        row = rows[pruned]
        assert bytes(row.raw) == b""
        assert row.envelope_to == "abalone+101.****@localhost"
        assert row.status in ("done", "dropped") and row.dedup_key and row.processed_at
        assert row.message_id == f"<m{pruned}@players.test>"
    for kept in (parked, waiting, young):
        assert bytes(rows[kept].raw) == _raw(kept)
        assert rows[kept].envelope_to == REPLY_TO
    # A redelivery of a pruned mail is still recognised: stored once, processed once.
    assert store_mail(database, _raw(done), "fred@players.test", [REPLY_TO], clock) \
        == (done, False)
    # Nothing left to do: a second call changes nothing.
    assert retention.prune_inbox(database, clock.now(), KEEP).pruned == 0
    # Twenty days later (48 after it came) the young mail is old enough too.
    clock.advance(days=20)
    assert retention.prune_inbox(database, clock.now(), KEEP).pruned == 1
    assert bytes(_rows(database)[young].raw) == b""


def test_parked_mail_replayed_later_is_pruned_by_the_sweep(database: Database) -> None:
    clock = ManualClock()
    parked = _store(database, clock, 1, "parked")
    _store(database, clock, 2, "done")
    clock.advance(days=30)
    retention.prune_inbox(database, clock.now(), KEEP)
    assert bytes(_rows(database)[parked].raw) == _raw(parked)  # kept until the admin acts
    with database.write() as session:
        mail = requeue_inbox(session, parked)
        assert mail is not None
        mark_inbox(session, mail, "done", now=clock.now())
    # The frontier has passed it; the sweep comes round to it.
    retention.prune_inbox(database, clock.now(), KEEP)
    assert bytes(_rows(database)[parked].raw) == b""


def test_each_call_looks_at_a_bounded_number_of_rows(database: Database) -> None:
    clock = ManualClock()
    ids = [_store(database, clock, number, "done") for number in range(1, 11)]
    clock.advance(days=29)
    counts = []
    while True:
        result = retention.prune_inbox(database, clock.now(), KEEP, batch=3)
        if not result.pruned:
            break
        counts.append(result.pruned)
    assert counts == [3, 3, 3, 1]
    assert all(bytes(row.raw) == b"" for row in _rows(database).values())
    with database.read() as session:
        state = retention.read_retention(session, clock.now(), KEEP)
    assert state.frontier == ids[-1] and state.overdue == 0


def test_the_clock_prunes_with_the_setting(database: Database, tmp_path) -> None:
    clock = ManualClock()
    old = _store(database, clock, 1, "done")
    clock.advance(days=3)
    recent = _store(database, clock, 2, "done")
    clock.advance(days=2, seconds=1)
    settings = Settings(database_url=database.url, inbox_retention_days=5,
                        maildir=str(tmp_path / "outgoing"))
    timeouts.tick(database, clock.now(), settings)
    rows = _rows(database)
    assert bytes(rows[old].raw) == b"" and bytes(rows[recent].raw) == _raw(recent)
