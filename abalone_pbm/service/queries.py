"""Read-only lookups that commands start from: users, games, seats, observers.

A lookup a command cannot do without refuses with a :class:`CommandError` that says
what was missing (an unknown user, a wrong password, a board that does not exist, a
player who does not play it); the error of a board command shows the board.
"""

from __future__ import annotations

from sqlalchemy import bindparam, select
from sqlalchemy.orm import selectinload

from ..db import repository
from ..db.models import Game, Observer, Seat, User
from ..robots import ROBOTS
from . import limits
from .context import CommandError, MailContext
from .games import load_board, seat_of
from .passwords import verify_password


# ------------------------------------------------------------------------------ users
def find_user(ctx: MailContext, userid: str) -> User:
    user = repository.get_user(ctx.session, userid)
    if user is None and userid.lower() in ctx.hidden_forms():
        # pbmserv's habit, a password where this command names a user: the answer
        # hides the word, so it says why.
        raise CommandError(
            "Invalid userid entered: the word where a userid stands names no user and is "
            "written as a password, so it is hidden here.  This command takes no password "
            "there: mail from your registered address is enough."
        )
    if user is None:
        raise CommandError(
            f'Invalid userid entered: there is no user {userid}.  "list" shows every '
            'userid; "signup <userid> <password>" makes one.'
        )
    return user


def authenticate(ctx: MailContext, userid: str, password: str) -> User:
    """The user, if the password is right; otherwise the command fails.

    Wrong passwords are throttled per user and per sender (see limits): while the
    throttle holds, the password is not even checked. The check itself sits between
    :func:`limits.password_refusal` and :func:`limits.password_checked`.
    """
    user = find_user(ctx, userid)
    if user.disabled:
        raise CommandError(f"Userid {user.userid} is no longer active")
    if user.robot is not None:
        raise CommandError("Invalid password entered")
    owner = user_addresses(user)
    refusal = limits.password_refusal(ctx, user, owner)
    if refusal is not None:
        raise CommandError(refusal)
    right = verify_password(user.password_hash, password)
    limits.password_checked(ctx, user, right, owner)
    if not right:
        raise CommandError(
            f"Invalid password entered.  Passwords are case-sensitive; if you forgot "
            f'it, send the Subject "password reset {user.userid}" for a one-time code.'
        )
    return user


def user_addresses(user: User) -> list[str]:
    """The addresses that get the user's mail: the confirmed ones (double opt-in)."""
    return [a.address for a in user.addresses if a.confirmed]


def active_games(ctx: MailContext, user: User) -> list[Game]:
    """The active games the user still plays in (not resigned)."""
    query = (
        select(Game)
        .join(Seat, Seat.game_id == Game.id)
        .where(Seat.user_id == user.id, Game.status == "active", Seat.resigned.is_(False))
        .order_by(Game.number)
    )
    return list(ctx.session.scalars(query))


def sender_userid(ctx: MailContext) -> str | None:
    """The userid whose address sent the mail, when exactly one user has it."""
    users = repository.find_user_by_address(ctx.session, ctx.sender.lower())
    return users[0].userid if len(users) == 1 else None


def robot_descriptions() -> list[tuple[str, str]]:
    """The computer players, weakest first, as (userid, description)."""
    return [
        (name, f"level {spec.level}: {spec.description}")
        for name, spec in sorted(ROBOTS.items(), key=lambda item: item[1].level)
    ]


# ------------------------------------------------------------------------------ games
def load_game(ctx: MailContext, number: int, *, for_update: bool = True) -> Game:
    game = repository.get_game(ctx.session, number, for_update=for_update)
    if game is None:
        raise CommandError(
            f'Abalone board {number} not found.  "abalone games <userid>" lists the '
            "boards of a player."
        )
    return game


def authenticate_for(ctx: MailContext, game: Game, userid: str, password: str) -> User:
    """Authenticate a command on a board; its errors then show the board."""
    try:
        return authenticate(ctx, userid, password)
    except CommandError as error:
        error.board = game.number
        raise


def player_seat(game: Game, user: User) -> Seat:
    seat = seat_of(game, user)
    if seat is None:
        raise CommandError("You are NOT playing this game", board=game.number)
    return seat


def require_active(game: Game) -> None:
    if game.status != "active":
        raise CommandError("The game has ended", board=game.number)


def playing_seat(game: Game, user: User) -> Seat:
    """The user's seat in an active game that they still play."""
    require_active(game)
    seat = player_seat(game, user)
    if seat.resigned or seat.resign_pending:
        raise CommandError("You have resigned from this game", board=game.number)
    return seat


def on_turn(game: Game, user: User) -> bool:
    """Whether it is the user's turn in the game (and they have not resigned)."""
    board = load_board(game)
    return any(s.seat == board.turn and s.user_id == user.id and not s.resigned
               for s in game.seats)


def recipient_userid(ctx: MailContext, game: Game) -> str | None:
    """The player of this game who sent the mail, if any (for the "how to reply" part)."""
    users = repository.find_user_by_address(ctx.session, ctx.sender.lower())
    ids = {u.id for u in users}
    for seat in game.seats:
        if seat.user_id in ids:
            return seat.user.userid
    return None


_ANY_OBSERVER = (select(Observer.__table__.c.id)
                 .where(Observer.__table__.c.game_id == bindparam("game_id")).limit(1))


def observers_of(ctx: MailContext, game: Game) -> list[tuple[User, bool]]:
    """The observers of a game with whether they watch its result only."""
    # Most games have none: one cheap look first (the query below costs far more).
    if repository.read_core(ctx.session, _ANY_OBSERVER, {"game_id": game.id}).first() is None:
        return []
    rows = ctx.session.execute(
        select(User, Observer.results_only)
        .join(Observer, Observer.user_id == User.id)
        .where(Observer.game_id == game.id)
        .order_by(User.userid)
        .options(selectinload(User.addresses))  # each gets the board at every address
    )
    return [(user, bool(results_only)) for user, results_only in rows]


def observer_row(ctx: MailContext, game: Game, user: User) -> Observer | None:
    return ctx.session.scalars(
        select(Observer).where(Observer.game_id == game.id, Observer.user_id == user.id)
    ).first()


def proposal_votes(game: Game) -> set[int]:
    """The seats that accepted the pending draw offer or undo request."""
    return {int(s) for s in (game.proposal_votes or "").split(",") if s.strip()}
