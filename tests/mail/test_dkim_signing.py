"""DKIM: every kind of mail the server writes leaves signed, and dkimpy (an independent
implementation) verifies the signature against the key's DNS record; what anyone
changes on the way, or adds in a signed header's name, breaks it."""

from __future__ import annotations

import email
import mailbox
from email.policy import default as default_policy
from pathlib import Path

import dkim as dkimpy
import pytest
from argon2 import PasswordHasher
from mail_helpers import OURS, Relay

from abalone_pbm.clock import ManualClock
from abalone_pbm.config import Settings
from abalone_pbm.db.session import Database
from abalone_pbm.mail import intake
from abalone_pbm.mail.dkim import DkimError, DkimSigner, generate_key, load_key
from abalone_pbm.mail.sender import Sender, mail_kind
from abalone_pbm.server import _service_hooks, password_hook
from abalone_pbm.service import passwords
from abalone_pbm.worker import Worker
from abalone_pbm.cli import main as run_cli

SELECTOR = "pbm2026"


def _record_lookup(signer: DkimSigner):  # type: ignore[no-untyped-def]
    """A DNS stand-in holding exactly the record ``abalone-pbm dns`` prints."""
    def lookup(name: bytes, timeout: float = 5) -> bytes | None:
        if name.decode().rstrip(".") == signer.key.record_name:
            return signer.key.record_value.encode()
        return None
    return lookup


@pytest.fixture(params=["rsa", "ed25519"])
def key_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / f"dkim-{request.param}.pem"
    generate_key(str(path), request.param)
    return path


def _verifies(raw: bytes, signer: DkimSigner) -> bool:
    return bool(dkimpy.verify(raw, dnsfunc=_record_lookup(signer)))


def test_changes_on_the_way_break_the_signature(key_file: Path) -> None:
    signer = DkimSigner(load_key(str(key_file), "example.org", SELECTOR))
    # Bare LF line ends, blanks at line ends, folded and tabbed headers, empty lines
    # at the end: signed as SMTP carries them (CRLF), verified by dkimpy.
    raw = (b"From: Abalone <abalone@example.org>\nTo: fred@example.net\n"
           b"Subject: Abalone Board 101\n\t wilma  **\nMessage-ID: <m1@example.org>\n"
           b"Content-Type: text/plain; charset=utf-8\n\n"
           b"Summary of Abalone Board 101   \n\n  o o o\t x  \n\n\n")
    signed = signer.sign(raw)
    assert signed.startswith(b"DKIM-Signature: v=1; a=" + signer.key.algorithm.encode())
    assert b"\n" not in signed.replace(b"\r\n", b"")
    assert _verifies(signed, signer)
    # Re-wrapping blanks passes relaxed canonicalisation; a changed word does not.
    assert _verifies(signed.replace(b"o o o\t x", b"o o o x"), signer)
    assert not _verifies(signed.replace(b"Board 101   ", b"Board 102"), signer)
    assert not _verifies(signed.replace(b"Subject: Abalone Board 101",
                                        b"Subject: Abalone Board 107"), signer)
    # Headers named once more than they occur: a second From or an added
    # List-Unsubscribe breaks the signature; a Received line does not.
    head, body = signed.split(b"\r\n\r\n", 1)
    assert not _verifies(head + b"\r\nFrom: evil@example.com\r\n\r\n" + body, signer)
    assert not _verifies(head + b"\r\nList-Unsubscribe: <mailto:x@evil.test>\r\n\r\n" + body,
                         signer)
    assert _verifies(b"Received: from a by b; Mon, 1 Jan 2024 00:00:00 +0000\r\n" + signed,
                     signer)
    # Another key under the same name does not verify.
    other = DkimSigner(load_key(str(key_file), "example.org", SELECTOR))
    other_file = key_file.with_name("other.pem")
    generate_key(str(other_file), "ed25519" if "ed25519" in key_file.name else "rsa")
    impostor = DkimSigner(load_key(str(other_file), "example.org", SELECTOR))
    assert not _verifies(impostor.sign(raw), other)


def test_keys_that_cannot_sign_are_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(DkimError, match="cannot be read"):
        load_key(str(tmp_path / "missing.pem"), "example.org", SELECTOR)
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(DkimError, match="no unencrypted PEM private key"):
        load_key(str(tmp_path / "junk.pem"), "example.org", SELECTOR)
    generate_key(str(tmp_path / "k.pem"))
    with pytest.raises(DkimError, match="never overwritten"):
        generate_key(str(tmp_path / "k.pem"))
    assert (tmp_path / "k.pem").stat().st_mode & 0o077 == 0
    with pytest.raises(DkimError, match="selector"):
        load_key(str(tmp_path / "k.pem"), "example.org", "bad selector")


def _process(database: Database, worker: Worker, clock: ManualClock, sender_address: str,
             subject: str, body: str = "\n", to: str = OURS) -> None:
    message = email.message.EmailMessage()
    message["From"], message["To"], message["Subject"] = sender_address, to, subject
    message["Message-ID"] = email.utils.make_msgid(domain="players.test")
    message.set_content(body)
    with database.write() as session:
        intake.store_inbox(session, message.as_bytes(), sender_address, [to], clock.now())
    while worker.run_once():
        pass


def test_every_kind_of_mail_leaves_signed_and_verifies(
        migrated_db_url: str, tmp_path: Path, key_file: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))
    relay = Relay().start()
    database = Database(migrated_db_url)
    try:
        settings = Settings(database_url=migrated_db_url, address=OURS, relay=relay.url,
                            maildir=str(tmp_path / "out"), robot_budget=0.05,
                            dkim_key_file=str(key_file), dkim_selector=SELECTOR)
        clock = ManualClock()
        handle, tick = _service_hooks(settings, database)
        worker = Worker(database, settings, clock, handle, passwords=password_hook(settings))
        sender = Sender(database, settings, clock)
        assert sender.signer is not None and "DKIM-signed for example.org" in sender.destination
        fred, wilma = "fred@example.net", "wilma@example.net"
        _process(database, worker, clock, fred, "signup fred pw1")
        _process(database, worker, clock, wilma, "signup wilma pw2")
        _process(database, worker, clock, fred, "help")
        _process(database, worker, clock, fred, "abalone challenge fred wilma")
        _process(database, worker, clock, fred, "abalone move 101 fred pw1 a1-a9")
        _process(database, worker, clock, fred, "abalone frobnicate")
        _process(database, worker, clock, fred, "digest fred pw1 on")
        assert tick is not None
        tick(clock.now())
        while sender.send_due():
            pass
        sender.retire()

        kinds = set()
        for taken in relay.received:
            assert taken.raw.startswith(b"DKIM-Signature:"), taken.raw[:200]
            assert _verifies(taken.raw, sender.signer), mail_kind(taken.raw)
            kinds.add(" ".join(w for w in mail_kind(taken.raw).split() if not w.isdigit()))
        assert {"new board", "error on board", "error", "help", "digest"} <= kinds, kinds
        html = [t.raw for t in relay.received if b"text/html" in t.raw]
        assert html and all(_verifies(raw, sender.signer) for raw in html)
        # The outbox keeps the unsigned bytes: a retry is signed anew.
        from sqlalchemy import select

        from abalone_pbm.db.models import OutboxMail
        with database.read() as session:
            stored = [bytes(r) for r in session.scalars(select(OutboxMail.raw))]
        assert stored and not any(raw.startswith(b"DKIM-Signature:") for raw in stored)
    finally:
        relay.stop()
        database.dispose()


def test_the_maildir_gets_signed_mail_too(database, make_settings, clock, key_file) -> None:
    from mail_helpers import person_mail  # noqa: F401  (the helpers' path is set up)

    from abalone_pbm.db.repository import enqueue_outbox
    from abalone_pbm.mail.compose import compose

    settings = make_settings(dkim_key_file=str(key_file), dkim_selector=SELECTOR)
    with database.write() as session:
        enqueue_outbox(session, compose(sender=OURS, to="fred@example.net",
                                        subject="Abalone help", body="Commands:\n",
                                        loop_token=OURS, date=clock.now()), clock.now())
    sender = Sender(database, settings, clock)
    assert sender.send_due() == 1
    (stored,) = list(mailbox.Maildir(settings.maildir, create=False))
    raw = stored.as_bytes(policy=default_policy)
    assert sender.signer is not None and _verifies(raw, sender.signer)


def test_dns_command_prints_the_record_that_verifies(tmp_path: Path, key_file: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ABALONE_PBM_ADDRESS", "games@pbm.example.org")
    monkeypatch.setenv("ABALONE_PBM_DKIM_KEY_FILE", str(key_file))
    monkeypatch.setenv("ABALONE_PBM_DKIM_SELECTOR", SELECTOR)
    assert run_cli(["dns", "--ip", "192.0.2.25", "--host", "mx.pbm.example.org"]) == 0
    out = capsys.readouterr().out
    assert 'pbm.example.org. IN TXT "v=spf1 ip4:192.0.2.25 ~all"' in out
    assert '_dmarc.pbm.example.org. IN TXT "v=DMARC1; p=none;' in out
    assert "25.2.0.192.in-addr.arpa. IN PTR mx.pbm.example.org." in out
    line = next(l for l in out.splitlines() if l.startswith(f"{SELECTOR}._domainkey."))
    # The record as a resolver joins its strings, and dkimpy verifies with it.
    strings = [part for part in line.split('"')[1::2]]
    assert all(len(s) <= 255 for s in strings)
    signer = DkimSigner(load_key(str(key_file), "pbm.example.org", SELECTOR))
    published = "".join(strings).encode()
    signed = signer.sign(b"From: games@pbm.example.org\r\nSubject: x\r\n\r\nhello\r\n")
    assert dkimpy.verify(signed, dnsfunc=lambda name, timeout=5: published)
