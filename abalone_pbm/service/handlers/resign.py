"""Resigning: pbmserv's resign, and withdrawing in the first round.

Before the first round is over a player who resigns withdraws: the game starts again
without them, or is removed when one player is left.  Later a resignation applies at
once on the player's turn, and waits for their turn otherwise.
"""

from __future__ import annotations

from dataclasses import replace

from ... import protocol, render
from ...db.models import Game, Seat, User
from ...render import answer_mail, wrap_text
from ..context import CommandError, MailContext
from ..games import GameOptions, load_board, new_reply_token, recent_moves, start_position_for
from ..mails import player_mails
from ..views import board_page, game_view
from ..queries import authenticate_for, load_game, observers_of, player_seat, require_active
from ..tournament_games import tournament_of_game
from ..turns import after_move, resign_seat


def resign(ctx: MailContext, c: protocol.Resign) -> None:
    game = load_game(ctx, c.board)
    user = authenticate_for(ctx, game, c.userid, c.password)
    resign_player(ctx, game, user, protocol.extract_comment(ctx.body))


def resign_player(ctx: MailContext, game: Game, user: User, comment: str = "") -> None:
    require_active(game)
    seat = player_seat(game, user)
    if seat.resigned:
        raise CommandError("You have already resigned from this game", board=game.number)
    if seat.resign_pending:
        # pbmserv: a second resign before the turn comes takes the first one back.
        seat.resign_pending = False
        game.updated_at = ctx.now
        ctx.reply(*answer_mail(
            f"Abalone Board {game.number} resignation cancelled",
            f"{user.userid}, your waiting resignation from board {game.number} is "
            "cancelled: you play on.  Nobody else was told of it.",
        ))
        return
    # A tournament game has no first-move withdrawal: resigning it is a loss.
    if game.ply < game.players and tournament_of_game(game) is None:
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
            "players are told then.  To take it back, send the same resign again "
            "before your turn comes.",
        )
        ctx.reply(subject, body)
        return
    resign_seat(ctx, game, board, seat)
    after_move(ctx, game, board, mover=user, comment=comment,
               notices=[f"{user.userid} resigned."], resigned=[user.userid])


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
    view = game_view(ctx, game, comment_by=user, comment=comment, notices=notices)
    sent = player_mails(ctx, game, board, view, render.new_game_mail)
    subject, body = render.new_game_mail(view, board, recipient=None)
    html = board_page("new_game", subject, view, board, recipient=None, game=game)
    ctx.send_to_users([user], subject, body, skip=sent, html=html)


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
        shown = render.shown_text(ctx.masked(comment).strip())
        text += f"\n\n{render.RULE}\n{user.userid} writes:\n{shown}\n{render.RULE}"
    subject, body = render.text_mail(f"Abalone Board {game.number}", text)
    people = [s.user for s in game.seats] + [u for u, _ in observers_of(ctx, game)]
    ctx.send_to_users(people, subject, body)
