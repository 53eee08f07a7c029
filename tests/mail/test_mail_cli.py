"""`abalone-pbm process` and `send --once`, run as the MTA would: a subprocess."""

from __future__ import annotations

import mailbox
import os
import subprocess
import sys
from pathlib import Path

from mail_helpers import OURS, person_mail
from sqlalchemy import select

from abalone_pbm.db.models import InboxMail
from abalone_pbm.db.repository import enqueue_outbox
from abalone_pbm.db.session import Database
from abalone_pbm.mail.compose import compose

EX_TEMPFAIL = 75


def _run(args, *, url, cwd, stdin=b"", extra_env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABALONE_PBM_")}
    env.update(ABALONE_PBM_DATABASE_URL=url, ABALONE_PBM_ADDRESS=OURS)
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "abalone_pbm", *args],
        input=stdin, capture_output=True, env=env, cwd=cwd, timeout=120,
    )


def _inbox(url):
    database = Database(url)
    try:
        with database.read() as session:
            return [(m.envelope_from, m.envelope_to, bytes(m.raw), m.status)
                    for m in session.scalars(select(InboxMail).order_by(InboxMail.id))]
    finally:
        database.dispose()


def test_process_stores_a_mail_from_a_file_and_from_stdin(db_url, tmp_path):
    message = tmp_path / "mail.eml"
    message.write_bytes(person_mail(1))
    done = _run(["process", str(message), "--sender", "fred@example.net"], url=db_url,
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The same mail again (an MTA retry): stored once, still success.
    again = _run(["process", "-f", "fred@example.net"], url=db_url, cwd=tmp_path,
                 stdin=person_mail(1))
    assert again.returncode == 0, again.stderr
    assert b"already stored" in again.stderr
    other = _run(["process", "-", "-r", "abalone+101.k3x9q7mf2a@example.org"], url=db_url,
                 cwd=tmp_path, stdin=b"Return-Path: <wilma@example.net>\n" + person_mail(2))
    assert other.returncode == 0, other.stderr
    inbox = _inbox(db_url)
    assert [(m[0], m[1], m[3]) for m in inbox] == [
        ("fred@example.net", "", "new"),
        ("wilma@example.net", "abalone+101.k3x9q7mf2a@example.org", "new"),
    ]
    assert inbox[0][2] == person_mail(1)


def test_process_takes_the_envelope_sender_from_an_mbox_from_line(sqlite_url, tmp_path):
    raw = b"From MAILER-DAEMON Thu Jan  1 00:00:00 2026\n" + person_mail(3)
    done = _run(["process"], url=sqlite_url, cwd=tmp_path, stdin=raw)
    assert done.returncode == 0, done.stderr
    (mail,) = _inbox(sqlite_url)
    assert mail[0] == "MAILER-DAEMON" and mail[2] == person_mail(3)


def test_process_without_a_usable_database_asks_the_mta_to_retry(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    for url in (f"sqlite:///{blocker}/db.sqlite3",
                "postgresql://nobody:secret@127.0.0.1:1/abalone",
                "nonsense://"):
        done = _run(["process"], url=url, cwd=tmp_path, stdin=person_mail(1))
        assert done.returncode == EX_TEMPFAIL, (url, done.stderr)
        assert b"could not store" in done.stderr


def test_process_refuses_a_mail_over_the_size_limit(sqlite_url, tmp_path):
    database = Database(sqlite_url)
    database.ensure_schema()
    database.dispose()
    done = _run(["process"], url=sqlite_url, cwd=tmp_path,
                stdin=person_mail(1) + b"x" * 2000,
                extra_env={"ABALONE_PBM_MAX_MESSAGE_BYTES": "1000"})
    assert done.returncode == 65
    assert _inbox(sqlite_url) == []


def test_send_once_drains_the_outbox_to_the_maildir(sqlite_url, tmp_path):
    database = Database(sqlite_url)
    database.ensure_schema()
    from abalone_pbm.clock import SystemClock

    now = SystemClock().now()
    with database.write() as session:
        for name in ("fred", "wilma"):
            enqueue_outbox(session, compose(sender=OURS, to=f"{name}@example.net",
                                            subject="Abalone Board 101 fred", body="board\n",
                                            loop_token=OURS, date=now), now)
    database.dispose()
    done = _run(["send", "--once"], url=sqlite_url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"sent 2 mail(s)" in done.stdout
    box = mailbox.Maildir(Path(tmp_path) / "var" / "outgoing", create=False)
    assert len(box.keys()) == 2
