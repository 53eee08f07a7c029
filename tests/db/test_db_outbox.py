"""The outbox: one row per recipient, due mails in order, backoff, the daily cap."""

from __future__ import annotations

import email.policy
from datetime import datetime, timedelta, timezone
from email import message_from_bytes
from email.message import EmailMessage

import pytest

from abalone_pbm.verp import bounce_token
from abalone_pbm.db import repository
from abalone_pbm.db.models import OutboxMail
from abalone_pbm.db.session import Database

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def message(to: str = "Fred Flintstone <fred@example.org>", n: int = 1) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Abalone <abalone@localhost>"
    msg["To"] = to
    msg["Subject"] = f"Abalone Board {100 + n} fred"
    msg["Message-ID"] = f"<out{n}.{to.count('@')}@localhost>"
    msg.set_content("Summary of Abalone Board 101\n" + "x" * 100 + "\n")
    return msg


def enqueue(database: Database, msg: EmailMessage, now: datetime = NOW) -> int:
    with database.write() as session:
        return repository.enqueue_outbox(session, msg, now).id


def test_enqueue_takes_everything_from_the_message(database: Database) -> None:
    msg = message()
    row_id = enqueue(database, msg)
    with database.read() as session:
        row = session.get_one(OutboxMail, row_id)
        assert row.message_id == "<out1.1@localhost>"
        # A bounce address of its own under the From address (verp).
        assert bounce_token(row.sender, "abalone@localhost") is not None
        assert row.recipient == "fred@example.org"
        assert row.status == "pending" and row.attempts == 0
        assert row.next_attempt_at == NOW and row.created_at == NOW
        assert row.inbox_id is None
        assert row.raw == msg.as_bytes(policy=email.policy.SMTP)
        assert b"\r\n" in row.raw
        parsed = message_from_bytes(row.raw, policy=email.policy.default)
        assert parsed["Message-ID"] == "<out1.1@localhost>"


def test_enqueue_refuses_mail_to_several_or_to_nobody(database: Database) -> None:
    with database.write() as session:
        with pytest.raises(ValueError):
            repository.enqueue_outbox(session, message("a@x.org, b@x.org"), NOW)
        no_to = message()
        del no_to["To"]
        with pytest.raises(ValueError):
            repository.enqueue_outbox(session, no_to, NOW)
        with_cc = message()
        with_cc["Cc"] = "c@x.org"
        with pytest.raises(ValueError):
            repository.enqueue_outbox(session, with_cc, NOW)
        no_id = message()
        del no_id["Message-ID"]
        with pytest.raises(ValueError):
            repository.enqueue_outbox(session, no_id, NOW)


def test_due_outbox_in_order_and_only_when_due(database: Database) -> None:
    ids = [enqueue(database, message(f"p{n}@example.org", n)) for n in range(3)]
    with database.write() as session:
        due = repository.due_outbox(session, NOW)
        assert [r.id for r in due] == ids
        repository.mark_sent(session, due[0], NOW)
        repository.mark_retry(session, due[1], "451 try later", NOW)
        assert [r.id for r in repository.due_outbox(session, NOW, limit=1)] == [ids[2]]
    with database.read() as session:
        assert [r.id for r in repository.due_outbox(session, NOW)] == [ids[2]]
        later = NOW + timedelta(minutes=1)
        assert [r.id for r in repository.due_outbox(session, later)] == ids[1:]
        sent = session.get_one(OutboxMail, ids[0])
        assert (sent.status, sent.sent_at, sent.attempts) == ("sent", NOW, 1)


def test_backoff_doubles_up_to_an_hour_then_gives_up_after_a_day(database: Database) -> None:
    row_id = enqueue(database, message())
    now = NOW
    delays = []
    for _attempt in range(100):
        with database.write() as session:
            due = repository.due_outbox(session, now)
            assert [r.id for r in due] == [row_id]
            repository.mark_retry(session, due[0], "451 4.3.0 later", now)
            row = due[0]
            if row.status == "failed":
                break
            delays.append(row.next_attempt_at - now)
            now = row.next_attempt_at
    minutes = [d / timedelta(minutes=1) for d in delays]
    assert minutes[:7] == [1, 2, 4, 8, 16, 32, 60]
    assert set(minutes[6:]) == {60}
    assert timedelta(hours=23) <= now - NOW <= timedelta(hours=25)
    with database.read() as session:
        row = session.get_one(OutboxMail, row_id)
        assert row.status == "failed" and row.last_error == "451 4.3.0 later"
        assert row.attempts == len(delays) + 1
        assert repository.due_outbox(session, now + timedelta(days=2)) == []


def test_retry_delay() -> None:
    assert repository.retry_delay(1) == timedelta(minutes=1)
    assert repository.retry_delay(3) == timedelta(minutes=4)
    assert repository.retry_delay(7) == timedelta(hours=1)
    assert repository.retry_delay(1000) == timedelta(hours=1)


def test_mark_failed_is_final(database: Database) -> None:
    row_id = enqueue(database, message())
    with database.write() as session:
        row = repository.due_outbox(session, NOW)[0]
        repository.mark_failed(session, row, "550 no such user", NOW)
    with database.read() as session:
        assert session.get_one(OutboxMail, row_id).status == "failed"
        assert repository.due_outbox(session, NOW + timedelta(days=1)) == []


def test_replies_sent_today(database: Database) -> None:
    for n in range(3):
        enqueue(database, message("fred@example.org", n), NOW - timedelta(hours=n * 12))
    enqueue(database, message("wilma@example.org", 9), NOW)
    with database.read() as session:
        # Rows at now, now-12h count; now-24h is a day old.
        assert repository.replies_sent_today(session, "fred@example.org", NOW) == 2
        assert repository.replies_sent_today(session, "Fred@Example.org", NOW) == 2
        assert repository.replies_sent_today(session, "barney@example.org", NOW) == 0
        later = NOW + timedelta(hours=13)
        assert repository.replies_sent_today(session, "fred@example.org", later) == 1
        much_later = NOW + timedelta(hours=24, minutes=1)
        assert repository.replies_sent_today(session, "fred@example.org", much_later) == 0


def test_several_composed_mails_go_in_in_order_and_to_the_handoff(database: Database) -> None:
    from abalone_pbm.mail.compose import ComposedMail

    mails = [ComposedMail(f"<many{n}@localhost>", "abalone@localhost", f"p{n}@example.org",
                          f"raw {n}".encode()) for n in range(5)]
    handoff = repository.Handoff("me", NOW + timedelta(minutes=5), [])
    with database.write() as session:
        session.info[repository.HANDOFF] = handoff
        ids = repository.enqueue_composed_many(session, mails, NOW, inbox_id=None)
    assert ids == sorted(ids) and len(set(ids)) == 5
    assert [(r.id, r.message_id, r.recipient, r.raw) for r in handoff.rows] == [
        (i, m.message_id, m.recipient, m.raw) for i, m in zip(ids, mails)]
    with database.read() as session:
        rows = {r.id: r for r in session.query(OutboxMail)}
        for row_id, mail in zip(ids, mails):
            assert rows[row_id].message_id == mail.message_id
            assert rows[row_id].lease_owner == "me" and rows[row_id].status == "pending"


def test_html_wanted_is_false_when_any_user_of_the_address_chose_text(
        database: Database) -> None:
    with database.write() as session:
        fred = repository.add_user(session, "fred", "x", ["fred@example.org"], NOW)
        repository.add_user(session, "barney", "x", ["fred@example.org", "b@example.org"],
                            NOW)
        assert repository.html_wanted(session, {"fred@example.org", "b@example.org",
                                                "nobody@example.org"}) == {
            "fred@example.org": True, "b@example.org": True, "nobody@example.org": True}
        fred.mail_format = "text"
        assert repository.html_wanted(session, {"fred@example.org", "b@example.org"}) == {
            "fred@example.org": False, "b@example.org": True}
