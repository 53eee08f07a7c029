"""Idle connections from one client against a real ``abalone-pbm serve``: what the SMTP
listener and the policy service make of them, and whether another client still gets
through.

    .venv/bin/python benchmarks/connection_flood.py [--sessions 1100] [--policy 1500]
        [--nofile 1024] [--idle 0] [--source TREE]

``serve`` runs on SQLite in a temporary directory with its open files limit set to
``--nofile`` (systemd's default is 1024), its SMTP listener and policy service on free
ports. Phase one opens ``--sessions`` idle SMTP connections from 127.0.0.1, phase two
(after closing those) ``--policy`` idle policy connections. For each phase it prints
how the connections were answered (greeted, 421, closed, no answer yet), serve's
threads and open files, whether a client from 127.0.0.2 still gets a mail or a policy
answer through (and how fast), and how many lines serve logged. ``--idle S`` sets both
idle timeouts to S seconds and measures again after them. ``--source`` runs serve from
another tree (e.g. an older commit unpacked with ``git archive``) for a comparison.
"""

from __future__ import annotations

import argparse
import os
import resource
import selectors
import smtplib
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OURS = "abalone@example.org"
MAIL = (b"From: fred@example.net\r\nTo: abalone@example.org\r\nSubject: help\r\n"
        b"Message-ID: <flood-check@example.net>\r\n\r\nhelp\r\n")
POLICY_REQUEST = (b"request=smtpd_access_policy\nprotocol_state=RCPT\n"
                  b"recipient=abalone@example.org\n\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("serve exited before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("serve did not start listening")


@dataclass
class Answers:
    greeted: int = 0
    refused_421: int = 0
    closed: int = 0
    silent: int = 0

    def __str__(self) -> str:
        return (f"greeted {self.greeted}, 421 {self.refused_421}, closed without a word "
                f"{self.closed}, no answer (yet) {self.silent}")


def open_connections(port: int, count: int) -> list[socket.socket]:
    opened = []
    for _ in range(count):
        try:
            opened.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            break
    return opened


def classify(opened: list[socket.socket], wait: float) -> Answers:
    """What each connection received within ``wait`` seconds: its first bytes or EOF."""
    answers = Answers()
    selector = selectors.DefaultSelector()
    sock: socket.socket
    for sock in opened:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, data=sock)
    pending = set(opened)
    deadline = time.monotonic() + wait
    while pending and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
            sock = key.data
            try:
                data = sock.recv(512)
            except OSError:
                data = b""
            if data.startswith(b"220"):
                answers.greeted += 1
            elif data.startswith(b"421"):
                answers.refused_421 += 1
            else:
                answers.closed += 1
            selector.unregister(sock)
            pending.discard(sock)
    answers.silent = len(pending)
    selector.close()
    for sock in opened:
        sock.setblocking(True)
        sock.settimeout(5)
    return answers


def usage(pid: int) -> str:
    threads = next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text()
                   .splitlines() if line.startswith("Threads:"))
    files = len(os.listdir(f"/proc/{pid}/fd"))
    return f"serve: {threads} threads, {files} open files"


def other_client_mail(port: int) -> str:
    started = time.monotonic()
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=10,
                          source_address=("127.0.0.2", 0)) as client:
            refused = client.sendmail("fred@example.net", [OURS], MAIL)
        return f"mail from 127.0.0.2: taken ({refused or 'all'}) in " \
               f"{(time.monotonic() - started) * 1000:.0f} ms"
    except (OSError, smtplib.SMTPException) as error:
        return f"mail from 127.0.0.2: FAILED after {time.monotonic() - started:.1f} s: {error!r}"


def other_client_policy(port: int) -> str:
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10,
                                      source_address=("127.0.0.2", 0)) as sock:
            sock.sendall(POLICY_REQUEST)
            answer = b""
            while not answer.endswith(b"\n\n"):
                chunk = sock.recv(512)
                if not chunk:
                    break
                answer += chunk
        return f"policy request from 127.0.0.2: {answer.decode().strip() or 'closed'} in " \
               f"{(time.monotonic() - started) * 1000:.0f} ms"
    except OSError as error:
        return f"policy request from 127.0.0.2: FAILED after " \
               f"{time.monotonic() - started:.1f} s: {error!r}"


def log_lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1100)
    parser.add_argument("--policy", type=int, default=1500)
    parser.add_argument("--nofile", type=int, default=1024)
    parser.add_argument("--idle", type=float, default=0.0)
    parser.add_argument("--source", type=Path, default=REPO)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.sessions + args.policy + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * (args.sessions + args.policy)),
                                                    hard))
    with tempfile.TemporaryDirectory(prefix="connection-flood-") as workdir:
        smtp_port, policy_port = free_port(), free_port()
        env = dict(os.environ, PYTHONPATH=str(args.source.resolve()),
                   ABALONE_PBM_LISTEN=f"127.0.0.1:{smtp_port}",
                   ABALONE_PBM_POLICY_LISTEN=f"127.0.0.1:{policy_port}",
                   ABALONE_PBM_ADDRESS=OURS,
                   ABALONE_PBM_DATABASE_URL=f"sqlite:///{workdir}/flood.sqlite3")
        if args.idle:
            env.update(ABALONE_PBM_SMTP_IDLE_TIMEOUT=str(args.idle),
                       ABALONE_PBM_POLICY_IDLE_TIMEOUT=str(args.idle))
        log_path = Path(workdir) / "serve.log"
        nofile = args.nofile

        def limit_open_files() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        with open(log_path, "wb") as log_file:
            process = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "serve"],
                                       cwd=workdir, env=env, stdout=log_file,
                                       stderr=subprocess.STDOUT, preexec_fn=limit_open_files)
        try:
            wait_listening(smtp_port, process)
            wait_listening(policy_port, process)
            time.sleep(1)
            print(f"source {args.source}; serve's open files limit {nofile}; "
                  f"at rest {usage(process.pid)}, {log_lines(log_path)} log lines")
            for name, port, count, other in (
                ("SMTP", smtp_port, args.sessions, other_client_mail),
                ("policy", policy_port, args.policy, other_client_policy),
            ):
                before = log_lines(log_path)
                started = time.monotonic()
                opened = open_connections(port, count)
                answers = classify(opened, wait=3)
                print(f"{name}: {len(opened)} of {count} idle connections from 127.0.0.1 "
                      f"opened in {time.monotonic() - started:.1f} s: {answers}")
                print(f"  {usage(process.pid)}")
                print(f"  {other(port)}")
                time.sleep(1.5)
                print(f"  serve logged {log_lines(log_path) - before} lines meanwhile")
                if args.idle:
                    time.sleep(args.idle + 1.5)
                    still = sum(1 for sock in opened if _still_open(sock))
                    print(f"  after the idle timeout ({args.idle:g} s): {still} still open; "
                          f"{usage(process.pid)}")
                for sock in opened:
                    sock.close()
                time.sleep(1)
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        lines = log_path.read_text(errors="replace").splitlines()
        about = [line for line in lines
                 if "refused" in line or "accept" in line or "open files" in line]
        print(f"serve logged {len(lines)} lines in all, {len(about)} of them about refused "
              f"connections or accepts; the first few:")
        for line in about[:4]:
            print(f"  {line[:200]}")


def _still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(512) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


if __name__ == "__main__":
    main()
