"""`serve` runs its worker in a process of its own (ABALONE_PBM_WORKER_PROCESS): a
worker killed with kill -9 under load loses no mail and answers none twice, a new one
takes over within seconds, the worker never outlives its server, and the worker thread
of one process is still there when the setting is off."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from .conftest import LiveServer, _wait_listening


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command name (which may hold blanks and parentheses).
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait(condition, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def _worker_of(pid: int) -> int:
    """The one worker process of the serve ``pid`` (serve listens a moment before it
    starts its worker)."""
    assert _wait(lambda: len(_children(pid)) == 1), _children(pid)
    (worker,) = _children(pid)
    return worker


def _answers(server: LiveServer) -> Counter[str]:
    with server.mailbox.sink.lock:
        return Counter(rcpt[0] for _, rcpt, message in server.mailbox.sink.messages
                       if str(message["Subject"]).startswith("Abalone help"))


def test_a_worker_killed_under_load_loses_nothing_and_answers_nothing_twice(
        live_server: LiveServer) -> None:
    server = live_server
    worker = _worker_of(server.process.pid)
    senders = [f"stranger{n}@example.org" for n in range(40)]
    for address in senders[:20]:
        server.send(address, "abalone help")
    # Killed while it works through them (some answered, most not yet).
    assert _wait(lambda: sum(_answers(server).values()) >= 2)
    os.kill(worker, signal.SIGKILL)
    for address in senders[20:]:
        server.send(address, "abalone help")  # stored while no worker runs
    assert _wait(lambda: len(_answers(server)) == len(senders), timeout=30), \
        sorted(set(senders) - set(_answers(server)))
    time.sleep(1.5)  # anything sent twice would have arrived by now
    assert _answers(server) == Counter({address: 1 for address in senders})
    (successor,) = _children(server.process.pid)
    assert successor != worker


def test_the_worker_ends_with_its_server(
        tmp_path: Path, server_env: dict[str, str]) -> None:
    host, port = server_env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
    process = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "serve"], cwd=tmp_path,
                               env=server_env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        _wait_listening(host, int(port), process, timeout=30)
        worker = _worker_of(process.pid)
        process.send_signal(signal.SIGKILL)
        process.wait()
        # Its wake pipe reaches its end: the worker stops by itself.
        assert _wait(lambda: not _alive(worker), timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def thread_worker_env(server_env: dict[str, str]) -> dict[str, str]:
    return {**server_env, "ABALONE_PBM_WORKER_PROCESS": "off"}


def test_with_the_setting_off_the_worker_is_a_thread(
        tmp_path: Path, relay, thread_worker_env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    from .conftest import Mailbox

    env = thread_worker_env
    host, port = env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
    process = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "serve"], cwd=tmp_path,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(host, int(port), process, timeout=30)
        server = LiveServer(host, int(port), process, tmp_path, env, Mailbox(relay[0]))
        server.send("fred@example.org", "abalone help")
        server.mailbox.wait_for("fred@example.org", r"^Abalone help")
        assert _children(process.pid) == []
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_stopping_server_sends_every_answer_its_worker_committed(
        live_server: LiveServer) -> None:
    """SIGTERM during a burst: the worker finishes the mails it holds, and the answers
    they caused go out before serve exits (none left waiting for the next start)."""
    server = live_server
    senders = [f"burst{n}@example.org" for n in range(30)]
    for address in senders:
        server.send(address, "abalone help")
    assert _wait(lambda: sum(_answers(server).values()) >= 3)
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    waiting = subprocess.run([sys.executable, "-m", "abalone_pbm", "mail", "outbox"],
                             cwd=server.workdir, env=server.env, capture_output=True,
                             text=True, timeout=60)
    assert waiting.stdout.startswith("no outgoing mail waiting or failed"), waiting.stdout
    answered = _answers(server)
    assert set(answered.values()) == {1} and len(answered) >= 3


def test_the_worker_runs_on_the_settings_of_its_server(
        tmp_path: Path, relay, server_env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Settings from serve's --config file reach the worker process too."""
    from .conftest import Mailbox

    config = tmp_path / "abalone-pbm.toml"
    config.write_text('address = "games@pbm.example"\n')
    host, port = server_env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
    process = subprocess.Popen(
        [sys.executable, "-m", "abalone_pbm", "serve", "--config", str(config)],
        cwd=tmp_path, env=server_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_listening(host, int(port), process, timeout=30)
        server = LiveServer(host, int(port), process, tmp_path, server_env, Mailbox(relay[0]))
        server.send("fred@example.org", "abalone help", to="games@pbm.example")
        answer = server.mailbox.wait_for("fred@example.org", r"^Abalone help")
        assert "games@pbm.example" in str(answer["From"])
        assert len(_children(process.pid)) == 1
    finally:
        process.terminate()
        process.wait(timeout=20)
