"""Plain-text helpers shared by every mail: wrapping, lists in words, tidy bodies, and
``shown_text`` for the words one user writes for others."""

from __future__ import annotations

import re
import textwrap
from functools import lru_cache
from typing import Sequence

from ..mail.validation import without_bidi_controls

#: The widest line of a table (the move table); prose is wrapped to 72 columns.
WIDTH = 72
#: The row of asterisks above and below a player's words.
RULE = "*" * 72


def tidy(text: str) -> str:
    """A mail body: no trailing blanks, never two blank lines in a row, no blank lines
    at the start or the end, one final newline."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


@lru_cache(maxsize=512)
def wrap_text(text: str, width: int = 72, indent: str = "") -> str:
    """Fill each paragraph (blocks separated by blank lines) to ``width``; blocks with an
    indented line (examples, tables) are kept as they are.  (Kept for the texts every
    board mail repeats, and each paragraph too: a text that names the move's number
    differs from move to move, most of its paragraphs do not; filling them again cost
    more than the rest of a mail.)"""
    blocks = re.split(r"\n[ \t]*\n", text.strip("\n"))
    return "\n\n".join(
        (_kept_block if len(block) <= _KEPT_BLOCK_LENGTH else _wrap_block)(block, width, indent)
        for block in blocks)


#: Paragraphs up to this length are kept filled (``wrap_text``).
_KEPT_BLOCK_LENGTH = 1000


def _wrap_block(block: str, width: int, indent: str) -> str:
    lines = block.split("\n")
    if any(line[:1] in (" ", "\t") for line in lines):
        return "\n".join(indent + line if line else line for line in lines)
    return textwrap.fill(
        " ".join(line.strip() for line in lines),
        width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


_kept_block = lru_cache(maxsize=2048)(_wrap_block)


def hang(text: str, first: str = "", rest: str = "      ", width: int = 72) -> str:
    """One entry of a list, filled to ``width``: ``first`` before its first line,
    ``rest`` before the others (a usage line, a robot's description)."""
    return textwrap.fill(
        text.strip(), width, initial_indent=first, subsequent_indent=rest,
        break_long_words=False, break_on_hyphens=False,
    )


def plural(count: int, word: str, plural: str | None = None) -> str:
    """``1 day``, ``3 days``; ``plural`` when adding an s is wrong."""
    return f"{count} {word if count == 1 else plural or word + 's'}"


def and_list(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def shown_text(text: str, width: int = WIDTH) -> str:
    """Text one user wrote for others (a comment, a chat, a message, a broadcast), fit to
    be shown in a mail: without bidirectional controls (``mail.validation``), so it
    reads in the order it is written and cannot reorder what the server writes around
    it, and with every line longer than ``width`` broken, so the text part keeps the
    width of the rest of the mail whatever one word's length.  Lines within ``width``
    stay exactly as written (a diagram, a list).  Linear in the text's length."""
    text = without_bidi_controls(text).replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if all(len(line) <= width for line in lines):
        return text
    out: list[str] = []
    for line in lines:
        out.extend([line] if len(line) <= width else _broken(line.expandtabs(), width))
    return "\n".join(out)


def _broken(line: str, width: int) -> list[str]:
    """One long line filled to ``width`` at its blanks (its indent kept on each line
    while the indent leaves room), a word longer than a line cut into pieces."""
    indent = line[: len(line) - len(line.lstrip(" "))]
    if len(indent) > width // 2:
        indent = ""
    room = width - len(indent)
    out: list[str] = []
    current: list[str] = []
    used = 0
    for word in line.split():
        pieces = [word[i:i + room] for i in range(0, len(word), room)]
        for piece in pieces:
            if current and used + 1 + len(piece) > room:
                out.append(indent + " ".join(current))
                current, used = [], 0
            current.append(piece)
            used += len(piece) + (1 if used else 0)
    if current:
        out.append(indent + " ".join(current))
    return out
