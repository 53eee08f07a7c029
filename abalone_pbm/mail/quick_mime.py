"""The mail programs' usual MIME shape parsed without reading its bodies a line at a time.

A reply from a mail program is a multipart (``alternative``: the text and the HTML
part; ``mixed``: the text and attachments) of leaf parts, its lines ending in CRLF.
The standard library's parser reads every line of every part through a Python
generator and compiles a pattern for each multipart's boundary: a 30 KB reply quoting
a board costs it half a millisecond of the worker's time. :func:`parse_simple` builds
the very message the parser would build from such bytes (and from a mail of one part):
each header block is read by the parser (headers only), the bodies are cut where the
delimiter lines stand (found at C speed) and handed over as the parser hands them (the
line end before a delimiter belongs to it, RFC 2046). Lines may end in CRLF or LF
alone, as in a mail program's thread whose parts end their lines in LF (the parser reads
both as line ends). Anything else (a CR alone next to a delimiter, nested multiparts or
messages, a part without an empty line, adjacent delimiters, no closing delimiter, a
defect in any header block) is left to the parser: None. A mail of one part needs no more than an empty line
after its headers: its body is its payload.
"""

from __future__ import annotations

import email.parser
import re
from email.message import EmailMessage, Message
from email.policy import Policy

#: Transfer encodings a multipart may have (others are a defect the parser records).
_MULTIPART_ENCODINGS = ("7bit", "8bit", "binary")
#: A line end of one character (LF, or CR alone) and the line after it empty.
_EMPTY_LINE_RE = re.compile("\n\n|\n\r|\r\r")
#: The most places the boundary stands that are looked at (a delimiter line or not).
_MOST_SEPARATORS = 64


def parse_simple(data: bytes, policy: Policy) -> EmailMessage | None:
    """``data`` (bytes as ``mime.bounded_bytes`` leaves them) parsed as
    ``email.parser.BytesParser(policy=policy).parsebytes(data)`` parses it, when it has
    the shape of the module text or is one part (not a message/*); None otherwise."""
    text = data.decode("ascii", "surrogateescape")  # (as BytesParser reads bytes)
    body_start = _body_start(text)
    if body_start is None:
        return None
    head, body = text[:body_start], text[body_start:]
    top = _headers(head, policy)
    if top is None or top.get_content_maintype() == "message":
        return None
    if top.get_content_maintype() != "multipart":
        top.set_payload(body)  # (a part of one text: its body as it stands)
        assert isinstance(top, EmailMessage)
        return top
    if top.get_content_subtype() == "digest":
        return None  # (a digest's parts are messages by default)
    boundary = top.get_boundary()
    encoding = str(top.get("content-transfer-encoding", "8bit")).lower()
    if boundary is None or encoding not in _MULTIPART_ENCODINGS:
        return None
    delimiters = _delimiter_lines(body, "--" + boundary)
    if not delimiters or delimiters[0][2] or not delimiters[-1][2]:
        return None  # no first delimiter, or no closing one
    parts: list[Message | str] = []
    for (_, after, _), (start, _, _) in zip(delimiters, delimiters[1:]):
        part = _leaf(body[after:start], policy)
        if part is None:
            return None
        parts.append(part)
    first, last = delimiters[0][0], delimiters[-1][1]
    if first > 0:
        top.preamble = _without_line_end(body[:first])  # (the delimiter's, RFC 2046)
    top.set_payload(parts)
    top.epilogue = body[last:]
    assert isinstance(top, EmailMessage)
    return top


def _body_start(text: str) -> int | None:
    """Where the body begins: after the first empty line (a line ends in CRLF, LF or a
    CR alone, as the parser reads lines); None without one, or before any header."""
    if text[:1] in ("\r", "\n"):
        return None
    # (One search that stops there: a pair absent from a CRLF mail is not looked for
    # through all of it.)
    found = _EMPTY_LINE_RE.search(text)
    if found is None:
        return None
    empty = found.start() + 1  # (the line end before it is one character: LF, or CR alone)
    return empty + (2 if text.startswith("\r\n", empty) else 1)


def _headers(block: str, policy: Policy) -> Message | None:
    """The message of a header block ending in its empty line, as the parser reads it;
    None when the parser finds a defect or anything but headers in it."""
    message = email.parser.Parser(policy=policy).parsestr(block, headersonly=True)
    if message.defects or message.get_payload():
        return None
    return message


def _without_line_end(text: str) -> str:
    """``text`` without the line end (CRLF or LF) it ends in, if any."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def _delimiter_lines(body: str, separator: str) -> list[tuple[int, int, bool]]:
    """(start, end after its line end, closing) of each delimiter line of ``body`` up to
    the first closing one, as the parser's pattern for them matches a line: the
    separator, "--" when closing, blanks, the line end or the end of the text. Lines
    are cut at LF (a CRLF ends in one); none when a CR alone may begin or end a line
    the parser would read as a delimiter (before the separator, or on its line): the
    parser reads a CR alone as a line end too. (A CR alone anywhere else is read by
    both alike: inside a body it is kept, in a header block the parser reads it.)"""
    found: list[tuple[int, int, bool]] = []
    at = body.find(separator)
    for _ in range(_MOST_SEPARATORS):
        if at < 0:
            return found
        if at > 0 and body[at - 1] == "\r":
            return []
        if at == 0 or body[at - 1] == "\n":
            line_end = body.find("\n", at)
            rest = _without_line_end(
                body[at + len(separator):line_end + 1 if line_end >= 0 else len(body)])
            if "\r" in rest:
                return []
            closing = rest.startswith("--")
            if not rest.removeprefix("--").strip(" \t"):
                end = line_end + 1 if line_end >= 0 else len(body)
                found.append((at, end, closing))
                if closing:
                    return found
        at = body.find(separator, at + 1)
    return []  # (the separator is written more often than a person's mail has parts)


def _leaf(segment: str, policy: Policy) -> Message | None:
    """The part between two delimiter lines, when it is a leaf with an empty line after
    its headers and a body (None otherwise): its body without the line end that
    belongs to the next delimiter."""
    if not segment:
        return None  # adjacent delimiters: the parser passes both
    if segment[0] in "\r\n":  # (no headers: the empty line first)
        body_start: int | None = 2 if segment.startswith("\r\n") else 1
    else:
        body_start = _body_start(segment)
    if body_start is None:
        return None  # no empty line: the parser reads on into the body
    part = _headers(segment[:body_start], policy)
    if part is None or part.get_content_maintype() in ("multipart", "message"):
        return None
    part.set_payload(_without_line_end(segment[body_start:]))
    return part
