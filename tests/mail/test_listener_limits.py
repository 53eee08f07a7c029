"""The SMTP/LMTP listener's caps, timeouts and flood log, live on a free port, with plain
sockets (idle clients, a flood) and smtplib (a real client beside them)."""

from __future__ import annotations

import logging
import re
import smtplib
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from mail_helpers import flood_lines, wait_for

from abalone_pbm.config import Settings, load_settings
from abalone_pbm.mail.listener import (
    TOO_MANY_CONNECTIONS,
    IntakeController,
    make_accepts,
    start_listener,
    stop_listener,
)
from abalone_pbm.mail.limits import (
    MOST_CLIENTS_COUNTED,
    MOST_CLIENTS_LOGGED,
    LISTEN_BACKLOG,
    MIN_BACKLOG,
    RESERVED_FILES,
    ConnectionCaps,
    RefusalLog,
    client_key,
    fit_to_open_files,
    listener_caps,
)

OURS = "abalone@example.org"
MAIL = b"From: fred@example.net\r\nTo: abalone@example.org\r\nSubject: help\r\n\r\nhelp\r\n"
ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    """A store that keeps what it was given; ``gate`` holds it (a slow database)."""

    def __init__(self) -> None:
        self.stored: list[bytes] = []
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def __call__(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(10)
        self.stored.append(raw)


Listen = Callable[..., IntakeController]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def listen(recorder: Recorder) -> Iterator[Listen]:
    controllers: list[IntakeController] = []

    def start(**overrides: object) -> IntakeController:
        values: dict[str, object] = dict(address=OURS, listen="127.0.0.1:0")
        values.update(overrides)
        settings = Settings(**values)  # type: ignore[arg-type]
        controller = start_listener(settings, recorder, make_accepts(settings))
        controllers.append(controller)
        return controller

    yield start
    for controller in controllers:
        stop_listener(controller)


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def connect(controller: IntakeController, opened: list[socket.socket],
            source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection((controller.hostname, controller.port), timeout=10,
                                    source_address=(source, 0))
    opened.append(sock)
    return sock


def first_line(sock: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = sock.recv(1024)
        if not chunk:
            break
        data += chunk
    return data


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed (reads until EOF; the socket's timeout bounds it)."""
    try:
        while sock.recv(1024):
            pass
    except ConnectionResetError:
        pass
    return True


def test_clients_count_by_ipv4_address_or_ipv6_slash_64() -> None:
    assert client_key("10.0.0.5") == "10.0.0.5"
    assert client_key("::ffff:10.0.0.5") == "10.0.0.5"
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::9")
    assert client_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("fe80::1%eth0") == "fe80::/64"


def test_over_the_per_client_cap_a_client_gets_421_and_others_still_send(
    listen: Listen, recorder: Recorder, sockets: list[socket.socket],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="abalone_pbm.mail.limits")
    controller = listen(smtp_max_sessions=10, smtp_max_sessions_per_client=3,
                        refused_log_interval=2)
    idle = [connect(controller, sockets) for _ in range(3)]
    for sock in idle:
        assert first_line(sock).startswith(b"220 ")
    for _ in range(12):
        refused = connect(controller, sockets)
        assert first_line(refused) == TOO_MANY_CONNECTIONS.encode() + b"\r\n"
        assert closed_by_server(refused) and refused.recv(1) == b""
    # A client on the cap's other side (another address) gets its mail through.
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10,
                      source_address=("127.0.0.2", 0)) as client:
        assert client.sendmail("fred@example.net", [OURS], MAIL) == {}
    assert recorder.stored == [MAIL]
    # One of the idle sessions ends: its client may open another.
    idle[0].close()
    wait_for(lambda: controller.limits.counter.held_by("127.0.0.1") == 2)
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        assert client.noop()[0] == 250
    # The flood is one line with its count, not twelve.
    wait_for(lambda: flood_lines(caplog))
    time.sleep(0.5)
    [line] = flood_lines(caplog)
    assert re.fullmatch(r"SMTP listener: refused 12 connections from 127\.0\.0\.1 in the "
                        r"last \d s: over the per-client cap \(3 connections\)", line), line


def test_over_the_total_cap_every_new_client_gets_421(
    listen: Listen, sockets: list[socket.socket], caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="abalone_pbm.mail.limits")
    controller = listen(lmtp=True, smtp_max_sessions=4, smtp_max_sessions_per_client=3,
                        refused_log_interval=1)
    held = [connect(controller, sockets, "127.0.0.1") for _ in range(3)]
    held.append(connect(controller, sockets, "127.0.0.2"))
    for sock in held:
        assert first_line(sock).startswith(b"220 ")
    for source in ("127.0.0.3", "127.0.0.4", "127.0.0.3"):
        assert first_line(connect(controller, sockets, source)).startswith(b"421 4.7.0 ")
    wait_for(lambda: len(flood_lines(caplog)) == 2)
    lines = sorted(re.sub(r"in the last \d+ s", "in the last N s", line)
                   for line in flood_lines(caplog))
    assert lines == [
        "LMTP listener: refused 1 connection from 127.0.0.4 in the last N s: "
        "over the total cap (4 connections)",
        "LMTP listener: refused 2 connections from 127.0.0.3 in the last N s: "
        "over the total cap (4 connections)",
    ]


def test_an_idle_session_is_closed_after_the_idle_timeout(
    listen: Listen, sockets: list[socket.socket],
) -> None:
    controller = listen(smtp_idle_timeout=0.5)
    idle = connect(controller, sockets)
    busy = connect(controller, sockets)
    assert first_line(idle).startswith(b"220 ") and first_line(busy).startswith(b"220 ")
    started = time.monotonic()
    for _ in range(6):  # a command now and then keeps a session open
        time.sleep(0.2)
        busy.sendall(b"NOOP\r\n")
        assert first_line(busy).startswith(b"250 ")
    assert closed_by_server(idle) and idle.recv(1) == b""
    assert 0.4 < time.monotonic() - started < 5
    wait_for(lambda: controller.limits.counter.total == 1)


def test_data_has_a_deadline_of_its_own_and_storing_does_not_count(
    listen: Listen, recorder: Recorder, sockets: list[socket.socket],
) -> None:
    controller = listen(smtp_idle_timeout=5, smtp_data_timeout=0.8)
    # A client that trickles its DATA (a line each 0.2 s) is cut off at the deadline.
    slow = connect(controller, sockets)
    first_line(slow)
    for command in (b"HELO x", b"MAIL FROM:<fred@example.net>", b"RCPT TO:<" + OURS.encode()
                    + b">", b"DATA"):
        slow.sendall(command + b"\r\n")
        assert first_line(slow)[:1] in (b"2", b"3")
    started = time.monotonic()
    slow.settimeout(0.2)
    for _ in range(50):
        try:
            slow.sendall(b"x" * 10 + b"\r\n")
            answer = slow.recv(1024)
        except TimeoutError:
            continue  # nothing to read: the session goes on
        except ConnectionError:
            break
        assert answer == b""  # closed, with no answer to the unfinished mail
        break
    else:
        raise AssertionError("the trickled DATA was not cut off")
    assert 0.6 < time.monotonic() - started < 4
    # A store slower than the deadline still ends in 250.
    recorder.gate = threading.Event()
    threading.Timer(1.5, recorder.gate.set).start()
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        assert client.sendmail("fred@example.net", [OURS], MAIL) == {}
    assert recorder.stored == [MAIL]


FLOOD_SCRIPT = textwrap.dedent("""
    import logging, os, resource, sys, time
    from abalone_pbm.config import Settings
    from abalone_pbm.mail.listener import make_accepts, start_listener, stop_listener
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
    resource.setrlimit(resource.RLIMIT_NOFILE, (300, 300))
    settings = Settings(address="abalone@example.org", listen="127.0.0.1:0",
                        refused_log_interval=60)
    controller = start_listener(settings, lambda *a: None, make_accepts(settings))
    print(controller.port, controller.limits.counter.caps.total, flush=True)
    sys.stdin.readline()
    # Every file descriptor but a few in use: accepts fail with EMFILE.
    eaten = []
    try:
        while True:
            eaten.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        pass
    print("full", flush=True)
    sys.stdin.readline()
    time.sleep(2.5)
    for fd in eaten:
        os.close(fd)
    time.sleep(2)
    stop_listener(controller)
""")


def test_a_small_open_files_limit_lowers_the_caps_and_failed_accepts_are_logged_once() -> None:
    process = subprocess.Popen([sys.executable, "-c", FLOOD_SCRIPT], cwd=ROOT, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        port, cap = map(int, process.stdout.readline().split())
        # 300 open files, 128 kept for the server's own: 172 sessions, not 200.
        assert cap == 172
        process.stdin.write("\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "full"
        clients = [socket.create_connection(("127.0.0.1", port), timeout=10)
                   for _ in range(20)]
        process.stdin.write("\n")
        process.stdin.flush()
        # Once files are free again, the waiting connections are taken and greeted.
        for client in clients:
            assert first_line(client).startswith(b"220 ")
            client.close()
        _, errors = process.communicate(timeout=30)
    finally:
        process.kill()
    lines = errors.splitlines()
    assert any("the open files limit (RLIMIT_NOFILE) is 300: the SMTP listener holds at "
               "most 172 sessions, 30 per client (not 200 and 30)" in line for line in lines)
    # The log at stop has the pauses of the whole flood, in one line.
    failed = [line for line in lines if "accept failed" in line]
    assert len(failed) == 1, errors
    assert re.fullmatch(r"SMTP listener: accepting paused [1-9] times? in the last \d+ s: "
                        r"accept failed: Too many open files; each pause is a second",
                        failed[0]), failed[0]
    assert "out of system resource" not in errors


def test_a_flood_from_many_clients_is_counted_in_bounded_memory_and_a_few_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="abalone_pbm.mail.limits")
    now = [100.0]
    refusals = RefusalLog("SMTP listener", 60, clock=lambda: now[0])
    reason = "over the total cap (200 connections)"
    assert refusals.record("refused {count} connection{s} from 10.0.0.1", reason)
    for _ in range(4):
        assert not refusals.record("refused {count} connection{s} from 10.0.0.1", reason)
    for number in range(2, 3002):
        refusals.record(f"refused {{count}} connection{{s}} from 10.{number // 256}."
                        f"{number % 256}.1", reason)
    assert len(refusals._counts) == MOST_CLIENTS_COUNTED
    now[0] += 59
    refusals.flush_if_due()
    assert flood_lines(caplog) == []
    now[0] += 1
    refusals.flush_if_due()
    lines = flood_lines(caplog)
    assert len(lines) == MOST_CLIENTS_LOGGED + 1
    assert lines[0] == ("SMTP listener: refused 5 connections from 10.0.0.1 in the last "
                        "60 s: over the total cap (200 connections)")
    assert lines[1].startswith("SMTP listener: refused 1 connection from ")
    assert lines[-1] == ("SMTP listener: refused 2,991 more connections from 990 other "
                         "clients or more in the last 60 s: over the total cap (200 connections)")
    # A new interval starts afresh.
    assert refusals.record("refused {count} connection{s} from 10.0.0.1", reason)


def test_caps_are_lowered_in_proportion_to_fit_the_open_files_limit() -> None:
    smtp, policy = ConnectionCaps(200, 30), ConnectionCaps(300, 220)
    assert fit_to_open_files(smtp, policy, 4096) == (smtp, policy)
    assert fit_to_open_files(smtp, policy, 200 + 300 + RESERVED_FILES) == (smtp, policy)
    # 1024 - 128 = 896 files for 500 wanted connections: enough. 628 - 1: not.
    assert fit_to_open_files(smtp, policy, 627) == (ConnectionCaps(199, 30),
                                                    ConnectionCaps(299, 220))
    assert fit_to_open_files(smtp, policy, 378) == (ConnectionCaps(100, 30),
                                                    ConnectionCaps(150, 150))
    assert fit_to_open_files(smtp, None, 228) == (ConnectionCaps(100, 30), None)
    # Far too few files: one connection each, never none.
    assert fit_to_open_files(smtp, policy, 64) == (ConnectionCaps(1, 1), ConnectionCaps(1, 1))


def test_the_listen_backlog_fits_in_the_files_the_caps_leave_free() -> None:
    # asyncio accepts up to the backlog in one turn of its loop, a file each.
    with_policy = Settings(policy_listen="127.0.0.1:8026")
    assert listener_caps(with_policy, 4096).smtp_backlog == LISTEN_BACKLOG
    assert listener_caps(with_policy, 1024).smtp_backlog == 1024 - RESERVED_FILES - 500
    assert listener_caps(Settings(), 1024).smtp_backlog == 1024 - RESERVED_FILES - 200
    assert listener_caps(with_policy, 300).smtp_backlog == MIN_BACKLOG


def test_the_limits_are_settings_named_in_the_projects_style() -> None:
    settings = load_settings(environ={
        "ABALONE_PBM_SMTP_MAX_SESSIONS": "50", "ABALONE_PBM_SMTP_MAX_SESSIONS_PER_CLIENT": "5",
        "ABALONE_PBM_SMTP_IDLE_TIMEOUT": "30", "ABALONE_PBM_SMTP_DATA_TIMEOUT": "90.5",
        "ABALONE_PBM_POLICY_MAX_CONNECTIONS": "120",
        "ABALONE_PBM_POLICY_MAX_CONNECTIONS_PER_CLIENT": "110",
        "ABALONE_PBM_POLICY_IDLE_TIMEOUT": "400", "ABALONE_PBM_REFUSED_LOG_INTERVAL": "300",
    })
    assert (settings.smtp_max_sessions, settings.smtp_max_sessions_per_client) == (50, 5)
    assert (settings.smtp_idle_timeout, settings.smtp_data_timeout) == (30.0, 90.5)
    assert (settings.policy_max_connections,
            settings.policy_max_connections_per_client) == (120, 110)
    assert (settings.policy_idle_timeout, settings.refused_log_interval) == (400.0, 300.0)
    defaults = Settings()
    assert (defaults.smtp_max_sessions, defaults.smtp_max_sessions_per_client,
            defaults.smtp_idle_timeout, defaults.smtp_data_timeout) == (200, 30, 60.0, 120.0)
    for name, bad in (("SMTP_MAX_SESSIONS", "0"), ("POLICY_MAX_CONNECTIONS_PER_CLIENT", "-1"),
                      ("SMTP_IDLE_TIMEOUT", "0"), ("REFUSED_LOG_INTERVAL", "-5")):
        with pytest.raises(ValueError, match=f"ABALONE_PBM_{name} must"):
            load_settings(environ={f"ABALONE_PBM_{name}": bad})


def test_a_burst_of_connections_waits_in_the_listen_backlog_not_for_syn_retries(
    listen: Listen, sockets: list[socket.socket],
) -> None:
    controller = listen()
    # With asyncio's default backlog of 100, every hundredth connect of such a burst
    # has its SYN dropped and waits a second to retry (4 s for these 400).
    started = time.monotonic()
    burst = [connect(controller, sockets) for _ in range(400)]
    answers = [first_line(sock)[:3] for sock in burst]
    assert time.monotonic() - started < 2
    assert answers.count(b"220") == 30 and answers.count(b"421") == 370
