"""The policy service's caps, timeouts and flood log, over real sockets: idle clients and
a flood beside a client that still gets its answers."""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from typing import Callable, Iterator

import pytest
from mail_helpers import flood_lines, wait_for

from abalone_pbm.config import Settings
from abalone_pbm.mail import policy
from abalone_pbm.mail.limits import ConnectionCaps
from abalone_pbm.mail.policy import DUNNO, PolicyServer

REQUEST = (b"request=smtpd_access_policy\nprotocol_state=RCPT\n"
           b"recipient=abalone@pbm.example.org\n\n")


def _any_token(board: int, token: str) -> bool:
    return True


Serve = Callable[..., PolicyServer]


@pytest.fixture
def serve() -> Iterator[Serve]:
    servers: list[PolicyServer] = []

    def start(caps: ConnectionCaps | None = None, **overrides: object) -> PolicyServer:
        settings = Settings(address="abalone@pbm.example.org",
                            **overrides)  # type: ignore[arg-type]
        server = PolicyServer(settings, _any_token, "127.0.0.1", 0, caps=caps)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def connect(server: PolicyServer, opened: list[socket.socket],
            source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(server.host_port, timeout=10, source_address=(source, 0))
    opened.append(sock)
    return sock


def ask(sock: socket.socket) -> str:
    sock.sendall(REQUEST)
    answer = b""
    while not answer.endswith(b"\n\n"):
        chunk = sock.recv(4096)
        assert chunk, "the policy service closed the connection"
        answer += chunk
    return answer.decode().removeprefix("action=").strip()


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server closed the connection (the socket's timeout bounds the wait)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_over_the_per_client_cap_connections_are_closed_and_others_are_answered(
    serve: Serve, sockets: list[socket.socket], caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="abalone_pbm.mail.limits")
    threads_before = threading.active_count()
    server = serve(ConnectionCaps(total=10, per_client=3), refused_log_interval=1.5)
    held = [connect(server, sockets) for _ in range(3)]
    for sock in held:
        assert ask(sock) == DUNNO  # each has its thread now
    for _ in range(40):
        assert closed_by_server(connect(server, sockets))
    # Threads: the serving one and one per held connection, however many came.
    assert threading.active_count() <= threads_before + 1 + 3
    # Another client is served, and the held connections still are.
    assert ask(connect(server, sockets, "127.0.0.2")) == DUNNO
    assert ask(held[0]) == DUNNO
    # A held connection closes: its client may open another.
    held[1].close()
    wait_for(lambda: server.counter.held_by("127.0.0.1") == 2)
    assert ask(connect(server, sockets)) == DUNNO
    wait_for(lambda: flood_lines(caplog))
    time.sleep(0.6)
    [line] = flood_lines(caplog)
    assert re.fullmatch(r"policy service: refused 40 connections from 127\.0\.0\.1 in the "
                        r"last \d s: over the per-client cap \(3 connections\)", line), line


def test_over_the_total_cap_new_clients_are_closed(
    serve: Serve, sockets: list[socket.socket],
) -> None:
    server = serve(policy_max_connections=2, policy_max_connections_per_client=2)
    assert server.counter.caps == ConnectionCaps(2, 2)
    held = [connect(server, sockets, "127.0.0.2"), connect(server, sockets, "127.0.0.3")]
    for sock in held:
        assert ask(sock) == DUNNO
    assert closed_by_server(connect(server, sockets, "127.0.0.4"))
    held[0].close()
    wait_for(lambda: server.counter.total == 1)
    assert ask(connect(server, sockets, "127.0.0.4")) == DUNNO


def test_idle_connections_and_unfinished_requests_are_closed(
    serve: Serve, sockets: list[socket.socket], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(policy, "REQUEST_SECONDS", 0.6)
    server = serve(policy_idle_timeout=0.5)
    idle = connect(server, sockets)
    assert ask(idle) == DUNNO
    # A client that asks now and then stays; one that says nothing is closed.
    busy = connect(server, sockets)
    started = time.monotonic()
    for _ in range(5):
        time.sleep(0.3)
        assert ask(busy) == DUNNO
    assert closed_by_server(idle)
    assert time.monotonic() - started < 5
    # A request trickled a line at a time, each well within the idle timeout: closed
    # once the request has taken longer than REQUEST_SECONDS.
    trickle = connect(server, sockets)
    started = time.monotonic()
    with pytest.raises(OSError):
        for number in range(40):
            trickle.sendall(f"name{number}=value\n".encode())
            time.sleep(0.1)
    assert 0.5 < time.monotonic() - started < 4
    wait_for(lambda: server.counter.total == 0)  # the busy one has idled out meanwhile


def test_the_listen_backlog_takes_a_burst_of_connections(serve: Serve) -> None:
    server = serve()
    # A burst of 100 at once is taken (with socketserver's default backlog of 5 the
    # kernel drops SYNs and the clients retry after a second and more: 15 s here).
    started = time.monotonic()
    burst = [socket.create_connection(server.host_port, timeout=10) for _ in range(100)]
    try:
        answers = [ask(sock) for sock in burst]
    finally:
        for sock in burst:
            sock.close()
    assert answers == [DUNNO] * 100
    assert time.monotonic() - started < 3
