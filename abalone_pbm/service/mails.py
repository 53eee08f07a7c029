"""The mails that many commands send: board mails to players and observers, a board
shown, error answers, help.

A game and its users become the render layer's plain :class:`render.GameView`; the
render layer turns that into text.  Each function returns the mail (subject, body) or
queues it on the context; none changes a game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, replace

from sqlalchemy import select

from .. import protocol, render
from ..db import repository
from ..db.models import Game, Seat, User
from ..rules import Board
from .context import MailContext, Outgoing
from .unsubscribe import Unsubscription
from .views import board_page, game_view, page_kind
from .games import board_at, load_board, winners_of
from .queries import (
    observers_of,
    recipient_userid,
    robot_descriptions,
    user_addresses,
)

#: A render function for one board mail: render.board_mail, new_game_mail, game_over_mail.
BoardMail = Callable[..., tuple[str, str]]


def answer(ctx: MailContext, subject: str, text: str) -> None:
    """Answer the sender with a short text in wrapped paragraphs."""
    ctx.reply(*render.answer_mail(subject, text))


def text_answer(ctx: MailContext, subject: str, text: str) -> None:
    """Answer the sender with a text kept as it is (tables, lists)."""
    ctx.reply(*render.text_mail(subject, text))


def reply_address_of(ctx: MailContext, game: Game, userid: str | None) -> str | None:
    """The reply address of ``userid``'s seat in ``game`` (None when not playing)."""
    for seat in game.seats:
        if userid is not None and seat.user.userid == userid and not seat.resigned:
            return ctx.reply_address(game.number, seat.reply_token)
    return None


def player_mails(
    ctx: MailContext,
    game: Game,
    board: Board,
    view: render.GameView,
    make: BoardMail,
    *,
    observers: bool = True,
    results: bool = False,
    watchers: Sequence[tuple[User, bool]] | None = None,
) -> set[str]:
    """Send one mail per address of every player (with their reply address) and
    observer, made by ``make``; returns the addresses written to.  ``watchers``: the
    game's ``observers_of`` when the caller has read them already."""
    with render.same_board():
        return _player_mails(ctx, game, board, view, make, observers, results, watchers)


def _player_mails(
    ctx: MailContext,
    game: Game,
    board: Board,
    view: render.GameView,
    make: BoardMail,
    observers: bool,
    results: bool,
    watchers: Sequence[tuple[User, bool]] | None,
) -> set[str]:
    kind = page_kind(make, view, board)
    sent: set[str] = set()
    for seat in game.seats:
        user = seat.user
        if user.robot is not None:
            continue
        subject, body = make(view, board, recipient=user.userid)
        html = board_page(kind, subject, view, board, recipient=user.userid, game=game)
        reply_to = ctx.reply_address(game.number, seat.reply_token)
        for address in user_addresses(user):
            if address in sent:
                continue
            sent.add(address)
            ctx.send(Outgoing(address, subject, body, reply_to=reply_to, html=html))
    if observers:
        for user, results_only in observers_of(ctx, game) if watchers is None else watchers:
            if results_only and not results:
                continue
            subject, body = make(view, board, recipient=None)
            html = board_page(kind, subject, view, board, recipient=None, game=game)
            # Subscribed mail: the observer may stop it without a password.
            way_out = Unsubscription("o", user.id, user.userid, game.number)
            for address in user_addresses(user):
                if address not in sent:
                    sent.add(address)
                    ctx.send(Outgoing(address, subject, body, html=html,
                                      unsubscribe=way_out))
    return sent


def new_game_mails(
    ctx: MailContext, game: Game, board: Board, *, comment: render.Comment | None = None
) -> set[str]:
    """The new-game mail of every player; ``comment``: the body of the challenge."""
    view = replace(game_view(ctx, game), comment=comment)
    return player_mails(ctx, game, board, view, render.new_game_mail, observers=False)


def watcher_new_game_mails(
    ctx: MailContext, game: Game, board: Board, watchers: Sequence[User], sent: set[str],
    *, comment: render.Comment | None = None,
) -> set[str]:
    """The new-game mail for observers (no reply address: they do not play)."""
    if not watchers:
        return set()
    view = replace(game_view(ctx, game), comment=comment)
    subject, body = render.new_game_mail(view, board, recipient=None)
    html = board_page("new_game", subject, view, board, recipient=None, game=game)
    # They watch because of "subscribe all": the way out stops that and this board.
    return ctx.send_to_users(
        watchers, subject, body, skip=sent, html=html,
        unsubscribe=lambda user: Unsubscription("s", user.id, user.userid, game.number))


def challenge_confirmation(
    ctx: MailContext, game: Game, board: Board, *, comment: render.Comment | None = None
) -> Outgoing:
    view = replace(game_view(ctx, game), comment=comment)
    subject, body = render.new_game_mail(view, board, recipient=None)
    html = board_page("new_game", subject, view, board, recipient=None, game=game)
    return Outgoing(ctx.sender, subject, body, html=html)


def board_mails(
    ctx: MailContext,
    game: Game,
    board: Board,
    *,
    mover: User,
    comment: str,
    notices: Sequence[str] = (),
) -> None:
    watchers = observers_of(ctx, game)
    view = game_view(ctx, game, comment_by=mover, comment=comment, notices=notices,
                     watchers=watchers)
    player_mails(ctx, game, board, view, render.board_mail, watchers=watchers)


def game_over_mails(
    ctx: MailContext,
    game: Game,
    board: Board,
    changes: Sequence[tuple[Seat, float, float]],
    *,
    mover: User,
    comment: str,
    notices: Sequence[str] = (),
) -> None:
    watchers = observers_of(ctx, game)
    view = game_view(
        ctx, game, comment_by=mover, comment=comment, notices=notices, ratings=changes,
        watchers=watchers,
    )
    sent = player_mails(ctx, game, board, view, render.game_over_mail, results=True,
                        watchers=watchers)
    # Who asked for the results of every game (`notify` without boards).
    followers = ctx.session.scalars(
        select(User).where(User.notify_all.is_(True), User.disabled.is_(False))
        .order_by(User.id)
    )
    subject, body = render.game_over_mail(view, board, recipient=None)
    html = board_page("game_over", subject, view, board, recipient=None, game=game)
    ctx.send_to_users(list(followers), subject, body, skip=sent, html=html,
                      unsubscribe=lambda user: Unsubscription("n", user.id, user.userid))


def show_mail(ctx: MailContext, game: Game, ply: int | None) -> Outgoing:
    if ply is None or ply == game.ply:
        board, shown = load_board(game), None
    else:
        board, shown = board_at(game, ply), ply
    view = game_view(ctx, game, ply=shown)
    recipient = recipient_userid(ctx, game)
    if game.status != "active" and shown is None:
        subject, body = render.game_over_mail(view, board, recipient=recipient)
        kind = "game_over"
    else:
        subject, body = render.board_mail(view, board, recipient=recipient)
        kind = page_kind(render.board_mail, view, board)
    html = board_page(kind, subject, view, board, recipient=recipient, game=game)
    return Outgoing(ctx.sender, subject, body,
                    reply_to=reply_address_of(ctx, game, recipient), html=html)


def games_list(
    ctx: MailContext,
    games: Sequence[Game],
    users: Sequence[User],
    selection: str,
    *,
    seeking: Sequence[tuple[str, int]] = (),
) -> Outgoing:
    whose = ", ".join(u.userid for u in users) if users else "everyone"
    lines = [f"Abalone games of {whose} ({selection}):", ""]
    if not games:
        lines.append("  none")
    for game in games:
        board = load_board(game)
        names = " ".join(s.user.userid for s in game.seats)
        if game.status == "active":
            mover = next((s.user.userid for s in game.seats if s.seat == board.turn), "?")
            state = f"move {game.ply + 1}, {mover} to move"
        elif game.status == "finished":
            winners = winners_of(game)
            won = [s.user.userid for s in game.seats if s.seat in winners]
            state = f"won by {' and '.join(won)}" if won else "drawn"
        else:
            state = game.status
        lines.append(f"  {game.number:>5}  {names:<30} {state}")
    if seeking:
        lines += ["", "Looking for a game (abalone seek):", ""]
        for userid, players in seeking:
            lines.append(f"  {userid:<20} a {players}-player game")
        lines += ["", render.wrap_text(
            'Send "abalone seek <userid> <password> <N>" to join them: the game starts '
            "as soon as N players seek one.")]
    subject, body = render.text_mail("Abalone games", "\n".join(lines))
    return Outgoing(ctx.sender, subject, body)


def signup_confirmation(ctx: MailContext, user: User, address: str) -> Outgoing:
    subject, body = render.signup_mail(
        user.userid, user_addresses(user), server_address=ctx.settings.address,
        awaiting=[a.address for a in user.addresses if not a.confirmed],
    )
    return Outgoing(address, subject, body)


def error_mail(
    ctx: MailContext, message: str, board_number: int | None, *, line: str | None = None
) -> tuple[str, str]:
    """An error answer; with the unchanged board when a board is involved."""
    mail = error_outgoing(ctx, message, board_number, line=line)
    return mail.subject, mail.body


def error_outgoing(
    ctx: MailContext, message: str, board_number: int | None, *, line: str | None = None
) -> Outgoing:
    """An error answer to the sender; when a board is involved, with the unchanged board
    (text and picture) and, for a player of it, their reply address, so that a reply
    to the error mail does what its "how to reply" part says."""
    subject_text = line if line is not None else ctx.subject
    body_text = "" if line is not None else ctx.body
    game = repository.get_game(ctx.session, board_number) if board_number else None
    syntax = None
    if "\nSyntax is " in message:
        message, _, rest = message.partition("\nSyntax is ")
        syntax = "Syntax is " + rest
    if game is None:
        subject, body = render.error_mail(
            message, syntax=syntax, original_subject=subject_text, original_body=body_text
        )
        return Outgoing(ctx.sender, subject, body)
    board = load_board(game)
    view = game_view(ctx, game)
    recipient = recipient_userid(ctx, game)
    subject, body = render.error_mail(
        message,
        syntax=syntax,
        original_subject=subject_text,
        original_body=body_text,
        game=view,
        board=board,
        recipient=recipient,
    )
    html = board_page(
        "error", subject, view, board, recipient=recipient, game=game,
        message=message.rstrip(), syntax=syntax or "",
        quoted=protocol.quote_original(subject_text, body_text),
    )
    return Outgoing(ctx.sender, subject, body,
                    reply_to=reply_address_of(ctx, game, recipient), html=html)


def plain_error(ctx: MailContext, message: str) -> tuple[str, str]:
    return render.error_mail(message, original_subject=ctx.subject, original_body=ctx.body)


def help_mail(ctx: MailContext, topics: list[str], *, game: bool) -> tuple[str, str]:
    robots = robot_descriptions()
    return render.help_mail(topics, game=game, robots=robots, server_address=ctx.settings.address,
                            limits=asdict(ctx.settings))
