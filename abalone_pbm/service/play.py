"""Game commands: challenge, move, resign, show, games."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import func, select

from .. import render
from ..render import answer_mail, wrap_text
from ..db import repository
from ..db.models import Game, Observer, Seat, User
from ..rules import Board, MoveError, Outcome, get_layout, layout_names
from ..rules.variants import pick_variant, variant_names
from . import mails
from .accounts import authenticate, find_user, user_addresses
from .context import CommandError, MailContext, Outgoing
from .games import (
    GameOptions,
    finish,
    load_board,
    new_reply_token,
    recent_moves,
    record_move,
    seat_number,
    seat_of,
    start_position_for,
    winners_of,
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
    #: Extra sentences for the board mails of this move.
    notices: tuple[str, ...] = ()


def parse_options(raw: dict[str, str | bool], players: int) -> GameOptions:
    """Turn the `-name[=value]` options of a challenge into GameOptions, or explain."""
    values: dict[str, object] = {}
    extra: dict[str, str] = {}
    variants_chosen: list[str] = []
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
        elif key in variant_names():
            if value is not True:
                raise CommandError(f"-{key} takes no value")
            try:
                values["variant"] = pick_variant([*variants_chosen, key])
            except ValueError as error:
                raise CommandError(str(error)) from None
            variants_chosen.append(key)
        else:
            known = "-bowl, -layout=NAME, -teams, -ko, -target=N, -movelimit=N, " \
                    "-nagtime=D, -forfeittime=D, -totaltime=D, " \
                    + ", ".join(f"-{name}" for name in variant_names())
            raise CommandError(f"Unknown challenge option -{key}; the options are {known}")
    options = GameOptions(**values, extra=extra)  # type: ignore[arg-type]
    if options.nagtime >= options.forfeittime:
        raise CommandError("-nagtime must be shorter than -forfeittime")
    try:
        start_position_for(options, players)
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
    watchers = _add_automatic_observers(ctx, game, users)
    board = load_board(game)
    recipients = mails.new_game_mails(ctx, game, board)
    recipients |= _observer_copies(ctx, game, board, watchers, recipients)
    player_addresses = {a for u in users for a in user_addresses(u)}
    if ctx.sender.lower() not in player_addresses and ctx.sender.lower() not in recipients:
        ctx.send(mails.challenge_confirmation(ctx, game, board))
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


def _observer_copies(
    ctx: MailContext, game: Game, board: Board, watchers: list[User], sent: set[str]
) -> set[str]:
    """The new-game mail for observers (no reply address: they do not play)."""
    if not watchers:
        return set()
    subject, body = render.new_game_mail(mails.game_view(ctx, game), board, recipient=None)
    return ctx.send_to_users(watchers, subject, body, skip=sent)


def _sender_userid(ctx: MailContext) -> str | None:
    users = repository.find_user_by_address(ctx.session, ctx.sender.lower())
    return users[0].userid if len(users) == 1 else None


def _check_accepts_challenges(ctx: MailContext, user: User) -> None:
    if user.disabled:
        raise CommandError(f"{user.userid} is no longer active and cannot be challenged")
    if not user.accepts_challenges:
        raise CommandError(f"{user.userid} does not accept challenges at the moment")
    if user.vacation:
        raise CommandError(
            f"{user.userid} is on vacation and cannot be challenged until back; "
            "try again later"
        )
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
    if seat.resigned or seat.resign_pending:
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
    after_move(ctx, game, board, mover=user, comment=comment, notices=request.notices)


def after_move(
    ctx: MailContext,
    game: Game,
    board: Board,
    *,
    mover: User,
    comment: str,
    notices: Sequence[str] = (),
) -> None:
    """After a move: carry out what waits for the players whose turn comes (a
    resignation sent out of turn, a queued move), finish the game if it is over, and
    mail everyone the new board."""
    _after_change(ctx, game, board, mover=mover, comment=comment, notices=list(notices))


def _after_change(
    ctx: MailContext,
    game: Game,
    board: Board,
    *,
    mover: User,
    comment: str,
    notices: list[str],
    resigned: list[str] | None = None,
) -> None:
    resigned = list(resigned or [])
    if board.outcome() is None:
        turn_comes(ctx, game, board, notices, resigned)
    outcome = board.outcome()
    if outcome is not None:
        if resigned and _ended_by_resignation(board):
            outcome = Outcome(outcome.winners, f"{render.and_list(resigned)} resigned")
        finish(game, outcome, ctx.now)
        changes = apply_ratings(game)
        mails.game_over_mails(ctx, game, board, changes, mover=mover, comment=comment,
                              notices=notices)
    else:
        mails.board_mails(ctx, game, board, mover=mover, comment=comment, notices=notices)


def _ended_by_resignation(board: Board) -> bool:
    """Whether the game is over for want of players (not by the target or move limit)."""
    rules = board.rules
    best = max(board.side_score(side) for side in range(rules.sides))
    limit_reached = rules.movelimit is not None and board.ply >= rules.movelimit
    return best < rules.target and not limit_reached


def turn_comes(
    ctx: MailContext, game: Game, board: Board, notices: list[str], resigned: list[str]
) -> None:
    """Carry out, for each player whose turn comes, what they left waiting: a
    resignation sent out of turn (applied, and the turn goes on), else a queued move
    (played, marked automatic; an illegal one is dropped and the player told why)."""
    while board.outcome() is None:
        seat = seat_number(game, board.turn)
        userid = seat.user.userid
        if seat.resign_pending:
            resign_seat(ctx, game, board, seat)
            notices.append(f"{userid} resigned.")
            resigned.append(userid)
            continue
        if seat.queued_move and _play_queued(ctx, game, board, seat, notices):
            continue
        break


def _play_queued(
    ctx: MailContext, game: Game, board: Board, seat: Seat, notices: list[str]
) -> bool:
    """Play the seat's queued move; False (and the player told why) when it cannot be."""
    stored = seat.queued_move or ""
    seat.queued_move = None
    text, _, number = stored.partition("#")
    ply = game.ply + 1
    problem = None
    if number and int(number) != ply:
        problem = f"it was queued as move #{number}, but the next move is #{ply}"
    else:
        try:
            move = board.parse_move(text)
        except MoveError as error:
            problem = str(error)
    if problem is not None:
        _queued_move_dropped(ctx, game, seat, stored, problem)
        return False
    board.push(move)
    record_move(game, board, seat.seat, str(move), ctx.now, source_message_id=None,
                automatic=True)
    notices.append(
        f"{seat.user.userid}'s queued move {move} was played as move #{ply} (marked *)."
    )
    return True


def _queued_move_dropped(
    ctx: MailContext, game: Game, seat: Seat, text: str, problem: str
) -> None:
    user = seat.user
    subject, body = answer_mail(
        f"Abalone Board {game.number} queued move not played",
        f"Your queued move {text} on board {game.number} was not played: {problem}.\n\n"
        f"It has been dropped, and it is your move now; the board follows in a "
        f"separate mail.",
    )
    for address in user_addresses(user):
        ctx.send(Outgoing(address, subject, body))


def apply_ratings(game: Game) -> list[tuple[Seat, float, float]]:
    """Rate a finished game; returns (seat, before, after) for each rated seat."""
    rules = GameOptions.from_json(game.options).rules(game.players)
    humans = list(game.seats)
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
    """pbmserv's resign: before the first round is over the player withdraws (the game
    restarts without them, or is removed when one player is left); later it applies at
    once on the player's turn, and waits for their turn otherwise."""
    require_active(game)
    seat = player_seat(game, user)
    if seat.resigned:
        raise CommandError("You have already resigned from this game", board=game.number)
    if seat.resign_pending:
        raise CommandError(
            "Your resignation is already waiting for your turn", board=game.number
        )
    if game.ply < game.players:
        withdraw(ctx, game, seat, comment)
        return
    board = load_board(game)
    if board.turn != seat.seat:
        seat.resign_pending = True
        seat.queued_move = None
        seat.submitted_move = None
        game.updated_at = ctx.now
        subject, body = answer_mail(
            f"Abalone Board {game.number} resignation",
            f"{user.userid}, your resignation from board {game.number} is noted.  It "
            "is not your move, so it takes effect when your turn comes; the other "
            "players are told then.",
        )
        ctx.reply(subject, body)
        return
    resign_seat(ctx, game, board, seat)
    _after_change(ctx, game, board, mover=user, comment=comment,
                  notices=[f"{user.userid} resigned."], resigned=[user.userid])


def resign_seat(ctx: MailContext, game: Game, board: Board, seat: Seat) -> None:
    """Take the seat out of the turn order (its marbles stay) and save the position."""
    seat.resigned = True
    seat.resign_pending = False
    seat.queued_move = None
    seat.submitted_move = None
    turn_before = board.turn
    board.resign(seat.seat)
    game.position = board.position()
    game.updated_at = ctx.now
    if board.turn != turn_before:
        game.turn_started_at = ctx.now
        game.last_nag_at = None
    if game.proposal is not None:
        game.proposal, game.proposal_seat, game.proposal_votes = None, None, ""


def withdraw(ctx: MailContext, game: Game, seat: Seat, comment: str = "") -> None:
    """A player leaves in the first round: the game starts again without them, with
    the layout for one player fewer and the same board number; with one player left
    the game is removed (status ``aborted``)."""
    user = seat.user
    game.withdrawn = ",".join(filter(None, [game.withdrawn, user.userid]))
    remaining = [s for s in game.seats if s is not seat]
    game.updated_at = ctx.now
    game.proposal, game.proposal_seat, game.proposal_votes = None, None, ""
    if len(remaining) < 2:
        _remove_game(ctx, game, user, comment)
        return
    options = GameOptions.from_json(game.options)
    notices = []
    try:
        options.rules(len(remaining))
    except ValueError:
        options = replace(options, teams=False)
        notices.append("With the players left, the game is played without teams.")
    start = None
    for attempt in (options, replace(options, variant=None),
                    replace(options, variant=None, layout="standard")):
        try:
            start = start_position_for(attempt, len(remaining))
        except ValueError:
            continue
        if attempt.variant != options.variant:
            notices.append(f"The {options.variant} variant needs more players; the game is "
                           "played without it.")
        if attempt.layout != options.layout:
            notices.append("The game is played on the standard layout.")
        options = attempt
        break
    if start is None:  # pragma: no cover - the standard layout fits 2 to 6 players
        _remove_game(ctx, game, user, comment)
        return
    game.seats.remove(seat)
    for record in recent_moves(game, None):
        ctx.session.delete(record)
    ctx.session.flush()
    for number, other in enumerate(remaining, start=1):
        if other.seat != number:
            other.seat = number
            ctx.session.flush()  # one at a time: (game, seat) is unique
        other.reply_token = new_reply_token()
        other.resign_pending = False
        other.queued_move = None
        other.submitted_move = None
    game.players = len(remaining)
    game.options = options.to_json()
    game.start_position = game.position = start
    game.ply = 0
    game.turn_started_at = ctx.now
    game.last_nag_at = None
    ctx.session.flush()
    board = load_board(game)
    view = mails.game_view(ctx, game, comment_by=user, comment=comment, notices=notices)
    sent = mails._player_mails(ctx, game, board, view, render.new_game_mail)
    subject, body = render.new_game_mail(view, board, recipient=None)
    ctx.send_to_users([user], subject, body, skip=sent)


def _remove_game(ctx: MailContext, game: Game, user: User, comment: str) -> None:
    """The last but one player withdrew: the game is removed, and everyone told."""
    game.status = "aborted"
    game.finished_at = ctx.now
    game.result_reason = f"{user.userid} withdrew before the end of the first round"
    left = [s.user.userid for s in game.seats if s.user_id != user.id]
    text = wrap_text(
        f"Abalone board {game.number} has been removed: {user.userid} withdrew before the "
        f"end of the first round, and {render.and_list(left) or 'nobody'} cannot play on "
        "alone.  The game is not rated."
    )
    if comment.strip():
        text += f"\n\n{render.RULE}\n{user.userid} writes:\n{comment.strip()}\n{render.RULE}"
    subject, body = render.text_mail(f"Abalone Board {game.number}", text)
    people = [s.user for s in game.seats] + [u for u, _ in mails.observers_of(ctx, game)]
    ctx.send_to_users(people, subject, body)


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
    if selection in ("active", "next"):
        query = query.where(Game.status == "active")
    elif selection == "inactive":
        query = query.where(Game.status != "active")
    if users:
        # The seat that matters: any seat of theirs, or for "next" the seat to move.
        on_seat = Seat.game_id == Game.id
        if selection == "next":
            on_seat = on_seat & (Seat.seat == Game.to_move)
        query = query.where(
            select(Seat.id).where(on_seat, Seat.user_id.in_([u.id for u in users])).exists()
        )
    found = list(ctx.session.scalars(query))
    ctx.send(mails.games_list(ctx, found, users, selection))


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
