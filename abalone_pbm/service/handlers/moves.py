"""Moving: move, queue, submit, confirm, and preview (moves tried, nothing played).

Decisions where pbmserv leaves room:

* ``queue`` when it is already your move plays the move at once (the board mail says
  so): the mail crossed the previous player's move, and playing it is exactly what the
  queue would have done a moment later.  ``queue ... none`` cancels a queued move.  A
  queued ``#n`` must still be the move number when the move is played, else it is
  dropped.  The comment of a queue mail is not kept.
* ``submit`` needs your turn and remembers the move number; ``confirm`` plays it only
  if the board has not changed meanwhile (and checks it again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ... import protocol, render
from ...db.models import Game, User
from ...render import preview_mail
from ...rules import Board, Move, MoveError, Rules
from ...rules.notation import read_cells
from ..context import CommandError, MailContext, Outgoing
from ..games import board_at, load_board
from ..mails import answer
from ..views import board_page, game_view
from ..queries import authenticate_for, load_game, playing_seat
from ..turns import after_move, record_move

#: Words that cancel a queued move instead of queueing one.
CANCEL_WORDS = ("none", "cancel", "clear", "nothing")


@dataclass
class MoveRequest:
    board: int
    text: str
    expected_ply: int | None = None
    comment: str = ""
    source: str = "command"  # "command" | "reply"
    #: Extra sentences for the board mails of this move.
    notices: tuple[str, ...] = ()


def _comment(ctx: MailContext) -> str:
    return protocol.extract_comment(ctx.body).strip()


def _check_number(game: Game, text: str, expected: int | None) -> None:
    if expected is not None and expected != game.ply + 1:
        raise CommandError(
            f"Move {text} received as move #{expected}, "
            f"but the next move of board {game.number} is #{game.ply + 1}",
            board=game.number,
        )


def _parse(board: Board, game: Game, text: str) -> Move:
    try:
        return board.parse_move(text)
    except MoveError as error:
        raise CommandError(f"Illegal move {text.strip()}: {error}", board=game.number) from None


# ---------------------------------------------------------------------------- move
def move(ctx: MailContext, c: protocol.Move) -> None:
    game = load_game(ctx, c.board)
    user = authenticate_for(ctx, game, c.userid, c.password)
    play_move(ctx, game, user, MoveRequest(c.board, c.move_text, c.expected_ply, _comment(ctx)))


def play_move(ctx: MailContext, game: Game, user: User, request: MoveRequest) -> None:
    """Check and play one move for ``user``, and mail the new board to everyone."""
    seat = playing_seat(game, user)
    board = load_board(game)
    if board.turn != seat.seat:
        raise CommandError("It is not your move", board=game.number)
    _check_number(game, request.text, request.expected_ply)
    played = _parse(board, game, request.text)
    board.push(played)
    # A comment is shown to the other players: never with a password (a pasted command).
    comment = ctx.masked(request.comment.strip())
    record_move(
        game, board, seat.seat, str(played), ctx.now,
        source_message_id=ctx.message_id, comment=comment or None,
    )
    notices = tuple(request.notices)
    typed = "".join(request.text.split()).lower().partition("#")[0]
    if typed and typed != str(played):
        # The move lists use the one standard spelling; say that it is the move typed.
        notices += (f"{user.userid} wrote move #{game.ply} as {typed}, the same move as "
                    f"{played} (the standard spelling used in the move list).",)
    after_move(ctx, game, board, mover=user, comment=comment, notices=notices)


# --------------------------------------------------------------------------- queue
def queue(ctx: MailContext, c: protocol.Queue) -> None:
    game = load_game(ctx, c.board)
    user = authenticate_for(ctx, game, c.userid, c.password)
    seat = playing_seat(game, user)
    text = c.move_text.strip()
    if text.lower() in CANCEL_WORDS:
        if seat.queued_move is None:
            raise CommandError(f"You have no queued move on board {game.number}",
                               board=game.number)
        old, seat.queued_move = seat.queued_move, None
        answer(ctx, f"Abalone Board {game.number} queue",
                f"Your queued move {old} on board {game.number} is cancelled.")
        return
    board = load_board(game)
    if board.turn == seat.seat:
        request = MoveRequest(
            game.number, text, c.expected_ply, _comment(ctx),
            notices=(f"It was already {user.userid}'s move when their queue command "
                     "arrived, so the move was played at once.",),
        )
        play_move(ctx, game, user, request)
        return
    try:
        read_cells(text)
    except MoveError as error:
        raise CommandError(f"Cannot queue it: {error}", board=game.number) from None
    if c.expected_ply is not None and c.expected_ply <= game.ply + 1:
        raise CommandError(
            f"Move {text} queued as move #{c.expected_ply}, but board {game.number} has "
            f"{game.ply} moves and move #{game.ply + 1} is not yours",
            board=game.number,
        )
    stored = "".join(text.split()).lower()
    if c.expected_ply is not None:
        stored += f"#{c.expected_ply}"
    replaced = seat.queued_move
    seat.queued_move = stored
    game.updated_at = ctx.now
    lines = [
        f"Your move {stored} is queued on board {game.number}.  It is played for you as "
        "soon as it is your turn, if it is legal then; if it is not, it is dropped and "
        "you are told why.",
    ]
    if replaced:
        lines.append(f"It replaces your queued move {replaced}.")
    lines.append(
        f'A new queue command replaces it; "abalone queue {game.number} {user.userid} '
        '<password> none" cancels it.  (A queue command that arrives when it is already '
        "your move is played at once.)"
    )
    answer(ctx, f"Abalone Board {game.number} queue", "\n\n".join(lines))


# ----------------------------------------------------------------- submit, confirm
def submit(ctx: MailContext, c: protocol.Submit) -> None:
    game = load_game(ctx, c.board)
    user = authenticate_for(ctx, game, c.userid, c.password)
    seat = playing_seat(game, user)
    board = load_board(game)
    if board.turn != seat.seat:
        raise CommandError(
            "It is not your move (to have a move played when your turn comes, use "
            "abalone queue)",
            board=game.number,
        )
    _check_number(game, c.move_text, c.expected_ply)
    submitted = _parse(board, game, c.move_text)
    ply = game.ply + 1
    seat.submitted_move = f"{submitted}#{ply}"
    game.updated_at = ctx.now
    board.push(submitted)
    view = _with_moves(game_view(ctx, game), [(ply, seat.seat, str(submitted))])
    title = (
        f"Preview of Abalone board {game.number}: the board after {user.userid}'s move "
        f"{submitted} (move #{ply}).  Nothing has been played yet."
    )
    footer = (
        f'To play this move, send the Subject "abalone confirm {game.number} {user.userid} '
        '<password>"; a comment in the body of that mail goes with the move.  A new '
        "submit replaces this one."
    )
    _preview_reply(ctx, f"Abalone Board {game.number} submitted", title, view, board, footer)


def confirm(ctx: MailContext, c: protocol.Confirm) -> None:
    game = load_game(ctx, c.board)
    user = authenticate_for(ctx, game, c.userid, c.password)
    seat = playing_seat(game, user)
    if not seat.submitted_move:
        raise CommandError(
            f"You have no submitted move on board {game.number}; send "
            f'"abalone submit {game.number} {user.userid} <password> <move>" first',
            board=game.number,
        )
    text, _, number = seat.submitted_move.partition("#")
    seat.submitted_move = None
    request = MoveRequest(game.number, text, int(number) if number else None, _comment(ctx))
    play_move(ctx, game, user, request)


# ------------------------------------------------------------------------- preview
def preview(ctx: MailContext, c: protocol.Preview) -> None:
    number = c.board
    if number is None:
        players = c.players or 2
        board = Board.from_layout("standard", Rules(players=players))
        view = render.GameView(
            number=0, players=tuple(f"player {s}" for s in range(1, players + 1))
        )
        subject = "Abalone preview"
        title = f"Preview of a new {players}-player game (standard layout)"
        shown = 0
    else:
        game = load_game(ctx, number, for_update=False)
        if c.ply is not None and not 0 <= c.ply <= game.ply:
            raise CommandError(
                f"Board {number} has {game.ply} moves; preview {number}#0 to #{game.ply}",
                board=number,
            )
        if c.ply is not None and c.ply != game.ply:
            board = board_at(game, c.ply)
            view = replace(game_view(ctx, game, ply=c.ply), ply=None, result=None)
        else:
            board = load_board(game)
            view = game_view(ctx, game)
        shown = game.ply if c.ply is None else c.ply
        subject = f"Abalone Board {number} preview"
        title = f"Preview of Abalone board {number}, from the position after move #{shown}"
    played: list[tuple[int, int, str]] = []
    for index, text in enumerate(c.moves, start=1):
        try:
            tried = board.parse_move(text)
        except MoveError as error:
            raise CommandError(
                f"Preview move {index} ({text}) cannot be played: {error}", board=number
            ) from None
        played.append((shown + index, board.turn, str(tried)))
        board.push(tried)
    if played:
        title += " and the moves " + ", ".join(m for _, _, m in played)
    title += ".  Nothing is played."
    view = _with_moves(view, played)
    footer = 'To try other moves, send another "abalone preview".'
    _preview_reply(ctx, subject, title, view, board, footer)


def _preview_reply(ctx: MailContext, subject: str, title: str, view: render.GameView,
                   board: Board, footer: str) -> None:
    """A position not played, as text and as a picture."""
    subject, body = preview_mail(subject, title, view, board, footer)
    html = board_page("preview", subject, view, board, recipient=None, game=None,
                      title=title, footer=footer)
    ctx.send(Outgoing(ctx.sender, subject, body, html=html))


def _with_moves(view: render.GameView, moves: Sequence[tuple[int, int, str]]) -> render.GameView:
    return replace(view, moves=tuple(view.moves) + tuple(moves), vote=None, comment=None)
