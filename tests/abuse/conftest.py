"""A real `abalone-pbm serve`, attacked over SMTP, on SQLite and on the tests' PostgreSQL.

A module may set ``SERVER_SETTINGS`` (environment variables without the
``ABALONE_PBM_`` prefix); one server (and its relay sink) per backend and settings is
started on first use and shared by the modules that want the same settings, so tests
keep apart by using userids and addresses of their own (:func:`unique`).
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine

from ..e2e.conftest import LiveServer, Mailbox, RelaySink, _wait_listening, free_port

_names = itertools.count(1)


def unique(stem: str) -> str:
    """A userid (and address local part) no other test of the session uses."""
    return f"{stem}{next(_names)}"


def body_of(message: EmailMessage) -> str:
    """The plain text of a mail (the text part of a multipart/alternative)."""
    part = message.get_body(preferencelist=("plain",)) if message.is_multipart() else message
    assert part is not None
    return str(part.get_content())


@dataclass
class _Running:
    live: LiveServer
    url: str
    stop: Callable[[], None]


@pytest.fixture(scope="session")
def _abuse_servers() -> Iterator[dict[tuple[object, ...], _Running]]:
    """The servers started so far, one per backend and settings; stopped at the end."""
    running: dict[tuple[object, ...], _Running] = {}
    yield running
    for each in running.values():
        each.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def abuse_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _start(url: str, settings: dict[str, object], workdir: Path) -> _Running:
    sink = RelaySink()
    relay_port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=relay_port)
    controller.start()
    env = dict(os.environ)
    env.update(
        ABALONE_PBM_LISTEN=f"127.0.0.1:{free_port()}",
        ABALONE_PBM_RELAY=f"smtp://127.0.0.1:{relay_port}",
        ABALONE_PBM_DATABASE_URL=url,
    )
    for name, value in settings.items():
        env["ABALONE_PBM_" + name] = str(value)
    host, port = env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
    process = subprocess.Popen(
        [sys.executable, "-m", "abalone_pbm", "serve"], cwd=workdir, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )

    def stop() -> None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        controller.stop()

    try:
        _wait_listening(host, int(port), process, timeout=30)
    except BaseException:
        stop()
        raise
    return _Running(LiveServer(host, int(port), process, workdir, env, Mailbox(sink)), url, stop)


@pytest.fixture(scope="module")
def _running(
    request: pytest.FixtureRequest, abuse_backend: str,
    _abuse_servers: dict[tuple[object, ...], _Running],
    tmp_path_factory: pytest.TempPathFactory,
) -> _Running:
    """A server with the module's SERVER_SETTINGS, shared by every module that has the
    same settings (the tests keep apart by names of their own)."""
    settings: dict[str, object] = dict(getattr(request.module, "SERVER_SETTINGS", {}))
    key = (abuse_backend, *sorted(settings.items()))
    if key not in _abuse_servers:
        workdir = tmp_path_factory.mktemp("serve")
        if abuse_backend == "sqlite":
            url = f"sqlite:///{workdir / 'abalone-pbm.sqlite3'}"
        else:
            url = request.getfixturevalue("postgres_server").create_database("abuse")
        _abuse_servers[key] = _start(url, settings, workdir)
    return _abuse_servers[key]


@pytest.fixture(scope="module")
def server(_running: _Running) -> LiveServer:
    return _running.live


@pytest.fixture(scope="module")
def engine(_running: _Running) -> Iterator[Engine]:
    """The server's database, to prove what was (not) stored."""
    from abalone_pbm.db.session import normalise_url

    made = create_engine(normalise_url(_running.url))
    yield made
    made.dispose()


_engines: dict[str, Engine] = {}


def settle(server: LiveServer, timeout: float = 60.0) -> None:
    """Wait until every mail sent so far has been processed and its answers relayed:
    the server's inbox has nothing new and its outbox nothing pending. (The inbox is
    not worked off in arrival order, it is fair between senders, so a later probe mail
    proves nothing.)"""
    from abalone_pbm.db.session import normalise_url

    url = server.env["ABALONE_PBM_DATABASE_URL"]
    if url not in _engines:
        _engines[url] = create_engine(normalise_url(url))
    deadline = time.monotonic() + timeout
    while True:
        with _engines[url].connect() as connection:
            busy = connection.execute(text(
                "SELECT (SELECT count(*) FROM inbox WHERE status = 'new') + "
                "(SELECT count(*) FROM outbox WHERE status = 'pending')"
            )).scalar()
        if not busy:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"the server did not settle: {busy} mails in work")
        time.sleep(0.05)
    time.sleep(0.05)  # the relay sink has stored the last mail it acknowledged


def mails_to(server: LiveServer, address: str) -> list[EmailMessage]:
    return server.mailbox.all_to(address)


def signup(server: LiveServer, userid: str, password: str, address: str) -> None:
    server.send(address, f"signup {userid} {password}")
    server.mailbox.wait_for(address, rf"^Abalone signup {userid}")


def new_game(server: LiveServer, first: tuple[str, str], second: tuple[str, str]) -> tuple[int, str, str]:
    """A game of two signed-up players (userid, address); (board, first's and second's
    reply addresses)."""
    server.send(first[1], f"abalone challenge {first[0]} {second[0]}")
    mail_1 = server.mailbox.wait_for(first[1], rf"^New Abalone Board \d+ {first[0]}$")
    board = int(re.findall(r"\d+", str(mail_1["Subject"]))[0])
    mail_2 = server.mailbox.wait_for(second[1], rf"^New Abalone Board {board} ")
    return board, str(mail_1["Reply-To"]), str(mail_2["Reply-To"])


def scalar(engine: Engine, sql: str, **params: object) -> object:
    with engine.connect() as connection:
        return connection.execute(text(sql), params).scalar()


def send_long(server: LiveServer, sender: str, subject: str, body: str,
              to: str = "abalone@localhost") -> None:
    """A mail of many lines, with the CRLF line ends SMTP wants (smtplib sends bytes
    as they are, and a body of bare LF lines is one line too long for the listener)."""
    import email.policy

    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = f"<{unique('long')}@players.test>"
    message.set_content(body)
    server.send_raw(sender, to, message.as_bytes(policy=email.policy.SMTP))
