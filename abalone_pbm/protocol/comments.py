"""The comment in the body of a command mail, and the command lines of a ``multiple``.

Only the writer's own text counts: quoted lines (``>``), "On ... wrote:" lines, the
signature and copies of the old mail are never read.  The reply reader uses the same
line rules (:func:`split_lines`, :func:`first_content`, :func:`comment_from`).
"""

from __future__ import annotations

import re
from typing import Sequence

_SIGNATURE_RE = re.compile(r"^(?:-- ?|--)$")
_ORIGINAL_RE = re.compile(
    r"^\s*(?:-{2,}\s*(?:original message|ursprüngliche nachricht|forwarded message)\s*-{2,}"
    r"|_{10,})\s*$",
    re.IGNORECASE,
)
_ATTRIBUTION_START_RE = re.compile(
    r"^\s*(?:on|am|le|el|op|il|em|den|dne|w dniu)\s", re.IGNORECASE
)
_ATTRIBUTION_END_RE = re.compile(
    r"(?:wrote|writes|schrieb|a écrit|escribió|schreef|ha scritto|escreveu|skrev|napisał)"
    r"\s*:\s*$",
    re.IGNORECASE,
)


_HEADER_START_RE = re.compile(r"^\s*\*?(?:from|von|de|van|från)\s*:\*?\s", re.IGNORECASE)
_HEADER_NEXT_RE = re.compile(
    r"^\s*\*?(?:sent|date|to|subject|gesendet|datum|an|betreff|envoyé|à|objet|cc)\s*:",
    re.IGNORECASE,
)
#: Lines phones and webmailers add under a text; dropped from the end of a comment.
_GADGET_RE = re.compile(
    r"^\s*(?:sent from my .*|sent from .* for (?:ios|android)|get outlook for .*"
    r"|von meinem .* gesendet\.?|envoyé de mon .*)\s*$",
    re.IGNORECASE,
)


def _is_header_block(lines: Sequence[str], index: int) -> bool:
    """An Outlook-style copy of the old mail: "From: ..." then "Sent:"/"To:"/"Subject:"."""
    if not _HEADER_START_RE.match(lines[index]):
        return False
    return any(_HEADER_NEXT_RE.match(line) for line in lines[index + 1 : index + 5])


def _is_quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _is_end(line: str) -> bool:
    """The signature separator or an "Original Message" line: nothing after it counts."""
    return bool(_SIGNATURE_RE.match(line.rstrip("\r\n")) or _ORIGINAL_RE.match(line))


def _next_content(lines: Sequence[str], index: int) -> int | None:
    for j in range(index, len(lines)):
        if lines[j].strip():
            return j
    return None


def _attribution_length(lines: Sequence[str], index: int) -> int:
    """How many lines from ``index`` form an "On ... wrote:" line before a quote (0 if none).

    One line ending with ":" that quoted lines follow (or that ends with "wrote:" and
    only the end of the mail follows), or two such lines that a mail reader wrapped:
    "On Mon, ... Fred <" / "fred@example.org> wrote:".
    """
    for length in (1, 2):
        chunk = lines[index : index + length]
        if len(chunk) < length or any(not line.strip() for line in chunk):
            return 0
        last = chunk[-1].rstrip()
        if not last.endswith(":"):
            continue
        if length == 2 and not _ATTRIBUTION_START_RE.match(chunk[0]):
            continue
        after = _next_content(lines, index + length)
        if after is not None and _is_quoted(lines[after]):
            return length
        if _ATTRIBUTION_END_RE.search(last) and (after is None or _is_end(lines[after])):
            return length
    return 0


def split_lines(body: str) -> list[str]:
    """The lines of a body, whatever its line ends."""
    return body.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def first_content(lines: Sequence[str]) -> int | None:
    """Index of the first line that is not blank, quoted or an attribution, before the
    signature; None if there is none."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_end(line):
            return None
        if not line.strip() or _is_quoted(line):
            i += 1
            continue
        skip = _attribution_length(lines, i)
        if skip:
            i += skip
            continue
        return i
    return None


def comment_from(lines: Sequence[str], start: int) -> str:
    """Lines from ``start`` up to the next quoted part, the signature or the old mail."""
    out: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if _is_end(line) or _is_quoted(line) or _is_header_block(lines, i):
            break
        if _attribution_length(lines, i):
            break
        out.append(line.rstrip())
        i += 1
    while out and (not out[-1].strip() or _GADGET_RE.match(out[-1])):
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return "\n".join(out)


def extract_comment(body: str) -> str:
    """The comment in the body of a command mail.

    The first block of text that is not quoted (``>``), up to the next quoted part, an
    "On ... wrote:" line, the signature (``-- ``), an "Original Message" line or an
    Outlook-style "From:/Sent:/To:" copy of the old mail; blank lines around it and a
    final "Sent from my phone" line removed.  Empty when there is none.
    """
    lines = split_lines(body)
    start = first_content(lines)
    return "" if start is None else comment_from(lines, start)


def multiple_lines(body: str) -> list[str]:
    """The command lines of a ``multiple`` body: non-blank, not quoted, not an
    "On ... wrote:" line, before the signature; blanks around them removed."""
    lines = split_lines(body)
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_end(line) or _is_header_block(lines, i):
            break
        skip = _attribution_length(lines, i) if line.strip() else 0
        if skip:
            i += skip
            continue
        if line.strip() and not _is_quoted(line):
            out.append(line.strip())
        i += 1
    return out

