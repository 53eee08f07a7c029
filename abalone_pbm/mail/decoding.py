"""The text of a received mail: the first plain-text part decoded (charset,
``format=flowed``), and the HTML part turned into text (``mail.html_text``), quotes kept
as ``>``. Parts are walked without recursion and at most ``mail.mime.MAX_PARTS`` of them;
every decoding is linear in the part's size and never raises."""

from __future__ import annotations

import codecs
import email.message
from collections.abc import Iterator
from dataclasses import dataclass

from .html_text import html_to_text
from .mime import MAX_PARTS
from .validation import clean_text


#: Charset labels mail programs write that Python knows by another name or not at all
#: (Windows code pages by their Windows names, the ISO 8859 "-i"/"-e" variants of
#: RFC 1556, "x-" names); Microsoft's "ks_c_5601-1987" is its code page 949, not the
#: EUC-KR Python reads it as.
_LABELS = {
    "windows-874": "cp874", "x-sjis": "cp932", "windows-31j": "cp932", "x-euc-jp": "euc_jp",
    "x-gbk": "gbk", "ks_c_5601-1987": "cp949", "ks_c_5601": "cp949", "ksc5601": "cp949",
    "x-mac-roman": "mac_roman", "iso-8859-6-i": "iso8859-6", "iso-8859-6-e": "iso8859-6",
    "iso-8859-8-i": "iso8859-8", "iso-8859-8-e": "iso8859-8",
}
#: The larger charsets the bytes of a label really are in, read first: the Encoding
#: Standard's reading of these labels, as browsers and mail programs read them (a
#: Windows program's "iso-8859-1" holds its curly quotes and dashes at 0x80-0x9F, a
#: Japanese "shift_jis" the NEC and IBM characters of cp932, a Chinese "gb2312" GBK).
_SUPERSETS = {
    "iso8859-1": "cp1252", "iso8859-9": "cp1254", "iso8859-11": "cp874", "tis-620": "cp874",
    "shift_jis": "cp932", "euc_kr": "cp949", "gb2312": "gb18030", "gbk": "gb18030",
    "big5": "big5hkscs",
}


def _text_codec(charset: str) -> str:
    """``charset`` if Python has a text codec of that name, else utf-8 (an unknown or
    bytes-to-bytes "charset" such as x-bogus or base64 is read as UTF-8)."""
    label = charset.strip().strip("\"'").lower()
    try:
        info = codecs.lookup(_LABELS.get(label, label))
    except (LookupError, ValueError):
        return "utf-8"
    return info.name if getattr(info, "_is_text_encoding", True) else "utf-8"


def _single_byte(payload: bytes) -> str:
    """8-bit text of unknown charset: Windows' Latin-1 (its quotes and dashes at
    0x80-0x9F, never C1 controls), Latin-1 if it has a byte Windows leaves out."""
    try:
        return payload.decode("cp1252")
    except UnicodeDecodeError:
        return payload.decode("latin-1")


def _decode_bytes(payload: bytes, charset: str) -> str:
    """The payload as text; never raises, whatever the bytes and the declared charset."""
    codec = _text_codec(charset)
    wider = _SUPERSETS.get(codec)
    for name in (wider, codec) if wider else (codec,):
        try:
            return payload.decode(name)
        except (UnicodeError, ValueError, LookupError):
            pass
    if codec in ("ascii", "utf-8"):
        # Mislabelled 8-bit text: UTF-8 with a few broken bytes keeps its words,
        # anything else is most likely Windows' Latin-1.
        text = payload.decode("utf-8", "replace")
        if text.count("\ufffd") * 20 <= max(len(text), 1):
            return text
        return _single_byte(payload)
    try:
        return payload.decode(wider or codec, errors="replace")
    except (UnicodeError, ValueError, LookupError):
        return payload.decode("utf-8", "replace")


def _decode_part(part: email.message.Message) -> str:
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # a transfer encoding the library cannot undo
        payload = None
    if payload is None:
        raw = part.get_payload()
        text = raw if isinstance(raw, str) else ""
    else:
        assert isinstance(payload, bytes)
        try:
            charset = part.get_content_charset() or "utf-8"
        except Exception:  # a charset parameter that is not text
            charset = "utf-8"
        text = _decode_bytes(payload, charset)
    if "\r" in text:  # (a search for CRLF in a 256 KB text without any costs 0.2 ms)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if (part.get_param("format") or "").lower() == "flowed":  # type: ignore[union-attr]
        delsp = (part.get_param("delsp") or "").lower() == "yes"  # type: ignore[union-attr]
        text = _unflow(text, delsp)
    return text


def _unflow(text: str, delsp: bool) -> str:
    """Undo format=flowed (RFC 3676): join soft line breaks, remove space-stuffing.
    A paragraph's lines are gathered in a list and joined once (linear, however long)."""
    out: list[str] = []
    pending: list[str] = []  # the lines so far of a paragraph that goes on
    pending_depth = -1
    for raw in text.split("\n"):
        depth = len(raw) - len(raw.lstrip(">"))
        content = raw[depth:]
        if content.startswith(" "):
            content = content[1:]
        soft = content.endswith(" ") and content != "-- "
        if pending and depth != pending_depth:
            out.append(_quoted_line(pending_depth, "".join(pending)))
            pending = []
        if soft:
            pending.append(content[:-1] if delsp else content)
            pending_depth = depth
            continue
        if pending:
            pending.append(content)
            content = "".join(pending)
            pending = []
        out.append(_quoted_line(depth, content))
    if pending:
        out.append(_quoted_line(pending_depth, "".join(pending)))
    return "\n".join(out)


def _quoted_line(depth: int, content: str) -> str:
    return ">" * depth + (" " if depth and content else "") + content


@dataclass(frozen=True)
class BodyTexts:
    """The two readings of a mail's body, each ``None`` when the mail has no such part."""

    plain: str | None  # first text/plain part (not an attachment), decoded, clean_text'ed
    html: str | None  # first text/html part converted by html_to_text, clean_text'ed


def _leaf_parts(msg: email.message.Message) -> Iterator[email.message.Message]:
    """The parts of ``msg`` that are not containers, in order: at most ``MAX_PARTS``
    parts looked at, walked without recursion (the library's ``walk`` recurses)."""
    pending: list[email.message.Message] = [msg]
    looked_at = 0
    while pending and looked_at < MAX_PARTS:
        part = pending.pop()
        looked_at += 1
        if part.is_multipart():
            children = part.get_payload()
            if isinstance(children, list):
                pending.extend(
                    child for child in reversed(children)
                    if isinstance(child, email.message.Message)
                )
            continue
        yield part


def text_parts(
    msg: email.message.Message,
) -> tuple[email.message.Message | None, email.message.Message | None]:
    """The first text/plain and the first text/html part that are not attachments."""
    plain: email.message.Message | None = None
    markup: email.message.Message | None = None
    for part in _leaf_parts(msg):
        if part.get_content_disposition() == "attachment":
            continue
        ctype = part.get_content_type()
        if ctype == "text/plain" and plain is None:
            plain = part
        elif ctype == "text/html" and markup is None:
            markup = part
        if plain is not None and markup is not None:
            break
    return plain, markup


def plain_text(part: email.message.Message) -> str:
    """A text/plain part decoded and cleaned (charset, ``format=flowed``)."""
    return clean_body(_decode_part(part))


def html_part_text(part: email.message.Message) -> str:
    """A text/html part decoded, turned into text with :func:`html_to_text`, cleaned."""
    return clean_body(html_to_text(_decode_part(part)))


#: What ``clean_text`` replaces in ASCII text with its line ends kept: the C0 controls
#: but tab, line feed and carriage return, and DEL.
_ASCII_CONTROLS = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def clean_body(text: str) -> str:
    """``clean_text(text, keep_newlines=True)``; for ASCII text without controls (no
    invisible blank, surrogate or control to replace: only line ends and tabs) at C
    speed, not three patterns tried at each character of a 256 KB body."""
    if text.isascii():
        data = text.encode("ascii")
        if len(data.translate(None, _ASCII_CONTROLS)) == len(data):
            if "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            return text.replace("\t", " ")
    return clean_text(text, keep_newlines=True)


def extract_body_texts(msg: email.message.Message) -> BodyTexts:
    """The first text/plain and the first text/html part that are not attachments, each
    decoded and cleaned (the HTML one turned into text with :func:`html_to_text`)."""
    plain, markup = text_parts(msg)
    return BodyTexts(plain=None if plain is None else plain_text(plain),
                     html=None if markup is None else html_part_text(markup))


def extract_body_text(msg: email.message.Message) -> str:
    """The text of a mail: its first text/plain part that is not an attachment, decoded;
    when there is only HTML, that converted with :func:`html_to_text`; else ``""``.

    Works with ``email.message.EmailMessage`` and the older ``Message``; line ends come
    back as ``\\n``; ``format=flowed`` is undone.
    """
    plain, markup = text_parts(msg)
    if plain is not None:
        return plain_text(plain)
    if markup is not None:
        return html_part_text(markup)
    return ""
