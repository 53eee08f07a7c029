"""The admin's day-2 commands against a real `abalone-pbm serve`: status (the verdict
and its exit status), mail outbox / mail retry, db backup while serving, and the
README's restore."""

from __future__ import annotations

import os
import shutil
import smtplib
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from pathlib import Path
from typing import Iterator

import pytest
from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Sink:
    def __init__(self) -> None:
        self.recipients: list[str] = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.recipients.extend(envelope.rcpt_tos)  # type: ignore[attr-defined]
        return "250 OK"


class Serve:
    """One `abalone-pbm serve` in ``workdir`` and the admin commands next to it."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir, self.env = workdir, env
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        log = open(self.workdir / "serve.log", "a")
        self.process = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "serve"],
                                        cwd=self.workdir, env=self.env, stdout=log,
                                        stderr=subprocess.STDOUT, text=True)
        log.close()
        host, port = self.env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
        deadline = time.monotonic() + 30
        while True:
            assert self.process.poll() is None, (self.workdir / "serve.log").read_text()
            try:
                with socket.create_connection((host, int(port)), timeout=1):
                    return
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=60)
            self.process = None

    def admin(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "abalone_pbm", *args], cwd=self.workdir,
                              env={**self.env, **env}, capture_output=True, text=True,
                              timeout=120)

    def send(self, sender: str, subject: str) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, "abalone@localhost", subject
        message.set_content("\n")
        host, port = self.env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
        with smtplib.SMTP(host, int(port), timeout=30) as client:
            client.send_message(message)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    env = dict(os.environ)
    env.update(ABALONE_PBM_LISTEN=f"127.0.0.1:{free_port()}",
               ABALONE_PBM_DATABASE_URL=f"sqlite:///{tmp_path / 'db' / 'abalone-pbm.sqlite3'}")
    env.pop("ABALONE_PBM_RELAY", None)
    server = Serve(tmp_path, env)
    try:
        yield server
    finally:
        server.stop()


def _wait(predicate, timeout: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_status_outbox_and_retry(serve: Serve) -> None:
    relay_port = free_port()  # nothing listens there yet: the relay is down
    serve.env["ABALONE_PBM_RELAY"] = f"smtp://127.0.0.1:{relay_port}"
    serve.start()
    healthy = serve.admin("status")
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert healthy.stdout.startswith("abalone-pbm status: OK")
    assert "listener: SMTP on" in healthy.stdout and "answering" in healthy.stdout

    serve.send("fred@players.test", "signup fred chocolate")
    _wait(lambda: "1 of them retrying" in serve.admin("status").stdout)
    warning = serve.admin("status")
    assert warning.returncode == 1 and warning.stdout.startswith("abalone-pbm status: WARNING")
    assert "last error:" in warning.stdout and "fred@players.test" in warning.stdout
    assert "chocolate" not in warning.stdout
    # Retrying for longer than the threshold: critical.
    critical = serve.admin("status", "--failing-after", "0")
    assert critical.returncode == 2 and "outbox failing" in critical.stdout

    outbox = serve.admin("mail", "outbox")
    assert outbox.returncode == 0, outbox.stderr
    line = next(line for line in outbox.stdout.splitlines() if "fred@players.test" in line)
    assert "retrying" in line
    outbox_id = line.split()[0]

    # The relay is back: retry now instead of waiting for the backoff.
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=relay_port)
    controller.start()
    try:
        retried = serve.admin("mail", "retry", outbox_id)
        assert retried.returncode == 0, retried.stderr
        _wait(lambda: "fred@players.test" in sink.recipients)
    finally:
        controller.stop()
    again = serve.admin("mail", "retry", outbox_id)
    assert again.returncode == 1 and "sent already" in again.stderr
    missing = serve.admin("mail", "retry", "99999")
    assert missing.returncode == 1 and "no outgoing mail 99999" in missing.stderr
    assert serve.admin("mail", "outbox").stdout.startswith("no outgoing mail")
    assert serve.admin("status").returncode == 0

    serve.stop()
    down = serve.admin("status")
    assert down.returncode == 2 and "no server listening" in down.stdout


def test_status_sees_a_stuck_inbox_and_an_unreachable_database(serve: Serve) -> None:
    serve.start()
    serve.stop()
    database = Path(serve.env["ABALONE_PBM_DATABASE_URL"].removeprefix("sqlite:///"))
    old = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S.%f")
    with sqlite3.connect(database) as connection:
        connection.execute(
            "INSERT INTO inbox (received_at, dedup_key, envelope_from, envelope_to, raw, "
            "status, attempts) VALUES (?, 'stuck-1', 'a@b.test', 'abalone@localhost', "
            "x'00', 'new', 0)", (old,))
    stuck = serve.admin("status", "--no-listener")
    assert stuck.returncode == 2, stuck.stdout
    assert "inbox stuck: 1 mail(s) unprocessed, the oldest for 60 min" in stuck.stdout

    closed = free_port()
    unreachable = serve.admin("status", "--no-listener", ABALONE_PBM_DATABASE_URL=
                              f"postgresql://abalone@127.0.0.1:{closed}/abalone")
    assert unreachable.returncode == 2
    assert unreachable.stdout.startswith("abalone-pbm status: CRITICAL - database unreachable")
    bad = serve.admin("status", ABALONE_PBM_LISTEN="nonsense")
    assert bad.returncode == 3 and "UNKNOWN" in bad.stdout


def test_backup_while_serving_and_restore(serve: Serve, tmp_path: Path) -> None:
    serve.start()
    stop = threading.Event()
    sent: list[str] = []

    def keep_signing_up() -> None:  # the server keeps writing during the backup
        number = 0
        while not stop.is_set() and number < 200:
            number += 1
            serve.send(f"user{number}@players.test", f"signup user{number} pw{number}")
            sent.append(f"user{number}")

    writer = threading.Thread(target=keep_signing_up)
    writer.start()
    try:
        # Some mails stored, and the first one processed (its answer written).
        answers = tmp_path / "var" / "outgoing" / "new"
        _wait(lambda: len(sent) >= 5 and answers.is_dir() and any(answers.iterdir()))
        backup = serve.admin("db", "backup", str(tmp_path / "backups") + "/")
    finally:
        stop.set()
        writer.join()
    assert backup.returncode == 0, backup.stderr
    copies = list((tmp_path / "backups").glob("abalone-pbm-*.sqlite3"))
    assert len(copies) == 1 and str(copies[0]) in backup.stdout
    with sqlite3.connect(copies[0]) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert copy.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        saved = {row[0] for row in copy.execute("SELECT userid FROM users")}
        # Mail stored (answered 250) but not processed yet at the moment of the copy.
        waiting = {raw.decode(errors="replace").split("signup ")[1].split()[0]
                   for (raw,) in copy.execute("SELECT raw FROM inbox WHERE status = 'new'")}
    assert "user1" in saved
    serve.stop()

    # The README's restore: stop, put the copy in place, drop -wal/-shm, start.
    database = Path(serve.env["ABALONE_PBM_DATABASE_URL"].removeprefix("sqlite:///"))
    shutil.copy(copies[0], database)
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    serve.start()

    def humans() -> set[str]:
        listing = serve.admin("users", "list")
        assert listing.returncode == 0, listing.stderr
        listed = {line.split()[0] for line in listing.stdout.splitlines()[1:] if line.strip()}
        return {userid for userid in listed if userid.startswith("user")}

    # Everyone in the copy, and the signups it held unprocessed: the worker does them.
    expected = {userid for userid in saved | waiting if userid.startswith("user")}
    _wait(lambda: humans() == expected)
    assert expected <= set(sent)
    serve.send("late@players.test", "signup lateuser pw")  # and it goes on working
    _wait(lambda: "lateuser" in serve.admin("users", "list").stdout)
