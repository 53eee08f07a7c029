"""The daily digest (``digest userid password on``): one mail listing every board that
awaits the user's move, each with its small diagram and where to send the move.  Pure:
plain data in, ``(subject, text, html)`` out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from ..rules import Board
from . import board_html, html_pages
from .board_text import render_board
from .game_context import _example_move
from .marks import marble_marks
from .text import plural, tidy, wrap_text
from .views import GameView


@dataclass(frozen=True)
class DigestEntry:
    """One board awaiting the user's move."""

    game: GameView
    board: Board
    #: The user's reply address for this board (moving by reply, no password).
    reply_address: str
    #: Whole days since the turn came to the user.
    waiting_days: int


def _waiting(days: int) -> str:
    return "since today" if days <= 0 else f"for {plural(days, 'day')}"


def digest_mail(userid: str, entries: Sequence[DigestEntry]) -> tuple[str, str, str]:
    """``Abalone digest fred: 2 boards await your move``: text and HTML."""
    count = plural(len(entries), "board")
    verb = "awaits" if len(entries) == 1 else "await"
    subject = f"Abalone digest {userid}: {count} {verb} your move"
    one = len(entries) == 1
    intro = (
        f"Good day, {userid}.  This is your daily Abalone digest: {count} {verb} your "
        "move."
    )
    how = (
        "Reply to this mail with your move on the first line, or write to the board's "
        "own address shown below."
        if one
        else "To move on a board, write to that board's own address shown below, with "
        "your move on the first line (no password needed)."
    )
    footer = (
        f'To stop this daily mail, send the Subject "digest {userid} <password> off".  '
        'Send "abalone show <board>" for a whole board mail.'
    )
    lines = [wrap_text(intro), "", wrap_text(how)]
    html_entries = []
    for entry in entries:
        game, board = entry.game, entry.board
        marks = marble_marks(board.players)
        players = " vs ".join(
            f"{name} ({marks[seat]})" for seat, name in enumerate(game.players)
        )
        status = (
            f"Abalone Board {game.number}: {players}.  Your move ({marks[board.turn - 1]}), "
            f"move #{board.ply + 1 if not game.moves else max(p for p, _, _ in game.moves) + 1},"
            f" waiting {_waiting(entry.waiting_days)}."
        )
        example = _example_move(board)
        lines += [
            "",
            "-" * 72,
            wrap_text(status),
            "",
            render_board(board, marks=marks),
            "",
            wrap_text(
                f"Your move to {entry.reply_address} with the move on the first line "
                f"(for example {example}), or the Subject "
                f'"abalone move {game.number} {userid} <password> <move>".'
            ),
        ]
        names = list(game.players)
        html_entries.append(
            {
                "number": game.number,
                "status": status,
                "picture": Markup(board_html.board_table(board, names=names)),
                "legend": [
                    {
                        "userid": name,
                        "colour_name": board_html.colour_name(seat),
                        "mark": marks[seat - 1],
                        "pushed_off": board.ejected(seat),
                    }
                    for seat, name in enumerate(names, start=1)
                ],
                "reply_address": entry.reply_address,
                "example": example,
            }
        )
    lines += ["", "-" * 72, wrap_text(footer)]
    text = tidy("\n".join(lines))
    html = html_pages.digest_page(subject, intro + "  " + how, html_entries, footer)
    return subject, text, html


__all__ = ["DigestEntry", "digest_mail"]
