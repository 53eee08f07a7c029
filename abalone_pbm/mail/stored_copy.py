"""The copy of a processed mail the inbox keeps: the same mail with its passwords
masked (DESIGN §2.6), so that no stored row holds a password in clear once the mail
has been answered.

:func:`masked_raw` replaces every password by ``********`` in the Subject (and in the
other headers that repeat it, such as Outlook's ``Thread-Topic``) and in every text
part, plain or HTML: the passwords the server found while it handled the mail (its
``MailContext.secrets``), and every word the masking rule (``protocol.masking``) reads
as a password in these texts. An HTML part is read as the words its markup shows
(``masking.markup_words``: a reply quoting a board mail's 25 KB of markup is a few
hundred characters of text); once any text of the mail holds a password, the markup
itself is read by the rule too, as before, and every password found is hidden in the
text between its tags. What a replay or an admin needs stays: every header, the
MIME structure, every part the server did not change. A changed part is encoded again
(UTF-8, quoted-printable or base64 as its text needs), so the bytes stay valid MIME. A
mail without a password is kept byte for byte.

The mail is read as the worker reads it (``mail.mime.parse_bounded``): what a hostile
mail has beyond that (parts past ``MAX_PARTS``) was never read and is not kept in a
changed copy. What a person opening the row would read that this reading does not is
masked too: a Subject that a lenient reader (the standard library's modern policy)
decodes where ours leaves an encoded word cut by a stray line end is masked as that
reader shows it; a part that is no text part but whose bytes a person reads (a
multipart the library could not take apart, a part of an unknown or broken type, not
in base64) is read by the rule as its bytes stand, and its passwords hidden in them.
Every step is linear in the mail's size.
"""

from __future__ import annotations

import email.charset
import email.header
import email.message
import email.policy
import quopri
import re
from collections.abc import Iterable

from ..protocol.masking import (
    LONG_SECRET, PASSWORD_MASK, UseridCheck, find_passwords, hide_passwords,
    hide_passwords_in_html, mask_and_find_passwords, markup_words,
)
from ..db.models import InboxMail
from .decoding import _decode_bytes, _leaf_parts
from .mime import parse_bounded

#: Read and written as the stored bytes are: lines as they come, no header refolded
#: that is not changed, no "From " line in a body quoted.
_POLICY = email.policy.compat32.clone(linesep="\r\n", mangle_from_=False)
#: Headers that repeat the Subject (or are free text a mail program copies it into).
_SUBJECT_LIKE = ("Subject", "Thread-Topic", "X-Original-Subject")
_SUBJECT_LIKE_LOWER = frozenset(name.lower() for name in _SUBJECT_LIKE)


def masked_raw(raw: bytes, secrets: Iterable[str], is_userid: UseridCheck = None, *,
               parsed: email.message.Message | None = None) -> bytes:
    """``raw`` with every password masked (see the module text); ``raw`` itself when it
    holds none. ``parsed``: the mail as the worker parsed it (read, not written: a
    mail without a password is not parsed again)."""
    reading = parsed if parsed is not None else parse_bounded(raw, _POLICY)  # type: ignore[arg-type]
    # Every text read and masked first, then the passwords of all of them (and the
    # mail's own) hidden in each: a password of the plain part is hidden in the HTML
    # part too, wherever it stands there.
    # (An HTML part's markup, masked only when needed, is None until then.)
    texts: list[tuple[str | int, str, str | None, bool]] = []
    found = {s for s in secrets if s and s != PASSWORD_MASK}
    for name in _SUBJECT_LIKE:
        value = reading.get(name)
        if value is not None:
            text = _header_text(value)
            masked, more = mask_and_find_passwords(text, is_userid)
            lenient = _header_text_leniently(name, value) if "=?" in text else text
            if lenient != text:
                # Another reader decodes what ours leaves encoded (an encoded word cut
                # by a stray line end): masked as that reader would show it, and the
                # header written again from it when it holds a password.
                masked_too, more_too = mask_and_find_passwords(lenient, is_userid)
                if more_too - more or masked_too != lenient:
                    text, masked, more = lenient, masked_too, more | more_too
            texts.append((name, text, masked, False))
            found |= more
            as_it_stands = _unfolded(str(value))
            if "=?" in as_it_stands:
                # A person reading the row's bytes sees the encoded word as it stands
                # (a charset that decodes it to other words hides nothing from them).
                found |= find_passwords(as_it_stands, is_userid)
    for number, part in enumerate(_text_leaves(reading)):
        content = _part_text(part)
        if content is None:
            continue
        if part.get_content_subtype() == "html":
            found |= find_passwords(markup_words(content), is_userid)
            texts.append((number, content, None, True))
        else:
            masked, more = mask_and_find_passwords(content, is_userid)
            texts.append((number, content, masked, False))
            found |= more
    # A part that is no text part still reaches a person who opens the row when its
    # bytes are readable (a multipart the library could not take apart, a part of a
    # type nobody knows): read by the rule as it stands, its passwords hidden in the
    # bytes.
    unresolved = [text for text in map(_readable_other_text, _leaf_parts(reading))
                  if text is not None]
    for text in unresolved:
        found |= find_passwords(text, is_userid)
    if not found and all(kept in (None, read) for _, read, kept, _ in texts):
        return raw  # (no text of the mail, nor its markup's words, holds a password)
    if unresolved:
        return _hide_in_bytes(_masked_parts(raw, reading, parsed, texts, found, is_userid),
                              found)
    return _masked_parts(raw, reading, parsed, texts, found, is_userid)


def _masked_parts(raw: bytes, reading: email.message.Message,
                  parsed: email.message.Message | None,
                  texts: list[tuple[str | int, str, str | None, bool]], found: set[str],
                  is_userid: UseridCheck) -> bytes:
    """``raw`` with ``found`` hidden in each of its ``texts`` (the headers and the text
    parts ``masked_raw`` read), written again; the bytes as they came with the
    passwords hidden in them when the library cannot write the mail again."""
    # A mail with a password: its markup read by the rule too, as any text.
    for index, (where, read, kept, html) in enumerate(texts):
        if kept is None:
            kept, more = mask_and_find_passwords(read, is_userid)
            texts[index] = (where, read, kept, html)
            found |= more
    changes: list[tuple[str | int, str]] = []
    for where, read, kept, html in texts:
        assert kept is not None
        hidden = (hide_passwords_in_html if html else hide_passwords)(kept, found, short_too=True)
        if hidden != read:
            changes.append((where, hidden))
    if not changes:
        return _hide_in_header_fields(raw, found)  # (shown only as the bytes stand)
    try:
        writing = reading if parsed is None else parse_bounded(raw, _POLICY)  # type: ignore[arg-type]
        leaves = list(_text_leaves(writing))
        for where, masked in changes:
            if isinstance(where, str):
                writing.replace_header(where, _header_value(masked))  # type: ignore[arg-type]
            else:
                _set_text(leaves[where], masked)
        return _hide_in_header_fields(writing.as_bytes(policy=_POLICY), found)
    except Exception:  # a part the library cannot write again: the bytes as they came
        return _hide_in_bytes(raw, found)


#: Transfer encodings that leave a body readable as its bytes stand.
_READABLE_ENCODINGS = frozenset({"", "7bit", "8bit", "binary", "quoted-printable"})


def _readable_other_text(part: email.message.Message) -> str | None:
    """The text a person reads in a leaf that is no text part (a multipart whose body
    the library could not take apart, a part of an unknown or broken type) when its
    bytes are readable as they stand or in quoted-printable, read as UTF-8 where it is,
    else Latin-1 (every byte a character). None for a text part (read as text) and
    for a body in base64 (an attachment: its bytes show no word)."""
    if part.get_content_maintype() == "text":
        return None
    payload = part.get_payload()
    if not isinstance(payload, str):
        return None
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    if encoding not in _READABLE_ENCODINGS:
        return None
    data = payload.encode("utf-8", "surrogateescape")
    if encoding == "quoted-printable":
        data = quopri.decodestring(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _header_text_leniently(name: str, value: object) -> str:
    """A header's value as a lenient reader shows it (the standard library's modern
    policy: an encoded word decoded even when a stray line end cut it); the value as
    it stands when even that fails."""
    try:
        return str(email.policy.default.header_fetch_parse(name, str(value)))
    except Exception:
        return str(value)


def dropped_copy(raw: bytes) -> bytes:
    """What the inbox keeps of a mail dropped unanswered (an automatic answer, a mail
    past a daily cap, one that names no usable sender): its headers, the Subject
    masked, and no body. Nobody replays it, and the note says why it was dropped; a
    body could hold a password, and masking a body costs as much as processing the
    mail, which a flood of dropped mails must not buy. Linear in the headers' size."""
    end = raw.find(b"\r\n\r\n")
    cut = raw.find(b"\n\n")
    ends = [found for found in (end, cut) if found >= 0]
    head = raw[:min(ends)] if ends else raw
    kept = head.rstrip(b"\r\n") + b"\r\n\r\n"
    return masked_raw(kept, ())


def _text_leaves(message: email.message.Message) -> list[email.message.Message]:
    """The text parts of ``message``, in order (as far as the worker reads parts)."""
    return [part for part in _leaf_parts(message) if part.get_content_maintype() == "text"]


def mask_stored_mail(mail: InboxMail, secrets: Iterable[str] = (),
                     parsed: email.message.Message | None = None) -> None:
    """Replace ``mail.raw`` by its masked copy (a mail dropped unanswered or parked
    too: the masking rule finds its passwords without the server's reading)."""
    mail.raw = masked_raw(bytes(mail.raw), secrets, parsed=parsed)


def _hide_in_bytes(raw: bytes, secrets: set[str]) -> bytes:
    """The secrets out of bytes the library could not write again: each header field
    that shows one written again (``_hide_in_header_fields``), then byte for byte (in
    UTF-8 and Latin-1) the long ones anywhere, the short ones as words."""
    raw = _hide_in_header_fields(raw, secrets)
    for secret in sorted(secrets, key=len, reverse=True):
        for encoded in {secret.encode("utf-8", "surrogateescape"),
                        secret.encode("latin-1", "replace")}:
            if encoded not in raw:
                continue
            if len(secret) >= LONG_SECRET:
                raw = raw.replace(encoded, PASSWORD_MASK.encode())
            else:
                raw = re.sub(rb"(?<![A-Za-z0-9@.])" + re.escape(encoded) + rb"(?![A-Za-z0-9@])",
                             PASSWORD_MASK.encode(), raw)
    return raw


#: A line end that folds a header (RFC 5322 2.2.3: the blank after it goes on the line).
_FOLD = re.compile(r"(?:\r\n|\n|\r)(?=[ \t])")


def _unfolded(value: str) -> str:
    """A header's value on one line as a mail program shows it: a command folded over
    several lines is read by the masking rule as the one line it is."""
    return _FOLD.sub("", value)


def _header_text(value: object) -> str:
    """A header's value as text, unfolded, its encoded words decoded (never raises)."""
    text = _unfolded(str(value))
    try:
        return str(email.header.make_header(email.header.decode_header(text)))
    except Exception:  # an encoded word the library cannot read: its text as it stands
        return text


def _header_value(text: str) -> str | email.header.Header:
    """``text`` as a header value: as it is in ASCII, else in encoded words."""
    if text.isascii():
        return text
    return email.header.Header(text, "utf-8")


def _part_text(part: email.message.Message) -> str | None:
    """A text part's content decoded (transfer encoding and charset), None when the
    library cannot undo its transfer encoding."""
    try:
        payload = part.get_payload(decode=True)
    except Exception:
        return None
    if not isinstance(payload, bytes):
        return None
    try:
        charset = part.get_content_charset() or "us-ascii"
    except Exception:  # a charset parameter that is not text
        charset = "us-ascii"
    return _decode_bytes(payload, charset)


def _set_text(part: email.message.Message, text: str) -> None:
    """Put ``text`` in ``part`` encoded anew: US-ASCII as it is, else UTF-8 in
    quoted-printable (the other parameters, such as format=flowed, stay)."""
    del part["Content-Transfer-Encoding"]
    if text.isascii():
        part.set_payload(text, charset="us-ascii")
        return
    readable = email.charset.Charset("utf-8")
    readable.body_encoding = email.charset.QP  # (an admin reads it as it is)
    part.set_payload(text, charset=readable)


#: Where the header block of a mail ends.
_HEADER_END = re.compile(rb"\r?\n\r?\n")


def _hide_in_header_fields(data: bytes, secrets: set[str]) -> bytes:
    """Every header field whose value shows a secret, read as our reading decodes it or
    as a lenient reader does (an encoded word hides it from a byte search), written
    again with the secret masked: the long secrets in any field (a list's
    ``X-Original-...``, a display name), the short ones too in the Subject's kin. A
    field that shows none stays byte for byte. Linear in the header block's size."""
    if not secrets:
        return data
    long_secrets = {secret for secret in secrets if len(secret) >= LONG_SECRET}
    # A field shows a secret only when its bytes hold it or an encoded word could hide
    # it: only those are decoded (two readings of 35 fields cost a millisecond).
    needles = [b"=?", *{secret.encode(charset, errors) for secret in secrets
                        for charset, errors in (("utf-8", "surrogateescape"),
                                                ("latin-1", "replace"))}]
    end = _HEADER_END.search(data)
    cut = end.start() if end else len(data)
    fields: list[list[bytes]] = []
    for line in data[:cut].splitlines(keepends=True):
        if fields and line[:1] in (b" ", b"\t"):
            fields[-1].append(line)
        else:
            fields.append([line])
    written: list[bytes] = []
    for lines in fields:
        field = b"".join(lines)
        name, colon, value = field.partition(b":")
        if not colon or not any(needle in value for needle in needles):
            written.append(field)
            continue
        name_text = name.decode("ascii", "replace").strip()
        subject_like = name_text.lower() in _SUBJECT_LIKE_LOWER
        folded = value.decode("ascii", "surrogateescape")
        value_text = _unfolded(folded).strip()
        shown = (_header_text(value_text), _header_text_leniently(name_text, value_text),
                 value_text)
        for text in shown:
            hidden = hide_passwords(text, secrets if subject_like else long_secrets,
                                    short_too=subject_like)
            if hidden != text:
                line_end = "\r\n" if field.endswith(b"\r\n") else "\n"
                # (a line end a lenient decoding let in would end the field early)
                hidden = " ".join(hidden.encode("utf-8", "replace").decode().splitlines())
                encoded = hidden if hidden.isascii() else email.header.Header(
                    hidden, "utf-8").encode(linesep=line_end)
                written.append(name + b": " + encoded.encode("ascii", "surrogateescape")
                               + line_end.encode())
                break
        else:
            written.append(field)
    return b"".join(written) + data[cut:]
