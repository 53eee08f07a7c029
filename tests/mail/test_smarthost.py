"""The sender through a smarthost: STARTTLS required or opportunistic, TLS from the
start (smtps://), AUTH PLAIN and LOGIN; a wrong password or certificate is one clear
line in the log and the outbox while the mail waits, and the mail goes once fixed."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest
from mail_helpers import OURS, Relay
from sqlalchemy import select
from tls_relay import USER, Smarthost

from abalone_pbm.db.models import OutboxMail
from abalone_pbm.db.repository import enqueue_outbox
from abalone_pbm.mail.compose import compose
from abalone_pbm.mail.sender import Sender, probe_relay

PASSWORD = "right horse battery"


def _queue(database, clock, count: int) -> list[str]:
    ids = []
    with database.write() as session:
        for number in range(1, count + 1):
            message = compose(sender=OURS, to=f"player{number}@example.net",
                              subject=f"Abalone Board {300 + number} fred",
                              body=f"Summary of Abalone Board {300 + number}\n",
                              loop_token=OURS, date=clock.now())
            enqueue_outbox(session, message, clock.now())
            ids.append(str(message["Message-ID"]))
    return ids


def _rows(database) -> list[tuple[str, str | None]]:
    with database.read() as session:
        return [(row.status, row.last_error) for row in
                session.scalars(select(OutboxMail).order_by(OutboxMail.id))]


@pytest.fixture
def smarthost(tmp_path: Path):
    host = Smarthost(tmp_path, password=PASSWORD).start()
    yield host
    host.stop()


@pytest.mark.parametrize("mechanism", ["PLAIN", "LOGIN"])
def test_mail_goes_through_starttls_and_auth(database, make_settings, clock, tmp_path,
                                             mechanism):
    host = Smarthost(tmp_path, password=PASSWORD, mechanisms=(mechanism,)).start()
    try:
        ids = _queue(database, clock, 3)
        settings = make_settings(relay=host.url(), relay_starttls="required",
                                 relay_password=PASSWORD, relay_ca_file=str(host.cert_file))
        sender = Sender(database, settings, clock)
        assert sender.send_due() == 3
        assert [status for status, _error in _rows(database)] == ["sent"] * 3
        assert all(taken.encrypted and taken.login == USER for taken in host.received)
        assert sorted(taken.rcpt_tos[0] for taken in host.received) == \
            [f"player{n}@example.net" for n in (1, 2, 3)]
        assert {m for m, _login, ok in host.handler.logins if ok} == {mechanism}
        assert all(any(mid.encode() in t.raw for t in host.received) for mid in ids)
        sender.retire()
    finally:
        host.stop()


def test_a_wrong_password_is_one_clear_line_and_the_mail_waits_until_fixed(
        database, make_settings, clock, smarthost, tmp_path, caplog):
    password_file = tmp_path / "relay-password"
    password_file.write_text("wrong horse\n")
    _queue(database, clock, 3)
    settings = make_settings(relay=smarthost.url(), relay_starttls="required",
                             relay_password_file=str(password_file),
                             relay_ca_file=str(smarthost.cert_file), relay_connections=1)
    sender = Sender(database, settings, clock)
    with caplog.at_level(logging.INFO, logger="abalone_pbm.mail.sender"):
        assert sender.send_due() == 0
    rows = _rows(database)
    assert [status for status, _error in rows] == ["pending"] * 3
    error = rows[0][1]
    assert error is not None and f"refused the login of '{USER}'" in error and "535" in error
    lines = [r.getMessage() for r in caplog.records if "refused the login" in r.getMessage()]
    assert len(lines) == 1 and "outbox 1, 2, 3 wait" in lines[0], lines
    assert "wrong horse" not in caplog.text and smarthost.received == []

    # The admin corrects the file: the next try (after the backoff) sends each mail once.
    password_file.write_text(PASSWORD + "\n")
    clock.advance(minutes=2)
    assert sender.send_due() == 3
    assert [status for status, _error in _rows(database)] == ["sent"] * 3
    assert len(smarthost.received) == 3
    sender.retire()


def test_an_untrusted_certificate_with_required_tls_holds_the_mail(
        database, make_settings, clock, smarthost, caplog):
    _queue(database, clock, 2)
    settings = make_settings(relay=smarthost.url(), relay_starttls="required",
                             relay_password=PASSWORD)  # no CA file: self-signed is refused
    with caplog.at_level(logging.INFO, logger="abalone_pbm.mail.sender"):
        assert Sender(database, settings, clock).send_due() == 0
    rows = _rows(database)
    assert [status for status, _error in rows] == ["pending"] * 2
    assert "TLS certificate not accepted" in (rows[0][1] or "")
    assert "ABALONE_PBM_RELAY_CA_FILE" in (rows[0][1] or "")
    assert len([r for r in caplog.records if "certificate not accepted" in r.getMessage()]) == 1
    assert smarthost.handler.logins == [], "no password is sent to an unverified relay"

    # With the relay's CA named the mail goes.
    clock.advance(minutes=2)
    fixed = make_settings(relay=smarthost.url(), relay_starttls="required",
                          relay_password=PASSWORD, relay_ca_file=str(smarthost.cert_file))
    assert Sender(database, fixed, clock).send_due() == 2
    assert len(smarthost.received) == 2


def test_opportunistic_tls_encrypts_without_checking_the_certificate(
        database, make_settings, clock, smarthost):
    _queue(database, clock, 1)
    settings = make_settings(relay=smarthost.url(), relay_starttls="opportunistic",
                             relay_password=PASSWORD)
    assert Sender(database, settings, clock).send_due() == 1
    assert smarthost.received[0].encrypted


def test_opportunistic_tls_to_a_relay_without_starttls_sends_in_clear_with_a_note(
        database, make_settings, clock, caplog):
    relay = Relay().start()
    try:
        _queue(database, clock, 3)
        sender = Sender(database, make_settings(relay=relay.url), clock)  # the default
        with caplog.at_level(logging.INFO, logger="abalone_pbm.mail.sender"):
            assert sender.send_due() == 3
            sender.retire()
            _queue(database, clock, 1)
            assert sender.send_due() == 1  # a new connection: the note is not repeated
        notes = [r for r in caplog.records if "offers no STARTTLS" in r.getMessage()]
        assert len(notes) == 1 and "unencrypted" in notes[0].getMessage()
        assert len(relay.received) == 4
    finally:
        relay.stop()


def test_required_tls_to_a_relay_without_starttls_holds_the_mail(
        database, make_settings, clock):
    relay = Relay().start()
    try:
        _queue(database, clock, 1)
        settings = make_settings(relay=relay.url, relay_starttls="required")
        assert Sender(database, settings, clock).send_due() == 0
        assert "offers no STARTTLS" in (_rows(database)[0][1] or "")
        assert relay.received == []
    finally:
        relay.stop()


def test_no_password_in_clear_even_when_tls_is_only_opportunistic(
        database, make_settings, clock, tmp_path):
    host = Smarthost(tmp_path, password=PASSWORD, mode="plain").start()
    try:
        _queue(database, clock, 1)
        settings = make_settings(relay=host.url(), relay_password=PASSWORD)
        assert Sender(database, settings, clock).send_due() == 0
        assert "not sent unencrypted" in (_rows(database)[0][1] or "")
        assert host.handler.logins == []
    finally:
        host.stop()


# aiosmtpd counts only STARTTLS as TLS for AUTH, so the SMTPS relay (TLS from the first
# byte) must set auth_require_tls=False, and aiosmtpd warns of a risk it does not have.
@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")
def test_smtps_is_tls_from_the_start(database, make_settings, clock, tmp_path):
    host = Smarthost(tmp_path, password=PASSWORD, mode="smtps").start()
    try:
        _queue(database, clock, 2)
        settings = make_settings(relay=host.url(), relay_starttls="required",
                                 relay_password=PASSWORD, relay_ca_file=str(host.cert_file))
        assert Sender(database, settings, clock).send_due() == 2
        assert len(host.received) == 2 and all(t.login == USER for t in host.received)
    finally:
        host.stop()


def test_probe_says_how_the_relay_is_reached_or_what_is_wrong(
        make_settings, smarthost, tmp_path):
    good = make_settings(relay=smarthost.url(), relay_starttls="required",
                         relay_password=PASSWORD, relay_ca_file=str(smarthost.cert_file))
    state, text = probe_relay(good, timeout=5)
    assert state == "ok" and "STARTTLS, certificate verified" in text and f"AUTH as {USER}" in text
    state, text = probe_relay(make_settings(
        relay=smarthost.url(), relay_starttls="required", relay_password="nope",
        relay_ca_file=str(smarthost.cert_file)), timeout=5)
    assert state == "refused" and "refused the login" in text and "nope" not in text
    assert smarthost.received == []
