"""The cost of one move must not grow with the number of games or the length of a game.

    python benchmarks/move_cost.py [--backend sqlite|postgresql|both] [--games 10,100,1000]
                                   [--samples 50] [--plies 2,100,300] [--long-games 2]
                                   [--via command|reply] [--only games|length]
                                   [--robot-share PERCENT] [--profile]

In-process, no SMTP: the mail path after the listener (tests/service/harness.py):
the move's mail is stored in the inbox, the worker processes it in one transaction
(parse, loop guards, daily reply cap, the move, both board mails into the outbox,
commit), the robots' hook looks at the boards the worker named as handed to a robot
(as ``serve`` does: none for a move between people), and the outbox rows are read back. Times per move, in milliseconds:

- ``worker``: ``Worker.run_once()`` for the move's mail (the move's transaction);
- ``path``: store in the inbox + worker + robots' hook + reading the outbox;
- ``robots``: the robots' hook alone (a read of each named board, if any).

(a) One database per number of active games (10, 100, 1000): 10 fresh games between
fresh players, and as many other games as it takes (challenges between a pool of 40
players, one move played in each; with ``--robot-share`` that share of them are
games against a computer player that wait for their human). ``--samples`` moves are timed in each database,
taking turns between the databases move by move, so that whatever else the machine
does slows them alike.
(b) One database; ``--long-games`` games for each ply of ``--plies``, driven (untimed)
to 10 plies before it by two players moving marbles about without pushing any off
(moves chosen with the rules core); then 20 rounds, each one timed move in every
game: the median of the moves at plies ~2 (1-20), ~100 (91-110), ~300 (291-310).

Moves are sent as ``abalone move <board> <userid> <password> <move>`` (``--via
command``, which verifies an argon2 password hash each time, about 20-35 ms of it)
or as replies to the board mail's reply address (``--via reply``, no password). The
database is an SQLite file in a temporary directory (WAL, synchronous=FULL) or a
schema on a throw-away PostgreSQL 15 server (tests/pg.py, fsync off). The daily
reply cap is raised so that the long games are not cut off (it is still counted).
``--profile`` profiles every timed move (the times then include the profiler's
overhead) and prints, per move, the functions whose time grew most from the first
to the last row of each table, and where a move's time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from itertools import count
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    REPO, Player, command_line, machine, percentile, quiet_move, start_postgres,
)

from sqlalchemy import func, select  # noqa: E402

from abalone_pbm.mail import intake  # noqa: E402
from abalone_pbm.db.models import Game, InboxMail, MoveRecord, OutboxMail  # noqa: E402
from abalone_pbm.rules import Board  # noqa: E402
from tests.service.harness import Harness, make_harness  # noqa: E402

#: Plies in the window timed around each ply of (b).
WINDOW = 20
PROBE_GAMES = 10
POOL = 40
#: The computer player of ``--robot-share``.
ROBOT = "pebble"

_ids = count(1)


@dataclass
class Timing:
    worker: float
    path: float
    robots: float


@dataclass
class LiveGame:
    number: int
    players: tuple[Player, Player]
    reply_to: dict[str, str]
    board: Board = field(default_factory=lambda: Board.from_layout("standard"))
    salt: int = 0


class Profiles:
    """One profiler per row of a table (``--profile``), and the moves each saw."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.taken: dict[str, list] = {}  # type: ignore[type-arg]

    def get(self, label: str) -> cProfile.Profile | None:
        if not self.enabled:
            return None
        entry = self.taken.setdefault(label, [cProfile.Profile(), 0])
        entry[1] += 1
        return entry[0]  # type: ignore[no-any-return]

    def report(self) -> None:
        """The first and the last row side by side: per move, what grew most."""
        if len(self.taken) < 2:
            self.taken.clear()
            return
        labels = list(self.taken)
        (first, (p1, n1)), (last, (p2, n2)) = (labels[0], self.taken[labels[0]]), \
            (labels[-1], self.taken[labels[-1]])
        self.taken.clear()
        a, b = _per_move(p1, n1), _per_move(p2, n2)
        print(f"--- profile, per move: {first} ({n1} moves) against {last} ({n2} moves); "
              "the functions whose time grew most ---")
        print(f"{'cum ms':>9} {'cum ms':>9} {'calls':>7} {'calls':>7}")
        print(f"{first[:9]:>9} {last[:9]:>9} {first[:7]:>7} {last[:7]:>7}  function")
        grown = sorted(b, key=lambda k: b[k][2] - a.get(k, (0, 0, 0))[2], reverse=True)
        for key in grown[:15]:
            before = a.get(key, (0.0, 0.0, 0.0))
            print(f"{before[2]:>9.2f} {b[key][2]:>9.2f} {before[0]:>7.1f} {b[key][0]:>7.1f}  {key}")
        print(f"--- profile: where a move's time goes at {last} (cumulative ms per move) ---")
        for key in sorted(b, key=lambda k: b[k][2], reverse=True)[:14]:
            print(f"{b[key][2]:>9.2f}  {key}")


def _per_move(profile: cProfile.Profile, moves: int) -> dict[str, tuple[float, float, float]]:
    stats = pstats.Stats(profile, stream=io.StringIO()).stats  # type: ignore[attr-defined]
    out = {}
    for (filename, line, name), (_cc, calls, tottime, cumtime, _callers) in stats.items():
        short = filename.replace(str(REPO) + "/", "").split("site-packages/")[-1]
        out[f"{short}:{line}({name})"] = (calls / moves, tottime * 1000 / moves,
                                           cumtime * 1000 / moves)
    return out


class Bench:
    """One database behind the harness, and the games played in it."""

    def __init__(self, harness: Harness, via: str) -> None:
        self.h = harness
        self.via = via

    # -- set-up through the harness ---------------------------------------------------

    def signup(self, userid: str) -> Player:
        player = Player(userid, f"{userid}-Pw")
        self.h.signup(userid, player.password, player.address)
        return player

    def challenge(self, one: Player, two: Player, salt: int) -> LiveGame:
        mails = self.h.challenge(one.userid, two.userid, by=one.address)
        first = mails[one.userid]
        number = int(first.subject.split()[3])
        reply_to = {u: str(m.reply_to) for u, m in mails.items()}
        return LiveGame(number, (one, two), reply_to, salt=salt)

    # -- one move, timed --------------------------------------------------------------

    def move(self, game: LiveGame, *, via: str | None = None,
             profiler: cProfile.Profile | None = None) -> Timing:
        board = game.board
        mover = game.players[board.turn - 1]
        text = quiet_move(board, game.salt)
        message = EmailMessage()
        message["From"] = mover.address
        message["Message-ID"] = f"<bench{next(_ids)}.{time.time_ns()}@players.test>"
        if (via or self.via) == "reply":
            to = game.reply_to[mover.userid]
            message["Subject"] = f"Re: Abalone Board {game.number} {mover.userid}"
            message.set_content(f"{text}\n")
        else:
            to = self.h.settings.address
            message["Subject"] = (f"abalone move {game.number} {mover.userid} "
                                  f"{mover.password} {text}")
            message.set_content("\n")
        message["To"] = to
        raw = message.as_bytes()
        h = self.h
        if profiler is not None:
            profiler.enable()
        t0 = time.perf_counter()
        with h.database.write() as session:
            intake.store_inbox(session, raw, mover.address, [to], h.clock.now())
        t1 = time.perf_counter()
        processed = 0
        while h.worker.run_once():
            processed += 1
        t2 = time.perf_counter()
        # As serve does: the robots look at the boards the worker named, if any.
        boards = set(h.robot_boards)
        h.robot_boards.clear()
        if boards:
            h.robots(boards)
        t3 = time.perf_counter()
        sent = h.take_outbox()
        t4 = time.perf_counter()
        if profiler is not None:
            profiler.disable()
        expected = f"Abalone Board {game.number}"
        answer = [s for s in sent if s.to == mover.address]
        if processed != 1 or not answer or not answer[0].subject.startswith(expected) \
                or "Error" in answer[0].subject:
            details = [(s.to, s.subject, s.body[:400]) for s in sent]
            raise RuntimeError(f"move {text} on board {game.number} failed: {details}")
        board.push_text(text)
        return Timing((t2 - t1) * 1000, (t4 - t0) * 1000, (t3 - t2) * 1000)

    def counts(self) -> dict[str, int]:
        with self.h.database.read() as session:
            def n(model, *where) -> int:  # type: ignore[no-untyped-def]
                return int(session.scalar(select(func.count()).select_from(model).where(*where))
                           or 0)
            return {
                "active games": n(Game, Game.status == "active"),
                "moves": n(MoveRecord),
                "inbox": n(InboxMail),
                "outbox": n(OutboxMail),
            }


def header(label: str) -> str:
    return (f"{label:>14} {'moves':>6} {'worker':>9} {'p90':>8} {'path':>9} {'robots':>9}\n"
            f"{'':>14} {'':>6} {'median':>9} {'':>8} {'median':>9} {'median':>9}  (ms)")


def row(label: str, timings: list[Timing], extra: str = "") -> str:
    worker = [t.worker for t in timings]
    path = [t.path for t in timings]
    robots = [t.robots for t in timings]
    return (f"{label:>14} {len(timings):>6} {statistics.median(worker):>9.2f} "
            f"{percentile(worker, 90):>8.2f} {statistics.median(path):>9.2f} "
            f"{statistics.median(robots):>9.2f}  {extra}").rstrip()


#: Games of (a) set up by mail; more are copied in bulk (``bulk_fill``).
BY_MAIL_AT_MOST = 200


def bulk_fill(bench: Bench, count: int, robot_share: int) -> None:
    """Add ``count`` games like the ones set up by mail: each with its two seats, its
    first move, the two mails that made it and the board mails they caused (sent),
    between players of the pool; ``robot_share`` % of them wait for a robot's human."""
    import secrets
    from datetime import timedelta

    from abalone_pbm.db.models import Seat, User
    from abalone_pbm.rules import Board as RulesBoard

    h = bench.h
    now = h.clock.now()
    start = RulesBoard.from_layout("standard")
    first = quiet_move(start, 0)
    after = RulesBoard.from_layout("standard")
    after.push_text(first)
    with h.database.read() as session:
        pool = [(user.id, f"{user.userid}@example.org") for user in session.scalars(
            select(User).where(User.userid.like("pool%")).order_by(User.id))]
        robot = session.scalar(select(User.id).where(User.userid == ROBOT))
        highest = int(session.scalar(select(func.max(Game.number))) or 100)
        last_inbox = int(session.scalar(select(func.max(InboxMail.id))) or 0)
    tables = (Game.__table__, Seat.__table__, MoveRecord.__table__, InboxMail.__table__,
              OutboxMail.__table__)
    raw_in = b"From: x@example.org\r\nSubject: abalone challenge\r\n\r\n\r\n"
    raw_out = b"From: abalone@localhost\r\nSubject: Abalone Board\r\n\r\nSummary\r\n"
    chunk = 2000
    for offset in range(0, count, chunk):
        games, seats, moves, inbox, outbox = [], [], [], [], []
        with h.database.write() as session:
            first_id = int(session.scalar(select(func.max(Game.id))) or 0) + 1
            for index in range(offset, min(count, offset + chunk)):
                game_id = first_id + index - offset
                one, two = pool[index % POOL], pool[(index * 7 + 1) % POOL]
                if two == one:
                    two = pool[(index + 1) % POOL]
                against_robot = robot is not None and index % 100 < robot_share
                when = now - timedelta(minutes=index % (60 * 24 * 30))
                position = start.position() if against_robot else after.position()
                games.append(dict(
                    id=game_id, number=highest + 1 + index, layout="standard", players=2,
                    options="{}", start_position=start.position(), position=position,
                    ply=0 if against_robot else 1, version=2, status="active",
                    to_move=int(position.split()[1]), challenger=None, created_at=when,
                    updated_at=when, turn_started_at=when, proposal_votes=""))
                seated = [one[0], robot if against_robot else two[0]]
                for seat, user_id in enumerate(seated, 1):
                    seats.append(dict(game_id=game_id, seat=seat, user_id=user_id,
                                      reply_token=secrets.token_hex(8), resigned=False,
                                      resign_pending=False))
                if not against_robot:
                    moves.append(dict(game_id=game_id, ply=1, seat=1, text=first,
                                      created_at=when, automatic=False))
                for kind in ("challenge", "move"):
                    last_inbox += 1
                    inbox.append(dict(id=last_inbox, received_at=when,
                                      dedup_key=f"<bulk-{kind}-{game_id}@players.test>",
                                      envelope_from=one[1], envelope_to="abalone@localhost",
                                      raw=raw_in, status="done", attempts=1,
                                      processed_at=when))
                    for address in (one[1], two[1]):
                        outbox.append(dict(
                            created_at=when, message_id=f"<bulk-{kind}-{game_id}-{address}>",
                            sender="abalone@localhost", recipient=address, raw=raw_out,
                            status="sent", attempts=1, next_attempt_at=when, sent_at=when,
                            inbox_id=last_inbox))
            for table, rows in zip(tables, (games, seats, moves, inbox, outbox)):
                if rows:
                    session.execute(table.insert(), rows)


def by_games(make_db, stages: list[int], samples: int, via: str,  # type: ignore[no-untyped-def]
             profiles: Profiles, robot_share: int = 0) -> None:
    print("(a) time per move against the number of active games "
          "(one database each, timed in turns)"
          + (f"; {robot_share}% of them against {ROBOT}, waiting for their human"
             if robot_share else ""), flush=True)
    benches = []
    for stage_index, games in enumerate(stages):
        bench = Bench(make_db(f"games{games}"), via)
        started = time.perf_counter()
        pool = [bench.signup(f"pool{i}") for i in range(POOL)]
        filler = max(0, games - PROBE_GAMES)
        by_mail = filler if filler <= BY_MAIL_AT_MOST else BY_MAIL_AT_MOST
        if filler > by_mail:
            # Past two hundred games the rest are copies of the games played by mail,
            # written straight into the tables (with their mails), or the set-up of
            # 100,000 games would take hours.
            bulk_fill(bench, filler - by_mail, robot_share)
        for number in range(by_mail):
            # Every pair of the pool in turn, so the players' games grow evenly.
            step = 1 + (number // POOL) % (POOL - 1)
            one, two = pool[number % POOL], pool[(number + step) % POOL]
            if number % 100 < robot_share:
                # A game against a computer player, waiting for its human to move.
                bench.h.mail(one.address, f"abalone challenge {one.userid} {ROBOT}")
                continue
            game = bench.challenge(one, two, salt=number)
            bench.move(game, via="reply")  # cheaper than a password check
        probes = []
        for i in range(PROBE_GAMES):
            one, two = bench.signup(f"probe{i}a"), bench.signup(f"probe{i}b")
            probes.append(bench.challenge(one, two, salt=i))
        print(f"  set up {games} games in {time.perf_counter() - started:.1f} s", flush=True)
        benches.append((games, bench, probes))
    found: dict[int, list[Timing]] = {games: [] for games in stages}
    for n in range(samples):
        for games, bench, probes in benches:
            profiler = profiles.get(f"{games} games")
            found[games].append(bench.move(probes[n % PROBE_GAMES], profiler=profiler))
    print(header("active games"))
    for games, bench, _ in benches:
        counts = bench.counts()
        print(row(str(counts["active games"]), found[games],
                  f"db: {counts['moves']} moves, {counts['outbox']} outbox rows"))
    for _, bench, _ in benches:
        bench.h.database.dispose()


def by_length(make_db, plies: list[int], long_games: int, via: str,  # type: ignore[no-untyped-def]
              profiles: Profiles) -> None:
    print(f"(b) time per move against the ply of the game (one database, {long_games} "
          f"games per row, timed in turns)", flush=True)
    bench = Bench(make_db("length"), via)
    started = time.perf_counter()
    rows = []
    for ply in plies:
        low = max(1, ply - WINDOW // 2 + 1)
        games = []
        for i in range(long_games):
            one, two = bench.signup(f"p{ply}g{i}a"), bench.signup(f"p{ply}g{i}b")
            game = bench.challenge(one, two, salt=ply * 10 + i)
            while game.board.ply < low - 1:
                bench.move(game, via="reply")
            games.append(game)
        rows.append((ply, low, low + WINDOW - 1, games))
    print(f"  set up {len(plies) * long_games} games in {time.perf_counter() - started:.1f} s",
          flush=True)
    found: dict[int, list[Timing]] = {ply: [] for ply in plies}
    for _ in range(WINDOW):
        for ply, _low, _high, games in rows:
            for game in games:
                found[ply].append(bench.move(game, profiler=profiles.get(f"ply ~{ply}")))
    print(header("ply"))
    for ply, low, high, _ in rows:
        print(row(f"~{ply} ({low}-{high})", found[ply]))
    bench.h.database.dispose()


def run_backend(backend: str, args: argparse.Namespace, postgres) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory(prefix="abalone-move-cost-") as tmp:
        made: list[str] = []

        def make_db(name: str) -> Harness:
            if backend == "sqlite":
                url = f"sqlite:///{Path(tmp) / (name + '.sqlite3')}"
            else:
                url = postgres.create_database(f"bench_{name}")
                made.append(url)
            return make_harness(url, Path(tmp) / name, daily_reply_cap=10**9,
                                sender_daily_mails=0, challenges_per_sender_daily=0,
                                challenges_per_player_daily=0)

        where = f"SQLite files in {tmp}" if backend == "sqlite" else \
            f"PostgreSQL {postgres.admin_url.split('@')[-1]}, a schema per database"
        print(f"== {backend}: {where}; moves by {args.via}"
              + ("; PROFILED (times include the profiler's overhead)" if args.profile else ""))
        profiles = Profiles(args.profile)
        try:
            if "games" in args.parts:
                by_games(make_db, args.games, args.samples, args.via, profiles,
                         args.robot_share)
                profiles.report()
            if "length" in args.parts:
                by_length(make_db, args.plies, args.long_games, args.via, profiles)
                profiles.report()
        finally:
            for url in made:
                postgres.drop_database(url)


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="sqlite")
    parser.add_argument("--games", type=numbers, default=[10, 100, 1000],
                        help="numbers of active games (comma-separated)")
    parser.add_argument("--samples", type=int, default=50, help="moves timed per database")
    parser.add_argument("--plies", type=numbers, default=[2, 100, 300],
                        help="plies of a game to time moves at (comma-separated)")
    parser.add_argument("--long-games", type=int, default=2, help="games per ply")
    parser.add_argument("--via", choices=("command", "reply"), default="command")
    parser.add_argument("--only", dest="parts", choices=("games", "length"), action="append",
                        help="run only part (a) games or (b) length")
    parser.add_argument("--robot-share", type=int, default=0, metavar="PERCENT",
                        help=f"(a): this share of the other games are against {ROBOT}, "
                             "waiting for their human (default 0)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    args.parts = args.parts or ["games", "length"]
    print(f"$ {command_line()}")
    print(machine())
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    postgres = start_postgres() if "postgresql" in backends else None
    started = time.perf_counter()
    try:
        for backend in backends:
            run_backend(backend, args, postgres)
    finally:
        if postgres is not None:
            postgres.stop()
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
