"""Hiding passwords: :func:`mask_passwords` / :func:`quote_original` replace every
password by ``********`` before a mail is quoted back or logged.

The password words are found by the command registry (each command's ``secret``
positions), also in lines that are misspelt or miss a word.
"""

from __future__ import annotations

import difflib
import re

from .registry import (
    COMMAND_WORDS,
    COMMANDS,
    GAME_COMMAND_WORDS,
    SERVER_FIRST_WORDS,
    CommandSpec,
    match_spec,
    matched_length,
)
from .words import (
    BARE_GAME_COMMANDS, GAME_WORD, MOVE_ACTIONS, SUBJECT_PREFIX_RE, looks_like_move,
)

PASSWORD_MASK = "********"
_SUBJECT_LABEL_RE = re.compile(r"subject\s*:\s*", re.IGNORECASE)
_BOARD_SECRET_COMMANDS = {
    name for name, spec in COMMANDS.items() if spec.syntax.split()[2:3] == ["<board>"]
}
_MOVE_COMMANDS = {"abalone move", "abalone queue", "abalone submit"}


def _recognise(words: list[str]) -> tuple[CommandSpec, int] | None:
    """The command a line of words begins with, also when slightly misspelt or when the
    game word is missing before a board command; (spec, number of command words)."""
    lowered = [w.lower() for w in words]
    if not lowered:
        return None
    spec = match_spec(lowered)
    if spec is not None:
        return spec, matched_length(spec, lowered)
    first = lowered[0]
    game_first = first == GAME_WORD or bool(
        len(first) >= 5 and difflib.get_close_matches(first, [GAME_WORD], n=1, cutoff=0.75)
    )
    if game_first and len(lowered) > 1:
        close = difflib.get_close_matches(lowered[1], sorted(GAME_COMMAND_WORDS), n=1, cutoff=0.75)
        if close:
            return COMMAND_WORDS[(GAME_WORD, close[0])], 2
        return None
    if first in GAME_COMMAND_WORDS:
        spec = COMMAND_WORDS[(GAME_WORD, first)]
        if first in BARE_GAME_COMMANDS:
            return spec, 1  # read without the game word ("limit fred pw 0")
        if spec.name in _BOARD_SECRET_COMMANDS and len(lowered) > 1 and lowered[1][:1].isdigit():
            return spec, 1
        return None
    if len(first) >= 5:
        names = sorted(w for w in SERVER_FIRST_WORDS if len(w) >= 5)
        close = difflib.get_close_matches(first, names, n=1, cutoff=0.8)
        if close:
            key = (close[0],)
            if key in COMMAND_WORDS:
                return COMMAND_WORDS[key], 1
    return None


def _secret_positions(spec: CommandSpec, args: list[str]) -> list[int]:
    """Positions (in ``args``) of the password words of one command line."""
    if not spec.secret:
        return []
    positions = list(spec.secret)
    if spec.name in ("abalone accept", "abalone reject") and args[:1] and args[0].isdigit():
        positions = [2]  # a vote written with its board: "accept 101 fred pw"
    if spec.name in ("abalone subscribe", "abalone unsubscribe"):
        positions = [2] if args[:1] and args[0][:1].isdigit() else [1]
    elif spec.name in _BOARD_SECRET_COMMANDS:
        if args and not args[0][:1].isdigit():
            positions = [1]  # the board number is missing: "move fred secret c3-c5,d4"
        pos = positions[0]
        if (
            spec.name in _MOVE_COMMANDS
            and pos < len(args)
            and pos > 0
            and (looks_like_move(" ".join(args[pos:])) or args[pos].lower() in MOVE_ACTIONS)
            and (pos - 1 > 0 or not args[0][:1].isdigit())
        ):
            positions = [pos - 1]  # a word is missing before the move: mask the one before
    return [p for p in positions if p < len(args)]


def _mask_line(line: str) -> str:
    # Where the command may begin: after quote marks, "Subject:" and Re:/Fwd: prefixes.
    start = 0
    while True:
        before = start
        while start < len(line) and (line[start] in " \t>"):
            start += 1
        label = _SUBJECT_LABEL_RE.match(line, start)
        if label:
            start = label.end()
        prefix = SUBJECT_PREFIX_RE.match(line[start:])
        if prefix and prefix.end():
            start += prefix.end()
        if start == before:
            break
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", line[start:])]
    spans = [(a + start, b + start) for a, b in spans]
    words = [line[a:b] for a, b in spans]
    found = _recognise(words)
    if found is None:
        return line
    spec, used = found
    positions = _secret_positions(spec, words[used:])
    out = line
    for pos in sorted(positions, reverse=True):
        a, b = spans[used + pos]
        out = out[:a] + PASSWORD_MASK + out[b:]
    return out


def mask_passwords(text: str) -> str:
    """``text`` (a Subject, a body, or both) with every password replaced by ``********``.

    Every line that begins with a recognisable command is masked at that command's
    password positions (both passwords of ``change password``, the code and the new
    password of ``password set``), whether or not the line is otherwise correct, and
    also behind quote marks, ``Subject:`` and ``Re:``.  So the lines of a ``multiple``
    body are masked as well.  Line ends are kept.
    """
    return "".join(_mask_line_keep_end(line) for line in text.splitlines(keepends=True))


def _mask_line_keep_end(line: str) -> str:
    body = line.rstrip("\r\n")
    return _mask_line(body) + line[len(body) :]


def quote_original(subject: str, body: str, *, max_lines: int = 200) -> str:
    """The original mail quoted with ``> `` and passwords masked, for an answer.

    The first line quotes the Subject (``> Subject: ...``), then the body follows after
    a quoted blank line.  Blank lines become a bare ``>``; bodies longer than
    ``max_lines`` lines are cut with a note.
    """
    lines = [f"Subject: {subject.strip()}"]
    body_lines = body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    if any(l.strip() for l in body_lines):
        lines.append("")
        cut = len(body_lines) - max_lines
        lines.extend(body_lines[:max_lines])
        if cut > 0:
            lines.append(f"[... {cut} more line{'s' if cut != 1 else ''} not quoted]")
    masked = [mask_passwords(line) for line in lines]
    return "\n".join(f"> {line}".rstrip() if line.strip() else ">" for line in masked)

