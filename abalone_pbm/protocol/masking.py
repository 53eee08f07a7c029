"""Hiding passwords: :func:`mask_passwords` / :func:`quote_original` replace every
password by ``********`` before a mail is quoted back, logged or shown.

Masking is exact in both directions (DESIGN §2.6): a word is masked when it stands
where a password stands in a command line, and only then.

- A command line is one whose first words are a command's words, exactly or with one
  slip of the keyboard in a word of four letters or more (``change pasword``,
  ``chnage password``, ``pasword set``, ``change adress``, ``singup``), or a board
  command without the game word (``move 101 fred secret c3-c5,d4``).
- The words before the password must be what the command has there (a board number,
  a userid); the words after it must not contradict the command (``on|off``, an
  address, at most a few more words): so "move 1.  Instead of a move ..." or
  "signup for the tournament now" are ordinary sentences and stay as they are.
- A command cut over several lines (``abalone move`` alone on a line, the rest on the
  next) is masked across the lines.
- Placeholders (``<password>``) and the server's own Subjects (``Abalone Board 101
  fred **``) are never masked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .registry import COMMAND_WORDS, COMMANDS, GAME_COMMAND_WORDS, CommandSpec
from .words import (
    BARE_GAME_COMMANDS, GAME_WORD, MOVE_ACTIONS, SUBJECT_PREFIX_RE, is_valid_userid,
    looks_like_move,
)

PASSWORD_MASK = "********"
_SUBJECT_LABEL_RE = re.compile(r"subject\s*:\s*", re.IGNORECASE)
_BOARD_SECRET_COMMANDS = {
    name for name, spec in COMMANDS.items() if spec.syntax.split()[2:3] == ["<board>"]
}
_MOVE_COMMANDS = {"abalone move", "abalone queue", "abalone submit"}
#: A board number as a player may write it, also a wrong one ("board#99999", "-1",
#: "101#x"): the password stands after it whether or not the number is valid.
_BOARD_RE = re.compile(r"(?:board)?#?[-+]?\d\S*", re.IGNORECASE)
#: Characters only an address has: where a command expects an address after the
#: password, a rest without any of them is an ordinary sentence.
_ADDRESS_MARKS = frozenset("@<>;:\"")
#: The Subjects of the server's own board mails, quoted back in replies.
_OWN_SUBJECT_RE = re.compile(
    r"(?:new )?abalone board \d+(?: [a-z][a-z0-9_.\-]*)?(?: \*\*)?|abalone board \d+ error",
    re.IGNORECASE,
)
#: How many following lines may continue a command cut by the mail client.
_CONTINUATION_LINES = 2
#: Words after the last password a command line may have beyond its syntax (a slip).
_SLACK = 2


# ------------------------------------------------------------------- recognising
def _slips(word: str, target: str) -> int:
    """Edits (insert, delete, change, swap of neighbours) from ``word`` to ``target``."""
    if word == target:
        return 0
    previous2: list[int] = []
    previous = list(range(len(target) + 1))
    for i, a in enumerate(word, 1):
        current = [i]
        for j, b in enumerate(target, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b))
            if i > 1 and j > 1 and a == target[j - 2] and word[i - 2] == b:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


def _close(word: str, target: str) -> bool:
    """The same command word, or one slip away from a word of four letters or more: a
    letter left out, mistyped or swapped with its neighbour (a longer word is another
    word: "messages", "deleted")."""
    if word == target:
        return True
    return len(target) >= 4 and len(target) - 1 <= len(word) <= len(target) and (
        _slips(word, target) <= 1)


def _recognise(lowered: Sequence[str]) -> tuple[CommandSpec, int] | None:
    """The command the words begin with, exactly or slightly misspelt, and how many
    words it took; also a board command written without the game word."""
    best: tuple[int, int, CommandSpec] | None = None  # (-exact, -length) ordering
    for key, spec in COMMAND_WORDS.items():
        if len(lowered) < len(key) or not all(_close(w, k) for w, k in zip(lowered, key)):
            continue
        exact = tuple(lowered[: len(key)]) == key
        rank = (0 if exact else 1, -len(key))
        if best is None or rank < best[:2]:
            best = (*rank, spec)
    if best is not None:
        return best[2], -best[1]
    if len(lowered) > 1:
        for word in GAME_COMMAND_WORDS:
            if not _close(lowered[0], word):
                continue
            spec = COMMAND_WORDS[(GAME_WORD, word)]
            if word in BARE_GAME_COMMANDS and (is_valid_userid(lowered[1]) or lowered[1].isdigit()):
                return spec, 1  # read without the game word ("limit fred pw 0")
            if spec.name in _BOARD_SECRET_COMMANDS and _without_game_word(spec, lowered[1:]):
                return spec, 1
    return None


def _without_game_word(spec: CommandSpec, args: Sequence[str]) -> bool:
    """Whether words after a board command's word left without "abalone" have its
    shape: a move where it takes one ("move 101 fred secret c3-c5,d4", also without
    the board), else exactly board, userid and password ("resign 101 fred secret")."""
    if spec.name in _MOVE_COMMANDS:
        return any(_is_move_word(w) or w in MOVE_ACTIONS or looks_like_move(" ".join(args[i:]))
                   for i, w in enumerate(args[1:], 1))
    return len(args) == 3 and bool(_BOARD_RE.fullmatch(args[0])) and is_valid_userid(args[1])


def _syntax_after(spec: CommandSpec) -> list[str]:
    """The syntax tokens after the command words (``<userid>``, ``on|off`` ...)."""
    return spec.syntax.split()[len(spec.words):]


def _secret_positions(spec: CommandSpec, args: Sequence[str]) -> list[int]:
    """Where the passwords stand among ``args``, also when a word is missing."""
    positions = list(spec.secret)
    if spec.name in ("abalone accept", "abalone reject") and args[:1] and args[0].isdigit():
        positions = [2]  # a vote written with its board: "accept 101 fred pw"
    if spec.name in ("abalone subscribe", "abalone unsubscribe"):
        positions = [2] if args[:1] and _BOARD_RE.fullmatch(args[0]) else [1]
    elif spec.name in _BOARD_SECRET_COMMANDS:
        if args and not _BOARD_RE.fullmatch(args[0]):
            positions = [1]  # the board number is missing: "move fred secret c3-c5,d4"
        pos = positions[0]
        if (
            spec.name in _MOVE_COMMANDS
            and 0 < pos < len(args)
            and (_is_move_word(args[pos]) or looks_like_move(" ".join(args[pos:]))
                 or args[pos].lower() in MOVE_ACTIONS)
            and (pos - 1 > 0 or not _BOARD_RE.fullmatch(args[0]))
        ):
            positions = [pos - 1]  # a word is missing before the move: mask the one before
    return positions


def _is_move_word(word: str) -> bool:
    """A word written like a move, also a wrong one (c3c5, c3-c5d4, c3-c5,d4#7)."""
    return bool(re.fullmatch(r"[a-i]\d[-,]?(?:[a-i]\d)?[-,]?(?:[a-i]\d)?(?:#\d*)?", word.lower()))


def _is_placeholder(word: str) -> bool:
    return word.startswith("<") and word.endswith(">")


def _fits(spec: CommandSpec, args: Sequence[str], positions: Sequence[int]) -> bool:
    """Whether the words around the passwords are what the command has there."""
    first = min(positions)
    for word in args[:first]:
        if _is_placeholder(word) or not (_BOARD_RE.fullmatch(word) or is_valid_userid(word)):
            return False
    tokens = _syntax_after(spec)
    secret_tokens = max(spec.secret) + 1
    expected = [t for t in tokens[secret_tokens:]]
    rest = list(args[max(positions) + 1:])
    if not expected or not rest:
        return len(rest) <= _SLACK
    token = expected[0].strip("[]")
    word = rest[0].lower()
    if token == "<move>" and looks_like_move(" ".join(rest)):
        return True  # a move written with blanks: "c3 - c5 , d4"
    if "|" in token:  # on|off, <N>|accept|reject: one of these (or a slip) ...
        choices = token.split("|")
        fitting = any(
            word.isdigit() if choice.startswith("<") else _slips(word, choice) <= 1
            for choice in choices
        )
        if not fitting and len(rest) > 1:
            return False  # ... or a wrong word alone where it stands ("format fred pw big")
    elif "<address>" in token and not any(_ADDRESS_MARKS & set(w) for w in rest):
        return False
    open_ended = any(t.endswith("...") or t.endswith("...]") for t in expected)
    return open_ended or len(rest) <= len(expected) + _SLACK


# --------------------------------------------------------------------- masking
def _command_start(line: str) -> int:
    """Where a command may begin: after quote marks, "Subject:" and Re:/Fwd: prefixes."""
    start = 0
    while True:
        before = start
        while start < len(line) and line[start] in " \t>":
            start += 1
        label = _SUBJECT_LABEL_RE.match(line, start)
        if label:
            start = label.end()
        prefix = SUBJECT_PREFIX_RE.match(line[start:])
        if prefix and prefix.end():
            start += prefix.end()
        if start == before:
            return start


def _spans(line: str, start: int) -> list[tuple[int, int]]:
    return [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", line[start:])]


def _mask_lines(lines: list[str]) -> list[str]:
    out = list(lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        start = _command_start(line)
        spans = [(index, a, b) for a, b in _spans(line, start)]
        words = [line[a:b] for _, a, b in spans]
        lowered = [w.lower() for w in words]
        found = None if _OWN_SUBJECT_RE.fullmatch(" ".join(lowered)) else _recognise(lowered)
        if found is None:
            index += 1
            continue
        spec, used = found
        if not spec.secret:
            index += 1
            continue
        # A command cut by the mail client goes on in the next lines.
        following = index + 1
        while (len(spans) - used <= max(spec.secret) and following < len(lines)
               and following <= index + _CONTINUATION_LINES and lines[following].strip()):
            more = lines[following]
            spans += [(following, a, b) for a, b in _spans(more, _command_start(more))]
            following += 1
        args = [lines[i][a:b] for i, a, b in spans[used:]]
        positions = [p for p in _secret_positions(spec, args)
                     if p < len(args) and not _is_placeholder(args[p])]
        if positions and _fits(spec, args, positions):
            for pos in sorted(positions, reverse=True):
                row, a, b = spans[used + pos]
                out[row] = out[row][:a] + PASSWORD_MASK + out[row][b:]
            # Masked positions shift the later words of a row: mask right to left,
            # which the reverse order above does within each row.
        index += 1
    return out


def mask_passwords(text: str) -> str:
    """``text`` (a Subject, a body, or both) with every password replaced by ``********``.

    Every line that begins with a recognisable command (also misspelt, behind quote
    marks, ``Subject:`` and ``Re:``) is masked at that command's password positions
    (both passwords of ``change password``, the code and the new password of
    ``password set``); see the module text for what is and is not a command line.
    Line ends are kept.
    """
    pieces = text.splitlines(keepends=True)
    bodies = [p.rstrip("\r\n") for p in pieces]
    masked = _mask_lines(bodies)
    return "".join(m + p[len(b):] for m, p, b in zip(masked, pieces, bodies))


def quote_original(subject: str, body: str, *, max_lines: int = 200) -> str:
    """The original mail quoted with ``> `` and passwords masked, for an answer.

    The first line quotes the Subject (``> Subject: ...``), then the body follows after
    a quoted blank line.  Blank lines become a bare ``>``; bodies longer than
    ``max_lines`` lines are cut with a note.
    """
    subject_line = f"Subject: {subject.strip()}"
    body_lines = body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    if not any(l.strip() for l in body_lines):
        body_lines = []
    cut = len(body_lines) - max_lines
    body_lines = body_lines[:max_lines]
    # Subject and body masked as one text: a command begun in the Subject may go on
    # in the first line of the body.
    masked = _mask_lines([subject_line, *body_lines])
    lines = masked[:1]
    if body_lines:
        lines += ["", *masked[1:]]
        if cut > 0:
            lines.append(f"[... {cut} more line{'s' if cut != 1 else ''} not quoted]")
    return "\n".join(f"> {line}".rstrip() if line.strip() else ">" for line in lines)
