"""The Postfix policy service: which game recipients are accepted, over a real socket,
against a real database with a real game in it (SQLite and PostgreSQL)."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest
from argon2 import PasswordHasher

from abalone_pbm.config import Settings
from abalone_pbm.mail.policy import DUNNO, PolicyServer, make_token_check, recipient_action
from abalone_pbm.service import passwords
from tests.service.harness import Harness, make_harness

SETTINGS = Settings(address="abalone@pbm.example.org")


def _never(board: int, token: str) -> bool:
    raise AssertionError("the token should not be looked up")


@pytest.mark.parametrize(
    ("recipient", "size", "expected"),
    [
        ("abalone@pbm.example.org", 0, DUNNO),
        ("<Abalone@PBM.example.org>", 1000, DUNNO),
        ("someone@elsewhere.example", 10**9, DUNNO),  # not the game's: never judged
        ("postmaster@pbm.example.org", 0, "550 5.1.1"),
        ("abalone@pbm.example.org", 262145, "552 5.3.4"),
        ("abalone+junk@pbm.example.org", 0, "550 5.1.1"),
        ("abalone+101@pbm.example.org", 0, "550 5.1.1"),
    ],
)
def test_recipient_action_without_the_database(recipient: str, size: int, expected: str) -> None:
    assert recipient_action(SETTINGS, recipient, size, _never).startswith(expected)


@pytest.fixture
def harness(migrated_db_url: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))
    h = make_harness(migrated_db_url, tmp_path, address="abalone@pbm.example.org")
    try:
        yield h
    finally:
        h.database.dispose()


def _ask(connection: socket.socket, **attributes: str) -> str:
    request = "".join(f"{name}={value}\n" for name, value in attributes.items()) + "\n"
    connection.sendall(request.encode())
    answer = b""
    while not answer.endswith(b"\n\n"):
        chunk = connection.recv(4096)
        assert chunk, "the policy service closed the connection"
        answer += chunk
    text = answer.decode()
    assert text.startswith("action=")
    return text[len("action="):].strip()


def test_policy_service_checks_tokens_in_the_database(harness: Harness) -> None:
    harness.signup("fred", address="fred@players.test")
    harness.signup("wilma", address="wilma@players.test")
    boards = harness.challenge("fred", "wilma", by="fred@players.test")
    fred_reply = str(boards["fred"].reply_to)
    local = fred_reply.split("@")[0]
    token = local.split(".", 1)[1]
    settings = replace(harness.settings, address="abalone@pbm.example.org")
    server = PolicyServer(settings, make_token_check(harness.database), "127.0.0.1", 0)
    server.start()
    try:
        host, port = server.host_port
        with socket.create_connection((host, port), timeout=10) as connection:
            # One connection, many requests (Postfix keeps it open).
            rcpt = {"request": "smtpd_access_policy", "protocol_state": "RCPT",
                    "sender": "fred@players.test", "client_address": "192.0.2.1"}
            assert _ask(connection, **rcpt, recipient=fred_reply, size="1200") == DUNNO
            assert _ask(connection, **rcpt, recipient=fred_reply.upper()) == DUNNO
            assert _ask(connection, **rcpt, recipient="abalone@pbm.example.org") == DUNNO
            wrong_board = fred_reply.replace("+101.", "+102.")
            assert _ask(connection, **rcpt, recipient=wrong_board).startswith("550 5.1.1")
            wrong_token = fred_reply.replace(token, "z" * len(token))
            assert _ask(connection, **rcpt, recipient=wrong_token).startswith("550 5.1.1")
            assert _ask(connection, **rcpt, recipient=fred_reply,
                        size="999999").startswith("552 5.3.4")
            assert _ask(connection, request="smtpd_access_policy",
                        protocol_state="DATA") == DUNNO
        # The database unreachable: a temporary answer, never a 5xx.
        harness.database.engine.dispose()
        broken = PolicyServer(settings, _failing_check, "127.0.0.1", 0)
        broken.start()
        try:
            with socket.create_connection(broken.host_port, timeout=10) as connection:
                assert _ask(connection, recipient=fred_reply).startswith("451 4.3.0")
                assert _ask(connection, recipient="abalone@pbm.example.org") == DUNNO
        finally:
            broken.stop()
    finally:
        server.stop()


def _failing_check(board: int, token: str) -> bool:
    raise OSError("database unreachable")
