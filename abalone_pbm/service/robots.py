"""Computer players as registered users, and the server playing their turns.

A robot's move is searched outside any database transaction (it may take the whole
time budget), then applied in a short write transaction that first checks the game
has not changed meanwhile (its version).  So thinking robots never hold a lock, never
delay other mail, and a game changed by someone else in the meantime is simply
looked at again.

``serve`` runs the searches in :class:`RobotLanes`: a few threads side by side, so
that one long think never holds another game's move.  The search is pure Python, so
the lanes share one interpreter: each move keeps its wall-clock budget but searches
fewer positions while others search too.  A long think (a game's -think above its
robot's own time) takes one lane at most, and so do analyses (queued by
``handlers.analysis``, one sender's at a time, senders taking turns): the other lanes
are always there for ordinary moves, the oldest waiting first.  The CPU each move
costs is charged to the game's human players (``limits.record_robot_seconds``); past a
day's allowance their robots think less (``limits.robot_budget``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from ..clock import Clock
from ..config import Settings
from ..db import repository
from ..db.models import Game, Seat, User
from ..db.session import Database
from ..robots import ROBOTS, BaseRobot
from ..rules import Board, Move
from . import limits
from .context import MailContext
from .games import GameOptions, load_board
from .handlers.analysis import answer_analysis, drop_analysis, next_analysis
from .turns import after_move, record_move
# A robot's move can end a tournament game: the tournaments hear of it through
# turns.GAME_ENDED, which importing them fills.
from . import tournaments  # noqa: F401

log = logging.getLogger(__name__)

#: Password hash that no password matches: robots never log in.
NO_LOGIN = "!robot"


def ensure_robot_users(session: Session, now_clock: Clock) -> list[User]:
    """Register every robot of the registry as a user (once)."""
    users = []
    for name, spec in ROBOTS.items():
        user = repository.get_user(session, name)
        if user is None:
            user = repository.add_user(session, name, NO_LOGIN, [], now_clock.now())
        user.robot = name
        users.append(user)
    return users


@dataclass(frozen=True)
class RobotTurn:
    """A game waiting for a robot, as read before thinking."""

    number: int
    version: int
    seat: int
    robot: str
    board: Board
    #: The game's -think seconds per move (None: the robot level's own budget).
    think: int | None = None
    #: The game's human players still in it: the robot's CPU is charged to them.
    people: tuple[str, ...] = ()


def _waiting_query(skip: Collection[int], only: Collection[int] | None) -> Select[Game]:
    query = (
        select(Game)
        .join(Seat, (Seat.game_id == Game.id) & (Seat.seat == Game.to_move))
        .join(User, User.id == Seat.user_id)
        .where(Game.status == "active", User.robot.is_not(None), Seat.resigned.is_(False))
        .order_by(Game.turn_started_at, Game.number)
    )
    if only is not None:
        query = query.where(Game.number.in_(list(only)))
    if skip:
        query = query.where(Game.number.not_in(list(skip)))
    return query


def waiting_robot_turns(
    session: Session, *, skip: Collection[int] = (), only: Collection[int] | None = None,
    most: int = 1,
) -> list[RobotTurn]:
    """Up to ``most`` active games whose player to move is a robot, the longest waiting
    first; with ``only``, among those boards (read by their board numbers: the cost of
    a move does not grow with the number of games)."""
    turns: list[RobotTurn] = []
    passed = set(skip)
    while len(turns) < most:
        games = list(session.scalars(
            _waiting_query(passed, only).limit(most - len(turns))))
        if not games:
            break
        for game in games:
            passed.add(game.number)
            turn = _turn_of(game)
            if turn is not None:
                turns.append(turn)
    return turns


def _turn_of(game: Game) -> RobotTurn | None:
    board = load_board(game)
    seat = next(s for s in game.seats if s.seat == board.turn)
    if seat.user.robot is None:  # to_move out of step with the position: never expected
        log.error("robots: board %d says seat %d is to move, the position %d",
                  game.number, game.to_move, board.turn)
        return None
    think = GameOptions.from_json(game.options).think
    people = tuple(s.user.userid for s in game.seats if s.user.robot is None and not s.resigned)
    return RobotTurn(game.number, game.version, seat.seat, seat.user.robot, board, think,
                     people)


def next_robot_turn(
    session: Session, skip: set[int] | None = None, only: Collection[int] | None = None
) -> RobotTurn | None:
    """The oldest-waiting active game whose player to move is a robot; with ``only``,
    among those boards."""
    turns = waiting_robot_turns(session, skip=skip or (), only=only, most=1)
    return turns[0] if turns else None


#: Most games whose robot players are kept between their moves (each keeps search
#: tables of up to about 100 MB; others start afresh when their turn comes).
KEPT_PLAYERS = 8
#: The robot playing each (game, seat), newest last, with the ply of the position it
#: last searched: it keeps its search tables and the positions already had between its
#: moves.  One lane at a time plays a game, so a robot object is never searched by two
#: threads; the lock guards the dictionary.
_players: OrderedDict[tuple[int, int], tuple[BaseRobot, int]] = OrderedDict()
_players_lock = threading.Lock()


def robot_player(turn: RobotTurn) -> BaseRobot:
    """The robot object playing this seat of this game (made on its first move).

    A kept robot serves only a game that went on from where it last moved: a board
    back at or before that ply (another game under the same number, as after a
    database restored from a backup) gets a new robot, whose remembered positions
    and tables are not those of another game."""
    key = (turn.number, turn.seat)
    with _players_lock:
        kept = _players.pop(key, None)
        if kept is not None and kept[0].name == turn.robot and kept[1] < turn.board.ply:
            robot = kept[0]
        else:
            robot = ROBOTS[turn.robot].create()
        _players[key] = (robot, turn.board.ply)
        while len(_players) > KEPT_PLAYERS:
            _players.popitem(last=False)
    return robot


def kept_robot(number: int, seat: int) -> BaseRobot | None:
    """The robot object kept for this seat of this game, if any: the one that will
    search the seat's next move (the tests look at its tables)."""
    with _players_lock:
        kept = _players.get((number, seat))
    return kept[0] if kept else None


def budget_of(settings: Settings, robot: str, think: int | None = None) -> float:
    """Seconds the robot thinks per move: the game's -think, else its level's (or the
    settings'); never more than the server's cap."""
    return limits.think_budget(settings, robot, think)


def turn_budget(session: Session, settings: Settings, turn: RobotTurn, now: datetime) -> float:
    """Seconds the robot thinks for this turn: ``budget_of``, less once the game's
    people had their day's allowance of robot CPU (``limits.robot_budget``)."""
    return limits.robot_budget(session, settings, turn.robot, turn.think, list(turn.people),
                               now)


def is_long(settings: Settings, turn: RobotTurn, budget: float) -> bool:
    """A think longer than the robot level's own time: it takes the long lane."""
    return budget > limits.level_budget(settings, turn.robot)


def choose(turn: RobotTurn, budget: float) -> Move:
    """The robot's move; should its engine fail, a legal move all the same, so that a
    game never hangs on a robot."""
    robot = robot_player(turn)
    try:
        # The seed makes a robot's play repeatable for the same game and position.
        return robot.choose_move(
            turn.board, budget, rng_seed=turn.number * 1000 + turn.board.ply
        )
    except Exception:
        log.exception("robots: %s failed on board %d; playing a plain legal move",
                      turn.robot, turn.number)
        with _players_lock:
            _players.pop((turn.number, turn.seat), None)
        return min(turn.board.legal_moves, key=str)


def apply_robot_move(
    session: Session, settings: Settings, clock: Clock, turn: RobotTurn, move: Move
) -> bool:
    """Play the robot's move if the game is still as it was read; mail the board."""
    game = repository.get_game(session, turn.number, for_update=True)
    if game is None or game.status != "active" or game.version != turn.version:
        return False
    board = load_board(game)
    if board.turn != turn.seat or move not in board.legal_moves:
        return False
    seat = next(s for s in game.seats if s.seat == turn.seat)
    ctx = MailContext(session=session, settings=settings, now=clock.now(), sender=settings.address)
    board.push(move)
    record_move(game, board, turn.seat, str(move), ctx.now, source_message_id=None, automatic=True)
    after_move(ctx, game, board, mover=seat.user, comment="")
    ctx.flush()
    return True


def play_turn(database: Database, settings: Settings, clock: Clock, turn: RobotTurn,
              budget: float) -> bool:
    """Search the turn's move outside any transaction, then play it; the CPU the search
    took is charged to the game's people whether or not the move still fits."""
    started = time.thread_time()
    move = choose(turn, budget)
    spent = time.thread_time() - started
    with database.write() as session:
        played = apply_robot_move(session, settings, clock, turn, move)
        limits.record_robot_seconds(session, turn.people, spent, clock.now())
    if not played:
        # Changed while the robot thought: the next round looks at it afresh.
        log.info("robots: board %d changed while %s thought", turn.number, turn.robot)
    return played


def run_analysis(database: Database, settings: Settings, clock: Clock, request: int) -> bool:
    """Answer one queued analysis; a search that fails drops its request (logged)."""
    try:
        return answer_analysis(database, settings, clock, request)
    except Exception:
        log.exception("robots: analysis request %d failed; dropped", request)
        drop_analysis(database, request)
        return False


def play_robot_turns(
    database: Database, settings: Settings, clock: Clock, *, limit: int | None = None,
    only: Collection[int] | None = None,
) -> int:
    """Play every pending robot turn (up to ``limit``; with ``only``, on those boards)
    and answer every queued analysis, one after another in this thread; returns the
    moves played and analyses answered."""
    done = 0
    skip: set[int] = set()
    while limit is None or done < limit:
        with database.read() as session:
            turn = next_robot_turn(session, skip, only)
            budget = turn_budget(session, settings, turn, clock.now()) if turn else 0.0
        if turn is None:
            break
        if play_turn(database, settings, clock, turn, budget):
            done += 1
        else:
            skip.add(turn.number)
    while limit is None or done < limit:
        with database.read() as session:
            found = next_analysis(session, set())
        if found is None:
            break
        run_analysis(database, settings, clock, found[0])
        done += 1
    return done


class RobotPlayers:
    """The computer players of one database: called, they play every pending turn in
    the caller's thread (tests, tools); ``lanes`` gives ``serve`` its robot threads."""

    def __init__(self, database: Database, settings: Settings, clock: Clock) -> None:
        self.database = database
        self.settings = settings
        self.clock = clock

    def __call__(self, boards: Collection[int] | None = None) -> int:
        return play_robot_turns(self.database, self.settings, self.clock, only=boards)

    def lanes(self, on_done: Callable[[], None]) -> RobotLanes:
        return RobotLanes(self.database, self.settings, self.clock, on_done=on_done)


@dataclass(frozen=True)
class _Job:
    """What a lane runs: a robot's turn (with its budget) or an analysis request."""

    turn: RobotTurn | None = None
    budget: float = 0.0
    long: bool = False
    analysis: int | None = None
    queue: str = ""


class RobotLanes:
    """``serve``'s robots: a dispatcher (``run``, in the robots thread) hands turns and
    analyses to ``settings.robot_lanes`` threads.

    Rules, so that nobody's robot move waits on another's long search: the longest
    waiting turn goes first; a game is in one lane at a time; at most one long think
    and one analysis run at once, and together they leave at least one lane to
    ordinary moves.  Boards named by ``want`` and not yet looked at stay wanted until a
    lane is free for them; a long think waiting for the long lane is looked at again
    when that lane frees.
    """

    def __init__(self, database: Database, settings: Settings, clock: Clock, *,
                 on_done: Callable[[], None]) -> None:
        self.database = database
        self.settings = settings
        self.clock = clock
        self.on_done = on_done
        self.size = settings.robot_lanes
        self._changed = threading.Condition()
        self._stopping = False
        #: Boards that may wait for a robot, and whether every game must be looked at.
        self._wanted: set[int] = set()
        self._sweep = True
        #: Whether analysis requests may be waiting.
        self._analyses = True
        #: What the lanes are doing: boards in a lane, senders whose analysis runs,
        #: long thinks waiting for the long lane.
        self._busy_boards: set[int] = set()
        self._busy_queues: set[str] = set()
        self._waiting_long: set[int] = set()
        #: When each sender's analysis last started (monotonic): senders take turns.
        self._served: dict[str, float] = {}
        self._running = 0
        self._long = 0
        self._analysing = 0
        #: Counts every change told to the dispatcher, so that it never sleeps on news
        #: that came while it was reading.
        self._news = 0

    # -- told from outside ----------------------------------------------------------
    def want(self, boards: Collection[int] | None) -> None:
        """These boards (None: every game) may have a robot's turn or an analysis."""
        with self._changed:
            if boards is None:
                self._sweep = True
            else:
                self._wanted |= set(boards)
            self._analyses = True
            self._tell()

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._tell()

    # -- the dispatcher -------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Hand work to the lanes until ``stop`` (or ``self.stop()``); then wait for the
        searches under way."""
        with ThreadPoolExecutor(self.size, thread_name_prefix="abalone-pbm-robot-lane") \
                as pool:
            while not stop.is_set():
                with self._changed:
                    if self._stopping:
                        break
                    if not self._has_work():
                        if not self._changed.wait(self.settings.robot_sweep_seconds):
                            # After a quiet while every game is looked at once.
                            self._sweep = self._analyses = True
                        continue
                    news = self._news
                try:
                    jobs = self._pick()
                except Exception:
                    log.exception("robots: looking for turns failed")
                    with self._changed:
                        self._sweep = self._analyses = True
                        self._changed.wait(1.0)  # the database may be away: not a busy loop
                    continue
                for job in jobs:
                    pool.submit(self._run_job, job)
                if not jobs:
                    # What is left waits for a lane (a long one, the analysis one):
                    # sleep until a lane ends or new work is named.
                    with self._changed:
                        if self._news == news and not self._stopping:
                            self._changed.wait(self.settings.robot_sweep_seconds)

    def _has_work(self) -> bool:
        wanted = self._sweep or bool(self._wanted) or self._analyses
        return wanted and self._running < self.size

    def _tell(self) -> None:
        """Something changed for the dispatcher (called with the lock held)."""
        self._news += 1
        self._changed.notify_all()

    def _pick(self) -> list[_Job]:
        """Jobs for the free lanes, under the rules of the class text."""
        with self._changed:
            free = self.size - self._running
            sweep, wanted = self._sweep, set(self._wanted)
            analyses = self._analyses
            skip = set(self._busy_boards)
            busy_queues = set(self._busy_queues)
            long_free = self._long == 0 and self._heavy() < self.size - 1
            analysis_free = self._analysing == 0 and self._heavy() < self.size - 1
            # A long think the long lane cannot take now is left out of the reads.
            waiting_long = set() if long_free else set(self._waiting_long)
            # Taken now: whatever is named while this reads is read again next round.
            self._sweep = False
            self._wanted -= wanted
            if analysis_free:
                self._analyses = False
        skip |= waiting_long
        jobs: list[_Job] = []
        looked: set[int] = set()
        read_all = True
        found = None
        now = self.clock.now()
        with self.database.read() as session:
            while (sweep or wanted) and len(jobs) < free:
                most = free - len(jobs)
                turns = waiting_robot_turns(session, skip=skip,
                                            only=None if sweep else wanted, most=most)
                for turn in turns:
                    skip.add(turn.number)
                    looked.add(turn.number)
                    budget = turn_budget(session, self.settings, turn, now)
                    long = is_long(self.settings, turn, budget)
                    if long and not long_free:
                        waiting_long.add(turn.number)
                        continue
                    long_free = long_free and not long
                    jobs.append(_Job(turn=turn, budget=budget, long=long))
                read_all = len(turns) < most
                if read_all:
                    break
            if analyses and analysis_free and len(jobs) < free:
                found = next_analysis(session, busy_queues, self._served)
                if found is not None:
                    jobs.append(_Job(analysis=found[0], queue=found[1]))
        with self._changed:
            if not read_all:
                # The lanes filled up first: the rest waits for the next round.
                self._sweep = self._sweep or sweep
                self._wanted |= wanted - looked
            self._waiting_long = waiting_long - {j.turn.number for j in jobs if j.turn}
            if found is not None:
                self._analyses = True  # the sender's next, or another sender's
            for job in jobs:
                self._running += 1
                if job.turn is not None:
                    self._busy_boards.add(job.turn.number)
                    self._long += job.long
                else:
                    self._analysing += 1
                    self._busy_queues.add(job.queue)
                    self._served[job.queue] = time.monotonic()
            # Senders served over an hour ago weigh like new ones: forgotten.
            stale = time.monotonic() - 3600
            self._served = {q: t for q, t in self._served.items() if t > stale}
        return jobs

    def _heavy(self) -> int:
        return self._long + self._analysing

    def _run_job(self, job: _Job) -> None:
        done = False
        try:
            if job.turn is not None:
                done = play_turn(self.database, self.settings, self.clock, job.turn,
                                 job.budget)
            elif job.analysis is not None:
                done = run_analysis(self.database, self.settings, self.clock, job.analysis)
        except Exception:
            log.exception("robots: a lane's job failed")
        finally:
            with self._changed:
                self._running -= 1
                if job.turn is not None:
                    self._busy_boards.discard(job.turn.number)
                    self._long -= job.long
                    # The next seat of a game of several robots, or the move again.
                    self._wanted.add(job.turn.number)
                else:
                    self._analysing -= 1
                    self._busy_queues.discard(job.queue)
                    self._analyses = True
                # A long think left waiting may fit now that a lane is free.
                self._wanted |= self._waiting_long
                self._tell()
        if done:
            self.on_done()
