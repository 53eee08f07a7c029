"""Received mail parsed by the worker (worker.parse_mail, mail.mime) and its text read
(mail.decoding): whatever the MIME structure, headers and charsets at the size limit,
no exception, and the text a person's mail has is read (cost: benchmarks/mail_cost.py)."""

from __future__ import annotations

import base64

import pytest

from abalone_pbm.mail.decoding import BodyTexts, extract_body_text, extract_body_texts
from abalone_pbm.mail.mime import MAX_CONTAINERS, MAX_PARTS, bounded_bytes
from abalone_pbm.worker import parse_mail

LIMIT = 256 * 1024
HEAD = b"From: fred@example.org\r\nTo: abalone@example.org\r\nSubject: Re: Abalone Board 101\r\n"


def nested(depth: int, text: bytes = b"resign") -> bytes:
    opening = b"".join(
        b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (i, i)
        for i in range(depth)
    )
    closing = b"".join(b"\r\n--b%d--" % i for i in reversed(range(depth)))
    return HEAD + opening + b"Content-Type: text/plain\r\n\r\n" + text + closing + b"\r\n"


def multipart(parts: list[bytes], boundary: bytes = b"b") -> bytes:
    body = b"".join(b"--" + boundary + b"\r\n" + part + b"\r\n" for part in parts)
    return (
        HEAD + b'Content-Type: multipart/mixed; boundary="' + boundary + b'"\r\n\r\n'
        + body + b"--" + boundary + b"--\r\n"
    )


def test_multipart_nested_2500_deep_is_read_as_far_as_is_safe() -> None:
    raw = nested(2500)
    message = parse_mail(raw)
    assert message["Subject"] == "Re: Abalone Board 101"
    assert extract_body_texts(message) == BodyTexts(plain=None, html=None)
    assert extract_body_text(message) == ""


def test_nesting_a_person_sends_is_read_whole() -> None:
    message = parse_mail(nested(MAX_CONTAINERS - 1, b"c3-c5,d4"))
    assert extract_body_texts(message).plain == "c3-c5,d4"


def test_ten_thousand_parts_the_first_text_is_read() -> None:
    parts = [b"Content-Type: text/plain\r\n\r\nresign"]
    parts += [b"Content-Type: application/octet-stream\r\n\r\nx"] * 10_000
    message = parse_mail(multipart(parts))
    assert extract_body_text(message) == "resign"
    assert len(message.get_payload()) <= MAX_PARTS


def test_parts_beyond_the_bound_are_cut_but_the_first_ones_kept() -> None:
    parts = [b"Content-Type: text/plain\r\n\r\nx"] * (MAX_PARTS + 50)
    raw = multipart(parts)
    assert len(bounded_bytes(raw)) < len(raw)
    message = parse_mail(raw)
    assert len(message.get_payload()) == MAX_PARTS
    assert message["From"] == "fred@example.org"


def test_many_sibling_containers_after_the_text_leave_the_text_read() -> None:
    forwarded = b"Content-Type: message/rfc822\r\n\r\nSubject: old\r\n\r\nold text"
    parts = [b"Content-Type: text/plain\r\n\r\nc3-c5,d4"] + [forwarded] * (MAX_CONTAINERS * 3)
    message = parse_mail(multipart(parts))
    assert extract_body_texts(message).plain == "c3-c5,d4"


def test_a_256_kib_header_and_many_headers() -> None:
    raw = HEAD.replace(b"Subject: Re: Abalone Board 101", b"Subject: " + b"x " * (LIMIT // 2))
    message = parse_mail(raw + b"\r\nresign\r\n")
    assert message["Subject"].startswith("x x")
    assert extract_body_text(message) == "resign\n"
    raw = HEAD + b"X-A: b\r\n" * (LIMIT // 8) + b"\r\nresign\r\n"
    assert extract_body_text(parse_mail(raw)) == "resign\n"


def test_content_type_with_tens_of_thousands_of_parameters() -> None:
    raw = (
        HEAD + b"Content-Type: text/plain; charset=iso-8859-1; " + b"a=b; " * (LIMIT // 5)
        + b"\r\nContent-Transfer-Encoding: 8bit\r\n\r\nsch\xf6ner Zug\r\n"
    )
    message = parse_mail(raw)
    assert message.get_content_charset() == "iso-8859-1"
    assert extract_body_text(message) == "schöner Zug\n"
    raw = (
        HEAD + b'Content-Type: multipart/alternative; boundary="b"; ' + b"a=b; " * (LIMIT // 5)
        + b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nresign\r\n--b--\r\n"
    )
    assert extract_body_text(parse_mail(raw)) == "resign"


def test_rfc2231_continuations_by_the_ten_thousand() -> None:
    continued = b"".join(b"title*%d*=x; " % i for i in range(LIMIT // 14))
    raw = HEAD + b"Content-Type: text/plain; charset=utf-8; " + continued + b"\r\n\r\nresign\r\n"
    assert extract_body_text(parse_mail(raw)) == "resign\n"


def test_long_base64_and_quoted_printable_lines() -> None:
    text = "c3-c5,d4 " * (LIMIT // 14)
    raw = (
        HEAD + b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64"
        + b"\r\n\r\n" + base64.b64encode(text.encode())
    )
    assert extract_body_text(parse_mail(raw)) == text
    raw = (
        HEAD + b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: "
        b"quoted-printable\r\n\r\n" + b"=C3=A4" * (LIMIT // 7)
    )
    assert extract_body_text(parse_mail(raw)) == "ä" * (LIMIT // 7)
    raw = (
        HEAD + b"Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + b"!!not base64 at all=" * 1000
    )
    extract_body_text(parse_mail(raw))  # whatever the library makes of it: no exception


@pytest.mark.parametrize(
    ("charset", "text"),
    [
        ("windows-1252", "“c3-c5,d4” – schöner Zug"),
        ("koi8-r", "ход c3-c5,d4"),
        ("iso-2022-jp", "c3-c5,d4 いい手"),
        ("gb2312", "c3-c5,d4 好棋"),
        ("shift_jis", "c3-c5,d4 いい手"),
        ("iso-8859-15", "c3-c5,d4 €"),
    ],
)
def test_legacy_charsets_in_text_and_html(charset: str, text: str) -> None:
    encoded = text.encode(charset)
    raw = multipart(
        [
            b"Content-Type: text/plain; charset=" + charset.encode() + b"\r\n"
            b"Content-Transfer-Encoding: 8bit\r\n\r\n" + encoded,
            b"Content-Type: text/html; charset=" + charset.encode() + b"\r\n"
            b"Content-Transfer-Encoding: base64\r\n\r\n"
            + base64.b64encode(b"<div>" + encoded + b"</div><blockquote>old</blockquote>"),
        ]
    )
    texts = extract_body_texts(parse_mail(raw))
    assert texts == BodyTexts(plain=text, html=text + "\n\n> old\n")


@pytest.mark.parametrize("charset", [b"x-bogus", b'"x-bogus\xff"', b"base64", b"utf-16", b'""'])
def test_bogus_charsets_are_read_as_utf8_or_latin1(charset: bytes) -> None:
    raw = HEAD + b"Content-Type: text/plain; charset=" + charset + b"\r\n\r\nc3-c5,d4 gr\xc3\xbc\xc3\x9fe\r\n"
    text = extract_body_text(parse_mail(raw))
    assert text.startswith("c3-c5,d4") or charset == b"utf-16"


def test_only_html_reply_gives_the_html_reading_alone() -> None:
    raw = (
        HEAD + b"Content-Type: text/html; charset=utf-8\r\n\r\n"
        b'<div dir="ltr">c3-c5,d4</div><div class="gmail_quote">On Mon wrote:'
        b"<blockquote>resign</blockquote></div>"
    )
    texts = extract_body_texts(parse_mail(raw))
    assert texts.plain is None
    assert texts.html == "c3-c5,d4\n\n> On Mon wrote:\n>\n> resign\n"


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\r\n\r\n",
        b"Content-Type: multipart/mixed\r\n\r\n--\r\n",
        b'Content-Type: multipart/mixed; boundary=""\r\n\r\n--\r\n--\r\n',
        b"Content-Type: message/rfc822\r\n\r\n" * 3000,
        b"Content-Type: multipart/mixed; boundary=b\r\n\r\n" + b"--b\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" * 3000,
        b"Content-Type: multipart/mixed;\r\n boundary=b\r\n\r\n--b\r\n" + b"Content-Type:\r\n multipart/mixed; boundary=b\r\n\r\n--b\r\n" * 3000,
        b"Content-Transfer-Encoding: x-uuencode\r\n\r\nbegin 644 a\r\n" + b"M" * 3000,
        HEAD + b"Content-Type: text/plain; charset*=utf-8''%ff%ff\r\n\r\nx",
    ],
)
def test_odd_structures_never_raise(raw: bytes) -> None:
    message = parse_mail(raw)
    extract_body_texts(message)
    extract_body_text(message)


def test_flowed_text_of_tens_of_thousands_of_soft_breaks_is_one_paragraph() -> None:
    raw = (
        HEAD + b"Content-Type: text/plain; charset=utf-8; format=flowed\r\n\r\n"
        + b"c3-c5,d4\r\n" + b"word \r\n" * (LIMIT // 8) + b"end\r\n> quoted \r\n> on\r\n"
    )
    lines = extract_body_text(parse_mail(raw)).splitlines()
    assert lines[0] == "c3-c5,d4"
    assert lines[1] == "word " * (LIMIT // 8) + "end"
    assert lines[2:] == ["> quoted on"]
