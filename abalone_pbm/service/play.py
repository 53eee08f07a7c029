"""Game commands: challenge, move, resign, show, games."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from ..db import repository
from ..db.models import Game, Seat, User
from ..rules import Board, MoveError, Outcome, get_layout, layout_names
from . import mails
from .accounts import authenticate, find_user, user_addresses
from .context import CommandError, MailContext
from .games import (
    GameOptions,
    finish,
    load_board,
    new_reply_token,
    record_move,
    seat_of,
    start_position_for,
)
from .ratings import rate_game

MAX_DAYS = 365


@dataclass
class MoveRequest:
    board: int
    text: str
    expected_ply: int | None = None
    comment: str = ""
    source: str = "command"  # "command" | "reply"


def parse_options(raw: dict[str, str | bool], players: int) -> GameOptions:
    """Turn the `-name[=value]` options of a challenge into GameOptions, or explain."""
    values: dict[str, object] = {}
    extra: dict[str, str] = {}
    for name, value in raw.items():
        key = name.lower().lstrip("-")
        if key == "bowl":
            values["layout"] = "bowl"
        elif key == "layout":
            if not isinstance(value, str) or not value:
                raise CommandError("-layout needs a name, e.g. -layout=belgian-daisy")
            try:
                layout = get_layout(value, players)
            except ValueError as error:
                raise CommandError(str(error)) from None
            values["layout"] = layout.name
        elif key == "teams":
            values["teams"] = True
        elif key == "ko":
            values["ko"] = True
        elif key in ("target", "movelimit", "nagtime", "forfeittime", "totaltime"):
            values[key] = _positive_number(key, value)
        else:
            known = "-bowl, -layout=NAME, -teams, -ko, -target=N, -movelimit=N, " \
                    "-nagtime=D, -forfeittime=D, -totaltime=D"
            raise CommandError(f"Unknown challenge option -{key}; the options are {known}")
    options = GameOptions(**values, extra=extra)  # type: ignore[arg-type]
    if options.nagtime >= options.forfeittime:
        raise CommandError("-nagtime must be shorter than -forfeittime")
    try:
        options.rules(players)
    except ValueError as error:
        raise CommandError(str(error)) from None
    return options


def _positive_number(key: str, value: str | bool) -> int:
    if not isinstance(value, str) or not value.isdigit() or int(value) < 1:
        raise CommandError(f"-{key} needs a positive whole number, e.g. -{key}=10")
    number = int(value)
    if key in ("nagtime", "forfeittime", "totaltime") and number > MAX_DAYS:
        raise CommandError(f"-{key} is in days and at most {MAX_DAYS}")
    return number


def challenge(ctx: MailContext, raw_options: dict[str, str | bool], userids: list[str]) -> Game:
    if not 2 <= len(userids) <= 6:
        raise CommandError("A challenge names 2 to 6 players")
    lowered = [u.lower() for u in userids]
    if len(set(lowered)) != len(lowered):
        raise CommandError("A player cannot be listed twice in one challenge")
    options = parse_options(raw_options, len(userids))
    users = [find_user(ctx, userid) for userid in lowered]
    for user in users:
        _check_accepts_challenges(ctx, user)
    number = repository.next_board_number(ctx.session)
    start = start_position_for(options, len(users))
    now = ctx.now
    challenger = _sender_userid(ctx)
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
    board = load_board(game)
    recipients = mails.new_game_mails(ctx, game, board)
    player_addresses = {a for u in users for a in user_addresses(u)}
    if ctx.sender.lower() not in player_addresses and ctx.sender.lower() not in recipients:
        ctx.send(mails.challenge_confirmation(ctx, game, board))
    return game


def _sender_userid(ctx: MailContext) -> str | None:
    users = repository.find_user_by_address(ctx.session, ctx.sender.lower())
    return users[0].userid if len(users) == 1 else None


def _check_accepts_challenges(ctx: MailContext, user: User) -> None:
    if user.disabled:
        raise CommandError(f"{user.userid} is no longer active and cannot be challenged")
    if not user.accepts_challenges:
        raise CommandError(f"{user.userid} does not accept challenges at the moment")
    if user.game_limit is not None:
        playing = ctx.session.scalar(
            select(Seat.id)
            .join(Game, Game.id == Seat.game_id)
            .where(Seat.user_id == user.id, Game.status == "active")
            .limit(user.game_limit + 1)
            .offset(user.game_limit)
        )
        if playing is not None or user.game_limit == 0:
            raise CommandError(
                f"{user.userid} already plays {user.game_limit} games, the most they accept"
            )


def load_game(ctx: MailContext, number: int, *, for_update: bool = True) -> Game:
    game = repository.get_game(ctx.session, number, for_update=for_update)
    if game is None:
        raise CommandError(f"Abalone board {number} not found")
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


def move_by_command(
    ctx: MailContext, userid: str, password: str, request: MoveRequest
) -> None:
    game = load_game(ctx, request.board)
    user = authenticate_for(ctx, game, userid, password)
    play_move(ctx, game, user, request)


def play_move(ctx: MailContext, game: Game, user: User, request: MoveRequest) -> None:
    """Check and play one move for ``user``, and mail the new board to everyone."""
    require_active(game)
    seat = player_seat(game, user)
    if seat.resigned:
        raise CommandError("You have resigned from this game", board=game.number)
    board = load_board(game)
    if board.turn != seat.seat:
        raise CommandError("It is not your move", board=game.number)
    if request.expected_ply is not None and request.expected_ply != game.ply + 1:
        raise CommandError(
            f"Move {request.text} received as move #{request.expected_ply}, "
            f"but the next move of board {game.number} is #{game.ply + 1}",
            board=game.number,
        )
    try:
        move = board.parse_move(request.text)
    except MoveError as error:
        raise CommandError(f"Illegal move {request.text.strip()}: {error}", board=game.number) from None
    board.push(move)
    comment = request.comment.strip()
    record_move(
        game, board, seat.seat, str(move), ctx.now,
        source_message_id=ctx.message_id, comment=comment or None,
    )
    after_move(ctx, game, board, mover=user, comment=comment)


def after_move(ctx: MailContext, game: Game, board: Board, *, mover: User, comment: str) -> None:
    """Finish the game if it is over, then mail everyone the new board."""
    outcome = board.outcome()
    if outcome is not None:
        finish(game, outcome, ctx.now)
        changes = apply_ratings(game)
        mails.game_over_mails(ctx, game, board, changes, mover=mover, comment=comment)
    else:
        mails.board_mails(ctx, game, board, mover=mover, comment=comment)


def apply_ratings(game: Game) -> list[tuple[Seat, float, float]]:
    """Rate a finished game; returns (seat, before, after) for each rated seat."""
    from .games import GameOptions, winners_of

    rules = GameOptions.from_json(game.options).rules(game.players)
    humans = [s for s in game.seats]
    ratings = {s.seat: (s.user.rating, s.user.rated_games) for s in humans}
    sides = {s.seat: rules.side_of(s.seat) for s in humans}
    winners = winners_of(game)
    out = []
    for change in rate_game(ratings, sides, winners):
        seat = next(s for s in humans if s.seat == change.seat)
        seat.rating_before, seat.rating_after = change.before, change.after
        user = seat.user
        user.rating = change.after
        user.rated_games += 1
        if not winners:
            user.draws += 1
        elif seat.seat in winners:
            user.wins += 1
        else:
            user.losses += 1
        out.append((seat, change.before, change.after))
    return out


def resign(ctx: MailContext, number: int, userid: str, password: str, comment: str = "") -> None:
    game = load_game(ctx, number)
    user = authenticate_for(ctx, game, userid, password)
    resign_player(ctx, game, user, comment)


def resign_player(ctx: MailContext, game: Game, user: User, comment: str = "") -> None:
    require_active(game)
    seat = player_seat(game, user)
    if seat.resigned:
        raise CommandError("You have already resigned from this game", board=game.number)
    board = load_board(game)
    seat.resigned = True
    board.resign(seat.seat)
    game.position = board.position()
    game.updated_at = ctx.now
    notice = f"{user.userid} resigned."
    outcome = board.outcome()
    if outcome is not None:
        if user.userid not in outcome.reason:
            outcome = Outcome(outcome.winners, f"{user.userid} resigned")
        finish(game, outcome, ctx.now)
        changes = apply_ratings(game)
        mails.game_over_mails(ctx, game, board, changes, mover=user, comment=comment,
                              notices=[notice])
    else:
        game.turn_started_at = ctx.now if board.turn != seat.seat else game.turn_started_at
        mails.board_mails(ctx, game, board, mover=user, comment=comment, notices=[notice])


def show(ctx: MailContext, number: int, ply: int | None) -> None:
    game = load_game(ctx, number, for_update=False)
    if ply is not None and not 0 <= ply <= game.ply:
        raise CommandError(
            f"Board {number} has {game.ply} moves; show {number}#0 to #{game.ply}",
            board=number,
        )
    ctx.send(mails.show_mail(ctx, game, ply))


def games(ctx: MailContext, userids: list[str], selection: str) -> None:
    users = [find_user(ctx, u) for u in userids]
    query = select(Game).order_by(Game.number)
    if selection == "active":
        query = query.where(Game.status == "active")
    elif selection == "inactive":
        query = query.where(Game.status != "active")
    found = list(ctx.session.scalars(query))
    if users:
        ids = {u.id for u in users}
        found = [g for g in found if ids & {s.user_id for s in g.seats}]
    if selection == "next":
        found = [g for g in found if g.status == "active" and _to_move_in(g, users)]
    ctx.send(mails.games_list(ctx, found, users, selection))


def _to_move_in(game: Game, users: list[User]) -> bool:
    board = load_board(game)
    seat = next((s for s in game.seats if s.seat == board.turn), None)
    return seat is not None and (not users or seat.user_id in {u.id for u in users})


__all__ = [
    "MoveRequest",
    "challenge",
    "games",
    "layout_names",
    "move_by_command",
    "play_move",
    "resign",
    "show",
]
