"""A mail's passwords and its masked stored copy are computed before the worker's write
transaction (``mail_secrets.mask_ahead``), and the transaction gets the very answers
and stored copy it would have computed itself; a word that names a user by the time
of the transaction, and not when the mail was read, has the mail read again there."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from abalone_pbm.db.models import InboxMail
from abalone_pbm.db.session import Database
from abalone_pbm.mail import intake
from abalone_pbm.service import mail_secrets, mailroom, passwords
from abalone_pbm.worker import parse_mail

from .harness import Harness, Sent, make_harness

M = "********"


@contextmanager
def _writes_watched(database: Database, inside: list[bool]) -> Iterator[None]:
    """``database.write`` marked in ``inside``: [True] while a write transaction is open."""
    real = database.write

    @contextmanager
    def write() -> Iterator[Any]:
        inside[0] = True
        try:
            with real() as session:
                yield session
        finally:
            inside[0] = False

    database.write = write  # type: ignore[method-assign]
    try:
        yield
    finally:
        database.write = real  # type: ignore[method-assign]


def _watched(monkeypatch: pytest.MonkeyPatch, inside: list[bool],
             calls: list[tuple[str, bool]]) -> None:
    """Note each finding of passwords and masking of a stored copy, and whether a write
    transaction was open then."""
    def noting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, inside[0]))
            return real(*args, **kwargs)
        return call

    for module, name in ((mail_secrets, "secrets_of_mail"), (mailroom, "secrets_of_mail"),
                         (mail_secrets, "masked_raw"), (mailroom, "mask_stored_mail")):
        monkeypatch.setattr(module, name, noting(name, getattr(module, name)))


def _big_mail(size: int) -> bytes:
    """A ``multiple`` of a few lines that read passwords and name users, and a quoted
    thread of command lines with passwords after it, ``size`` bytes or so in all."""
    commands = ("abalone multiple\r\n"
                "games alice Zed9Qxy\r\n"
                "history bob Pw7wordz\r\n"
                "move 1 alice Hunter22 e5f5\r\n"
                "\r\n")
    quoted = "".join(f"> move {n} bob Sesame{n}x e5f5 (line {n} of the old thread)\r\n"
                     for n in range(size // 48))
    return ("From: carol@example.org\r\nTo: abalone@pbm.test\r\n"
            "Subject: abalone multiple\r\nMessage-ID: <big-1@players.test>\r\n"
            "Content-Type: text/plain; charset=us-ascii\r\n\r\n"
            + commands + quoted).encode()


def _harness(tmp_path: Path, name: str) -> Harness:
    (tmp_path / name).mkdir()
    harness = make_harness(f"sqlite:///{tmp_path / name / 'db.sqlite3'}", tmp_path / name)
    harness.signup("alice", "Alice-secret9")
    harness.signup("bob", "Bob-secret9")
    return harness


def _store(harness: Harness, raw: bytes) -> None:
    with harness.database.write() as session:
        intake.store_inbox(session, raw, "carol@example.org", [harness.settings.address],
                           harness.clock.now())


def _stored_copy(harness: Harness, message_id: str) -> bytes:
    with harness.database.read() as session:
        for row in session.scalars(select(InboxMail).order_by(InboxMail.id)):
            if message_id.encode() in bytes(row.raw):
                return bytes(row.raw)
    raise AssertionError("the mail is not in the inbox")


def _answers(sent: list[Sent]) -> list[tuple[str, str, str]]:
    return [(each.to, each.subject, each.body) for each in sent]


def test_a_big_mail_is_masked_outside_the_transaction_as_it_would_be_inside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))
    raw = _big_mail(256 * 1024)
    ahead, inside_only = _harness(tmp_path, "ahead"), _harness(tmp_path, "inside")
    inside_only.worker.mask_ahead = None  # the worker of ``abalone-pbm work`` before
    try:
        calls: list[tuple[str, bool]] = []
        inside = [False]
        _watched(monkeypatch, inside, calls)
        with _writes_watched(ahead.database, inside):
            _store(ahead, raw)
            sent_ahead = ahead.run()
        assert ("secrets_of_mail", False) in calls and ("masked_raw", False) in calls
        assert [call for call in calls if call[1]] == []  # nothing of it in the transaction
        calls.clear()
        with _writes_watched(inside_only.database, inside):
            _store(inside_only, raw)
            sent_inside = inside_only.run()
        assert calls == [("secrets_of_mail", True), ("mask_stored_mail", True)]
        assert _answers(sent_ahead) == _answers(sent_inside)
        assert sent_ahead and all("Hunter22" not in body and "Zed9Qxy" not in body
                                  for _, _, body in _answers(sent_ahead))
        copy = _stored_copy(ahead, "<big-1@players.test>")
        assert copy == _stored_copy(inside_only, "<big-1@players.test>")
        assert b"Hunter22" not in copy and b"Sesame77x" not in copy and M.encode() in copy
    finally:
        ahead.database.dispose()
        inside_only.database.dispose()


def test_a_user_who_signs_up_meanwhile_has_the_mail_read_again(harness: Harness) -> None:
    """``games alice Zed9Qxy``: Zed9Qxy names no user when the mail is read ahead, so
    it is read as a password; once a user zed9qxy exists it is a userid, and the
    transaction reads the mail again rather than mask a player's name."""
    harness.signup("alice", "Alice-secret9")
    raw = (b"From: carol@example.org\r\nTo: abalone@pbm.test\r\n"
           b"Subject: abalone games alice Zed9Qxy\r\nMessage-ID: <g-1@players.test>\r\n\r\n"
           b"\r\n")
    _store(harness, raw)
    with harness.database.read() as session:
        row = session.scalars(select(InboxMail).where(InboxMail.status == "new")).one()
        session.expunge(row)
    message = parse_mail(raw)
    with harness.database.read() as session:
        mail_secrets.mask_ahead(session, row, message, raw, harness.settings)
    with harness.database.read() as session:
        kept = mail_secrets.taken_ahead(session, row, message)
        assert kept is not None and "Zed9Qxy" in kept.secrets
        assert kept.asked.get("zed9qxy") is False
        assert kept.secrets == mail_secrets.secrets_of_mail(
            session, harness.settings, "abalone games alice Zed9Qxy", "\n")
    harness.signup("zed9qxy", "Zed-secret9")
    with harness.database.read() as session:
        assert mail_secrets.taken_ahead(session, row, message) is None
        assert "Zed9Qxy" not in mail_secrets.secrets_of_mail(
            session, harness.settings, "abalone games alice Zed9Qxy", "\n")


def test_what_was_masked_for_other_bytes_is_not_taken(harness: Harness) -> None:
    raw = (b"From: carol@example.org\r\nTo: abalone@pbm.test\r\n"
           b"Subject: signup fred Sesame77x\r\nMessage-ID: <s-1@players.test>\r\n\r\n\r\n")
    row = InboxMail(id=7, envelope_from="carol@example.org", envelope_to="abalone@pbm.test",
                    raw=raw)
    message = parse_mail(raw)
    with harness.database.read() as session:
        mail_secrets.mask_ahead(session, row, message, raw, harness.settings)
        assert mail_secrets.taken_ahead(session, row, message) is not None
        other = InboxMail(id=8, envelope_from=row.envelope_from,
                          envelope_to=row.envelope_to, raw=raw)
        assert mail_secrets.taken_ahead(session, other, message) is None
        changed = InboxMail(id=7, envelope_from=row.envelope_from,
                            envelope_to=row.envelope_to, raw=raw + b"more\r\n")
        assert mail_secrets.taken_ahead(session, changed, message) is None
