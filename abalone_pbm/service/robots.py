"""Computer players as registered users, and the server playing their turns.

A robot's move is searched outside any database transaction (it may take the whole
time budget), then applied in a short write transaction that first checks the game
has not changed meanwhile (its version).  So thinking robots never hold a lock, never
delay other mail, and a game changed by someone else in the meantime is simply
looked at again.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..clock import Clock
from ..config import Settings
from ..db import repository
from ..db.models import Game, Seat, User
from ..db.session import Database
from ..robots import ROBOTS, BaseRobot
from ..rules import Board, Move
from .context import MailContext
from .games import GameOptions, load_board
from .turns import after_move, record_move

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


def next_robot_turn(
    session: Session, skip: set[int] | None = None, only: Collection[int] | None = None
) -> RobotTurn | None:
    """The oldest-waiting active game whose player to move is a robot; with ``only``,
    among those boards (read by their board numbers: the cost of a move does not grow
    with the number of games).
    """
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
        query = query.where(Game.number.not_in(skip))
    game = session.scalars(query.limit(1)).first()
    if game is None:
        return None
    board = load_board(game)
    seat = next(s for s in game.seats if s.seat == board.turn)
    if seat.user.robot is None:  # to_move out of step with the position: never expected
        log.error("robots: board %d says seat %d is to move, the position %d",
                  game.number, game.to_move, board.turn)
        return next_robot_turn(session, (skip or set()) | {game.number}, only)
    think = GameOptions.from_json(game.options).think
    return RobotTurn(game.number, game.version, seat.seat, seat.user.robot, board, think)


#: Most games whose robot players are kept between their moves (each keeps search
#: tables of up to about 100 MB; others start afresh when their turn comes).
KEPT_PLAYERS = 8
#: The robot playing each (game, seat), newest last: it keeps its search tables and
#: the positions already had between its moves.  Only the robot thread uses it.
_players: OrderedDict[tuple[int, int], BaseRobot] = OrderedDict()


def robot_player(turn: RobotTurn) -> BaseRobot:
    """The robot object playing this seat of this game (made on its first move)."""
    key = (turn.number, turn.seat)
    robot = _players.pop(key, None)
    if robot is None or robot.name != turn.robot:
        robot = ROBOTS[turn.robot].create()
    _players[key] = robot
    while len(_players) > KEPT_PLAYERS:
        _players.popitem(last=False)
    return robot


def budget_of(settings: Settings, robot: str, think: int | None = None) -> float:
    """Seconds the robot thinks per move: the game's -think, else its level's (or the
    settings'); never more than the server's cap."""
    if think is not None:
        return min(float(think), settings.robot_budget)
    return settings.robot_budget_for(robot, ROBOTS[robot].budget)


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


def play_robot_turns(
    database: Database, settings: Settings, clock: Clock, *, limit: int | None = None,
    only: Collection[int] | None = None,
) -> int:
    """Play every pending robot turn (up to ``limit``; with ``only``, on those boards);
    returns the moves played."""
    played = 0
    skip: set[int] = set()
    while limit is None or played < limit:
        with database.read() as session:
            turn = next_robot_turn(session, skip, only)
        if turn is None:
            return played
        move = choose(turn, budget_of(settings, turn.robot, turn.think))
        with database.write() as session:
            if apply_robot_move(session, settings, clock, turn, move):
                played += 1
            else:
                # Changed while the robot thought: the next round looks at it afresh.
                log.info("robots: board %d changed while %s thought", turn.number, turn.robot)
                skip.add(turn.number)
    return played
