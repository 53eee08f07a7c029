"""The sender: a real relay sink, a relay that is down, permanent refusals, the Maildir."""

from __future__ import annotations

import email
import mailbox
import os
import time
from datetime import timedelta
from email.policy import default as default_policy
from types import SimpleNamespace

from mail_helpers import OURS, Relay, free_port
from sqlalchemy import select

from abalone_pbm.db.models import OutboxMail
from abalone_pbm.db.repository import enqueue_outbox
from abalone_pbm.mail.compose import compose
from abalone_pbm.mail.sender import Sender
from abalone_pbm.verp import bounce_token


def _queue(database, clock, recipients, **extra) -> list[str]:
    """Queue one composed mail per recipient; returns their Message-IDs."""
    ids = []
    with database.write() as session:
        for number, recipient in enumerate(recipients, 1):
            message = compose(
                sender=OURS,
                to=recipient,
                subject=f"Abalone Board {100 + number} fred",
                body=f"Summary of Abalone Board {100 + number}\n\nsecret-body-text\n",
                reply_to=f"abalone+{100 + number}.k3x9q7mf2a@example.org",
                in_reply_to="<cmd@example.net>",
                loop_token=OURS,
                date=clock.now(),
                **extra,
            )
            enqueue_outbox(session, message, clock.now())
            ids.append(message["Message-ID"])
    return ids


def _outbox(database) -> list[SimpleNamespace]:
    columns = [column.key for column in OutboxMail.__table__.columns]
    with database.read() as session:
        rows = session.scalars(select(OutboxMail).order_by(OutboxMail.id))
        return [SimpleNamespace(**{c: getattr(row, c) for c in columns}) for row in rows]


def test_mail_goes_to_the_relay_untouched(database, make_settings, clock, relay, caplog):
    caplog.set_level("INFO")
    recipients = ["fred@example.net", "wilma@example.net", "barney@example.net"]
    ids = _queue(database, clock, recipients)
    sender = Sender(database, make_settings(relay=relay.url), clock)
    assert sender.destination == f"relay {relay.url}"
    assert sender.send_due() == 3
    assert sender.send_due() == 0
    rows = _outbox(database)
    assert [row.status for row in rows] == ["sent"] * 3
    assert all(row.sent_at == clock.now() and row.attempts == 1 for row in rows)
    assert len(relay.received) == 3
    # Mails to different recipients may go over different connections, side by side.
    received = sorted(relay.received, key=lambda got: recipients.index(got.rcpt_tos[0]))
    for got, row, message_id, recipient in zip(received, rows, ids, recipients):
        # The mail's own bounce address (verp), as the outbox row holds it.
        assert got.mail_from == row.sender and bounce_token(got.mail_from, OURS)
        assert got.rcpt_tos == [recipient]  # one recipient per mail
        assert got.raw == bytes(row.raw)  # byte for byte as queued
        message = email.message_from_bytes(got.raw, policy=default_policy)
        assert message["Message-ID"] == message_id == row.message_id
        assert message["To"] == recipient
        assert message["Auto-Submitted"] == "auto-replied"
        assert message["X-Loop"] == OURS
        assert message["In-Reply-To"] == "<cmd@example.net>"
    # The log names ids, recipients and the kind of mail, never the Subject (it can
    # hold a confirmation code) nor the body.
    assert "to fred@example.net (board 101)" in caplog.text
    assert "Abalone Board 101 fred" not in caplog.text
    assert "secret-body-text" not in caplog.text


def test_each_recipient_gets_its_mail_in_order_over_several_connections(
        database, make_settings, clock, relay):
    recipients = [f"player{number % 5}@example.net" for number in range(40)]
    ids = _queue(database, clock, recipients)
    sender = Sender(database, make_settings(relay=relay.url, relay_connections=3), clock)
    assert sender.send_due() == 40
    assert [row.status for row in _outbox(database)] == ["sent"] * 40
    arrived: dict[str, list[str]] = {}
    for got in relay.received:
        message = email.message_from_bytes(got.raw, policy=default_policy)
        arrived.setdefault(got.rcpt_tos[0], []).append(message["Message-ID"])
    for address in set(recipients):
        written = [message_id for message_id, recipient in zip(ids, recipients)
                   if recipient == address]
        assert arrived[address] == written
    # More than one connection was used, and no more than the setting allows.
    assert 1 < relay.handler.greetings <= 3
    sender.retire()


def test_a_relay_that_is_down_loses_nothing(database, make_settings, clock):
    port = free_port()  # nothing listens here yet
    ids = _queue(database, clock, ["fred@example.net", "wilma@example.net"])
    sender = Sender(database, make_settings(relay=f"smtp://127.0.0.1:{port}"), clock)
    assert sender.send_due() == 0
    rows = _outbox(database)
    assert [(r.status, r.attempts) for r in rows] == [("pending", 1)] * 2
    assert all("relay 127.0.0.1" in r.last_error for r in rows)
    first_retry = rows[0].next_attempt_at
    assert first_retry == clock.now() + timedelta(minutes=1)

    # Not due yet: nothing is tried.
    clock.advance(seconds=30)
    assert sender.send_due() == 0
    assert [r.attempts for r in _outbox(database)] == [1, 1]

    # Still down a minute later: the wait doubles.
    clock.advance(seconds=31)
    assert sender.send_due() == 0
    rows = _outbox(database)
    assert [r.attempts for r in rows] == [2, 2]
    assert rows[0].next_attempt_at == clock.now() + timedelta(minutes=2)

    # The relay comes back: everything is delivered, with the same Message-IDs.
    relay = Relay(port).start()
    try:
        clock.advance(minutes=2, seconds=1)
        sent, failed = sender.drain()
        assert (sent, failed) == (2, 0)
        received = [
            email.message_from_bytes(r.raw, policy=default_policy)["Message-ID"]
            for r in relay.received
        ]
        assert sorted(received) == sorted(ids)
        assert [r.status for r in _outbox(database)] == ["sent", "sent"]
    finally:
        relay.stop()


def test_a_permanent_refusal_fails_at_once_a_temporary_one_is_retried(
    database, make_settings, clock, relay
):
    relay.handler.refuse = {
        "nobody@example.net": "550 5.1.1 User unknown",
        "full@example.net": "452 4.2.2 Mailbox full",
    }
    _queue(database, clock, ["nobody@example.net", "full@example.net", "fred@example.net"])
    sender = Sender(database, make_settings(relay=relay.url), clock)
    assert sender.send_due() == 1
    nobody, full, fred = _outbox(database)
    assert (nobody.status, nobody.attempts) == ("failed", 1)
    assert "550" in nobody.last_error
    assert (full.status, full.attempts) == ("pending", 1)
    assert "452" in full.last_error
    assert fred.status == "sent"
    assert [r.rcpt_tos for r in relay.received] == [["fred@example.net"]]

    # The failed mail is never tried again; the deferred one is, when it is due.
    relay.handler.refuse.pop("full@example.net")
    clock.advance(hours=2)
    assert sender.send_due() == 1
    assert [r.status for r in _outbox(database)] == ["failed", "sent", "sent"]


def test_without_a_relay_mail_goes_to_the_maildir(
    database, make_settings, clock, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    ids = _queue(database, clock, ["fred@example.net", "wilma@example.net"])
    sender = Sender(database, make_settings(relay=None, maildir="var/outgoing"), clock)
    assert sender.destination == f"Maildir {tmp_path / 'var' / 'outgoing'}"
    assert sender.send_due() == 2
    box = mailbox.Maildir(tmp_path / "var" / "outgoing", create=False)
    messages = [email.message_from_bytes(box.get_bytes(key), policy=default_policy)
                for key in box.keys()]
    assert sorted(m["Message-ID"] for m in messages) == sorted(ids)
    assert sorted(m["To"] for m in messages) == ["fred@example.net", "wilma@example.net"]
    for key in box.keys():
        assert b"\r\n" not in box.get_bytes(key)  # Unix line ends on disk
    assert [r.status for r in _outbox(database)] == ["sent", "sent"]
    assert len(os.listdir(tmp_path / "var" / "outgoing" / "new")) == 2


def test_an_unwritable_maildir_is_retried(database, make_settings, clock, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    _queue(database, clock, ["fred@example.net"])
    sender = Sender(database, make_settings(relay=None, maildir=str(blocker / "box")), clock)
    assert sender.send_due() == 0
    (row,) = _outbox(database)
    assert (row.status, row.attempts) == ("pending", 1)
    assert "Maildir" in row.last_error


def test_a_claimed_mail_is_not_sent_twice(database, make_settings, clock, relay):
    """Rows being sent are leased: a second sender does not see them as due."""
    _queue(database, clock, ["fred@example.net"])
    first = Sender(database, make_settings(relay=relay.url), clock)
    second = Sender(database, make_settings(relay=relay.url), clock)
    claimed = first._claim(50)
    assert len(claimed) == 1
    assert second.send_due() == 0
    assert relay.received == []


def _run_sender(sender: Sender, idle: float = 0.05):
    """``sender.run_forever`` in a thread; returns (stop event, thread)."""
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=sender.run_forever, args=(stop,),
                              kwargs={"idle": idle}, daemon=True)
    thread.start()
    return stop, thread


def _wait_for(condition, seconds: float = 10.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def _queue_in(session, clock, recipients) -> list[str]:
    """Queue one mail per recipient in the caller's transaction."""
    ids = []
    for number, recipient in enumerate(recipients, 1):
        message = compose(sender=OURS, to=recipient, subject=f"Abalone Board {200 + number}",
                          body="Summary\n", loop_token=OURS, date=clock.now())
        enqueue_outbox(session, message, clock.now())
        ids.append(message["Message-ID"])
    return ids


def test_a_running_sender_does_not_wait_for_the_write_lock_to_send(
        database, make_settings, clock, relay):
    """Recording what was sent needs a write transaction; the mails handed over go out
    while another writer (the worker with a group of mails) holds the database."""
    import threading

    from abalone_pbm.db.repository import HANDOFF, Handoff
    from abalone_pbm.mail.sender import LEASE

    sender = Sender(database, make_settings(relay=relay.url), clock)
    # Queued as the worker queues them: leased to this sender, handed over after commit.
    handoff = Handoff(sender.owner, clock.now() + LEASE, [])
    with database.write() as session:
        session.info[HANDOFF] = handoff
        _queue_in(session, clock, ["fred@example.net", "wilma@example.net"])
    assert len(handoff.rows) == 2
    # It looks at the outbox once as it starts (the rows are leased to it: not due),
    # then only when woken.
    stop, thread = _run_sender(sender, idle=60)
    assert _wait_for(lambda: not sender._look)
    holding, release = threading.Event(), threading.Event()

    def hold_the_database() -> None:
        # SQLite: one writer at a time; PostgreSQL: the rows locked.
        with database.write() as session:
            session.execute(select(OutboxMail.id).with_for_update()).all()
            holding.set()
            release.wait(20)

    writer = threading.Thread(target=hold_the_database, daemon=True)
    try:
        writer.start()
        assert holding.wait(10)
        first, second = handoff.rows
        sender.hand_over([first])
        # Sent while the other writer holds the database, and so is the next mail,
        # while the outcome of the first still waits to be recorded ...
        assert _wait_for(lambda: len(relay.received) == 1)
        sender.hand_over([second])
        assert _wait_for(lambda: len(relay.received) == 2, seconds=5)
        assert not release.is_set()
        assert [r.status for r in _outbox(database)] == ["pending", "pending"]
    finally:
        release.set()
        writer.join(20)
    try:
        # ... and recorded as soon as it lets go.
        assert _wait_for(lambda: [r.status for r in _outbox(database)] == ["sent", "sent"])
    finally:
        stop.set()
        sender.poke()
        thread.join(20)
    assert len(relay.received) == 2  # nothing sent twice


def test_outcomes_that_cannot_be_recorded_yet_are_recorded_later(
        database, make_settings, clock, relay, monkeypatch):
    """The database is away when the sender records what it sent: it tries again, and
    at its stop every outcome is in the outbox (none sent twice)."""
    import abalone_pbm.mail.sender as sender_module

    monkeypatch.setattr(sender_module._Recorder, "RETRY_AFTER", 0.05)
    _queue(database, clock, ["fred@example.net", "wilma@example.net"])
    sender = Sender(database, make_settings(relay=relay.url), clock)
    real_record = sender._record
    failures = []

    def flaky_record(done):
        if len(failures) < 3:
            failures.append(len(done))
            raise OSError("database is locked")
        real_record(done)

    monkeypatch.setattr(sender, "_record", flaky_record)
    stop, thread = _run_sender(sender)
    try:
        assert _wait_for(lambda: len(relay.received) == 2)
        assert _wait_for(lambda: [r.status for r in _outbox(database)] == ["sent", "sent"])
    finally:
        stop.set()
        sender.poke()
        thread.join(20)
    assert len(failures) == 3
    assert len(relay.received) == 2


def test_a_stopping_sender_records_what_it_sent(database, make_settings, clock, relay):
    _queue(database, clock, [f"player{n}@example.net" for n in range(12)])
    sender = Sender(database, make_settings(relay=relay.url), clock)
    stop, thread = _run_sender(sender)
    assert _wait_for(lambda: len(relay.received) == 12)
    stop.set()
    sender.poke()
    thread.join(20)
    assert not thread.is_alive()
    assert [r.status for r in _outbox(database)] == ["sent"] * 12


def test_a_dead_workers_unannounced_rows_go_out_and_handed_ones_only_once(
        database, make_settings, clock, relay):
    """A worker process writes rows leased to serve's sender and then tells it; one that
    dies between its commit and the telling leaves rows that nobody would send until
    the lease ran out. ``release_orphans`` sends them, and what was handed over only once."""
    from abalone_pbm.db.repository import HANDOFF, Handoff
    from abalone_pbm.mail.sender import LEASE

    sender = Sender(database, make_settings(relay=relay.url), clock)
    told, untold = (Handoff(sender.owner, clock.now() + LEASE, []) for _ in range(2))
    with database.write() as session:
        session.info[HANDOFF] = told
        _queue_in(session, clock, ["fred@example.net", "wilma@example.net"])
    with database.write() as session:
        session.info[HANDOFF] = untold  # committed; the news never came
        _queue_in(session, clock, ["barney@example.net", "betty@example.net"])
    stop, thread = _run_sender(sender, idle=60)
    try:
        assert _wait_for(lambda: not sender._look)
        sender.hand_over(told.rows)
        assert _wait_for(lambda: len(relay.received) == 2)
        time.sleep(0.3)
        assert len(relay.received) == 2  # the untold rows are leased to it: not due
        assert sender.release_orphans().wait(10)
        assert _wait_for(lambda: len(relay.received) == 4)
        assert _wait_for(lambda: [r.status for r in _outbox(database)] == ["sent"] * 4)
    finally:
        stop.set()
        sender.poke()
        thread.join(20)
    assert sorted(got.rcpt_tos[0] for got in relay.received) == [
        "barney@example.net", "betty@example.net", "fred@example.net", "wilma@example.net"]
