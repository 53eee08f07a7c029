"""A real `abalone-pbm serve` process, a real relay sink and an SMTP client for players."""

from __future__ import annotations

import email
import email.policy
import os
import re
import smtplib
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Iterator

import pytest
from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RelaySink:
    """The site's MTA as the server sees it: collects every mail relayed to it."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], EmailMessage]] = []
        self.lock = threading.Condition()

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        message = email.message_from_bytes(
            envelope.original_content or envelope.content,  # type: ignore[attr-defined]
            policy=email.policy.default,
        )
        with self.lock:
            self.messages.append(
                (envelope.mail_from, list(envelope.rcpt_tos), message)  # type: ignore[attr-defined]
            )
            self.lock.notify_all()
        return "250 OK"


@dataclass
class Mailbox:
    """What each address has received so far, read from the relay sink."""

    sink: RelaySink
    seen: int = 0
    taken: set[int] = field(default_factory=set)

    def wait_for(self, to: str, subject_pattern: str, timeout: float = 20.0) -> EmailMessage:
        """The first mail to ``to`` whose Subject matches, not returned before."""
        pattern = re.compile(subject_pattern)
        deadline = time.monotonic() + timeout
        with self.sink.lock:
            while True:
                for index, (_, rcpts, message) in enumerate(self.sink.messages):
                    if index in self.taken or to not in rcpts:
                        continue
                    if pattern.search(str(message["Subject"])):
                        self.taken.add(index)
                        return message
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    subjects = [(r, str(m["Subject"])) for _, r, m in self.sink.messages]
                    raise AssertionError(
                        f"no mail to {to} matching {subject_pattern!r}; got {subjects}"
                    )
                self.sink.lock.wait(remaining)

    def all_to(self, to: str) -> list[EmailMessage]:
        with self.sink.lock:
            return [m for _, rcpts, m in self.sink.messages if to in rcpts]

    def count(self) -> int:
        with self.sink.lock:
            return len(self.sink.messages)


@dataclass
class LiveServer:
    host: str
    port: int
    process: subprocess.Popen[str]
    workdir: Path
    env: dict[str, str]
    mailbox: Mailbox
    _counter: int = 0

    def send(
        self,
        sender: str,
        subject: str,
        body: str = "",
        *,
        to: str = "abalone@localhost",
        message_id: str | None = None,
        in_reply_to: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> EmailMessage:
        self._counter += 1
        message = EmailMessage()
        message["From"] = sender
        message["To"] = to
        message["Subject"] = subject
        message["Message-ID"] = message_id or f"<test{self._counter}.{time.time_ns()}@players.test>"
        if in_reply_to:
            message["In-Reply-To"] = in_reply_to
        for name, value in (headers or {}).items():
            message[name] = value
        message.set_content(body or "\n")
        self.send_raw(sender, to, message.as_bytes())
        return message

    def send_raw(self, sender: str, to: str, raw: bytes) -> None:
        with smtplib.SMTP(self.host, self.port, timeout=30) as client:
            client.sendmail(sender, [to], raw)

    def restart(self, **changes: str) -> None:
        """Stop ``serve`` and start it again with these environment variables changed
        (e.g. ``ABALONE_PBM_CLOCK_OFFSET="8d"``: the clock moved forward); the mail it
        had accepted is processed by the new one."""
        _stop(self.process)
        self.env.update(changes)
        self.process = _start_serve(self.workdir, self.env)
        _wait_listening(self.host, self.port, self.process, timeout=30)


def _wait_listening(host: str, port: int, process: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"abalone-pbm serve exited: {process.stdout.read() if process.stdout else ''}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("abalone-pbm serve did not start listening")


@pytest.fixture
def relay() -> Iterator[tuple[RelaySink, int]]:
    sink = RelaySink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield sink, port
    finally:
        controller.stop()


@pytest.fixture
def server_env(tmp_path: Path, relay: tuple[RelaySink, int], db_url: str) -> dict[str, str]:
    _, relay_port = relay
    env = dict(os.environ)
    env.update(
        ABALONE_PBM_LISTEN=f"127.0.0.1:{free_port()}",
        ABALONE_PBM_RELAY=f"smtp://127.0.0.1:{relay_port}",
        ABALONE_PBM_DATABASE_URL=db_url,
    )
    return env


def _start_serve(workdir: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "abalone_pbm", "serve"],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def live_server(
    tmp_path: Path, relay: tuple[RelaySink, int], server_env: dict[str, str]
) -> Iterator[LiveServer]:
    sink, _ = relay
    host, port = server_env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
    server = LiveServer(host, int(port), _start_serve(tmp_path, server_env), tmp_path,
                        server_env, Mailbox(sink))
    try:
        _wait_listening(host, int(port), server.process, timeout=30)
        yield server
    finally:
        _stop(server.process)
