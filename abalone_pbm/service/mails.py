"""The mails that many commands send: board mails to players and observers, a board
shown, error answers, help.

A game and its users become the render layer's plain :class:`render.GameView`; the
render layer turns that into text.  Each function returns the mail (subject, body) or
queues it on the context; none changes a game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select

from .. import protocol, render
from ..db import repository
from ..db.models import Game, Seat, User
from ..render import html_pages
from ..render.board_html import MoveMarks, move_marks
from ..render.views import is_over
from ..rules import Board, MoveError
from .context import MailContext, Outgoing
from .games import GameOptions, board_at, load_board, options_mapping, recent_moves, winners_of
from .queries import (
    observers_of,
    proposal_votes,
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


def when(moment: datetime) -> str:
    """A moment as the server's mails write it."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def game_view(
    ctx: MailContext,
    game: Game,
    *,
    comment_by: User | None = None,
    comment: str = "",
    notices: Sequence[str] = (),
    ratings: Sequence[tuple[Seat, float, float]] = (),
    ply: int | None = None,
    watchers: Sequence[tuple[User, bool]] | None = None,
) -> render.GameView:
    """What the mails show of ``game``; ``watchers``: its ``observers_of`` when the
    caller has them already (a board mail reads them once for the view and the mails)."""
    if watchers is None:
        watchers = observers_of(ctx, game)
    players = tuple(seat.user.userid for seat in game.seats)
    if game.status == "active" and ply is None:
        # A running game's mails show only the last rounds.
        records = recent_moves(game, game.players * (render.RECENT_ROUNDS + 1))
    else:
        records = recent_moves(game, None)[:ply]
    moves = tuple((m.ply, m.seat, m.text + ("*" if m.automatic else "")) for m in records)
    vote = None
    if game.proposal and game.status == "active":
        voted = proposal_votes(game)
        waiting = tuple(
            s.user.userid for s in game.seats if not s.resigned and s.seat not in voted
        )
        proposer = next(
            (s.user.userid for s in game.seats if s.seat == game.proposal_seat), "?"
        )
        vote = render.Vote(game.proposal, proposer, waiting)
    result = None
    if game.status != "active" and ply is None:
        winners = winners_of(game)
        result = render.Result(
            tuple(s.user.userid for s in game.seats if s.seat in winners),
            game.result_reason or "",
            aborted=game.status == "aborted",
        )
    return render.GameView(
        number=game.number,
        players=players,
        moves=moves,
        options=options_mapping(GameOptions.from_json(game.options)),
        observers=tuple(u.userid for u, only in watchers if not only),
        # Masked when shown too: a comment of an older version was stored unmasked.
        comment=(render.Comment(comment_by.userid, protocol.mask_passwords(comment))
                 if comment_by and comment else None),
        vote=vote,
        notices=tuple(notices),
        withdrawn=_withdrawn(game),
        resigned=tuple(s.user.userid for s in game.seats if s.resigned),
        result=result,
        ratings=tuple(
            render.RatingChange(seat.user.userid, before, after, seat.user.rated_games <= 20)
            for seat, before, after in ratings
        ),
        ply=ply,
        challenger=game.challenger,
    )


def last_move_marks(game: Game | None, board: Board) -> MoveMarks | None:
    """What the last move did, for marking it in the picture: from the board's own
    history when it was replayed, else from the position stored before the last move
    (checked against the position now, so a stale one marks nothing)."""
    if board.move_stack:
        before = board.copy()
        move = before.pop()
        return move_marks(before, move)
    if game is None or not game.previous_position or game.ply == 0:
        return None
    last = recent_moves(game, 1)
    if not last or last[0].ply != game.ply:
        return None
    try:
        before = Board(game.previous_position, board.rules)
        move = before.parse_move(last[0].text)
        marks = move_marks(before, move)
        before.push(move)
    except (MoveError, ValueError):
        return None
    if before.position().split()[0] != game.position.split()[0]:
        return None
    return marks


def page_kind(make: object, view: render.GameView, board: Board) -> str:
    """The HTML page that goes with a text mail function of :mod:`render`."""
    if make is render.new_game_mail:
        return "new_game"
    if make is render.game_over_mail or (is_over(view, board) and view.ply is None):
        return "game_over"
    return "board"


def board_page(
    kind: str,
    subject: str,
    view: render.GameView,
    board: Board,
    *,
    recipient: str | None,
    game: Game | None,
    **extra: Any,
) -> str:
    """The HTML part of a mail that shows a board (DESIGN §2.7)."""
    marks = None
    if view.ply is None or board.move_stack:
        marks = render.shared(("last_move_marks", id(game), id(board)),
                              lambda: last_move_marks(game, board))
    return html_pages.game_page(
        kind, subject, view, board, recipient=recipient, marks=marks, **extra
    )


def reply_address_of(ctx: MailContext, game: Game, userid: str | None) -> str | None:
    """The reply address of ``userid``'s seat in ``game`` (None when not playing)."""
    for seat in game.seats:
        if userid is not None and seat.user.userid == userid and not seat.resigned:
            return ctx.reply_address(game.number, seat.reply_token)
    return None


def _withdrawn(game: Game) -> tuple[str, ...]:
    """Who withdrew, told while the restarted game is in its first round."""
    if not game.withdrawn or game.status != "active" or game.ply >= game.players:
        return ()
    return tuple(game.withdrawn.split(","))


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
            for address in user_addresses(user):
                if address not in sent:
                    sent.add(address)
                    ctx.send(Outgoing(address, subject, body, html=html))
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
    return ctx.send_to_users(watchers, subject, body, skip=sent, html=html)


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
    ctx.send_to_users(list(followers), subject, body, skip=sent, html=html)


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
