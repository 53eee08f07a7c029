"""The text of a received mail: charsets, transfer encodings, HTML, format=flowed;
read as a reply afterwards."""

from __future__ import annotations

import email
from email import policy
from email.message import EmailMessage

from abalone_pbm.mail.decoding import BodyTexts, extract_body_text, extract_body_texts, html_to_text
from abalone_pbm.protocol.reply import ReplyAction, parse_reply_body


def _parse(raw: str) -> EmailMessage:
    message = email.message_from_string(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def test_plain_text_with_charset_and_transfer_encoding() -> None:
    message = _parse(
        "From: fred@example.org\n"
        "Subject: Re: Abalone Board 101 fred\n"
        "Content-Type: text/plain; charset=iso-8859-1\n"
        "Content-Transfer-Encoding: quoted-printable\n\n"
        "c3-c5,d4\r\nsch=F6ner Zug\r\n"
    )
    text = extract_body_text(message)
    assert text == "c3-c5,d4\nschöner Zug\n"
    assert parse_reply_body(text) == ReplyAction("move", "c3-c5,d4", None, "schöner Zug")


def test_multipart_prefers_text_plain_and_skips_attachments() -> None:
    message = EmailMessage()
    message["Subject"] = "x"
    message.set_content("resign\n")
    message.add_alternative("<p>c5,d5</p>", subtype="html")
    message.add_attachment(b"c3-c5,d4", maintype="text", subtype="plain", filename="a.txt")
    assert extract_body_text(message).strip() == "resign"


def test_only_html_is_converted_and_blockquotes_become_quotes() -> None:
    message = EmailMessage()
    message["Subject"] = "x"
    message.set_content(
        "<html><head><style>p {color: red}</style></head><body>"
        "<div>c3-c5,d4</div><div>gr&uuml;&szlig;e &amp; <b>good</b> luck</div>"
        '<div class="gmail_quote"><div>On Mon, Abalone wrote:</div>'
        "<blockquote>Summary of Abalone Board 101<br>resign</blockquote></div>"
        "</body></html>",
        subtype="html",
    )
    text = extract_body_text(message)
    assert "color" not in text
    assert "> resign" in text
    assert parse_reply_body(text) == ReplyAction("move", "c3-c5,d4", None, "grüße & good luck")


def test_html_to_text_keeps_preformatted_text() -> None:
    text = html_to_text("<pre>  A- o o\n B- x x</pre><p>resign</p>")
    assert "  A- o o\n B- x x" in text
    assert text.strip().endswith("resign")


def test_format_flowed_is_undone_but_the_signature_kept() -> None:
    message = _parse(
        "From: fred@example.org\n"
        "Subject: x\n"
        "Content-Type: text/plain; charset=utf-8; format=flowed\n\n"
        "c3-c5,d4\n"
        "a long comment that \n"
        "goes on\n"
        "-- \n"
        "Fred\n"
    )
    text = extract_body_text(message)
    assert text.splitlines() == ["c3-c5,d4", "a long comment that goes on", "-- ", "Fred"]
    assert parse_reply_body(text) == ReplyAction(
        "move", "c3-c5,d4", None, "a long comment that goes on"
    )


def test_a_message_without_text_gives_an_empty_body() -> None:
    message = EmailMessage()
    message["Subject"] = "x"
    message.set_content(b"\x00\x01", maintype="application", subtype="octet-stream")
    assert extract_body_text(message) == ""


def test_unknown_charset_does_not_crash() -> None:
    message = _parse(
        "From: fred@example.org\nSubject: x\n"
        "Content-Type: text/plain; charset=x-no-such-charset\n\nresign\n"
    )
    assert extract_body_text(message).strip() == "resign"


def test_body_texts_give_both_readings() -> None:
    message = EmailMessage()
    message["Subject"] = "x"
    message.set_content("resign\n")
    message.add_alternative("<p>c5,d5</p><blockquote>old</blockquote>", subtype="html")
    texts = extract_body_texts(message)
    assert texts == BodyTexts(plain="resign\n", html="c5,d5\n\n> old\n")


def test_body_texts_of_a_mail_without_text_parts() -> None:
    message = EmailMessage()
    message["Subject"] = "x"
    message.set_content(b"\x00\x01", maintype="application", subtype="octet-stream")
    assert extract_body_texts(message) == BodyTexts(plain=None, html=None)
