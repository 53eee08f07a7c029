"""Answers to a command: an error (``error.txt``, with the board when there is one),
a short text (``text.txt``) and the signup confirmation (``signup.txt``); the original
mail is quoted with every password masked.  Each returns ``(subject, body)``."""

from __future__ import annotations

from typing import Any, Sequence

from ..protocol.commands import CommandSyntaxError
from ..protocol.masking import quote_original
from ..rules import Board
from .game_context import game_context
from .templating import render_body
from .text import wrap_text
from .views import GameView


def error_mail(
    message: str,
    *,
    original_subject: str,
    original_body: str = "",
    syntax: str | None = None,
    game: GameView | None = None,
    board: Board | None = None,
    recipient: str | None = None,
    marks: str | None = None,
) -> tuple[str, str]:
    """An error answer: ``Abalone error``, or ``Abalone Board 101 Error`` with the
    unchanged board when ``game`` and ``board`` are given.

    The body: the error text, the syntax line (``syntax``: a bare usage or a full
    ``Syntax is "..."`` line, as :class:`~.CommandSyntaxError` has
    it), the board, then the original mail quoted with ``> `` and every password masked.
    """
    if syntax and not syntax.startswith("Syntax is"):
        syntax = f'Syntax is "{syntax}"'
    context: dict[str, Any] = {
        "message": message.rstrip(),
        "syntax": syntax or "",
        "quoted": quote_original(original_subject, original_body),
        "has_game": game is not None and board is not None,
    }
    if game is not None and board is not None:
        context.update(
            game_context(
                game,
                board,
                recipient=recipient,
                marks=marks,
            )
        )
        context["comment"] = None
        subject = f"Abalone Board {game.number} Error"
    else:
        subject = "Abalone error"
    return subject, render_body("error.txt", **context)


def syntax_error_mail(
    error: CommandSyntaxError, *, original_subject: str, original_body: str = ""
) -> tuple[str, str]:
    """:func:`error_mail` for a :class:`~abalone_pbm.protocol.commands.CommandSyntaxError`."""
    return error_mail(
        error.message,
        syntax=error.syntax,
        original_subject=original_subject,
        original_body=original_body,
    )


def text_mail(
    subject: str,
    text: str,
    *,
    original_subject: str | None = None,
    original_body: str = "",
) -> tuple[str, str]:
    """A short answer (``Vacation is on for fred.``) with the original quoted if given."""
    quoted = (
        quote_original(original_subject, original_body)
        if original_subject is not None
        else ""
    )
    return subject, render_body("text.txt", text=text.rstrip(), quoted=quoted)


def answer_mail(subject: str, text: str) -> tuple[str, str]:
    """A short answer in wrapped paragraphs (:func:`text_mail`)."""
    return text_mail(subject, wrap_text(text))


def signup_mail(
    userid: str, addresses: Sequence[str], *, server_address: str = "abalone@localhost",
    awaiting: Sequence[str] = (),
) -> tuple[str, str]:
    """The confirmation of ``signup``: welcome, where mail goes (and which addresses
    still have to confirm that they want it), how to play."""
    body = render_body(
        "signup.txt", userid=userid, addresses=list(addresses), address=server_address,
        awaiting=list(awaiting),
    )
    return f"Abalone signup {userid}", body
