"""argon2 runs before the worker's write transaction, and a right password is
remembered for a while; a wrong one costs a full check every time."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from abalone_pbm.service import passwords

from .harness import Harness


@pytest.fixture
def checks(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every argon2 check: (password, how many write transactions were open then)."""
    seen: list[tuple[str, int]] = []
    open_writes = [0]
    write = harness.database.write

    @contextmanager
    def counted_write():
        open_writes[0] += 1
        try:
            with write() as session:
                yield session
        finally:
            open_writes[0] -= 1

    real = passwords._argon2_check

    def spy(stored_hash: str, password: str) -> bool:
        seen.append((password, open_writes[0]))
        return real(stored_hash, password)

    monkeypatch.setattr(harness.database, "write", counted_write)
    monkeypatch.setattr(passwords, "_argon2_check", spy)
    return seen


def test_moves_by_command_check_the_password_outside_the_transaction(
    harness: Harness, checks: list[tuple[str, int]]
) -> None:
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    harness.challenge("fred", "wilma")
    checks.clear()
    sent = harness.mail("fred@example.org", "abalone move 101 fred pw1 c3-c5,d4")
    assert any(s.subject.startswith("Abalone Board 101 wilma") for s in sent)
    assert checks == [("pw1", 0)]
    harness.mail("wilma@example.org", "abalone move 101 wilma pw2 g7-g5,f6")
    # fred's right password is remembered: no second argon2 run.
    sent = harness.mail("fred@example.org", "abalone move 101 fred pw1 b2-b4,c3")
    assert any(s.subject.startswith("Abalone Board 101 wilma") for s in sent)
    assert checks == [("pw1", 0), ("pw2", 0)]


def test_a_wrong_password_is_checked_every_time_and_refused(
    harness: Harness, checks: list[tuple[str, int]]
) -> None:
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    harness.challenge("fred", "wilma")
    checks.clear()
    for _ in range(2):
        sent = harness.mail("fred@example.org", "abalone move 101 fred nope c3-c5,d4")
        assert "Invalid password entered" in sent[0].body
    assert checks == [("nope", 0), ("nope", 0)]


def test_a_changed_password_forgets_the_old_one(
    harness: Harness, checks: list[tuple[str, int]]
) -> None:
    harness.signup("fred", "old")
    sent = harness.mail("fred@example.org", "change password fred old new")
    assert sent[0].subject == "Abalone password changed"
    sent = harness.mail("fred@example.org", "change address fred old fred@new.example")
    assert "Invalid password" in sent[0].body
    sent = harness.mail("fred@example.org", "change address fred new fred@new.example")
    assert "fred@new.example" in sent[0].body
    assert all(open_writes == 0 for _password, open_writes in checks)


def test_every_password_of_a_multiple_mail_is_checked_before_it(
    harness: Harness, checks: list[tuple[str, int]]
) -> None:
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    harness.challenge("fred", "wilma")
    checks.clear()
    sent = harness.mail("fred@example.org", "multiple",
                        "abalone move 101 fred pw1 c3-c5,d4\n"
                        "abalone move 101 wilma pw2 g7-g5,f6\n")
    assert "done" in sent[-1].body or any("done" in s.body for s in sent)
    assert sorted(checks) == [("pw1", 0), ("pw2", 0)]
