"""The README's Postfix recipe on a real Postfix: mail from the internet through Postfix →
LMTP → `abalone-pbm serve` → relay (Postfix again) → the players.

The site's Postfix is a private instance (``postfix.PostfixInstance``): its own config
directory, queue and SMTP port on 127.0.0.1, set up like a site that already carries
mail (its own transport map and restriction list), then ``deploy/postfix-setup.sh`` is
run on it as the README says. Players' domain ``players.test`` is routed by the site to
a sink (the internet as the players see it). Postfix comes from Debian's packages; the
tests are skipped, saying why, where it cannot be installed (no root, no mirror).
"""

from __future__ import annotations

import email
import email.policy
import os
import re
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Iterator

import pytest
from aiosmtpd.controller import Controller

sys.path.insert(0, str(Path(__file__).resolve().parent))
from postfix import PostfixInstance, PostfixUnavailable, install_postfix  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / "deploy" / "postfix-setup.sh"
GAME = "abalone@pbm.example.org"
FRED, WILMA = "fred@players.test", "wilma@players.test"
LIMIT = 262144


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Internet:
    """The players' mailboxes: Postfix relays every mail for players.test here."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], EmailMessage]] = []
        self.lock = threading.Condition()

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        message = email.message_from_bytes(
            envelope.original_content or envelope.content,  # type: ignore[attr-defined]
            policy=email.policy.default,
        )
        with self.lock:
            self.messages.append((envelope.mail_from,  # type: ignore[attr-defined]
                                  list(envelope.rcpt_tos), message))  # type: ignore[attr-defined]
            self.lock.notify_all()
        return "250 OK"

    def wait_for(self, to: str, subject: str, after: int = 0, timeout: float = 30) -> EmailMessage:
        """The first mail to ``to`` (from index ``after`` on) whose Subject matches."""
        pattern = re.compile(subject)
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for _, rcpts, message in self.messages[after:]:
                    if to in rcpts and pattern.search(str(message["Subject"])):
                        return message
                if time.monotonic() > deadline:
                    seen = [(r, str(m["Subject"])) for _, r, m in self.messages]
                    raise AssertionError(f"no mail to {to} matching {subject!r}; got {seen}")
                self.lock.wait(0.5)

    def count(self) -> int:
        with self.lock:
            return len(self.messages)


@dataclass
class Site:
    postfix: PostfixInstance
    internet: Internet
    workdir: Path
    env: dict[str, str]
    server: subprocess.Popen[str] | None = None
    logs: list[str] = field(default_factory=list)

    # -- the game server, as the systemd unit runs it ------------------------------
    def start_server(self) -> None:
        log = open(self.workdir / "serve.log", "a")
        self.server = subprocess.Popen(
            [sys.executable, "-m", "abalone_pbm", "serve"], cwd=self.workdir, env=self.env,
            stdout=log, stderr=subprocess.STDOUT, text=True,
        )
        log.close()
        for variable in ("ABALONE_PBM_LISTEN", "ABALONE_PBM_POLICY_LISTEN"):
            host, port = self.env[variable].rsplit(":", 1)
            deadline = time.monotonic() + 30
            while True:
                assert self.server.poll() is None, self.server_log()
                try:
                    with socket.create_connection((host, int(port)), timeout=1):
                        break
                except OSError:
                    assert time.monotonic() < deadline, self.server_log()
                    time.sleep(0.1)

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=60)
            self.server = None

    def server_log(self) -> str:
        return (self.workdir / "serve.log").read_text(errors="replace")

    # -- an internet client talking to the site's Postfix ---------------------------
    def send(self, sender: str, to: str, subject: str, body: str = "") -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, to, subject
        message["Message-ID"] = f"<{time.time_ns()}@players.test>"
        message.set_content(body or "\n")
        with smtplib.SMTP("127.0.0.1", self.postfix.smtp_port, timeout=60) as client:
            client.send_message(message)

    def refusal(self, sender: str, to: str, body: str = "hello") -> tuple[int, str]:
        """The RCPT answer for a mail that the site's Postfix refuses (fails if accepted)."""
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = sender, to, "test"
        message.set_content(body)
        with smtplib.SMTP("127.0.0.1", self.postfix.smtp_port, timeout=60) as client:
            try:
                client.send_message(message)
            except smtplib.SMTPRecipientsRefused as refused:
                code, text = refused.recipients[to]
                return code, text.decode()
        raise AssertionError(f"Postfix accepted a mail to {to}")


@contextmanager
def running_site(internet: Internet, prefix: str) -> Iterator[Site]:
    """The site as the README sets it up, with ``internet`` as the players' servers
    (skips the test module, saying why, where Postfix cannot be installed)."""
    try:
        install_postfix()
    except PostfixUnavailable as why:
        pytest.skip(f"no real Postfix: {why}")
    # Not under pytest's tmp_path: Postfix's daemons (user postfix) must reach the queue.
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    internet_port = free_port()
    sink = Controller(internet, hostname="127.0.0.1", port=internet_port)
    sink.start()
    postfix = PostfixInstance(root / "postfix", free_port())
    site_transport = postfix.config_dir / "site-transport.regexp"
    # A site that already carries mail: its own transport map and restrictions.
    postfix.create({
        "transport_maps": f"regexp:{site_transport}",
        "smtpd_recipient_restrictions": "permit_mynetworks, reject_unauth_destination",
    })
    site_transport.write_text(f"/@players\\.test$/ smtp:[127.0.0.1]:{internet_port}\n")
    lmtp, policy = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    # The README's step, with this instance's directory and ports.
    setup = subprocess.run(
        ["sh", str(SETUP), "-c", str(postfix.config_dir), "-l", lmtp, "-p", policy, GAME],
        capture_output=True, text=True, timeout=60,
    )
    assert setup.returncode == 0, setup.stderr
    workdir = root / "abalone"
    workdir.mkdir()
    env = dict(os.environ)
    env.update(
        ABALONE_PBM_ADDRESS=GAME, ABALONE_PBM_LMTP="on", ABALONE_PBM_LISTEN=lmtp,
        ABALONE_PBM_POLICY_LISTEN=policy,
        ABALONE_PBM_RELAY=f"smtp://127.0.0.1:{postfix.smtp_port}",
        ABALONE_PBM_DATABASE_URL=f"sqlite:///{workdir / 'abalone-pbm.sqlite3'}",
    )
    result = Site(postfix, internet, workdir, env)
    try:
        postfix.start()
        result.start_server()
        yield result
    finally:
        result.stop_server()
        postfix.stop()
        sink.stop()
        if os.environ.get("ABALONE_KEEP_POSTFIX") is None:
            subprocess.run(["rm", "-rf", str(root)], check=False)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site(Internet(), "abalone-postfix-") as result:
        yield result


def _reply_address(message: EmailMessage) -> str:
    return str(message["Reply-To"]).strip().strip("<>")


def test_setup_touches_only_the_game(site: Site) -> None:
    postconf = site.postfix.postconf
    restrictions = postconf("-h", "smtpd_recipient_restrictions")
    assert restrictions.strip().endswith("permit_mynetworks, reject_unauth_destination")
    assert "site-transport.regexp" in postconf("-h", "transport_maps")
    assert postconf("-n", "message_size_limit") == ""  # the site's own limit, untouched
    # Running it again changes nothing.
    before = (site.postfix.config_dir / "main.cf").read_text()
    lmtp, policy = site.env["ABALONE_PBM_LISTEN"], site.env["ABALONE_PBM_POLICY_LISTEN"]
    again = subprocess.run(["sh", str(SETUP), "-c", str(site.postfix.config_dir),
                            "-l", lmtp, "-p", policy, GAME], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (site.postfix.config_dir / "main.cf").read_text() == before


def test_game_through_postfix(site: Site) -> None:
    internet = site.internet
    start = internet.count()
    site.send(FRED, GAME, "signup fred chocolate")
    site.send(WILMA, GAME, "signup wilma vanilla")
    internet.wait_for(FRED, "", start)
    internet.wait_for(WILMA, "", start)
    mark = internet.count()
    site.send(FRED, GAME, "abalone challenge fred wilma")
    board = internet.wait_for(FRED, r"^New Abalone Board 101 fred", mark)
    fred_reply = _reply_address(board)
    assert re.fullmatch(r"abalone\+101\.[a-z0-9]+@pbm\.example\.org", fred_reply)

    # A move by reply, then one by command, each through Postfix → LMTP → server → relay.
    mark = internet.count()
    site.send(FRED, fred_reply, "Re: New Abalone Board 101 fred", "c3-c5,d4\nGood luck!")
    moved = internet.wait_for(WILMA, r"^Abalone Board 101 wilma", mark)
    assert "c3-c5,d4" in moved.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    mark = internet.count()
    site.send(WILMA, GAME, "abalone move 101 wilma vanilla g7-g5,f6")
    internet.wait_for(FRED, r"^Abalone Board 101 fred", mark)

    # Unknown addresses and bad tokens: refused at RCPT with 5xx, nothing queued.
    for address in ("nosuch@pbm.example.org", "abalone+101.zzzzzzzzzzzz@pbm.example.org",
                    "abalone+102." + fred_reply.split(".")[1].split("@")[0] + "@pbm.example.org",
                    "abalone+junk@pbm.example.org"):
        code, _ = site.refusal(FRED, address)
        assert code == 550, (address, code)
    # Too big for the game (SIZE declared by the client): 552 at RCPT.
    code, text = site.refusal(FRED, GAME, "x" * (LIMIT + 1000))
    assert code == 552 and "262144" in text
    time.sleep(1)
    assert "Mail queue is empty" in site.postfix.queue(), site.postfix.queue()


def test_site_mail_is_not_affected(site: Site) -> None:
    # Larger than the game's limit, to a local user and to a relayed address: delivered.
    big = "y" * (LIMIT * 2)
    site.send(FRED, "nobody@localhost", "big local mail", big)
    mark = site.internet.count()
    site.send(WILMA, "bob@players.test", "big relayed mail", big)
    relayed = site.internet.wait_for("bob@players.test", "^big relayed mail", mark)
    assert len(relayed.get_content()) > LIMIT
    mailbox = site.postfix.spool_dir / "nobody"
    deadline = time.monotonic() + 30
    while not (mailbox.exists() and "big local mail" in mailbox.read_text(errors="replace")):
        assert time.monotonic() < deadline, site.postfix.log()[-3000:]
        time.sleep(0.2)
    assert mailbox.stat().st_size > LIMIT * 2


def test_outage_and_restart(site: Site) -> None:
    internet = site.internet
    mark = internet.count()
    site.send(FRED, GAME, "abalone challenge fred wilma")
    fred_board = internet.wait_for(FRED, r"^New Abalone Board 102 fred", mark)
    fred_reply = _reply_address(fred_board)

    site.stop_server()
    # The game address is accepted and held by Postfix; a reply address gets a 4xx
    # (the sender's MTA retries), never a 5xx while the server is away.
    site.send(WILMA, GAME, "abalone challenge wilma fred")
    code, _ = site.refusal(FRED, fred_reply)
    assert code == 451
    deadline = time.monotonic() + 20
    while "Connection refused" not in site.postfix.queue():
        assert time.monotonic() < deadline, site.postfix.queue()
        time.sleep(0.5)

    mark = internet.count()
    site.start_server()
    site.postfix.flush()  # the README: `postqueue -f` after a restart
    board = internet.wait_for(WILMA, r"^New Abalone Board 103 wilma", mark)
    # The new game's reply address and the old ones are accepted right away.
    site.send(WILMA, _reply_address(board), "Re: New Abalone Board 103 wilma", "c3-c5,d4")
    internet.wait_for(FRED, r"^Abalone Board 103 fred", mark)
    site.send(FRED, fred_reply, "Re: New Abalone Board 102 fred", "c3-c5,d4")
    internet.wait_for(WILMA, r"^Abalone Board 102 wilma", mark)
