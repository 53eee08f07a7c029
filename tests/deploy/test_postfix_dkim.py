"""What leaves a real Postfix still verifies: the sender signs (DKIM) and relays through
the site's Postfix, which hands the mail to the players' server; dkimpy verifies every
mail as it arrives there. That server offers no 8BITMIME, so a Postfix that had to
recode an 8-bit body would break the signature: the server's mail must not need it."""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterator

import dkim as dkimpy
import pytest
from aiosmtpd.controller import Controller

from abalone_pbm.clock import ManualClock
from abalone_pbm.config import Settings
from abalone_pbm.db.repository import enqueue_outbox
from abalone_pbm.db.session import Database
from abalone_pbm.mail.compose import compose
from abalone_pbm.mail.dkim import generate_key
from abalone_pbm.mail.sender import Sender

sys.path.insert(0, str(Path(__file__).resolve().parent))
from postfix import PostfixInstance, PostfixUnavailable, install_postfix  # noqa: E402
from test_postfix import free_port  # noqa: E402

GAME = "abalone@pbm.example.org"


class SevenBitInternet:
    """The players' server: keeps every mail's bytes; offers no 8BITMIME."""

    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.arrived = threading.Condition()

    async def handle_EHLO(self, server, session, envelope, hostname, responses):  # type: ignore[no-untyped-def]
        session.host_name = hostname
        return [line for line in responses if "8BITMIME" not in line]

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
        with self.arrived:
            self.raw.append(envelope.original_content)
            self.arrived.notify_all()
        return "250 OK"

    def wait(self, count: int, timeout: float = 60) -> list[bytes]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.raw) >= count, timeout), \
                f"{len(self.raw)} of {count} mails arrived"
            return list(self.raw)


@pytest.fixture(scope="module")
def postfix_to_players() -> Iterator[tuple[PostfixInstance, SevenBitInternet]]:
    try:
        install_postfix()
    except PostfixUnavailable as why:
        pytest.skip(f"no real Postfix: {why}")
    root = Path(tempfile.mkdtemp(prefix="abalone-postfix-dkim-"))
    root.chmod(0o755)
    internet = SevenBitInternet()
    internet_port = free_port()
    sink = Controller(internet, hostname="127.0.0.1", port=internet_port)
    sink.start()
    postfix = PostfixInstance(root / "postfix", free_port())
    transport = postfix.config_dir / "transport.regexp"
    postfix.create({"transport_maps": f"regexp:{transport}"})
    transport.write_text(f"/@players\\.test$/ smtp:[127.0.0.1]:{internet_port}\n")
    try:
        postfix.start()
        yield postfix, internet
    finally:
        postfix.stop()
        sink.stop()
        import subprocess
        subprocess.run(["rm", "-rf", str(root)], check=False)


@pytest.mark.parametrize("kind", ["rsa", "ed25519"])
def test_signed_mail_still_verifies_after_postfix(postfix_to_players, sqlite_url: str,
                                                  tmp_path: Path, kind: str) -> None:
    postfix, internet = postfix_to_players
    key_file = tmp_path / "dkim.pem"
    generate_key(str(key_file), kind)
    settings = Settings(database_url=sqlite_url, address=GAME,
                        relay=f"smtp://127.0.0.1:{postfix.smtp_port}",
                        dkim_key_file=str(key_file), dkim_selector="s1")
    database = Database(sqlite_url)
    database.ensure_schema()
    clock = ManualClock()
    html = ("<html><body><table><tr><td style='background:#222;color:#eee'>"
            "o o o</td></tr></table><p>Grüße, Ærøskøbing — ● ○</p></body></html>")
    mails = [
        compose(sender=GAME, to="fred@players.test", subject="Abalone Board 101 wilma",
                body="Summary of Abalone Board 101\n\n  o o o   \n" + "x " * 600 + "\n",
                html=html, loop_token=GAME, date=clock.now()),
        compose(sender=GAME, to="wilma@players.test", subject="Abalone Board 101 Error",
                body="Grüße aus Köln: «d4 is occupied by your own marble»\n"
                     "> abalone move 101 wilma ******** d4-d5\n",
                loop_token=GAME, date=clock.now()),
    ]
    before = len(internet.raw)
    with database.write() as session:
        for message in mails:
            enqueue_outbox(session, message, clock.now())
    sender = Sender(database, settings, clock)
    assert sender.send_due() == len(mails)
    sender.retire()
    postfix.flush()
    arrived = internet.wait(before + len(mails))[before:]
    signer = sender.signer
    assert signer is not None
    record = signer.key.record_value.encode()
    for raw in arrived:
        assert b"Received:" in raw  # it did pass through Postfix
        assert dkimpy.verify(raw, dnsfunc=lambda name, timeout=5: record), raw[:600]
    database.dispose()
