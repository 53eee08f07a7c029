"""Moving by reply (DESIGN 2.2, 2.8): the reply address ``abalone+101.k3x9q7mf2a`` names
the board and the player; the first command of the player's new text is the move.

What the new text is (and what the mail program added) is :mod:`.new_text`'s business.
Here the command is found in it, by these rules:

- A command line is a move (``c3-c5,d4``, blanks allowed, optionally ``#n``) or one of
  resign, propose, undo, accept, reject, show, alone on its line (any case; a trailing
  ``.`` or ``!`` and ``*``/``_`` emphasis around it allowed), read as typed: the
  full-width forms of an East Asian input method and the dashes a mail program puts
  for a hyphen ("a1 – c3, d4") are the ASCII the player typed.
- The move is the first command line of the new text.  Above it only greeting lines may
  stand ("Hi Fred,", "Hallo Wilma!", "Bonjour", "Dear Fred,", "你好，": a short line that
  begins with a greeting word, or a name of one to four words followed by a comma, or of
  one or two followed by a colon or a dash: "Wilma:", "Wilma -"); banners and
  client lines were never part of the new text.  Any other line above it ("Thanks for
  the game!", "c3-c5,d4 and good luck") means no move: the server answers with what it
  found instead of guessing, so a move the player merely mentioned is never played.
  A move quoted from the server's mail or from an earlier comment is never in the new
  text at all (see :mod:`.new_text`).
- The comment is the rest of the new text: the greeting lines above the move and the
  text under it, without the move line.
- A reply whose new text holds no command line and does not begin with something
  shaped like one may carry the move in its Subject (:func:`subject_action`): the Subject
  as a whole ("c3-c5,d4"), or what the player typed before or after the board mail's
  Subject ("c3-c5,d4 Re: Abalone Board 101 fred", "Re: Abalone Board 101 fred
  c3-c5,d4", "... fred - c3-c5,d4", "... fred (c3-c5,d4)"), whatever reply prefixes or
  tags a mail program or system put first ("Odp:", "回复：", "[EXTERNAL] Re:"), also
  when the move stands before them ("c3-c5,d4 Odp: Abalone Board 101 fred").  The
  Subject the server wrote ("Re: Abalone Board 101 fred **") stays a non-move, whatever
  the userid in it is called.  Then the new text is the comment.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from .new_text import NewText, read_new_text, tidy
from .reply_vocabulary import GREETING_WORDS
from .words import (GAME_WORD, REPLY_ACTIONS, SUBJECT_HEAD_RE, SUBJECT_PREFIX_RE,
                    is_compact_move, whole_number)

#: Words that begin a line written as a command (a line beginning with one of them that
#: is not a command is a mistyped one, never prose to pass over).
_COMMAND_WORDS = frozenset(REPLY_ACTIONS) | {GAME_WORD, "move", "mvoe", "board", "queue"}
_MOVE_START_RE = re.compile(r"[a-z]\d{1,2}\s*[-,]")
_GREETING_NAME_RE = re.compile(r"[^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*){0,3}[,，]"
                               r"|[^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*)? ?(?:[:：]|[-–—])")
#: Where a greeting's first word ends: blanks and punctuation, the full-width too.
_WORD_END_RE = re.compile(r"[^\w'’]+")


@dataclass(frozen=True)
class ReplyAction:
    """What a reply to a board mail asks for.

    ``action`` is ``"move"`` (then ``move_text`` is the move, lower case and without
    blanks, and ``expected_ply`` the ``#n`` if given) or one of :data:`REPLY_ACTIONS`.
    ``comment`` is the new text without the command line (see the module text).
    """

    action: str
    move_text: str | None = None
    expected_ply: int | None = None
    comment: str = ""


@dataclass(frozen=True)
class ReplyReading:
    """A reply's new text and the command found in it.

    ``action`` is None when there is no command; then ``found`` is the first line of the
    new text (None when there is no new text), and ``attempted`` says whether that line
    is shaped like a command (a mistyped one: the Subject is not consulted then).
    """

    new_text: NewText
    action: ReplyAction | None
    found: str | None
    attempted: bool

    @property
    def comment(self) -> str:
        """The comment when no command is found: the whole new text."""
        return self.new_text.text


#: Dashes and minus signs a mail program or an input method puts for a typed hyphen
#: (Outlook's AutoFormat makes "a1 - c3" "a1 – c3").
_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63",
                                      "-"))


def as_typed(text: str) -> str:
    """``text`` as the player typed it on the keyboard: full-width letters, digits and
    punctuation of an East Asian input method as ASCII (NFKC), dashes as hyphens."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_DASHES)


def command_of_line(text: str) -> ReplyAction | None:
    """``text`` (one line) as a reply command, or None; read :func:`as_typed`."""
    bare = as_typed(text).strip().strip("*_").strip()
    word = bare.rstrip(".!").strip().lower()
    if word in REPLY_ACTIONS:
        return ReplyAction(word)
    compact = re.sub(r"\s+", "", bare).lower().rstrip(".!")
    expected = None
    numbered = re.fullmatch(r"(.*)#(\d+)", compact)
    if numbered:
        compact, expected = numbered.group(1), whole_number(numbered.group(2), low=0)
        if expected is None:  # a move number no game reaches: not a move we understand
            return None
    if not is_compact_move(compact):
        return None
    return ReplyAction("move", compact, expected)


def looks_like_command(text: str) -> bool:
    """Is this line written as a command (a right or a mistyped one)?"""
    lower = as_typed(text).strip().strip("*_").lower()
    first = lower.split(maxsplit=1)[0].rstrip(".!:,") if lower.split() else ""
    return first in _COMMAND_WORDS or _MOVE_START_RE.match(lower) is not None


def is_greeting(text: str) -> bool:
    """A greeting line above the move: "Hi Fred,", "Hallo!", "Dear Fred,", "Fred,"."""
    line = text.strip()
    if not line or len(line) > 60 or len(line.split()) > 8 or looks_like_command(line):
        return False
    first = _WORD_END_RE.split(line.lower(), maxsplit=1)[0]
    if first in GREETING_WORDS:
        return True
    return _GREETING_NAME_RE.fullmatch(line) is not None


def read_reply(body: str) -> ReplyReading:
    """The reply's new text and its command (see the module text)."""
    new_text = read_new_text(body)
    lines = new_text.lines
    first_line: str | None = None
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if first_line is None:
            first_line = line.strip()
        action = command_of_line(line)
        if action is not None:
            comment = "\n".join(tidy(lines[:index] + lines[index + 1:]))
            return ReplyReading(new_text, replace(action, comment=comment), None, False)
        if is_greeting(line):
            continue
        return ReplyReading(new_text, None, line.strip(), looks_like_command(line))
    return ReplyReading(new_text, None, first_line, False)


def parse_reply_body(body: str) -> ReplyAction | None:
    """The command of a reply to a board mail, with its comment, or None."""
    return read_reply(body).action


def first_reply_line(body: str) -> str | None:
    """The first line of a reply's new text (stripped), or None when it has none."""
    return next((line.strip() for line in read_new_text(body).lines if line.strip()), None)


#: The marks a player types between the board mail's Subject and the move ("... fred -
#: c3-c5,d4", "... fred: c3-c5,d4", "(c3-c5,d4)"), and the server's "**".
_SUBJECT_MARKS = " -–—:：|()[]*"
_BOARD_SUBJECT_RE = re.compile(r"(?:new\s+)?abalone\s+board\s+(\d{1,12})\b", re.IGNORECASE)


def subject_action(subject: str, board: int, userids: Iterable[str]) -> ReplyAction | None:
    """The command a player typed in the Subject of a reply (see the module text).

    ``subject`` is the Subject without its leading ``Re:``/``AW:``...; ``userids`` the
    game's players (the board mail's Subject names one of them, and that word is never
    read as the command).  A Subject naming another board carries no command.
    """
    text = subject.strip()
    if len(text) > 300:
        return None
    whole = command_of_line(text)
    if whole is None:
        # Behind what a mail program or system put first ("[EXTERNAL] c3-c5,d4").
        head_end = _head_end(text)
        whole = command_of_line(text[head_end:]) if head_end else None
    if whole is not None:
        return whole
    found = _BOARD_SUBJECT_RE.search(text)
    if found is None or whole_number(found.group(1)) != board:
        return None
    head = SUBJECT_PREFIX_RE.sub("", text[: found.start()]).strip()
    # The prefixes and tags a mail program or system put on the board mail's Subject
    # ("Odp:", "[EXTERNAL] Re:"), also after a move typed before them ("c3-c5,d4 Odp:
    # Abalone Board 101").
    head = head[:_heads_start(head)].strip().strip(_SUBJECT_MARKS).strip()
    names = {userid.lower() for userid in userids}
    tail_words = text[found.end():].split()
    while tail_words and (tail_words[0].strip(_SUBJECT_MARKS).lower() in names
                          or not tail_words[0].strip(_SUBJECT_MARKS)):
        tail_words.pop(0)  # the userid, "**", and the marks around them
    tail = " ".join(tail_words).strip(_SUBJECT_MARKS).strip()
    if head and tail:
        return None
    return command_of_line(head or tail) if (head or tail) else None


def _heads_start(text: str) -> int:
    """Where a run of heads (``words.SUBJECT_HEAD_RE``) that ends ``text`` starts, at a
    word's start (``len(text)``: none).  At most a try per word of a Subject already
    bounded in length, each linear."""
    for found in re.finditer(r"(?<!\S)\S", text):
        start = found.start()
        if _head_end(text[start:]) == len(text) - start:
            return start
    return len(text)


def _head_end(text: str) -> int:
    """Where the head of reply prefixes in any language and tags that a mail program or
    system put first ("Odp:", "回复：", "[EXTERNAL] Re:") ends in ``text`` (0: none);
    the grammar's definition (``words.SUBJECT_HEAD_RE``), letters only before each colon,
    so a move is never taken for one. A head that ends the text needs no blank after it."""
    found = SUBJECT_HEAD_RE.match(text + " ")
    return 0 if found is None else min(found.end(), len(text))


def choose_reply_text(plain: str | None, html: str | Callable[[], str] | None) -> str:
    """Which reading of a mail's body to use: the text part, unless its new text has no
    command (or is empty) while the HTML part's new text has one (or has text): some
    clients leave the new text out of the text part. ``html`` may be given as how to
    get it: then it is turned into text only when the text part's reading needs it
    (a 200 KB quoted thread's markup costs milliseconds)."""
    if plain is None:
        return (html() if callable(html) else html) or ""
    if html is None:
        return plain
    from_plain = read_reply(plain)
    if from_plain.action is not None:
        return plain
    html_text = html() if callable(html) else html
    from_html = read_reply(html_text)
    if from_html.action is not None:
        return html_text
    if not from_plain.new_text.lines and from_html.new_text.lines:
        return html_text
    return plain


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
