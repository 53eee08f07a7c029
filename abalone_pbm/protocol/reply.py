"""Moving by reply (DESIGN 2.2): the reply address ``abalone+101.k3x9q7mf2a`` names the
board and the player, the first line of the reply is the move or a word."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .comments import comment_from, first_content, split_lines
from .words import GAME_WORD, is_compact_move, whole_number

#: What the first line of a reply to a board mail may be, besides a move.
REPLY_ACTIONS = ("resign", "propose", "undo", "accept", "reject", "show")


@dataclass(frozen=True)
class ReplyAction:
    """What a reply to a board mail asks for.

    ``action`` is ``"move"`` (then ``move_text`` is the move, lower case and without
    blanks, and ``expected_ply`` the ``#n`` if given) or one of :data:`REPLY_ACTIONS`.
    ``comment`` is the text after the first line, up to the quoted part or signature.
    """

    action: str
    move_text: str | None = None
    expected_ply: int | None = None
    comment: str = ""


def first_reply_line(body: str) -> str | None:
    """The line of a reply that :func:`parse_reply_body` reads (stripped), or None."""
    lines = split_lines(body)
    index = first_content(lines)
    return None if index is None else lines[index].strip()


def parse_reply_body(body: str) -> ReplyAction | None:
    """Read a reply to a board mail (DESIGN 2.2).

    The first non-blank line that is neither quoted (``>``) nor an "On ... wrote:" line
    before a quote must be a move (``c3-c5,d4``, blanks allowed, optionally ``#n``) or
    one of resign, propose, undo, accept, reject, show (any case, a trailing ``.`` or
    ``!`` allowed); otherwise None.  Nothing after the signature is read.
    """
    lines = split_lines(body)
    index = first_content(lines)
    if index is None:
        return None
    text = lines[index].strip()
    comment = comment_from(lines, index + 1)
    word = text.rstrip(".!").strip().lower()
    if word in REPLY_ACTIONS:
        return ReplyAction(word, None, None, comment)
    compact = re.sub(r"\s+", "", text).lower().rstrip(".")
    expected = None
    match = re.fullmatch(r"(.*)#(\d+)", compact)
    if match:
        compact, expected = match.group(1), whole_number(match.group(2), low=0)
        if expected is None:  # a move number no game reaches: not a move we understand
            return None
    if not is_compact_move(compact):
        return None
    return ReplyAction("move", compact, expected, comment)


_TOKEN_RE = re.compile(r"[a-z0-9]{4,64}")


def reply_local_part(base: str, board: int, token: str) -> str:
    """``abalone+101.k3x9q7mf2a``: the local part of a player's reply address."""
    return f"{base}+{board}.{token}"


def parse_reply_address(local_part: str, base: str = GAME_WORD) -> tuple[int, str] | None:
    """``(board, token)`` from a reply address's local part (``abalone+101.k3x9q7mf2a``).

    ``base`` is the server address's local part (``abalone``); a whole address
    (``...@host``) is accepted too.  Comparison is case-insensitive and the token comes
    back in lower case (some mail systems change the case of local parts), so tokens
    must be made of lower-case letters and digits (4 to 64 of them).  None if the
    address is not a reply address.
    """
    local = local_part.strip().strip("<>")
    if "@" in local:
        local = local.rsplit("@", 1)[0]
    local = local.lower()
    prefix = base.lower() + "+"
    if not local.startswith(prefix):
        return None
    number, dot, token = local[len(prefix) :].partition(".")
    board = whole_number(number)
    if not dot or board is None or not _TOKEN_RE.fullmatch(token):
        return None
    return board, token

