"""The comment in the body of a command mail, and the command lines of a ``multiple``.

Only the writer's new text counts (see :mod:`.new_text`): quoted lines (``>``), the
attribution and header lines that introduce the old mail, a copy of the old mail, the
signature, and the lines mail programs add (client lines, banners) are never read.
"""

from __future__ import annotations

from .new_text import read_new_text

__all__ = ["extract_comment", "multiple_lines"]


def extract_comment(body: str) -> str:
    """The comment in the body of a command mail: its new text, without blank lines
    around it and with runs of blank lines made one.  Empty when there is none."""
    return read_new_text(body).text


def multiple_lines(body: str) -> list[str]:
    """The command lines of a ``multiple`` body: the non-blank lines of its new text,
    without blanks around them (past the new-text reader's bounds, the plain lines up
    to a signature: they are only counted)."""
    new = read_new_text(body)
    lines = [line.strip() for line in new.lines if line.strip()]
    # Lines past the reader's bounds are never run, only counted in the summary ("N
    # more lines were not processed"): the plain lines up to a signature.
    for line in new.unread.split("\n"):
        if line.rstrip() in ("--", "-- "):
            break
        stripped = line.strip()
        if stripped and not stripped.startswith(">"):
            lines.append(stripped)
    return lines
