"""Bounce addresses at RCPT (verp): the policy service and the listener accept the
bounce address of a mail we sent and refuse a forged one with 5xx; a database fault is
a 4xx, never a refusal."""

from __future__ import annotations

import smtplib
import socket
import sys
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from abalone_pbm.db.models import OutboxMail
from abalone_pbm.mail.listener import make_accepts, start_listener, stop_listener
from abalone_pbm.mail.policy import DUNNO, PolicyServer, make_token_check
from abalone_pbm.service import bounces, passwords

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from service.harness import Harness, make_harness  # noqa: E402

GAME = "abalone@pbm.example.org"


@pytest.fixture
def harness(migrated_db_url: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))
    h = make_harness(migrated_db_url, tmp_path, address=GAME, listen="127.0.0.1:0")
    try:
        yield h
    finally:
        h.database.dispose()


def _ask(connection: socket.socket, recipient: str) -> str:
    connection.sendall(f"request=smtpd_access_policy\nprotocol_state=RCPT\nsender=\n"
                       f"recipient={recipient}\n\n".encode())
    answer = b""
    while not answer.endswith(b"\n\n"):
        chunk = connection.recv(4096)
        assert chunk
        answer += chunk
    return answer.decode()[len("action="):].strip()


def _a_bounce_address(h: Harness) -> str:
    h.signup("fred", address="fred@players.test")
    with h.database.read() as session:
        sender = session.scalars(select(OutboxMail.sender)).first()
    assert sender is not None and sender.startswith("abalone+bounce.")
    return sender


def _failing(address: str) -> bool:
    raise OSError("database unreachable")


def test_policy_service_accepts_only_bounce_addresses_of_our_mails(harness: Harness) -> None:
    ours = _a_bounce_address(harness)
    forged = ours.split("+")[0] + "+bounce." + "a" * 16 + "@pbm.example.org"
    settings = harness.settings
    server = PolicyServer(settings, make_token_check(harness.database), "127.0.0.1", 0,
                          bounce_is_known=bounces.make_bounce_check(settings,
                                                                    harness.database))
    server.start()
    try:
        with socket.create_connection(server.host_port, timeout=10) as connection:
            assert _ask(connection, ours) == DUNNO
            assert _ask(connection, ours.upper()) == DUNNO
            assert _ask(connection, forged).startswith("550 5.1.1 Unknown bounce address")
            assert _ask(connection, "abalone+bounce.x@pbm.example.org").startswith("550")
    finally:
        server.stop()
    broken = PolicyServer(settings, make_token_check(harness.database), "127.0.0.1", 0,
                          bounce_is_known=_failing)
    broken.start()
    try:
        with socket.create_connection(broken.host_port, timeout=10) as connection:
            assert _ask(connection, ours).startswith("451 4.3.0")
    finally:
        broken.stop()


def test_listener_refuses_a_forged_bounce_at_rcpt(harness: Harness) -> None:
    ours = _a_bounce_address(harness)
    forged = ours.split("+")[0] + "+bounce." + "b" * 16 + "@pbm.example.org"
    stored: list[list[str]] = []
    settings = replace(harness.settings, lmtp=False)
    controller = start_listener(settings, lambda raw, sender, rcpts: stored.append(rcpts),
                                make_accepts(settings),
                                bounce_is_known=bounces.make_bounce_check(
                                    settings, harness.database))
    try:
        with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
            client.ehlo("mx.players.test")
            client.mail("<>")
            assert client.rcpt(forged)[0] == 550
            assert client.rcpt(ours)[0] == 250
            assert client.rcpt(GAME)[0] == 250
            assert client.rcpt("abalone+101.k3x9q7mf2a@pbm.example.org")[0] == 250
            code, _ = client.data(b"Subject: report\r\n\r\nx\r\n")
            assert code == 250
    finally:
        stop_listener(controller)
    assert stored == [[ours, GAME, "abalone+101.k3x9q7mf2a@pbm.example.org"]]
