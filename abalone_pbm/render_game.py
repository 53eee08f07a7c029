"""Mails of the game commands that :mod:`abalone_pbm.render` has no function for:
previews (``submit``, ``preview``), chat, and the player tables (``standings``,
``ratings``, ``history``).  Pure, like render: plain data in, ``(subject, body)`` out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import render
from .rules import Board


def wrap_text(text: str) -> str:
    """Fill each paragraph to 72 columns; indented blocks (tables, examples) stay."""
    return render._wrap(text)


def answer_mail(subject: str, text: str) -> tuple[str, str]:
    """A short answer in wrapped paragraphs (:func:`render.text_mail`)."""
    return render.text_mail(subject, wrap_text(text))


def preview_mail(
    subject: str, title: str, game: render.GameView, board: Board, footer: str
) -> tuple[str, str]:
    """A board that has not been played: ``title`` first, then the notices, whose
    turn it would be, the moves, the diagram and the scores, then ``footer``."""
    context = render._game_context(game, board, recipient=None, marks=None)
    body = render.render_template("preview.txt", title=title, footer=footer, **context)
    return subject, render.tidy(body)


def chat_mail(number: int, userid: str, text: str) -> tuple[str, str]:
    """``Abalone Board 101 chat fred``: a message to the players and observers."""
    body = (
        f"{userid} writes about Abalone board {number}:\n\n"
        f"{render.RULE}\n{text.strip()}\n{render.RULE}\n\n"
        + wrap_text(
            f'To answer everyone, send the Subject "abalone chat {number} <userid> '
            '<password>" with your message in the body.'
        )
    )
    return f"Abalone Board {number} chat {userid}", render.tidy(body)


@dataclass(frozen=True)
class PlayerLine:
    """One row of the rating list."""

    userid: str
    rating: float
    games: int
    wins: int
    draws: int
    losses: int
    provisional: bool
    robot: bool = False


def player_table(
    subject: str, title: str, players: Sequence[PlayerLine], *, note: str = ""
) -> tuple[str, str]:
    """``standings`` / ``ratings``: rank, userid, rating, games, W/D/L, marks."""
    lines = [title, ""]
    if not players:
        lines.append("No rated games have been played yet.")
    else:
        width = max(12, *(len(p.userid) for p in players))
        lines.append(
            f"  {'Rank':>4}  {'Player'.ljust(width)}  {'Rating':>6}  {'Games':>5}"
            f"  {'W':>4}  {'D':>4}  {'L':>4}"
        )
        for rank, p in enumerate(players, start=1):
            marks = []
            if p.provisional:
                marks.append("provisional")
            if p.robot:
                marks.append("computer player")
            lines.append(
                f"  {rank:>4}  {p.userid.ljust(width)}  {round(p.rating):>6}  {p.games:>5}"
                f"  {p.wins:>4}  {p.draws:>4}  {p.losses:>4}  {', '.join(marks)}".rstrip()
            )
        lines += ["", "W/D/L: games won, drawn and lost.  Ratings are provisional for the "
                  "first 20 games."]
    if note:
        lines += ["", note]
    return subject, render.tidy("\n".join(lines))


__all__ = ["PlayerLine", "answer_mail", "chat_mail", "player_table", "preview_mail", "wrap_text"]
