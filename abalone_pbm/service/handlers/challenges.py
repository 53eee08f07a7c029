"""Challenges and whether one can be challenged: challenge, seek, limit, accept,
reject, vacation."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import func, select

from ... import protocol, render
from ...db import repository
from ...db.models import Game, Observer, Seat, Seek, User
from .. import limits
from ..context import CommandError, MailContext
from ..counters import read_counter, touch_counter
from ..games import load_board, new_reply_token, parse_options, start_position_for
from ..mails import (
    answer,
    challenge_confirmation,
    new_game_mails,
    watcher_new_game_mails,
)
from ..queries import authenticate, find_user, on_turn, sender_userid, user_addresses


# ------------------------------------------------------------------------ challenge
def challenge(ctx: MailContext, c: protocol.Challenge) -> None:
    limits.check_challenge_allowed(ctx)
    # The challenger's comment is shown to the players: never with a password in it.
    start_game(ctx, dict(c.options), list(c.userids),
               comment=ctx.masked(protocol.extract_comment(ctx.body)).strip())


def start_game(
    ctx: MailContext, raw_options: dict[str, str | bool], userids: list[str], *,
    comment: str = "", automatic: bool = False, entered: bool = False,
    extra: dict[str, str] | None = None,
) -> Game:
    """A new game of the users named (in seat order), and its first board mails;
    ``comment`` (the body of the challenge) is shown under the board, signed by the
    challenger, with `` **`` on the Subject; ``automatic`` for a game the server
    starts (seek, or the admin's command line), not a challenge by mail; ``entered``:
    the players entered a tournament, so their limit and reject settings do not refuse
    it; ``extra``: stored with the options (a tournament game's name and round)."""
    if not 2 <= len(userids) <= 6:
        raise CommandError("A challenge names 2 to 6 players")
    lowered = [u.lower() for u in userids]
    if len(set(lowered)) != len(lowered):
        raise CommandError("A player cannot be listed twice in one challenge")
    options = parse_options(raw_options, len(userids))
    if extra:
        options = replace(options, extra=dict(extra))
    users = [find_user(ctx, userid) for userid in lowered]
    for user in users:
        if not entered:
            check_accepts_challenges(ctx, user)
    if not automatic:
        limits.check_robot_challenge(ctx, users, options.think)
        limits.check_challenged(ctx, users, sender_userid(ctx))
    number = repository.next_board_number(ctx.session)
    start = start_position_for(options, len(users))
    now = ctx.now
    challenger = sender_userid(ctx)
    game = Game(
        number=number,
        layout=options.layout,
        players=len(users),
        options=options.to_json(),
        start_position=start,
        position=start,
        ply=0,
        status="active",
        challenger=challenger,
        created_at=now,
        updated_at=now,
        turn_started_at=now,
    )
    for index, user in enumerate(users, start=1):
        game.seats.append(Seat(seat=index, user=user, reply_token=new_reply_token()))
    ctx.session.add(game)
    ctx.session.flush()
    watchers = _add_automatic_observers(ctx, game, users)
    board = load_board(game)
    said = render.Comment(challenger or "The challenger", comment) if comment else None
    recipients = new_game_mails(ctx, game, board, comment=said)
    recipients |= watcher_new_game_mails(ctx, game, board, watchers, recipients, comment=said)
    player_addresses = {a for u in users for a in user_addresses(u)}
    if not automatic and ctx.sender.lower() not in player_addresses \
            and ctx.sender.lower() not in recipients:
        ctx.send(challenge_confirmation(ctx, game, board, comment=said))
    return game


def _add_automatic_observers(ctx: MailContext, game: Game, players: list[User]) -> list[User]:
    """Users who said `subscribe ... all` watch every new board they do not play in."""
    playing = {u.id for u in players}
    watchers = [
        u
        for u in ctx.session.scalars(
            select(User).where(User.subscribe_all.is_(True)).order_by(User.userid)
        )
        if u.id not in playing and not u.disabled
    ]
    for user in watchers:
        ctx.session.add(Observer(game_id=game.id, user_id=user.id, results_only=False))
    if watchers:
        ctx.session.flush()
    return watchers


def check_accepts_challenges(ctx: MailContext, user: User) -> None:
    if user.disabled:
        raise CommandError(f"{user.userid} is no longer active and cannot be challenged")
    if not user.accepts_challenges:
        raise CommandError(f"{user.userid} does not accept challenges at the moment")
    if user.vacation:
        raise CommandError(
            f"{user.userid} is on vacation and cannot be challenged until back; "
            "try again later"
        )
    if user.game_limit == 0:
        raise CommandError(f"{user.userid} does not accept challenges at the moment (limit 0)")
    if user.game_limit is not None:
        playing = ctx.session.scalar(
            select(func.count(Seat.id))
            .join(Game, Game.id == Seat.game_id)
            .where(Seat.user_id == user.id, Game.status == "active",
                   Seat.resigned.is_(False))
        )
        if (playing or 0) >= user.game_limit:
            raise CommandError(
                f"{user.userid} already plays {user.game_limit} games, the most they accept"
            )


# ----------------------------------------------------------------------------- seek
def seek(ctx: MailContext, c: protocol.Seek) -> None:
    user = authenticate(ctx, c.userid, c.password)
    wanted = c.n
    try:
        check_accepts_challenges(ctx, user)
    except CommandError as error:
        raise CommandError(f"You cannot seek a game: {error.message}") from None
    seeks = list(ctx.session.scalars(
        select(Seek).where(Seek.players == wanted).order_by(Seek.created_at, Seek.id)
    ))
    mine = next((s for s in seeks if s.user_id == user.id), None)
    others = [s for s in seeks if s.user_id != user.id and _can_play(ctx, s.user)]
    if len(others) + 1 >= wanted:
        chosen = others[: wanted - 1]
        for row in [*chosen, *([mine] if mine else [])]:
            ctx.session.delete(row)
        ctx.session.flush()
        start_game(ctx, {}, [s.user.userid for s in chosen] + [user.userid], automatic=True)
        return
    if mine is None:
        ctx.session.add(Seek(user_id=user.id, players=wanted, created_at=ctx.now))
        first = f"Your seek for a {wanted}-player game is registered."
    else:
        first = f"Your seek for a {wanted}-player game is still waiting."
    waiting = [s.user.userid for s in others]
    who = (f"Also waiting: {render.and_list(waiting)}." if waiting
           else "Nobody else is waiting yet.")
    answer(ctx, "Abalone seek",
            f"{first}  {who}  The game starts as soon as {wanted} players seek one; "
            "those who sought first move first.")


def _can_play(ctx: MailContext, user: User) -> bool:
    try:
        check_accepts_challenges(ctx, user)
    except CommandError:
        return False
    return True


# ----------------------------------------------------------- limit, accept, reject
def _active_count(ctx: MailContext, user: User) -> int:
    return len(list(ctx.session.scalars(
        select(Seat.id).join(Game, Game.id == Seat.game_id)
        .where(Seat.user_id == user.id, Game.status == "active")
    )))


def _settings_text(ctx: MailContext, user: User) -> str:
    playing = f"{user.userid} plays {_active_count(ctx, user)} active games now."
    if not user.accepts_challenges or user.game_limit == 0:
        why = " (limit 0)" if user.accepts_challenges else ""
        return (f"{user.userid} refuses every challenge{why}; {playing}  Send "
                f'"abalone limit {user.userid} <password> accept" to accept challenges '
                "again.")
    limit = (f"at most {user.game_limit} active games" if user.game_limit is not None
             else "no limit on the number of games")
    return f"{user.userid} accepts challenges, with {limit}; {playing}"


def limit(ctx: MailContext, c: protocol.Limit) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if c.value == "accept":
        user.accepts_challenges = True
        user.game_limit = None
    elif c.value == "reject":
        user.accepts_challenges = False
    elif isinstance(c.value, int):
        # pbmserv: a limit of 0 refuses every challenge that names this user.
        user.game_limit = c.value
    text = _settings_text(ctx, user)
    if c.value is None:
        text += (f'\n\n"abalone limit {user.userid} <password> N" plays at most N games '
                 '(0: refuses every challenge), "... accept" accepts every challenge '
                 'again (no limit), "... reject" refuses them all.')
    answer(ctx, "Abalone limit", text)


def accept_challenges(ctx: MailContext, c: protocol.AcceptChallenge) -> None:
    user = authenticate(ctx, c.userid, c.password)
    user.accepts_challenges = True
    if user.game_limit == 0:
        user.game_limit = None
    answer(ctx, "Abalone accept", _settings_text(ctx, user))


def reject_challenges(ctx: MailContext, c: protocol.RejectChallenge) -> None:
    user = authenticate(ctx, c.userid, c.password)
    user.accepts_challenges = False
    answer(ctx, "Abalone reject", _settings_text(ctx, user)
            + f'\n\n"abalone accept {user.userid} <password>" accepts challenges again.')


# ------------------------------------------------------------------------- vacation
def vacation(ctx: MailContext, c: protocol.Vacation) -> None:
    user = authenticate(ctx, c.userid, c.password)
    name = f"vacation:{user.userid}"
    if c.on:
        if user.vacation:
            answer(ctx, "Abalone vacation", f"{user.userid} is on vacation already.")
            return
        user.vacation = True
        counter = read_counter(ctx, name)
        touch_counter(ctx, name, counter)  # updated_at: when the vacation began
        answer(
            ctx, "Abalone vacation",
            f"Vacation is on for {user.userid}: you are neither reminded nor forfeited in "
            "any game, and nobody can challenge you.  Your games go on when you move; the "
            f'clock of a game waiting for you stands still.  Send "vacation {user.userid} '
            '<password> off" when you are back.',
        )
        return
    if not user.vacation:
        answer(ctx, "Abalone vacation", f"{user.userid} is not on vacation.")
        return
    user.vacation = False
    counter = read_counter(ctx, name)
    began = counter.updated_at if counter is not None else ctx.now
    waiting = _restart_clocks(ctx, user, began)
    text = f"Welcome back, {user.userid}: vacation is off, you can be challenged again."
    if waiting:
        numbers = ", ".join(str(n) for n in waiting)
        text += (f"  It is your turn on board{'s' if len(waiting) > 1 else ''} {numbers}; "
                 "the time you were away does not count against you.")
    answer(ctx, "Abalone vacation", text)


def _restart_clocks(ctx: MailContext, user: User, began: datetime) -> list[int]:
    """Games waiting for ``user``: the vacation does not count as thinking time."""
    waiting = []
    for game in repository.games_of_user(ctx.session, user, "active"):
        if not on_turn(game, user):
            continue
        paused = ctx.now - max(game.turn_started_at, began)
        if paused > timedelta(0):
            game.turn_started_at = min(game.turn_started_at + paused, ctx.now)
        game.last_nag_at = None
        waiting.append(game.number)
    return waiting
