"""The mails that many commands send: board mails to players and observers, a board
shown, error answers, help.

A game and its users become the render layer's plain :class:`render.GameView`; the
render layer turns that into text.  Each function returns the mail (subject, body) or
queues it on the context; none changes a game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from .. import render
from ..db import repository
from ..db.models import Game, Seat, User
from ..rules import Board
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
) -> render.GameView:
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
        observers=tuple(u.userid for u, only in observers_of(ctx, game) if not only),
        comment=render.Comment(comment_by.userid, comment) if comment_by and comment else None,
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
) -> set[str]:
    """Send one mail per address of every player (with their reply address) and
    observer, made by ``make``; returns the addresses written to."""
    sent: set[str] = set()
    for seat in game.seats:
        user = seat.user
        if user.robot is not None:
            continue
        subject, body = make(view, board, recipient=user.userid)
        reply_to = ctx.reply_address(game.number, seat.reply_token)
        for address in user_addresses(user):
            if address in sent:
                continue
            sent.add(address)
            ctx.send(Outgoing(address, subject, body, reply_to=reply_to))
    if observers:
        for user, results_only in observers_of(ctx, game):
            if results_only and not results:
                continue
            subject, body = make(view, board, recipient=None)
            for address in user_addresses(user):
                if address not in sent:
                    sent.add(address)
                    ctx.send(Outgoing(address, subject, body))
    return sent


def new_game_mails(ctx: MailContext, game: Game, board: Board) -> set[str]:
    view = game_view(ctx, game)
    return player_mails(ctx, game, board, view, render.new_game_mail, observers=False)


def watcher_new_game_mails(
    ctx: MailContext, game: Game, board: Board, watchers: Sequence[User], sent: set[str]
) -> set[str]:
    """The new-game mail for observers (no reply address: they do not play)."""
    if not watchers:
        return set()
    subject, body = render.new_game_mail(game_view(ctx, game), board, recipient=None)
    return ctx.send_to_users(watchers, subject, body, skip=sent)


def challenge_confirmation(ctx: MailContext, game: Game, board: Board) -> Outgoing:
    view = game_view(ctx, game)
    subject, body = render.new_game_mail(view, board, recipient=None)
    return Outgoing(ctx.sender, subject, body)


def board_mails(
    ctx: MailContext,
    game: Game,
    board: Board,
    *,
    mover: User,
    comment: str,
    notices: Sequence[str] = (),
) -> None:
    view = game_view(ctx, game, comment_by=mover, comment=comment, notices=notices)
    player_mails(ctx, game, board, view, render.board_mail)


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
    view = game_view(
        ctx, game, comment_by=mover, comment=comment, notices=notices, ratings=changes
    )
    player_mails(ctx, game, board, view, render.game_over_mail, results=True)


def show_mail(ctx: MailContext, game: Game, ply: int | None) -> Outgoing:
    if ply is None or ply == game.ply:
        board, shown = load_board(game), None
    else:
        board, shown = board_at(game, ply), ply
    view = game_view(ctx, game, ply=shown)
    recipient = recipient_userid(ctx, game)
    if game.status != "active" and shown is None:
        subject, body = render.game_over_mail(view, board, recipient=recipient)
    else:
        subject, body = render.board_mail(view, board, recipient=recipient)
    return Outgoing(ctx.sender, subject, body)


def games_list(
    ctx: MailContext, games: Sequence[Game], users: Sequence[User], selection: str
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
    subject, body = render.text_mail("Abalone games", "\n".join(lines))
    return Outgoing(ctx.sender, subject, body)


def signup_confirmation(ctx: MailContext, user: User, address: str) -> Outgoing:
    subject, body = render.signup_mail(
        user.userid, user_addresses(user), server_address=ctx.settings.address
    )
    return Outgoing(address, subject, body)


def error_mail(
    ctx: MailContext, message: str, board_number: int | None, *, line: str | None = None
) -> tuple[str, str]:
    """An error answer; with the unchanged board when a board is involved."""
    subject_text = line if line is not None else ctx.subject
    body_text = "" if line is not None else ctx.body
    game = repository.get_game(ctx.session, board_number) if board_number else None
    syntax = None
    if "\nSyntax is " in message:
        message, _, rest = message.partition("\nSyntax is ")
        syntax = "Syntax is " + rest
    if game is None:
        return render.error_mail(
            message, syntax=syntax, original_subject=subject_text, original_body=body_text
        )
    board = load_board(game)
    view = game_view(ctx, game)
    return render.error_mail(
        message,
        syntax=syntax,
        original_subject=subject_text,
        original_body=body_text,
        game=view,
        board=board,
        recipient=recipient_userid(ctx, game),
    )


def plain_error(ctx: MailContext, message: str) -> tuple[str, str]:
    return render.error_mail(message, original_subject=ctx.subject, original_body=ctx.body)


def multiple_summary(ctx: MailContext, results: Sequence[str]) -> tuple[str, str]:
    text = "Results of the commands in your multiple mail:\n\n" + "\n\n".join(results)
    return render.text_mail("Abalone multiple", text)


def help_mail(ctx: MailContext, topics: list[str], *, game: bool) -> tuple[str, str]:
    robots = robot_descriptions()
    return render.help_mail(topics, game=game, robots=robots, server_address=ctx.settings.address)
