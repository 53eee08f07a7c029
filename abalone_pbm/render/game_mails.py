"""The mails about one game, each from its own template: the board after a move
(``board_mail.txt``), a new game (``new_game.txt``), the end (``game_over.txt``), a
reminder (``nag.txt``), a position not played (``preview.txt``) and a chat message
(``chat.txt``).  Each returns ``(subject, body)``."""

from __future__ import annotations

from ..rules import Board
from .game_context import board_subject, game_context
from .templating import render_body
from .text import RULE, shown_text
from .views import RECENT_ROUNDS, GameView, is_over, to_move


def board_mail(
    game: GameView,
    board: Board,
    *,
    recipient: str | None = None,
    marks: str | None = None,
    rounds: int = RECENT_ROUNDS,
) -> tuple[str, str]:
    """The board after a move (also for ``show``): ``(subject, body)``.

    ``recipient`` is the userid the copy is for (None for someone who is not in the
    game); it decides the "how to reply" part: the player to move is told to reply
    with a move, the other players which answers they can reply with, observers how to
    stop watching.  When the game is over this is :func:`game_over_mail`.
    """
    if is_over(game, board) and game.ply is None:
        return game_over_mail(game, board, recipient=recipient, marks=marks)
    context = game_context(game, board, recipient=recipient, marks=marks, rounds=rounds)
    return board_subject(game, board), render_body("board_mail.txt", **context)


def new_game_mail(
    game: GameView, board: Board, *, recipient: str | None = None, marks: str | None = None
) -> tuple[str, str]:
    """``New Abalone Board 101 fred``: the players with their marks, the options, the
    starting board and how to move.  ``game.challenger`` is named when set; the body of
    the challenge is the comment (`` **`` on the Subject)."""
    context = game_context(game, board, recipient=recipient, marks=marks)
    first = to_move(game, board) or game.players[0]
    subject = f"New Abalone Board {game.number} {first}"
    if context["comment"] is not None:
        subject += " **"
    return subject, render_body("new_game.txt", **context)


def game_over_mail(
    game: GameView, board: Board, *, recipient: str | None = None, marks: str | None = None
) -> tuple[str, str]:
    """``Abalone Board 101`` (`` **`` with a comment): who won, every move, the final board
    and how the ratings changed (``game.result`` and ``game.ratings``; without a result
    the rules' outcome is used)."""
    context = game_context(game, board, recipient=recipient, marks=marks, all_moves=True)
    return board_subject(game, board), render_body("game_over.txt", **context)


def nag_mail(
    game: GameView,
    board: Board,
    *,
    days: int,
    forfeit_in: int | None = None,
    recipient: str | None = None,
    marks: str | None = None,
) -> tuple[str, str]:
    """``Nag: Abalone Board 101 fred``: a reminder for the player to move, who has not
    moved for ``days`` days and forfeits in ``forfeit_in`` days (None: not said)."""
    mover = to_move(game, board) or ""
    context = game_context(game, board, recipient=recipient or mover, marks=marks)
    context.update(days=days, forfeit_in=forfeit_in)
    subject = f"Nag: Abalone Board {game.number} {mover}".rstrip()
    return subject, render_body("nag.txt", **context)


def preview_mail(
    subject: str, title: str, game: GameView, board: Board, footer: str
) -> tuple[str, str]:
    """A board that has not been played: ``title`` first, then the notices, whose
    turn it would be, the moves, the diagram and the scores, then ``footer``."""
    context = game_context(game, board, recipient=None, marks=None)
    return subject, render_body("preview.txt", title=title, footer=footer, **context)


def chat_mail(number: int, userid: str, text: str) -> tuple[str, str]:
    """``Abalone Board 101 chat fred``: a message to the players and observers (its
    text made fit to show them: ``text.shown_text``)."""
    body = render_body("chat.txt", number=number, userid=userid,
                       text=shown_text(text.strip()), rule=RULE)
    return f"Abalone Board {number} chat {userid}", body
