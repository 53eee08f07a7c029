"""The HTML part of the mails that show a board (DESIGN §2.7), from Jinja2 templates
(``templates/*.html``, autoescaped).  Pure, like the text mails: the same
plain data in (a :class:`~abalone_pbm.render.views.GameView` and the rules' Board), an HTML
page out.  The text part stays the reference; the page shows the same facts: whose
turn, notices, the board as a picture (:mod:`.board_html`), the pushed-off
tallies, the moves, the comment and how to reply.

Every page is ASCII (anything else is written as a character reference), so it travels
as 7bit and stays small: a board page is about 20 KB.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ..rules import Board
from . import board_html
from .board_html import MoveMarks
from .game_context import game_context
from .marks import marble_marks
from .shared import shared
from .templating import render_template, template_dirs
from .text import and_list, plural
from .views import GameView

#: Kinds of page, each with its template.
KINDS = {
    "board": "board_mail.html",
    "new_game": "new_game.html",
    "game_over": "game_over.html",
    "nag": "nag.html",
    "error": "error.html",
    "preview": "preview.html",
    "digest": "digest.html",
}


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(p) for p in template_dirs()]),
        autoescape=True,
        # Loaded once per process: no look at each file's time for every mail rendered
        # (a template and its includes are several stat calls each time).
        auto_reload=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["text"] = text_html
    env.filters["plural"] = plural
    env.filters["and_list"] = and_list
    return env


def text_html(text: str) -> Markup:
    """Plain mail text as HTML: a line underlined with dashes is a heading, a block with
    indented lines (examples, tables) is preformatted, any other block a paragraph."""
    out: list[str] = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = block.split("\n")
        if len(lines) >= 2 and set(lines[1].strip()) == {"-"}:
            out.append(f'<h3 style="{H3}">{escape(lines[0].strip())}</h3>')
            lines = lines[2:]
            if not lines:
                continue
        if any(line[:1] in (" ", "\t") for line in lines):
            body = "\n".join(line.rstrip() for line in lines)
            out.append(f'<pre style="{PRE}">{escape(_dedent(body))}</pre>')
        else:
            joined = " ".join(line.strip() for line in lines)
            out.append(f'<p style="{P}">{escape(joined)}</p>')
    return Markup("\n".join(out))


def _dedent(text: str) -> str:
    lines = text.split("\n")
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[indent:] for x in lines)


# Styles shared by the templates (inline: many clients drop <style> blocks).  A word
# longer than the page is broken rather than widening it (a stranger's 4,000 letters):
# overflow-wrap:anywhere where it is known, word-break:break-word for older engines.
WRAP_ANYWHERE = "overflow-wrap:anywhere;word-break:break-word"
P = "margin:0 0 10px;" + WRAP_ANYWHERE
H3 = "font-size:15px;margin:14px 0 6px"
PRE = (
    "font-family:Menlo,Consolas,'Courier New',monospace;font-size:13px;margin:0 0 10px;"
    "white-space:pre-wrap;" + WRAP_ANYWHERE
)


def _last_move(game: GameView, marks: MoveMarks | None) -> dict[str, Any] | None:
    if marks is None or not game.moves:
        return None
    ply, seat, text = max(game.moves)
    who = game.players[seat - 1] if 0 < seat <= len(game.players) else f"player {seat}"
    return {
        "ply": ply,
        "userid": who,
        "text": text,
        "pushed": len(marks.pushed),
        "pushed_off": marks.pushed_off,
    }


def page_context(
    game: GameView,
    board: Board,
    *,
    recipient: str | None,
    marks: MoveMarks | None = None,
    all_moves: bool | None = None,
) -> dict[str, Any]:
    """The text mail's context plus what only the picture needs."""
    context = game_context(game, board, recipient=recipient, marks=None, all_moves=all_moves)
    key = ("page_context", id(game), id(board), id(marks), context["mover"])
    context.update(shared(key, lambda: _common_page_context(game, board, marks, context)))
    context["reply_text"] = render_template("_reply.txt", **context)
    return context


def _common_page_context(
    game: GameView, board: Board, marks: MoveMarks | None, context: Mapping[str, Any]
) -> dict[str, Any]:
    """What the picture adds, the same for every recipient."""
    symbols = marble_marks(board.players)
    names = [
        game.players[s - 1] if s <= len(game.players) else f"player {s}"
        for s in range(1, board.players + 1)
    ]
    legend = []
    for seat, name in enumerate(names, start=1):
        legend.append(
            {
                "seat": seat,
                "userid": name,
                "mark": symbols[seat - 1],
                "colour": board_html.seat_colour(seat),
                "colour_name": board_html.colour_name(seat),
                "pushed_off": board.ejected(seat),
                "left": board.marble_count(seat),
                "resigned": name in game.resigned or not board.is_active(seat),
                "to_move": context["mover"] == name,
            }
        )
    return dict(
        picture=Markup(board_html.board_table(board, marks=marks, names=names)),
        legend=legend,
        neutral_colour=board_html.NEUTRAL_COLOUR,
        has_neutral=board.variant is not None and board.marbles(0) != 0,
        last_move=_last_move(game, marks),
        ring_colour=board_html.RING_COLOUR,
        move_background=board_html.MOVE_BACKGROUND,
        P=P,
        H3=H3,
        PRE=PRE,
    )


def page(kind: str, subject: str, context: Mapping[str, Any]) -> str:
    """Render the page of ``kind`` (see :data:`KINDS`) as ASCII HTML."""
    return _finish(_render(kind, subject, context))


def _render(kind: str, subject: str, context: Mapping[str, Any]) -> str:
    return environment().get_template(KINDS[kind]).render(subject=subject, **context)


def _finish(html: str) -> str:
    """Each line without its trailing blanks, no blank line (str.rstrip leaves a line
    empty exactly when it held only blanks), ASCII."""
    html = "\n".join(filter(None, map(str.rstrip, html.split("\n"))))
    return html.encode("ascii", "xmlcharrefreplace").decode("ascii") + "\n"


#: Stands for the reply instructions while the rest of a board page is rendered once
#: for all its recipients (``game_page``).
_REPLY_SLOT = "ABALONEREPLYINSTRUCTIONSGOHERE"
_REPLY_SLOT_HTML = str(text_html(_REPLY_SLOT))


def game_page(
    kind: str,
    subject: str,
    game: GameView,
    board: Board,
    *,
    recipient: str | None,
    marks: MoveMarks | None = None,
    **extra: Any,
) -> str:
    """The HTML part of a board mail: ``kind`` one of :data:`KINDS`; ``extra`` goes to
    the template (``days``/``forfeit_in`` for a nag, ``message``/``syntax``/``quoted``
    for an error, ``title``/``footer`` for a preview)."""
    all_moves = True if kind == "game_over" else None
    context = page_context(game, board, recipient=recipient, marks=marks, all_moves=all_moves)
    if kind == "error":
        context["comment"] = None
    if extra:
        context.update(extra)
        return page(kind, subject, context)
    # The reply instructions are the only part of a page that depends on its recipient
    # (no template uses ``recipient`` or ``role``): the rest is rendered once for all
    # the recipients of a board (in a ``same_board`` block), the instructions put in.
    key = ("game_page", kind, subject, id(game), id(board), id(marks), context["mover"])
    skeleton = shared(key, lambda: _render(kind, subject, {**context, "reply_text": _REPLY_SLOT}))
    html = skeleton.replace(_REPLY_SLOT_HTML, str(text_html(context["reply_text"])))
    if _REPLY_SLOT in html:  # the slot was used some other way: render it whole
        return page(kind, subject, context)
    return _finish(html)


def digest_page(
    subject: str, intro: str, entries: Sequence[Mapping[str, Any]], footer: str
) -> str:
    """The daily digest: ``entries`` hold ``number``, ``status``, ``picture`` (Markup),
    ``legend``, ``reply_address`` and ``example`` of each board awaiting a move."""
    context = {"intro": intro, "entries": entries, "footer": footer, "P": P, "H3": H3,
               "PRE": PRE}
    return page("digest", subject, context)


__all__ = ["KINDS", "digest_page", "game_page", "page", "page_context", "text_html"]
