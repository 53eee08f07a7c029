"""Timeouts: reminders, forfeits, unanswered draw offers and the total time of a game.

``tick(database, now, settings)`` is called every minute by ``serve`` and once by
``abalone-pbm tick``.  For every active game, in this
order, at most one of:

1. ``--totaltime=D``: the game is older than D days: the side with more marbles pushed
   off wins, equal is a draw (sides whose players have all resigned cannot win).
2. A pending draw proposal when the player to move has waited ``forfeittime`` days:
   every player who has not voted counts as accepting (players on vacation excepted);
   when that completes the votes, the game is drawn.
3. ``forfeittime`` (default 21 days) since the turn began: the player to move forfeits.
   With two players (or sides) left the other side wins ("wilma forfeited"); otherwise
   the player resigns as with ``resign`` (their marbles stay) and everyone gets the board.
4. ``nagtime`` (default 7 days) since the turn began, and no reminder in the last day:
   a reminder ``Nag: Abalone Board <n> <userid>`` to the player to move.

Players on vacation and computer players are neither reminded nor forfeited.  Each game
is handled in a write transaction of its own, and decided again under its lock, so two
server processes never remind or forfeit twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, select

from .. import render
from ..config import Settings
from ..db import repository, retention
from ..db.models import Game, Seat, User
from ..db.session import Database
from ..rules import Board, Outcome
from . import digest, mails, rates, tournaments, views
from .context import MailContext, Outgoing
from .games import GameOptions, load_board
from .queries import proposal_votes, user_addresses
from .turns import end_game, resign_seat, short_of_players, turn_comes

log = logging.getLogger(__name__)

DAY = timedelta(days=1)
#: Reminders are repeated after this long.
NAG_INTERVAL = DAY


@dataclass
class TickSummary:
    """What one tick did."""

    checked: int = 0
    nagged: int = 0
    forfeited: int = 0
    drawn: int = 0
    timed_out: int = 0
    digests: int = 0
    failed: int = 0
    boards: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        def n(count: int, word: str, plural: str | None = None) -> str:
            return f"{count} {word if count == 1 else plural or word + 's'}"

        text = (
            f"{n(self.nagged, 'reminder')}, {n(self.forfeited, 'forfeit')}, "
            f"{n(self.drawn, 'draw')} by unanswered proposals, "
            f"{n(self.timed_out, 'game')} ended by total time, "
            f"{n(self.digests, 'daily digest')} "
            f"({n(self.checked, 'active game')} looked at)"
        )
        if self.failed:
            text += f"; {n(self.failed, 'game')} failed, see the log"
        return text


@dataclass(frozen=True)
class _Action:
    kind: str  # "totaltime" | "draw" | "forfeit" | "nag"
    seat: int | None = None


# ---------------------------------------------------------------------------- decide
def _waiting(game: Game, now: datetime) -> timedelta:
    return now - game.turn_started_at


def _nag_due(game: Game, now: datetime) -> bool:
    last = game.last_nag_at
    return last is None or last < game.turn_started_at or now - last >= NAG_INTERVAL


def _time_could_matter(options_json: str, created: datetime, turn_started: datetime,
                       last_nag: datetime | None, now: datetime) -> bool:
    """A cheap first look from four columns, before the game is loaded."""
    options = GameOptions.from_json(options_json)
    if options.totaltime and now - created >= options.totaltime * DAY:
        return True
    waiting = now - turn_started
    if options.forfeit_due(waiting):
        return True
    if waiting >= options.nagtime * DAY:
        return last_nag is None or last_nag < turn_started or now - last_nag >= NAG_INTERVAL
    return False


def decide(game: Game, now: datetime) -> _Action | None:
    """What the clock does to ``game`` at ``now`` (None: nothing)."""
    if game.status != "active":
        return None
    options = GameOptions.from_json(game.options)
    if options.totaltime and now - game.created_at >= options.totaltime * DAY:
        return _Action("totaltime")
    board = load_board(game)
    seat = _seat(game, board.turn)
    if seat is None or seat.resigned:
        return None
    waiting = _waiting(game, now)
    if options.forfeit_due(waiting):
        if game.proposal == "draw" and _draw_completes(game):
            return _Action("draw")
        if _exempt(seat.user):
            return None
        return _Action("forfeit", seat.seat)
    if waiting >= options.nagtime * DAY and _nag_due(game, now) and not _exempt(seat.user):
        return _Action("nag", seat.seat)
    return None


def _exempt(user: User) -> bool:
    return bool(user.vacation) or user.robot is not None


def _seat(game: Game, number: int) -> Seat | None:
    return next((s for s in game.seats if s.seat == number), None)


def _silent(game: Game) -> list[Seat]:
    """Players still in the game who have not voted on the pending proposal."""
    voted = proposal_votes(game)
    return [s for s in game.seats if not s.resigned and s.seat not in voted]


def _draw_completes(game: Game) -> bool:
    """Whether counting silence as acceptance completes the draw (vacation excepted)."""
    return all(not s.user.vacation for s in _silent(game))


# ----------------------------------------------------------------------------- apply
def _context(session: object, settings: Settings, now: datetime) -> MailContext:
    return MailContext(session=session, settings=settings, now=now,  # type: ignore[arg-type]
                       sender=settings.address)


def _nag(ctx: MailContext, game: Game, board: Board, seat: Seat) -> None:
    options = GameOptions.from_json(game.options)
    waiting = _waiting(game, ctx.now)
    left = options.forfeittime * DAY - waiting
    view = views.game_view(ctx, game)
    user = seat.user
    subject, body = render.nag_mail(
        view, board, days=waiting.days, forfeit_in=max(left.days, 0), recipient=user.userid
    )
    html = views.board_page("nag", subject, view, board, recipient=user.userid, game=game,
                            days=waiting.days, forfeit_in=max(left.days, 0))
    reply_to = ctx.reply_address(game.number, seat.reply_token)
    for address in user_addresses(user):
        ctx.send(Outgoing(address, subject, body, reply_to=reply_to,
                          auto_submitted="auto-generated", html=html))
    game.last_nag_at = ctx.now


def _forfeit(ctx: MailContext, game: Game, board: Board, seat: Seat, days: int) -> None:
    """The player to move resigns for good (``resign`` on their turn: marbles stay, the
    turn passes, what the next players left waiting is carried out); when that leaves
    one side, it wins "because <userid> forfeited"."""
    user = seat.user
    notices = [f"{user.userid} did not move for {days} days and forfeited."]
    if game.proposal:
        notices.append(f"The pending {game.proposal} proposal is withdrawn.")
    resign_seat(ctx, game, board, seat)  # also withdraws a pending proposal
    resigned: list[str] = []
    if board.outcome() is None:
        turn_comes(ctx, game, board, notices, resigned)
    outcome = board.outcome()
    if outcome is None:
        mails.board_mails(ctx, game, board, mover=user, comment="", notices=notices)
        return
    if outcome.winners and short_of_players(board):
        reason = f"{user.userid} forfeited"
        if resigned:
            reason += f", {render.and_list(resigned)} resigned"
        outcome = Outcome(outcome.winners, reason)
    end_game(ctx, game, board, outcome, mover=user, comment="", notices=notices)


def _accept_draw(ctx: MailContext, game: Game, board: Board, forfeittime: int) -> None:
    silent = [s.user.userid for s in _silent(game)]
    everyone = proposal_votes(game) | {s.seat for s in game.seats if not s.resigned}
    game.proposal_votes = ",".join(str(s) for s in sorted(everyone))
    notice = (
        f"{render.and_list(silent)} did not answer the draw proposal within "
        f"{forfeittime} days, which counts as accepting it."
    )
    mover = _seat(game, board.turn) or game.seats[0]
    end_game(ctx, game, board, Outcome((), "draw agreed"), mover=mover.user, comment="",
             notices=[notice])


def _total_time_outcome(game: Game, board: Board, totaltime: int) -> Outcome:
    rules = board.rules
    reason = f"the total time of {totaltime} days is up"
    scores: dict[int, int] = {}
    for side in range(rules.sides):
        if all(s.resigned for s in game.seats if rules.side_of(s.seat) == side):
            continue
        scores[side] = board.side_score(side)
    if not scores:
        return Outcome((), reason)
    best = max(scores.values())
    leaders = [side for side, score in scores.items() if score == best]
    if len(leaders) > 1:
        return Outcome((), f"{reason} with equal scores")
    return Outcome(rules.seats_of_side(leaders[0]), f"{reason}; most marbles pushed off")


def _timed_out(ctx: MailContext, game: Game, board: Board, totaltime: int) -> None:
    outcome = _total_time_outcome(game, board, totaltime)
    mover = _seat(game, board.turn) or game.seats[0]
    notice = (f"This game was started {totaltime} days ago, its total time: the side that "
              "pushed off more marbles wins, equal is a draw.")
    end_game(ctx, game, board, outcome, mover=mover.user, comment="", notices=[notice])


def handle_game(session: object, settings: Settings, now: datetime, number: int) -> str | None:
    """Apply the clock to one board, in the caller's write transaction; returns what
    was done (``nag``, ``forfeit``, ``draw``, ``totaltime``) or None."""
    game = repository.get_game(session, number, for_update=True)  # type: ignore[arg-type]
    if game is None:
        return None
    action = decide(game, now)
    if action is None:
        return None
    ctx = _context(session, settings, now)
    board = load_board(game)
    options = GameOptions.from_json(game.options)
    if action.kind == "nag":
        seat = _seat(game, action.seat or 0)
        assert seat is not None
        _nag(ctx, game, board, seat)
    elif action.kind == "forfeit":
        seat = _seat(game, action.seat or 0)
        assert seat is not None
        _forfeit(ctx, game, board, seat, _waiting(game, now).days)
    elif action.kind == "draw":
        _accept_draw(ctx, game, board, options.forfeittime)
    else:
        _timed_out(ctx, game, board, options.totaltime or 0)
    for mail in ctx.outgoing:
        mail.auto_submitted = "auto-generated"
    ctx.flush()
    return action.kind


def due_games(database: Database, now: datetime) -> list[int]:
    """Board numbers the clock may have to act on (decided again under the lock)."""
    with database.read() as session:
        rows = session.execute(
            select(Game.number, Game.options, Game.created_at, Game.turn_started_at,
                   Game.last_nag_at)
            .where(Game.status == "active", Game.created_at <= now - DAY)
            .order_by(Game.number)
        )
        candidates = [
            number for number, options, created, turn_started, last_nag in rows
            if _time_could_matter(options, created, turn_started, last_nag, now)
        ]
        due = []
        for number in candidates:
            game = repository.get_game(session, number)
            if game is not None and decide(game, now) is not None:
                due.append(number)
        return due


def tick(database: Database, now: datetime, settings: Settings) -> TickSummary:
    """Reminders, forfeits, unanswered draws and total times, once; one transaction per game."""
    summary = TickSummary()
    with database.read() as session:
        summary.checked = int(
            session.scalar(select(func.count(Game.id)).where(Game.status == "active")) or 0
        )
    for number in due_games(database, now):
        try:
            with database.write() as session:
                done = handle_game(session, settings, now, number)
        except Exception:
            log.exception("tick: board %d failed", number)
            summary.failed += 1
            continue
        if done is None:
            continue
        summary.boards.append(number)
        if done == "nag":
            summary.nagged += 1
        elif done == "forfeit":
            summary.forfeited += 1
        elif done == "draw":
            summary.drawn += 1
        else:
            summary.timed_out += 1
        log.info("tick: board %d: %s", number, done)
    try:  # tournaments: sign-ups that close, rounds to pair, rounds that stall
        tournaments.clock(database, now, settings)
    except Exception:
        log.exception("tick: tournaments failed")
    # The daily digests come after the clock's own work, so they list the boards as
    # they stand after any forfeit.
    summary.digests = digest.run(database, now, settings)
    try:
        with database.write() as session:
            rates.prune(session, now)  # rate-limit events older than every window
    except Exception:
        log.exception("tick: pruning rate-limit events failed")
    try:  # received mail kept for a bounded time (a batch per tick)
        retention.prune_inbox(database, now, timedelta(days=settings.inbox_retention_days))
    except Exception:
        log.exception("tick: pruning old inbox mail failed")
    return summary
