"""The sender keeps one relay connection, one bad mail never harms another, and the
leases of a dead sender are taken over at once while a live one's are left alone."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from mail_helpers import OURS, Relay, wait_for
from sqlalchemy import select

from abalone_pbm.clock import SystemClock
from abalone_pbm.db.leases import ProcessIdentity, beat
from abalone_pbm.db.models import MailSender, OutboxMail
from abalone_pbm.db.repository import enqueue_composed
from abalone_pbm.mail.compose import ComposedMail, compose_mail
from abalone_pbm.mail.sender import Sender

REPO = Path(__file__).resolve().parents[2]


def _queue(database, clock, recipients: list[str]) -> list[int]:
    """One mail per recipient, the recipient stored as given (however broken)."""
    ids = []
    with database.write() as session:
        for number, recipient in enumerate(recipients, 1):
            good = compose_mail(sender=OURS, to="placeholder@example.net",
                                subject=f"Abalone Board {100 + number} fred",
                                body="Summary\n", loop_token=OURS, date=clock.now())
            mail = ComposedMail(good.message_id, good.sender, recipient, good.raw)
            ids.append(enqueue_composed(session, mail, clock.now()))
    return ids


def _rows(database) -> dict[int, OutboxMail]:
    with database.read() as session:
        return {row.id: row for row in session.scalars(select(OutboxMail))}


def test_poisoned_addresses_fail_alone_on_one_kept_connection(
    database, make_settings, clock, relay
):
    relay.handler.refuse = {"nobody@example.net": "550 5.1.1 User unknown"}
    recipients = ["fred@example.net", "evil\x01@example.net", "wilma@example.net",
                  "fr\u00e9d\u00e9ric@example.net", "nobody@example.net",
                  "barney@example.net", "bad\r\nRCPT TO:<x@y>@example.net", "betty@example.net"]
    ids = _queue(database, clock, recipients)
    # One connection, so that every poisoned mail comes before an innocent one on it.
    sender = Sender(database, make_settings(relay=relay.url, relay_connections=1), clock)
    assert sender.send_due() == 4
    rows = _rows(database)
    status = {recipients[i]: (rows[row_id].status, rows[row_id].last_error or "")
              for i, row_id in enumerate(ids)}
    for innocent in ("fred@example.net", "wilma@example.net", "barney@example.net",
                     "betty@example.net"):
        assert status[innocent][0] == "sent"
    assert status["evil\x01@example.net"][0] == "failed"
    assert "control character" in status["evil\x01@example.net"][1]
    assert status["bad\r\nRCPT TO:<x@y>@example.net"][0] == "failed"
    assert status["fr\u00e9d\u00e9ric@example.net"][0] == "failed"
    assert "SMTPUTF8" in status["fr\u00e9d\u00e9ric@example.net"][1]
    assert status["nobody@example.net"][0] == "failed"
    assert "550" in status["nobody@example.net"][1]
    assert [r.rcpt_tos for r in relay.received] == [
        ["fred@example.net"], ["wilma@example.net"], ["barney@example.net"],
        ["betty@example.net"]]
    assert relay.handler.greetings == 1  # one connection for the whole batch

    # The connection stays open for the next mails.
    _queue(database, clock, ["pebbles@example.net"])
    assert sender.send_due() == 1
    assert relay.handler.greetings == 1


def test_non_ascii_addresses_go_with_smtputf8_where_the_relay_offers_it(
    database, make_settings, clock
):
    relay = Relay(smtputf8=True).start()
    try:
        ids = _queue(database, clock, ["fr\u00e9d\u00e9ric@example.net", "fred@example.net"])
        sender = Sender(database, make_settings(relay=relay.url), clock)
        assert sender.send_due() == 2
        assert sorted(r.rcpt_tos for r in relay.received) == [
            ["fred@example.net"], ["fr\u00e9d\u00e9ric@example.net"]]
        assert {_rows(database)[i].status for i in ids} == {"sent"}
    finally:
        relay.stop()


def test_a_relay_that_closed_the_kept_connection_is_reconnected(
    database, make_settings, clock
):
    relay = Relay().start()
    sender = Sender(database, make_settings(relay=relay.url), clock)
    _queue(database, clock, ["fred@example.net"])
    assert sender.send_due() == 1
    # The relay restarts and so drops every connection.
    relay.stop()
    again = Relay(relay.controller.port).start()
    try:
        _queue(database, clock, ["wilma@example.net"])
        assert sender.send_due() == 1
        assert [r.rcpt_tos for r in again.received] == [["wilma@example.net"]]
    finally:
        again.stop()


def _finished_process() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_dead_predecessors_leases_are_taken_at_once(database, make_settings, clock, relay):
    ids = _queue(database, clock, ["fred@example.net", "wilma@example.net"])
    dead = ProcessIdentity(pid=_finished_process(), start="12345")
    with database.write() as session:
        beat(session, dead, clock.now(), clock.now())  # its heartbeat is still fresh
        for row in session.scalars(select(OutboxMail)):
            row.lease_owner, row.next_attempt_at = dead.owner, clock.now() + timedelta(minutes=10)
    sender = Sender(database, make_settings(relay=relay.url), clock)
    assert sender.send_due() == 2
    assert {_rows(database)[i].status for i in ids} == {"sent"}
    with database.read() as session:
        assert dead.owner not in set(session.scalars(select(MailSender.owner)))


def test_a_live_senders_leases_are_left_alone(database, make_settings, clock, relay):
    ids = _queue(database, clock, ["fred@example.net"])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        wait_for(lambda: os.path.exists(f"/proc/{other.pid}/stat"))
        from abalone_pbm.db.leases import _process_start

        live = ProcessIdentity(pid=other.pid, start=_process_start(other.pid) or "0")
        far = ProcessIdentity(host="elsewhere.example", pid=1, start="1")
        with database.write() as session:
            beat(session, live, clock.now(), clock.now())
            beat(session, far, clock.now() - timedelta(minutes=5), clock.now())  # silent
            row = session.get(OutboxMail, ids[0])
            row.lease_owner, row.next_attempt_at = live.owner, clock.now() + timedelta(minutes=10)
        ids += _queue(database, clock, ["wilma@example.net"])
        with database.write() as session:
            row = session.get(OutboxMail, ids[1])
            row.lease_owner, row.next_attempt_at = far.owner, clock.now() + timedelta(minutes=10)
        sender = Sender(database, make_settings(relay=relay.url), clock)
        # The live process's mail stays leased; the silent host's is taken.
        assert sender.send_due() == 1
        assert [r.rcpt_tos for r in relay.received] == [["wilma@example.net"]]
        clock.advance(seconds=10)
        assert sender.send_due() == 0
    finally:
        other.kill()
        other.wait()
    # Its process gone, the live sender's mail goes out at once.
    assert sender.send_due() == 1
    assert {_rows(database)[i].status for i in ids} == {"sent"}


def test_after_kill_9_a_restarted_sender_sends_everything_within_seconds(
    database, make_settings, relay, tmp_path
):
    """A real `abalone-pbm send` is killed while the relay hangs on its mails; a new
    one sends every mail at once instead of after the ten-minute lease."""
    clock = SystemClock()
    count = 30
    ids = _queue(database, clock, [f"p{n}@example.net" for n in range(count)])
    relay.handler.stall.set()
    env = dict(os.environ, ABALONE_PBM_DATABASE_URL=database.url, ABALONE_PBM_ADDRESS=OURS,
               ABALONE_PBM_RELAY=relay.url, PYTHONPATH=str(REPO))
    first = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "send"], cwd=tmp_path,
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def all_leased() -> bool:
            return all(r.lease_owner for r in _rows(database).values())

        wait_for(all_leased, timeout=30)
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    relay.handler.stall.clear()
    started = time.monotonic()
    sender = Sender(database, make_settings(relay=relay.url), clock)
    sent, failed = sender.drain()
    assert time.monotonic() - started < 5
    assert (sent, failed) == (count, 0)
    assert {_rows(database)[i].status for i in ids} == {"sent"}


def test_hostname_is_part_of_the_identity():
    me = ProcessIdentity()
    assert me.owner.startswith(socket.gethostname() + ":")
    assert not ProcessIdentity.is_gone(me.owner, me.host)
    assert not ProcessIdentity.is_gone(me.owner, "another-host")
