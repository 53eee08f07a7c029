"""A received mail's MIME structure parsed in time linear in its size, never raising.

The standard library's parser follows multipart nesting by recursion (2,500 nested
multiparts raise RecursionError), builds a message object for every part (23,000 tiny
parts at the 256 KiB limit cost 165 ms) and reads a header's parameters in time
quadratic in their number (52,000 parameters in one Content-Type: 0.8 s, on every
``get_param``, ``get_boundary`` and ``get_content_charset``). A person's mail has a few
parts nested a few deep, so before the bytes are parsed:

* only the first :data:`MAX_CONTAINERS` multipart and message/* parts (in the order
  they stand in the bytes) stay containers; later ones are renamed to a type nobody
  reads, so the nesting the parser follows is at most that deep;
* the bytes are cut before the delimiter line of part :data:`MAX_PARTS` + 1;

and every header's parameters are read from its first :data:`MAX_PARAMETER_TEXT`
characters only. Each step is one scan of the bytes with a regular expression that
cannot backtrack. What is cut is what no person's mail holds; the headers, and the
text parts that come first, are always read.
"""

from __future__ import annotations

import email.message
import email.parser
import email.policy
import re
from itertools import islice
from typing import Any

from .quick_mime import parse_simple

__all__ = ["MAX_CONTAINERS", "MAX_PARTS", "MAX_PARAMETER_TEXT", "bounded_bytes", "parse_bounded"]

#: Multipart and message/* parts followed as containers (so also the deepest nesting).
MAX_CONTAINERS = 32
#: Parts read (delimiter lines of all multiparts together).
MAX_PARTS = 256
#: Characters of a header from which its parameters (boundary, charset …) are read.
MAX_PARAMETER_TEXT = 4096

# A Content-Type header naming a container type, folded or not; the type word is group 1.
_CONTAINER_TYPE = re.compile(
    rb"^content-type:[ \t]*+(?:\r?\n[ \t]++)*+(multipart|message)/",
    re.IGNORECASE | re.MULTILINE,
)
_NOT_A_CONTAINER = b"x-not-followed-"
# The same found by a literal prefix: on the bytes in lower case after a line feed (a
# pattern that begins with ^ or is read ignoring case is tried at every byte).
_CONTAINER_TYPE_FOUND = re.compile(
    rb"\ncontent-type:[ \t]*+(?:\r?\n[ \t]++)*+(?:multipart|message)/")
# RFC 2046: a boundary is 1 to 70 characters.
_BOUNDARY_PARAMETER = re.compile(
    rb"""boundary[ \t]*+=[ \t]*+(?:"([^"\r\n]{1,70}+)"|([^\s;"]{1,70}+))"""
)  # (read in the bytes in lower case; the boundary is taken from the bytes themselves)


def bounded_bytes(raw: bytes) -> bytes:
    """``raw`` with at most :data:`MAX_CONTAINERS` container parts and cut before the
    delimiter of part :data:`MAX_PARTS` + 1 (``raw`` itself when it is within both)."""
    # (Each match of a pattern after a line feed on b"\n" + raw starts where the match
    # of the same pattern with ^ on raw starts, and ends one byte later.)
    lowered = b"\n" + raw.lower()
    containers = list(islice(_CONTAINER_TYPE_FOUND.finditer(lowered), MAX_CONTAINERS + 1))
    if len(containers) > MAX_CONTAINERS:
        kept = containers[MAX_CONTAINERS - 1].end() - 1
        raw = raw[:kept] + _CONTAINER_TYPE.sub(_rename_container, raw[kept:])
        lowered = b"\n" + raw.lower()
    boundaries: list[bytes] = []
    for match in _BOUNDARY_PARAMETER.finditer(lowered):
        group = 1 if match.start(1) >= 0 else 2
        boundary = raw[match.start(group) - 1:match.end(group) - 1]
        if boundary not in boundaries:
            boundaries.append(boundary)
            if len(boundaries) == MAX_CONTAINERS:
                break
    if not boundaries:
        return raw
    if not any(a != b and b.startswith(a) for a in boundaries for b in boundaries):
        # Delimiters of boundaries none of which begins another never overlap (a
        # boundary holds no line end): counted at C speed, without compiling a pattern
        # for this mail's boundaries (a tenth of a millisecond).
        padded = b"\n" + raw
        if sum(padded.count(b"\n--" + boundary) for boundary in boundaries) <= MAX_PARTS:
            return raw
    delimiter = re.compile(rb"\n--(?:" + b"|".join(re.escape(b) for b in boundaries) + rb")")
    for count, match in enumerate(delimiter.finditer(b"\n" + raw), start=1):
        if count > MAX_PARTS:
            return raw[: match.start()]
    return raw


def _rename_container(match: re.Match[bytes]) -> bytes:
    whole = match.group()
    start = match.start(1) - match.start()
    return whole[:start] + _NOT_A_CONTAINER + whole[start:]


class BoundedMessage(email.message.EmailMessage):
    """An EmailMessage whose header parameters are read from a bounded prefix."""

    def _get_params_preserve(self, failobj: Any, header: str) -> Any:
        value = self.get(header)
        if value is None or len(str(value)) <= MAX_PARAMETER_TEXT:
            return super()._get_params_preserve(failobj, header)  # type: ignore[misc]
        probe = email.message.Message()  # the same reading, of the bounded text
        probe[header] = str(value)[:MAX_PARAMETER_TEXT]
        return probe._get_params_preserve(failobj, header)  # type: ignore[attr-defined]


def parse_bounded(raw: bytes, policy: email.policy.EmailPolicy) -> email.message.EmailMessage:
    """``raw`` parsed as :func:`bounded_bytes` leaves it, into :class:`BoundedMessage`
    parts, with ``policy``; linear in ``len(raw)``. Never raises for any bytes: should
    the parser still fail, the headers alone are parsed (the body kept as text)."""
    bounded_policy = policy.clone(message_factory=BoundedMessage)
    try:
        data = bounded_bytes(raw)
        message = _parsed_quickly(data, bounded_policy) or email.parser.BytesParser(
            policy=bounded_policy).parsebytes(data)
    except Exception:  # nothing known raises; a parser bug must not lose the mail
        message = email.parser.BytesParser(policy=bounded_policy).parsebytes(
            raw, headersonly=True
        )
    assert isinstance(message, email.message.EmailMessage)
    return message


def _parsed_quickly(data: bytes, policy: email.policy.Policy) -> email.message.EmailMessage | None:
    """A mail program's multipart of leaf parts (the usual reply) built without its
    bodies read a line at a time: the parser's very message (``quick_mime``); None for
    any other shape, or should it raise (nothing known does): the parser reads it."""
    try:
        return parse_simple(data, policy)
    except Exception:
        return None
