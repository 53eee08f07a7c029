"""End-to-end mail throughput: SMTP in -> the server -> the reply in the relay.

    python benchmarks/mail_throughput.py [--backend sqlite|postgresql|both] [--games N]
                                         [--moves M] [--concurrency C] [--pipelined]
                                         [--via reply|command]
                                         [--reply-shape gmail|bare-headers|bare]
                                         [--robot-games K [--robot NAME]]
                                         [--versus SHAPE] [--client-builds SHAPE]

For each backend this starts a relay sink (aiosmtpd, in this process) and a real
``abalone-pbm serve`` process (``python -m abalone_pbm serve`` in a temporary
directory, with ABALONE_PBM_LISTEN / ABALONE_PBM_RELAY / ABALONE_PBM_DATABASE_URL),
signs up 2N players and starts N games by SMTP, then plays M moves spread evenly
over the games (each move chosen with the rules core, each game's board tracked
here), sent by one of C SMTP clients, each with a connection of its own that it
keeps open. A client takes a game whose turn it is, sends its move and waits for
the answer before taking the next (at most C moves in flight, one per game); with
``--pipelined`` it does not wait (up to N moves in flight, queued in the inbox).

By default a move is what players send: a reply to the board mail that told the
mover of the last move, sent to that mail's reply address, written as Gmail writes
it (``--reply-shape gmail``, see ``reply_shapes.py``): the move on the first line,
the attribution and the whole board mail quoted below it in a text part and an HTML
part, ``In-Reply-To``/``References`` and Gmail's trace headers. ``--reply-shape
bare-headers`` sends the move alone with the same headers, ``bare`` the move alone
with From/To/Subject/Message-ID only (what this benchmark sent before). ``--via
command`` sends ``abalone move <board> <userid> <password> <move>`` to the server's
address instead (an argon2 check the first time, then a remembered password).
``--versus bare`` runs again sending bare replies while the clients still build the
first run's replies (``--client-builds``, built and not sent) and prints both runs'
server CPU a move and their ratio: on a machine of few cores the clients' own work
(building a Gmail reply costs them 4-5 ms a move) slows the server's processes beside
them, so a bare run with idle clients is no fair measure of what the server spends.
``--robot-games K`` also starts K games against a computer player (by mail, before
the moves), each left waiting for its human player to move.
``--profile FILE`` samples the server process with py-spy (``pip install py-spy``)
during the moves only, into FILE as collapsed stacks, one line per stack with its
thread (``--profile-gil``: only the thread holding the GIL, i.e. Python's CPU); ``benchmarks/profile_summary.py FILE`` prints where the time went.

The latency of a move runs from the end of its SMTP transaction (the server's 250
after DATA: the mail is stored) to the arrival at the relay sink of the board mail
for the mover (the one answering it: ``In-Reply-To`` is the move's Message-ID).
The wall time runs from the first move sent to the last board mail relayed (each
move relays one board mail to each of the two players).

SQLite: a file in the temporary directory (WAL, synchronous=FULL). PostgreSQL: a
throw-away PostgreSQL 15 server (tests/pg.py, fsync off), one schema. The daily
reply cap is raised (ABALONE_PBM_DAILY_REPLY_CAP) and the daily sender and challenge
limits are off, so a long run is not cut off; the server still counts each sender's
replies. The client threads and the relay
sink run in this process, on the same machine as the server.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import re
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.policy import compat32
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    REPO, Player, command_line, machine, percentile, quiet_move, start_postgres,
)
from reply_shapes import SHAPES, Original, reply  # noqa: E402

from aiosmtpd.controller import Controller  # noqa: E402

from abalone_pbm.rules import Board  # noqa: E402

SERVER_ADDRESS = "abalone@localhost"
_NEW_BOARD = re.compile(r"^New Abalone Board (\d+) ")


def child_pids(pid: int) -> list[int]:
    """The live children of the process ``pid`` (Linux), e.g. serve's worker process."""
    children: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as listing:
                children.extend(int(child) for child in listing.read().split())
    except (OSError, ValueError):
        pass
    return children


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process ``pid`` has used so far (Linux), else nan."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def tree_cpu_seconds(pid: int) -> dict[int, float]:
    """CPU seconds of the process ``pid`` and of each of its children, by pid."""
    return {p: cpu_seconds(p) for p in [pid, *child_pids(pid)]}


def thread_cpu(pid: int) -> dict[int, tuple[float, float]]:
    """(user, system) CPU seconds of each thread of the process ``pid`` (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
            out[int(tid)] = (int(fields[11]) / ticks, int(fields[12]) / ticks)
        except (OSError, ValueError, IndexError):
            continue
    return out


def thread_names(pid: int) -> dict[int, str]:
    """Each thread's Python name, from ``py-spy dump`` (empty without py-spy)."""
    spy = Path(sys.executable).with_name("py-spy")
    try:
        dump = subprocess.run([str(spy) if spy.exists() else "py-spy", "dump", "--pid",
                               str(pid)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return {int(m.group(1)): m.group(2)
            for m in re.finditer(r'^Thread (\d+) \(\w+\): "(.*)"$', dump, re.M)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the relay sink -------------------------------------------------------------------


@dataclass
class Relayed:
    at: float
    recipient: str
    subject: str
    in_reply_to: str
    reply_to: str = ""


class RelaySink:
    """The site's MTA: notes when each mail arrives, to whom, its Subject and In-Reply-To,
    and keeps each recipient's newest mail (what a player's reply quotes)."""

    def __init__(self) -> None:
        self.mails: list[Relayed] = []
        self.changed = threading.Condition()
        #: Called with each mail as it arrives (in the sink's thread).
        self.on_mail: Callable[[Relayed], None] | None = None
        #: Each recipient's newest mail (its bytes), and how many it received.
        self.newest: dict[str, bytes] = {}
        self.received: dict[str, int] = {}

    async def handle_DATA(self, server: object, session: object, envelope) -> str:  # type: ignore[no-untyped-def]
        at = time.perf_counter()
        headers = BytesHeaderParser(policy=compat32).parsebytes(
            envelope.original_content or envelope.content)
        subject = " ".join(str(headers.get("Subject", "")).split())
        in_reply_to = " ".join(str(headers.get("In-Reply-To", "")).split())
        reply_to = " ".join(str(headers.get("Reply-To", "")).split())
        with self.changed:
            for rcpt in envelope.rcpt_tos:
                mail = Relayed(at, rcpt.lower(), subject, in_reply_to, reply_to)
                self.mails.append(mail)
                self.newest[mail.recipient] = envelope.original_content or envelope.content
                self.received[mail.recipient] = self.received.get(mail.recipient, 0) + 1
                if self.on_mail is not None:
                    self.on_mail(mail)
            self.changed.notify_all()
        return "250 OK"

    def wait(self, predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self.mails):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    tail = [(m.recipient, m.subject) for m in self.mails[-5:]]
                    raise TimeoutError(f"timed out waiting for {what}; last mails: {tail}")
                self.changed.wait(min(remaining, 1.0))

    def count(self) -> int:
        with self.changed:
            return len(self.mails)

    def newest_after(self, recipient: str, count: int, timeout: float) -> tuple[bytes, str]:
        """The bytes and Subject of ``recipient``'s newest mail once it has received
        ``count`` mails (a player replies to the board mail that told of the last move)."""
        self.wait(lambda mails: self.received.get(recipient, 0) >= count, timeout,
                  f"mail {count} to {recipient}")
        with self.changed:
            subject = next(m.subject for m in reversed(self.mails) if m.recipient == recipient)
            return self.newest[recipient], subject


# -- the server process ---------------------------------------------------------------


@dataclass
class ServeProcess:
    process: subprocess.Popen[bytes]
    host: str
    port: int
    log: Path

    def announce(self) -> list[str]:
        lines = self.log.read_text(errors="replace").splitlines()
        return [line for line in lines if line.startswith("abalone-pbm:")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(workdir: Path, relay_port: int, db_url: str, name: str = "serve") -> ServeProcess:
    port = free_port()
    env = dict(os.environ)
    env.update(
        ABALONE_PBM_LISTEN=f"127.0.0.1:{port}",
        ABALONE_PBM_RELAY=f"smtp://127.0.0.1:{relay_port}",
        ABALONE_PBM_DATABASE_URL=db_url,
        ABALONE_PBM_ADDRESS=SERVER_ADDRESS,
        ABALONE_PBM_DAILY_REPLY_CAP=str(10**9),
        # A benchmark is one flood of many games: the per-day limits would cut it off.
        ABALONE_PBM_SENDER_DAILY_MAILS="0",
        ABALONE_PBM_CHALLENGES_PER_SENDER_DAILY="0",
        ABALONE_PBM_CHALLENGES_PER_PLAYER_DAILY="0",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
    )
    log = workdir / f"{name}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "abalone_pbm", "serve"],
            cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )
    server = ServeProcess(process, "127.0.0.1", port, log)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError("abalone-pbm serve exited:\n" + log.read_text(errors="replace"))
        try:
            with socket.create_connection((server.host, port), timeout=0.5):
                return server
        except OSError:
            if time.monotonic() > deadline:
                server.stop()
                raise RuntimeError("abalone-pbm serve did not start listening in 60 s") from None
            time.sleep(0.1)


def start_profiler(server: ServeProcess, output: str, gil: bool) -> subprocess.Popen[bytes]:
    """py-spy sampling ``server`` (every thread, not pausing it) until stop_profiler;
    with ``gil`` only the thread holding the GIL (Python's CPU, without the SQLite and
    socket calls that release it)."""
    spy = Path(sys.executable).with_name("py-spy")
    command = [str(spy) if spy.exists() else "py-spy", "record", "--pid",
               str(server.process.pid), "--format", "raw", "--threads", "--nonblocking",
               "--rate", "250", "--subprocesses", "--output", output] + (["--gil"] if gil else [])
    profiler = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
    time.sleep(1.0)  # py-spy attaches
    if profiler.poll() is not None:
        error = profiler.stderr.read().decode(errors="replace") if profiler.stderr else ""
        raise RuntimeError(f"py-spy did not start: {error.strip()}")
    return profiler


def stop_profiler(profiler: subprocess.Popen[bytes]) -> None:
    """Stop sampling; py-spy writes its file when interrupted."""
    profiler.send_signal(signal.SIGINT)
    try:
        profiler.wait(timeout=60)
    except subprocess.TimeoutExpired:
        profiler.kill()
        profiler.wait()


# -- players and games ----------------------------------------------------------------


@dataclass
class Game:
    index: int
    players: tuple[Player, Player]
    number: int = 0
    board: Board = field(default_factory=lambda: Board.from_layout("standard"))
    left: int = 0
    failed: str | None = None
    #: Each player's reply address for this board, by mail address.
    reply_to: dict[str, str] = field(default_factory=dict)


@dataclass
class Sent:
    game: Game
    move: str
    message_id: str
    mover: str
    smtp_start: float
    smtp_end: float = 0.0
    arrived: float = 0.0
    subject: str = ""
    answered: threading.Event = field(default_factory=threading.Event)


def mail(sender: str, subject: str, message_id: str, to: str = SERVER_ADDRESS,
         body: str = "") -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = message_id
    message.set_content(body or "\n")
    return message.as_bytes()


class Client:
    """One SMTP client with a connection of its own, reopened when it breaks."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.smtp: smtplib.SMTP | None = None

    def send(self, sender: str, raw: bytes, to: str = SERVER_ADDRESS) -> None:
        for attempt in range(3):
            try:
                if self.smtp is None:
                    self.smtp = smtplib.SMTP(self.host, self.port, timeout=60)
                self.smtp.sendmail(sender, [to], raw)
                return

            except (smtplib.SMTPServerDisconnected, ConnectionError, OSError):
                self.close()
                if attempt == 2:
                    raise

    def close(self) -> None:
        if self.smtp is not None:
            try:
                self.smtp.quit()
            except Exception:
                pass
            self.smtp = None


# -- one run --------------------------------------------------------------------------


@dataclass
class Result:
    backend: str
    moves: int
    wall: float
    relayed: int
    latencies: list[float]
    smtp_times: list[float]
    setup: float
    errors: list[str]
    missing: int
    sent: list[Sent] = field(default_factory=list)
    #: CPU seconds the server processes (with their worker processes), the worker
    #: processes alone, and this process (clients, relay sink) used.
    server_cpu: float = float("nan")
    worker_cpu: float = float("nan")
    #: CPU seconds of the PostgreSQL server's processes (0 for SQLite, in the server).
    database_cpu: float = 0.0
    #: How many ``serve`` processes (each with its worker process) ran.
    processes: int = 1
    client_cpu: float = float("nan")
    #: The server's (first process's) CPU seconds (user, system) by thread name.
    thread_cpu: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: Medians (ms) of the stages of a move in the server, from its log and database.
    stages: dict[str, list[float]] = field(default_factory=dict)


def run(backend: str, db_url: str, args: argparse.Namespace, workdir: Path,
        database_pid: int | None = None) -> Result:
    sink = RelaySink()
    relay_port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=relay_port)
    controller.start()
    servers: list[ServeProcess] = []
    try:
        # Several processes share one database (PostgreSQL: SKIP LOCKED); the first
        # creates the schema, the others find it.
        for number in range(args.processes):
            servers.append(start_server(workdir, relay_port, db_url, f"serve{number}"))
        for server in servers:
            for line in server.announce():
                print(f"  {line}")
        result = drive(backend, sink, servers, args, database_pid)
    finally:
        for server in servers:
            server.stop()
        controller.stop()
    lines = [line for server in servers
             for line in server.log.read_text(errors="replace").splitlines()]
    problems = [line for line in lines if "Traceback" in line or " ERROR " in line
                or " WARNING " in line]
    if problems:
        print(f"  the server logged {len(problems)} warnings or errors, e.g.:")
        for line in problems[:5]:
            print(f"    {line}")
    try:
        result.stages = stages(db_url, lines, result.sent)
    except Exception as error:  # a figure less, not a failed run
        print(f"  (no breakdown: {error.__class__.__name__}: {error})")
    return result


_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: "
                       r"(inbox|outbox) (\d+): (stored|done|sent)\b")


def stages(db_url: str, lines: list[str], sent: list[Sent]) -> dict[str, list[float]]:
    """Where each move's time went in the server, from the server's log (when each
    mail was stored, processed and relayed) and its database (which inbox and outbox
    rows belong to the move, and when the worker claimed it)."""
    from datetime import datetime

    from sqlalchemy import select

    from abalone_pbm.db.models import InboxMail, OutboxMail
    from abalone_pbm.db.session import Database

    logged: dict[tuple[str, int, str], datetime] = {}
    for line in lines:
        match = _LOG_LINE.match(line)
        if match:
            at = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").astimezone()
            logged[(match.group(2), int(match.group(3)), match.group(4))] = at
    keys = {s.message_id: s for s in sent}
    database = Database(db_url)
    out: dict[str, list[float]] = {"in the inbox": [], "processing": [], "to the relay": []}
    try:
        with database.read() as session:
            rows = session.execute(
                select(InboxMail.id, InboxMail.message_id, InboxMail.processed_at,
                       OutboxMail.id, OutboxMail.recipient)
                .join(OutboxMail, OutboxMail.inbox_id == InboxMail.id)
                .where(InboxMail.message_id.in_(list(keys)))
            ).all()
    finally:
        database.dispose()
    for inbox_id, key, claimed, outbox_id, recipient in rows:
        move = keys[key]
        if recipient.lower() != move.mover.lower():
            continue
        stored = logged.get(("inbox", inbox_id, "stored"))
        done = logged.get(("inbox", inbox_id, "done"))
        relayed = logged.get(("outbox", outbox_id, "sent"))
        if stored and claimed:
            out["in the inbox"].append((claimed - stored).total_seconds() * 1000)
        if claimed and done:
            out["processing"].append((done - claimed).total_seconds() * 1000)
        if done and relayed:
            out["to the relay"].append((relayed - done).total_seconds() * 1000)
    return out


def drive(backend: str, sink: RelaySink, servers: list[ServeProcess],
          args: argparse.Namespace, database_pid: int | None = None) -> Result:
    started = time.perf_counter()
    server = servers[0]
    setup_client = Client(server.host, server.port)
    prefix = backend[0]
    games = []
    for g in range(args.games):
        one = Player(f"{prefix}{2 * g}", f"Pw-{2 * g}x")
        two = Player(f"{prefix}{2 * g + 1}", f"Pw-{2 * g + 1}x")
        games.append(Game(g, (one, two)))
    players = [p for game in games for p in game.players]

    # Sign up every player, then start every game, all by mail.
    for n, player in enumerate(players):
        setup_client.send(player.address, mail(player.address, f"signup {player.userid} "
                                               f"{player.password}", f"<signup{n}@bench>"))
    sink.wait(lambda mails: sum(m.subject.startswith("Abalone signup") for m in mails)
              >= len(players), 60 + len(players), "the signup mails")
    for game in games:
        one, two = game.players
        setup_client.send(one.address, mail(one.address, f"abalone challenge {one.userid} "
                                            f"{two.userid}", f"<challenge{game.index}@bench>"))
    sink.wait(lambda mails: sum(bool(_NEW_BOARD.match(m.subject)) for m in mails)
              >= 2 * len(games), 60 + len(games), "the new-board mails")
    if args.robot_games:
        # Games against a computer player, each waiting for its human to move.
        idle = Player(f"{prefix}idle", "Pw-idle")
        setup_client.send(idle.address, mail(idle.address, f"signup {idle.userid} "
                                             f"{idle.password}", "<signup-idle@bench>"))
        for n in range(args.robot_games):
            setup_client.send(idle.address, mail(idle.address, f"abalone challenge "
                                                 f"{idle.userid} {args.robot}",
                                                 f"<robot-challenge{n}@bench>"))
        sink.wait(lambda mails: sum(m.recipient == idle.address and bool(_NEW_BOARD.match(m.subject))
                                    for m in mails) >= args.robot_games,
                  60 + args.robot_games, "the new-board mails of the robot games")
    setup_client.close()
    new_boards = [m for m in sink.mails if _NEW_BOARD.match(m.subject)]
    by_address = {m.recipient: int(_NEW_BOARD.match(m.subject).group(1))  # type: ignore[union-attr]
                  for m in new_boards}
    for game in games:
        game.number = by_address[game.players[0].address]
        game.reply_to = {m.recipient: m.reply_to for m in new_boards
                         if m.recipient in (game.players[0].address, game.players[1].address)}
    setup = time.perf_counter() - started

    # Spread the moves over the games.
    for game in games:
        game.left = args.moves // len(games) + (1 if game.index < args.moves % len(games) else 0)
    total = sum(game.left for game in games)
    ready: queue.Queue[Game | None] = queue.Queue()
    for game in games:
        if game.left:
            ready.put(game)
    pending: dict[str, Sent] = {}
    done: list[Sent] = []
    lock = threading.Lock()
    all_answered = threading.Event()
    if total == 0:
        all_answered.set()

    def on_mail(relayed: Relayed) -> None:  # in the sink's thread
        with lock:
            sent = pending.pop(relayed.in_reply_to, None)
            if sent is None:
                return
            sent.arrived, sent.subject = relayed.at, relayed.subject
            game = sent.game
            if "Error" in relayed.subject or not relayed.subject.startswith(
                    f"Abalone Board {game.number}"):
                game.failed = f"move {sent.move} on board {game.number}: {relayed.subject}"
                game.left = 0
            done.append(sent)
            finished = len(done) == total or all(g.left == 0 for g in games) and not pending
        if game.left > 0:
            ready.put(game)
        sent.answered.set()
        if finished:
            all_answered.set()

    failures: list[BaseException] = []

    def client_thread(number: int) -> None:
        # Clients spread evenly over the server processes.
        serving = servers[number % len(servers)]
        client = Client(serving.host, serving.port)
        try:
            while True:
                game = ready.get()
                if game is None:
                    return
                board = game.board
                mover = game.players[board.turn - 1]
                move = quiet_move(board, game.index)
                ply = board.ply + 1
                message_id = f"<move.{game.number}.{ply}.{time.time_ns()}@players.test>"
                if args.via == "reply":
                    to = game.reply_to[mover.address]
                    original: Original | None = None
                    subject = f"Abalone Board {game.number} {mover.userid}"
                    shapes = [args.reply_shape] + ([args.client_builds]
                                                   if args.client_builds else [])
                    if any(shape != "bare" for shape in shapes):
                        # The board mail that told the mover of the last move (or the new
                        # board): one a ply, and the new board's.
                        newest, subject = sink.newest_after(mover.address, 1 + board.ply, 60)
                        original = Original.parse(newest)
                    built = [reply(shape, sender=mover.address,
                                   sender_name=mover.userid.capitalize(), to=to,
                                   subject=f"Re: {subject}", message_id=message_id, move=move,
                                   original=original if shape != "bare" else None)
                             for shape in shapes]
                    raw = built[0]  # (a reply of --client-builds is built, not sent)
                else:
                    to = SERVER_ADDRESS
                    raw = mail(mover.address, f"abalone move {game.number} {mover.userid} "
                           f"{mover.password} {move}", message_id)
                board.push_text(move)
                sent = Sent(game, move, message_id, mover.address, time.perf_counter())
                with lock:
                    game.left -= 1
                    pending[message_id] = sent
                client.send(mover.address, raw, to)
                sent.smtp_end = time.perf_counter()
                if not args.pipelined:
                    sent.answered.wait(120)
        except BaseException as error:  # reported below; stop waiting for answers
            failures.append(error)
            all_answered.set()
        finally:
            client.close()

    base = sink.count()
    sink.on_mail = on_mail
    threads = [threading.Thread(target=client_thread, args=(n,), daemon=True)
               for n in range(args.concurrency)]
    profiler = start_profiler(servers[0], args.profile, args.profile_gil) if args.profile else None
    t0 = time.perf_counter()
    server_cpu0 = [tree_cpu_seconds(s.process.pid) for s in servers]
    database_cpu0 = tree_cpu_seconds(database_pid) if database_pid else {}
    threads_cpu0 = thread_cpu(servers[0].process.pid)
    client_cpu0 = time.process_time()
    for thread in threads:
        thread.start()
    all_answered.wait(timeout=max(120.0, total * 2.0))
    # Each move relays a board mail to both players; wait for the last of them.
    expected = base + 2 * len(done)
    try:
        sink.wait(lambda mails: len(mails) >= expected, 30, "the last board mails")
    except TimeoutError:
        pass
    sink.on_mail = None
    server_cpu1 = [tree_cpu_seconds(s.process.pid) for s in servers]
    database_cpu1 = tree_cpu_seconds(database_pid) if database_pid else {}
    # The PostgreSQL server and its backends (each measured from where it was).
    database_cpu = sum(now - database_cpu0.get(pid, 0.0) for pid, now in database_cpu1.items())
    # serve and its worker process, each measured from where it was at the start
    # (a worker started during the run counts from zero).
    server_cpu = sum(now - before.get(pid, 0.0)
                     for before, after in zip(server_cpu0, server_cpu1)
                     for pid, now in after.items())
    worker_cpu = sum(now - before.get(pid, 0.0)
                     for server, before, after in zip(servers, server_cpu0, server_cpu1)
                     for pid, now in after.items() if pid != server.process.pid)
    client_cpu = time.process_time() - client_cpu0
    threads_cpu1 = thread_cpu(servers[0].process.pid)
    if profiler is not None:
        stop_profiler(profiler)
    with sink.changed:
        phase = [m for m in sink.mails[base:]]
    end = max((m.at for m in phase), default=t0)
    names = thread_names(servers[0].process.pid) if args.thread_cpu else {}
    by_thread: dict[str, list[float]] = {}
    for tid, (user, system) in threads_cpu1.items():
        user0, system0 = threads_cpu0.get(tid, (0.0, 0.0))
        # The listener's executor threads (aiosmtpd's store calls) add up as one.
        name = re.sub(r"^asyncio_\d+$", "asyncio (store)", names.get(tid, str(tid)))
        totals = by_thread.setdefault(name, [0.0, 0.0])
        totals[0] += user - user0
        totals[1] += system - system0
    for _ in threads:
        ready.put(None)
    for thread in threads:
        thread.join(timeout=60)
    if failures:
        raise RuntimeError(f"an SMTP client failed: {failures[0]!r}") from failures[0]
    answered = [s for s in done if s.smtp_end]
    return Result(
        backend=backend,
        moves=len(done),
        wall=end - t0,
        relayed=len(phase),
        latencies=[(s.arrived - s.smtp_end) * 1000 for s in answered],
        smtp_times=[(s.smtp_end - s.smtp_start) * 1000 for s in answered],
        setup=setup,
        errors=[g.failed for g in games if g.failed],
        missing=total - len(done),
        sent=answered,
        server_cpu=server_cpu,
        worker_cpu=worker_cpu,
        database_cpu=database_cpu,
        processes=len(servers),
        client_cpu=client_cpu,
        thread_cpu={name: (user, system) for name, (user, system) in by_thread.items()},
    )


def targets(result: Result, args: argparse.Namespace) -> list[str]:
    """The project's targets that this run measures (DESIGN §6 and the README), each
    with its figure and whether it was met on this machine."""
    lines = []
    lat = result.latencies
    rate = result.moves / result.wall if result.wall > 0 else 0.0

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    if not args.pipelined and args.concurrency >= 16:
        goal = 200.0 if args.via == "reply" else 100.0
        lines.append(f"target: by {args.via}, {args.concurrency} clients: >= {goal:.0f} moves/s"
                     f" -> {rate:.1f}: {verdict(rate >= goal)}")
    if not args.pipelined and args.concurrency <= 2 and args.via == "reply":
        p50, p99 = percentile(lat, 50), percentile(lat, 99)
        lines.append(f"target: light load ({args.concurrency} clients): p50 <= 50 ms, "
                     f"p99 <= 150 ms -> {p50:.1f} / {p99:.1f}: "
                     f"{verdict(p50 <= 50 and p99 <= 150)}")
    return lines


def report(result: Result) -> None:
    lat, smtp = result.latencies, result.smtp_times
    print(f"  set-up: {result.setup:.1f} s (signups and challenges by mail)")
    print(f"  moves: {result.moves} in {result.wall:.2f} s wall"
          + (f"; {result.missing} NOT ANSWERED" if result.missing else ""))
    if result.wall > 0:
        print(f"  throughput: {result.moves / result.wall:.1f} moves/s, "
              f"{result.relayed / result.wall:.1f} mails relayed/s ({result.relayed} mails)")
    print("  latency (end of SMTP transaction -> board mail for the mover at the relay), ms:")
    print(f"    p50 {percentile(lat, 50):.1f}  p90 {percentile(lat, 90):.1f}  "
          f"p99 {percentile(lat, 99):.1f}  max {max(lat, default=float('nan')):.1f}")
    if result.moves:
        print(f"  CPU per move: server {result.server_cpu / result.moves * 1000:.2f} ms "
              f"(its worker process {result.worker_cpu / result.moves * 1000:.2f}), "
              f"load generator and relay sink {result.client_cpu / result.moves * 1000:.2f} ms"
              + (f", PostgreSQL server {result.database_cpu / result.moves * 1000:.2f} ms"
                 if result.database_cpu else ""))
        # The ceilings this run's CPU cost sets: every core busy all the time, and the
        # worker process (one transaction at a time) busy all the time.
        per_move = (result.server_cpu + result.client_cpu + result.database_cpu) / result.moves
        cores = os.cpu_count() or 1
        if per_move > 0 and result.worker_cpu > 0:
            workers = result.processes
            print(f"  ceilings at this cost: {cores} cores / {per_move * 1000:.2f} ms = "
                  f"{cores / per_move:.0f} moves/s; the worker process"
                  f"{'es' if workers > 1 else ''} alone "
                  f"{workers * result.moves / result.worker_cpu:.0f} moves/s (busy "
                  f"{result.worker_cpu / result.wall / workers:.0%} of this run)")
    if result.moves and result.thread_cpu:
        print("  server CPU per move by thread (user + system), ms:")
        for name, (user, system) in sorted(result.thread_cpu.items(),
                                           key=lambda item: -sum(item[1])):
            if user + system > 0:
                print(f"    {name:<30} {(user + system) / result.moves * 1000:6.2f} "
                      f"({user / result.moves * 1000:.2f} + {system / result.moves * 1000:.2f})")
    print(f"  SMTP transaction (MAIL..250 after DATA, mail stored), ms: "
          f"p50 {percentile(smtp, 50):.1f}  p99 {percentile(smtp, 99):.1f}")
    if any(result.stages.values()):
        parts = [f"{name} p50 {percentile(values, 50):.1f} p99 {percentile(values, 99):.1f}"
                 for name, values in result.stages.items() if values]
        print("  in the server (its log, ms resolution), ms: " + "; ".join(parts))
    else:
        print("  in the server: no figures (the server's log and database matched no move)")
    for error in result.errors:
        print(f"  ERROR: {error}")


def run_in_fresh_database(backend: str, args: argparse.Namespace, postgres: object,
                          name: str) -> Result:
    """``run`` on a new SQLite file in a temporary directory, or a new database ``name``
    of the PostgreSQL server ``postgres``."""
    with tempfile.TemporaryDirectory(prefix=f"abalone-throughput-{backend}-") as tmp:
        if backend == "sqlite":
            url = f"sqlite:///{Path(tmp) / 'abalone-pbm.sqlite3'}"
        else:
            url = postgres.create_database(name)  # type: ignore[attr-defined]
        process = getattr(postgres, "process", None) if backend == "postgresql" else None
        return run(backend, url, args, Path(tmp),
                   database_pid=process.pid if process is not None else None)


def versus_run(backend: str, args: argparse.Namespace, postgres: object,
               first: Result) -> None:
    """``--versus SHAPE``: the same run sending SHAPE while the clients still build the
    first run's replies, and the ratio of the server's CPU a move. On a machine of few
    cores the clients' work slows the server's processes (they share the cores and
    their caches): a bare reply's server CPU is compared at equal client work."""
    again = argparse.Namespace(**{**vars(args), "reply_shape": args.versus,
                                  "client_builds": args.reply_shape, "profile": None})
    print(f"== {backend}, sending {args.versus} replies while the clients build the "
          f"{args.reply_shape} replies too")
    second = run_in_fresh_database(backend, again, postgres, "versus")
    report(second)
    if first.moves and second.moves:
        a = first.server_cpu / first.moves * 1000
        b = second.server_cpu / second.moves * 1000
        print(f"  server CPU a move at equal client work: {args.reply_shape} {a:.2f} ms, "
              f"{args.versus} {b:.2f} ms: {a / b:.2f}x"
              + (f" (target for a reply quoting the board: <= 1.15x a bare move: "
                 f"{'met' if a / b <= 1.15 else 'NOT met'})"
                 if args.versus == "bare" and args.reply_shape != "bare" else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--pipelined", action="store_true",
                        help="clients do not wait for the answer (up to one move per game in flight)")
    parser.add_argument("--via", choices=("command", "reply"), default="reply",
                        help="moves as replies to the board mail's reply address (default), "
                             "or as 'abalone move' commands with the password")
    parser.add_argument("--reply-shape", choices=SHAPES, default="gmail",
                        help="--via reply: replies as Gmail writes them, the board quoted "
                             "below the move in a text and an HTML part (default); "
                             "'bare-headers': the move alone with the same headers; 'bare': "
                             "the move alone with From/To/Subject/Message-ID only")
    parser.add_argument("--client-builds", choices=SHAPES, metavar="SHAPE",
                        help="--via reply: the clients also build a reply of SHAPE for "
                             "every move and send only --reply-shape's: the same client "
                             "CPU as when sending SHAPE (see --versus)")
    parser.add_argument("--versus", choices=SHAPES, metavar="SHAPE",
                        help="--via reply: after each backend's run, run it again sending "
                             "SHAPE while the clients build the first run's replies too "
                             "(--client-builds), and print the server CPU a move of both "
                             "and their ratio")
    parser.add_argument("--robot-games", type=int, default=0, metavar="K",
                        help="also start K games against a computer player, each left "
                             "waiting for its human player (default 0)")
    parser.add_argument("--robot", default="pebble", help="the computer player of --robot-games")
    parser.add_argument("--profile", metavar="FILE",
                        help="sample the (first) server process with py-spy during the "
                             "moves, into FILE (see benchmarks/profile_summary.py)")
    parser.add_argument("--thread-cpu", action="store_true",
                        help="print the server's CPU per move by thread (named by py-spy)")
    parser.add_argument("--profile-gil", action="store_true",
                        help="--profile samples only the thread holding the GIL")
    parser.add_argument("--processes", type=int, default=1, metavar="N",
                        help="run N `abalone-pbm serve` processes on the one database, the "
                             "clients spread over them (PostgreSQL; default 1)")
    args = parser.parse_args()
    if args.games < 1 or args.concurrency < 1 or args.moves < 0 or args.processes < 1:
        parser.error("--games, --concurrency and --processes must be at least 1, "
                     "--moves at least 0")
    print(f"$ {command_line()}")
    print(machine())
    mode = "pipelined (up to one move per game in flight)" if args.pipelined else \
        "each client waits for its answer (at most C moves in flight)"
    how = f"reply ({args.reply_shape})" if args.via == "reply" else args.via
    print(f"{args.games} games, {args.moves} moves by {how}, {args.concurrency} SMTP "
          f"clients; {mode}"
          + (f"; {args.processes} server processes" if args.processes > 1 else "")
          + (f"; {args.robot_games} more games against {args.robot}, waiting for their human"
             if args.robot_games else ""))
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    postgres = None
    results = []
    try:
        for backend in backends:
            print(f"== {backend}")
            if backend == "postgresql" and postgres is None:
                postgres = start_postgres()
            result = run_in_fresh_database(backend, args, postgres, "throughput")
            report(result)
            for line in targets(result, args):
                print(f"  {line}")
            results.append(result)
            if args.versus and args.via == "reply":
                versus_run(backend, args, postgres, result)
    finally:
        if postgres is not None:
            postgres.stop()
    if len(results) > 1:
        print("== summary")
        print(f"  {'backend':<11} {'moves':>6} {'wall s':>7} {'moves/s':>8} {'mails/s':>8} "
              f"{'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for r in results:
            lat, wall = r.latencies, r.wall or float("nan")
            print(f"  {r.backend:<11} {r.moves:>6} {r.wall:>7.2f} {r.moves / wall:>8.1f} "
                  f"{r.relayed / wall:>8.1f} {percentile(lat, 50):>8.1f} "
                  f"{percentile(lat, 90):>8.1f} {percentile(lat, 99):>8.1f} "
                  f"{max(lat, default=float('nan')):>8.1f}")


if __name__ == "__main__":
    main()
