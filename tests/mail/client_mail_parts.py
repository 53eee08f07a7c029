"""Raw mails put together byte by byte as mail programs write them: a part's text in its
charset and transfer encoding (7bit, 8bit, quoted-printable, base64), multiparts, and a
whole mail with CRLF line ends.  Written by hand, not with ``email.message``, so that
each case carries exactly the encodings and the header spellings of the client it copies.
"""

from __future__ import annotations

import base64
import quopri
from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    """A MIME part: its header lines (without line ends) and its body bytes (CRLF)."""

    headers: tuple[str, ...]
    body: bytes


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def text_part(subtype: str, text: str, charset: str = "utf-8",
              transfer: str = "quoted-printable", params: str = "",
              label: str | None = None) -> Part:
    """``text`` encoded in ``charset`` and then in the transfer encoding ``transfer``,
    its charset named ``label`` (a mail program's name for it) or ``charset``."""
    data = _crlf(text.encode(charset))
    if transfer == "quoted-printable":
        # quopri encodes a line end's CR; encode LF lines, then end them with CRLF.
        body = _crlf(quopri.encodestring(data.replace(b"\r\n", b"\n")))
    elif transfer == "base64":
        body = _crlf(base64.encodebytes(data))
    elif transfer in ("7bit", "8bit"):
        body = data
    else:
        raise ValueError(f"no such transfer encoding in these tests: {transfer}")
    content_type = f"Content-Type: text/{subtype}; charset=\"{label or charset}\"{params}"
    return Part((content_type, f"Content-Transfer-Encoding: {transfer}"), body)


def bare_part(content_type: str, text: str) -> Part:
    """A part with no Content-Transfer-Encoding header (7bit by default, as Gmail for
    Android writes its text part), its line ends made CRLF."""
    return Part((f"Content-Type: {content_type}",), _crlf(text.encode("utf-8")))


def multipart(subtype: str, boundary: str, *parts: Part) -> Part:
    """A multipart of ``parts`` (``alternative``: the text part first, as clients do)."""
    chunks: list[bytes] = []
    for part in parts:
        chunks.append(f"--{boundary}\r\n".encode())
        chunks.append("".join(line + "\r\n" for line in part.headers).encode() + b"\r\n")
        chunks.append(part.body if part.body.endswith(b"\r\n") else part.body + b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return Part((f"Content-Type: multipart/{subtype}; boundary=\"{boundary}\"",),
                b"".join(chunks))


def whole_mail(headers: list[tuple[str, str]], body: Part) -> bytes:
    """The mail: ``headers`` (names and values, values already encoded as the client
    encodes them), ``MIME-Version``, the part's own headers, a blank line, its body."""
    lines = [f"{name}: {value}" for name, value in headers]
    lines.append("MIME-Version: 1.0")
    lines.extend(body.headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body.body
