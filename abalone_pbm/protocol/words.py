"""The words of the mail protocol: the game word, userids, moves, Subject prefixes.

Shared by the command grammar, the reply reader and the password masking.
"""

from __future__ import annotations

import re

GAME_WORD = "abalone"
#: Game commands about a player's own settings, also read without the game word
#: ("limit fred pw 0" is "abalone limit fred pw 0"; the server has one game).
BARE_GAME_COMMANDS = frozenset({"limit", "notify", "seek", "accept", "reject"})
MAX_USERID_LENGTH = 20
MIN_PLAYERS, MAX_PLAYERS = 2, 6
#: Words ``abalone move`` accepts instead of a move (``resign`` becomes ``Resign``).
MOVE_ACTIONS = ("propose", "undo", "accept", "reject", "resign")
#: What a reply to a board mail may be instead of a move (DESIGN 2.2).
REPLY_ACTIONS = ("resign", "propose", "undo", "accept", "reject", "show")

#: Any number of leading ``Re:``/``Fwd:``/``AW:``/``Re[2]:`` ... of a Subject.
SUBJECT_PREFIX_RE = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|antw|vs|tr)\s*(?:\[\d+\]|\(\d+\))?\s*:\s*)+", re.IGNORECASE
)
#: What a mail program or system puts before a command, any number of them: reply and
#: forward prefixes in any language and script ("Odp:", "Vá:", "ΑΠ:", "Ynt:", "R:",
#: "回复：", "RE：", "Re[2]:", "TR :"), a gateway's tags ("[EXTERNAL]", "[Possible Spam]",
#: "[list-name]", "*SPAM*", "***SPAM***", "{Spam?}"), a label whose first letters junk
#: took ("wd:"). Letters only before each colon, so no command word or password is
#: taken for one; an ASCII colon needs a blank after it ("http://", "c3:c4" are no
#: heads), a full-width one (an East Asian input method's) does not. Each piece is
#: bounded and matched possessively, the whole in one pass: linear in the line.
#: The grammar reads a command behind it, the masking looks for passwords there, and
#: the reply reader passes over it in a reply's Subject.
SUBJECT_HEAD_RE = re.compile(
    r"(?:\[[^\[\]\n]{0,40}+\]\s*+"
    r"|\{[^{}\n]{0,40}+\}\s*+"
    r"|\*{1,10}+[^*\n]{1,40}+\*{1,10}+\s*+"
    r"|[^\W\d_]{1,12}+(?:\[\d{1,4}+\]|\(\d{1,4}+\))?+\s*+(?::\s++|：\s*+))++"
)
_USERID_RE = re.compile(r"[a-z][a-z0-9_.\-]*")
#: A move, compacted (no blanks) and lower case; rows a-z and 1-2 digits so that the
#: rules core can say "j1 is not a cell of the board" instead of "not a move".
_MOVE_RE = re.compile(r"[a-z]\d{1,2}(?:-[a-z]\d{1,2})?,[a-z]\d{1,2}")


def strip_subject_prefixes(subject: str) -> str:
    """The subject without any leading ``Re:``, ``Fwd:``, ``AW:`` ... and outer blanks."""
    return SUBJECT_PREFIX_RE.sub("", subject).strip()


def userid_problem(word: str) -> str | None:
    """Why ``word`` is not a valid userid, or None when it is one."""
    if len(word) > MAX_USERID_LENGTH:
        return f'"{word}" is not a valid userid: it is longer than {MAX_USERID_LENGTH} characters'
    if not word[:1].isascii() or not word[:1].isalpha():
        return f'"{word}" is not a valid userid: a userid must start with a letter'
    if not _USERID_RE.fullmatch(word.lower()):
        return (
            f'"{word}" is not a valid userid: a userid may only contain letters, digits, '
            '"_", "-" and "."'
        )
    return None


def is_valid_userid(word: str) -> bool:
    return userid_problem(word) is None


def looks_like_move(text: str) -> bool:
    """True when ``text`` (blanks allowed, optionally ``#n``) has the shape of a move."""
    compact = re.sub(r"\s+", "", text).lower()
    compact = re.sub(r"#\d+$", "", compact)
    return bool(_MOVE_RE.fullmatch(compact))


#: The largest number a command may carry: what every database's integer column holds
#: (PostgreSQL's ``integer``), so no number read from a mail can overflow a column.
MAX_NUMBER = 2**31 - 1


def whole_number(word: str, low: int = 1, high: int = MAX_NUMBER) -> int | None:
    """``word`` (ASCII digits) as a whole number within [low, high], or None.

    A number of thousands of digits is refused by its length, before any conversion.
    """
    if not word.isascii() or not word.isdigit() or len(word.lstrip("0")) > len(str(high)):
        return None
    value = int(word)
    return value if low <= value <= high else None


def board_number(word: str) -> int | None:
    """``word`` as a board number (a positive whole number that fits), or None."""
    return whole_number(word)


def is_compact_move(compact: str) -> bool:
    """True when ``compact`` (lower case, no blanks, no ``#n``) is written like a move."""
    return bool(_MOVE_RE.fullmatch(compact))
