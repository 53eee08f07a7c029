"""The whole server in one process: SMTP/LMTP in → worker → relay out."""

from __future__ import annotations

import email
import io
import os
import signal
import smtplib
import subprocess
import sys
import textwrap
import threading
import time
from email.policy import default as default_policy

import pytest
from mail_helpers import OURS, person_mail, wait_for

from abalone_pbm.verp import bounce_token
from abalone_pbm.clock import SystemClock
from abalone_pbm.server import Server, serve


@pytest.mark.parametrize("lmtp", [False, True], ids=["smtp", "lmtp"])
def test_a_mail_in_is_answered_through_the_relay(database, make_settings, echo, relay, lmtp):
    settings = make_settings(relay=relay.url, lmtp=lmtp)
    ticks: list[object] = []
    out = io.StringIO()
    server = Server(settings, database, echo, ticks.append, SystemClock(), out=out)
    server.start()
    try:
        host, port = server.address
        client_class = smtplib.LMTP if lmtp else smtplib.SMTP
        with client_class(host, port, timeout=10) as client:
            assert client.sendmail("fred@example.net", [OURS], person_mail(1)) == {}
        wait_for(lambda: len(relay.received) == 1)
        wait_for(lambda: ticks)
    finally:
        server.stop()
    (got,) = relay.received
    # The envelope sender is the mail's own bounce address (verp).
    assert got.rcpt_tos == ["fred@example.net"] and bounce_token(got.mail_from, OURS)
    answer = email.message_from_bytes(got.raw, policy=default_policy)
    assert answer["In-Reply-To"] == "<mail-1@example.net>"
    assert answer["Subject"] == "Re: abalone help 1"
    text = out.getvalue()
    protocol = "LMTP" if lmtp else "SMTP"
    assert f"listening for {protocol} on {host}:{port}" in text
    assert "database " in text and database.describe() in text
    assert f"outgoing mail goes to relay {relay.url}" in text


def test_many_mails_through_the_server(database, make_settings, echo, relay):
    settings = make_settings(relay=relay.url)
    server = Server(settings, database, echo, None, SystemClock(), out=io.StringIO())
    server.start()
    try:
        host, port = server.address
        with smtplib.SMTP(host, port, timeout=10) as client:
            for number in range(20):
                client.sendmail(f"p{number}@example.net", [OURS],
                                person_mail(number, sender=f"p{number}@example.net"))
        wait_for(lambda: len(relay.received) == 20, timeout=60)
    finally:
        server.stop()
    assert sorted(r.rcpt_tos[0] for r in relay.received) == sorted(
        f"p{n}@example.net" for n in range(20))


def test_serve_stops_when_asked(database, make_settings, echo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stop = threading.Event()
    out = io.StringIO()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(
        serve(make_settings(relay=None, maildir="var/outgoing"), handle=echo,
              stop_event=stop, out=out)))
    thread.start()
    wait_for(lambda: "outgoing mail goes to Maildir" in out.getvalue())
    stop.set()
    thread.join(30)
    assert result == [0]
    assert f"Maildir {tmp_path / 'var' / 'outgoing'}" in out.getvalue()
    assert "stopped" in out.getvalue()


SERVE_SCRIPT = textwrap.dedent(
    """
    import sys
    from abalone_pbm.config import load_settings
    from abalone_pbm.server import serve

    def handle(session, mail, message, now):
        pass

    sys.exit(serve(load_settings(), handle=handle))
    """
)


def test_serve_stops_cleanly_on_sigterm(sqlite_url, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABALONE_PBM_")}
    env.update(ABALONE_PBM_DATABASE_URL=sqlite_url, ABALONE_PBM_LISTEN="127.0.0.1:0",
               PYTHONUNBUFFERED="1")
    process = subprocess.Popen([sys.executable, "-c", SERVE_SCRIPT], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines = [process.stdout.readline() for _ in range(3)]
        assert b"listening for SMTP on 127.0.0.1:" in lines[0]
        port = int(lines[0].split(b":")[2].split()[0])
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
            client.sendmail("fred@example.net", ["abalone@localhost"], person_mail(1))
        time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert b"stopped" in stdout


def test_the_listener_answers_451_until_the_database_can_store(sqlite_url, tmp_path):
    from abalone_pbm.config import Settings
    from abalone_pbm.db.session import Database
    from abalone_pbm.mail.intake import make_store
    from abalone_pbm.mail.listener import make_accepts, start_listener, stop_listener

    database = Database(sqlite_url)  # no schema yet: every store fails
    settings = Settings(database_url=sqlite_url, address=OURS, listen="127.0.0.1:0")
    controller = start_listener(settings, make_store(database, SystemClock()),
                                make_accepts(settings))
    try:
        with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
            with pytest.raises(smtplib.SMTPDataError) as failed:
                client.sendmail("fred@example.net", [OURS], person_mail(1))
            assert failed.value.smtp_code == 451
            database.ensure_schema()
            assert client.sendmail("fred@example.net", [OURS], person_mail(1)) == {}
    finally:
        stop_listener(controller)
        database.dispose()
