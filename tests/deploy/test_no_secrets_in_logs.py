"""What a real `abalone-pbm serve` writes to its log holds no secret: through a signup
with a second address, its confirmation code, a password reset and its code, a new
password, a challenge and a move by reply, no password, one-time code or reply token
appears in the captured log, while the log still says what happened (each mail's kind,
the reply address with its token masked)."""

from __future__ import annotations

import os
import re
import smtplib
import subprocess
import sys
import time
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from e2e.conftest import Mailbox, RelaySink, _wait_listening, free_port

FRED, FRED_WORK, WILMA = "fred@players.test", "fred@work.test", "wilma@players.test"
PASSWORDS = ("Choc0late-Secret", "Vanilla-Secret9", "Brand-New-Pass7")


class LoggedServer:
    """`serve` with its stdout and stderr in a file, a relay sink and a player's client."""

    def __init__(self, workdir: Path) -> None:
        self.sink = RelaySink()
        relay_port = free_port()
        self.controller = Controller(self.sink, hostname="127.0.0.1", port=relay_port)
        self.controller.start()
        self.mailbox = Mailbox(self.sink)
        self.port = free_port()
        self.log_path = workdir / "serve.log"
        env = {**os.environ, "ABALONE_PBM_LISTEN": f"127.0.0.1:{self.port}",
               "ABALONE_PBM_RELAY": f"smtp://127.0.0.1:{relay_port}",
               "ABALONE_PBM_DATABASE_URL": f"sqlite:///{workdir / 'abalone-pbm.sqlite3'}"}
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "serve"],
                                        cwd=workdir, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, text=True)
        _wait_listening("127.0.0.1", self.port, self.process, timeout=60)

    def send(self, sender: str, subject: str, body: str = "\n", to: str = "abalone@localhost",
             ) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, to, subject
        message["Message-ID"] = f"<{time.time_ns()}@players.test>"
        message.set_content(body)
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as client:
            client.send_message(message, from_addr=sender, to_addrs=[to])

    def stop(self) -> str:
        """Stop the server; the whole log."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self._log.closed:
            self._log.close()
            self.controller.stop()
        return self.log_path.read_text()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LoggedServer]:
    running = LoggedServer(tmp_path)
    try:
        yield running
    finally:
        running.stop()


def _text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",)) if message.is_multipart() else message
    assert part is not None
    return str(part.get_content())


def test_the_log_holds_no_code_token_or_password(server: LoggedServer) -> None:
    fred_pw, wilma_pw, fred_new = PASSWORDS
    mailbox = server.mailbox
    server.send(FRED, f"signup fred {fred_pw} {FRED} {FRED_WORK}")
    mailbox.wait_for(FRED, r"^Abalone signup fred")
    request = mailbox.wait_for(FRED_WORK, r"^confirm address ")
    confirm_code = str(request["Subject"]).split()[-1]
    server.send(FRED_WORK, f"Re: confirm address {confirm_code}", "yes\n")
    mailbox.wait_for(FRED_WORK, r".")  # the confirmation's answer

    server.send(FRED, "password reset fred")
    reset = mailbox.wait_for(FRED, r"^Abalone password reset for fred")
    found = re.search(r"one-time code is:\s+(\S+)", _text(reset))
    assert found is not None
    reset_code = found.group(1)
    server.send(FRED, f"password set fred {reset_code} {fred_new}")
    mailbox.wait_for(FRED, r"^Abalone")

    server.send(WILMA, f"signup wilma {wilma_pw}")
    mailbox.wait_for(WILMA, r"^Abalone signup wilma")
    server.send(FRED, "abalone challenge fred wilma")
    board = mailbox.wait_for(FRED, r"^New Abalone Board 101 fred$")
    wilma_board = mailbox.wait_for(WILMA, r"^New Abalone Board 101 fred$")
    reply_to = str(board["Reply-To"])
    tokens = [str(m["Reply-To"]).split("@")[0].split(".")[-1] for m in (board, wilma_board)]
    server.send(FRED, "Re: New Abalone Board 101 fred", "c3-c5,d4\n", to=reply_to)
    mailbox.wait_for(WILMA, r"^Abalone Board 101 wilma")

    log = server.stop()
    secrets = {"confirmation code": confirm_code, "reset code": reset_code,
               "fred's password": fred_pw, "wilma's password": wilma_pw,
               "fred's new password": fred_new,
               **{f"reply token {n}": token for n, token in enumerate(tokens)}}
    for name, secret in secrets.items():
        assert len(secret) >= 6, name
        assert secret.lower() not in log.lower(), f"the log holds {name} {secret!r}"
    # The log still tells what happened: the kinds of the mails sent, and the reply
    # address a mail came to with its token masked.
    assert "(address confirmation)" in log and "(password reset)" in log
    assert "(new board 101)" in log and "(board 101)" in log
    assert "abalone+101.****@localhost" in log
