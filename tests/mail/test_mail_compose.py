"""Outgoing mail: headers, one recipient, encodings."""

from __future__ import annotations

import email
import re
from datetime import datetime, timezone
from email.policy import default as default_policy

import pytest

from abalone_pbm.verp import bounce_token
from abalone_pbm.mail.compose import compose, new_message_id, one_address

WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)


def _mail(**overrides):
    arguments = dict(
        sender="abalone@example.org",
        to="Fred Flintstone <fred@example.net>",
        subject="Abalone Board 101 wilma",
        body="Summary of Abalone Board 101\n\n  A  o o o o o\n",
        loop_token="abalone@example.org",
        date=WHEN,
    )
    arguments.update(overrides)
    return compose(**arguments)


def test_message_ids_are_unique_and_in_our_domain():
    ids = {new_message_id("example.org") for _ in range(1000)}
    assert len(ids) == 1000
    for message_id in ids:
        assert re.fullmatch(r"<[0-9a-f]+\.[0-9a-f]{20}@example\.org>", message_id)
    assert new_message_id("abalone@example.org").endswith("@example.org>")


def test_headers_of_an_answer():
    message = _mail(
        reply_to="abalone+101.k3x9q7mf2a@example.org",
        in_reply_to="<cmd-1@example.net>",
        references=["<root@example.net>"],
    )
    assert message["From"] == "abalone@example.org"
    assert message["To"] == "Fred Flintstone <fred@example.net>"
    assert message["Subject"] == "Abalone Board 101 wilma"
    assert message["Date"] == "Sun, 01 Mar 2026 09:30:00 +0000"
    assert message["Message-ID"].endswith("@example.org>")
    assert message["Reply-To"] == "abalone+101.k3x9q7mf2a@example.org"
    assert message["In-Reply-To"] == "<cmd-1@example.net>"
    assert message["References"] == "<root@example.net> <cmd-1@example.net>"
    assert message["Auto-Submitted"] == "auto-replied"
    # Exchange's own switch: no out-of-office answer to the server's mail.
    assert message["X-Auto-Response-Suppress"] == "All"
    assert message["X-Loop"] == "abalone@example.org"
    assert message["MIME-Version"] == "1.0"
    assert message.get_content_type() == "text/plain"
    assert message.get_content_charset() == "utf-8"
    assert message["Precedence"] is None


def test_no_threading_headers_for_a_new_mail_and_reminders_are_auto_generated():
    message = _mail(auto_submitted="auto-generated")
    for header in ("In-Reply-To", "References", "Reply-To"):
        assert message[header] is None
    assert message["Auto-Submitted"] == "auto-generated"


def test_ascii_body_is_7bit_and_round_trips_exactly():
    body = "Summary of Abalone Board 101\n\n    A  o o o o o\n   B  o o o o o o\n"
    raw = _mail(body=body).as_bytes()
    assert b"Content-Transfer-Encoding: 7bit" in raw
    assert b"   B  o o o o o o\n" in raw
    parsed = email.message_from_bytes(raw, policy=default_policy)
    assert parsed.get_content() == body


def test_non_ascii_body_and_subject_are_encoded_and_round_trip():
    body = "Zug angenommen. Grüße, Jürgen 🙂\n"
    raw = _mail(body=body, subject="Abalone Board 101 jürgen **").as_bytes()
    assert raw.isascii()
    parsed = email.message_from_bytes(raw, policy=default_policy)
    assert parsed["Content-Transfer-Encoding"] == "quoted-printable"
    assert parsed.get_content() == body
    assert parsed["Subject"] == "Abalone Board 101 jürgen **"


def test_body_gets_a_final_newline_and_long_lines_survive():
    long_line = "x" * 1500
    parsed = email.message_from_bytes(_mail(body=long_line).as_bytes(), policy=default_policy)
    assert parsed.get_content() == long_line + "\n"
    assert all(len(line) <= 998 for line in _mail(body=long_line).as_bytes().split(b"\n"))


def test_exactly_one_recipient():
    with pytest.raises(ValueError):
        _mail(to="fred@example.net, wilma@example.net")
    with pytest.raises(ValueError):
        _mail(to="")
    with pytest.raises(ValueError):
        _mail(to="fred@example.net\nBcc: everyone@example.net")
    assert one_address("Fred <FRED@example.net>") == "FRED@example.net"


def test_a_subject_cannot_inject_headers():
    message = _mail(subject="Abalone error\r\nBcc: everyone@example.net")
    assert message["Bcc"] is None
    assert message["Subject"] == "Abalone error Bcc: everyone@example.net"
    assert b"\nBcc:" not in message.as_bytes()


def test_naive_date_is_taken_as_utc():
    message = _mail(date=datetime(2026, 3, 1, 9, 30))
    assert message["Date"] == "Sun, 01 Mar 2026 09:30:00 +0000"


# -- the outbox's bytes, built directly or through the email package -------------------

from email.policy import SMTP as smtp_policy  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from abalone_pbm.mail.compose import compose_mail  # noqa: E402

def _same_boundary(raw: bytes) -> bytes:
    """A multipart mail with its (random) boundary replaced by a fixed one."""
    found = re.search(rb'boundary="([^"]+)"', raw)
    return raw.replace(found.group(1), b"BOUNDARY") if found else raw


_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120)
_ascii_lines = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=90)


@settings(max_examples=120, deadline=None)
@given(
    subject=st.one_of(_ascii_lines, _texts),
    body=st.one_of(st.lists(_ascii_lines, max_size=8).map("\n".join), _texts,
                   st.text(max_size=300)),
    to=st.sampled_from(["fred@example.net", "Fred <fred@example.net>",
                        "fr.ed+x@example.net", "\"Fred, Jr.\" <fred@example.net>",
                        "F\u00fc <fred@example.net>"]),
    reply_to=st.sampled_from([None, "abalone+101.k3x9q7mf2a@example.org"]),
    answered=st.sampled_from([None, "<cmd@example.net>", "<" + "x" * 70 + "@example.net>"]),
    # A mail program's chain: long ids, folded over several lines.
    references=st.lists(st.sampled_from(
        ["<a@b>", "<older.1@example.net>",
         "<CAJx7pW2f+Yv9QeKc3nR0b8tL5mZ1oHq4sD6uG@mail.gmail.com>",
         "<AM0PR07MB6180A1B2C3D4E5F60718293A4B5C6D7E8F9A0@AM0PR07MB6180.eurprd07.prod."
         "outlook.com>"]), max_size=6),
    sender=st.sampled_from(["abalone@example.org", '"Abalone" <abalone@example.org>']),
    html=st.sampled_from([None, "<!DOCTYPE html>\n<p>board</p>\n"]),
)
def test_outbox_bytes_are_those_of_the_email_package(subject, body, to, reply_to, answered,
                                                     references, sender, html):
    arguments = dict(sender=sender, to=to, subject=subject, body=body, html=html,
                     reply_to=reply_to, in_reply_to=answered, references=references,
                     loop_token="abalone@example.org", date=WHEN,
                     message_id="<fixed.1@example.org>")
    composed = compose_mail(**arguments)
    assert _same_boundary(composed.raw) == _same_boundary(
        compose(**arguments).as_bytes(policy=smtp_policy))
    assert composed.message_id == "<fixed.1@example.org>"
    # The envelope sender is the mail's own bounce address (verp).
    assert bounce_token(composed.sender, "abalone@example.org") is not None
    assert composed.recipient == "fred@example.net" if "fr.ed" not in to else True


def test_a_board_mail_with_html_is_multipart_alternative_text_first():
    text = "Summary of Abalone Board 101\n\n    A- o o o o o / 7\n"
    page = "<!DOCTYPE html>\n<html><body><table><tr><td>o</td></tr></table></body></html>\n"
    message = _mail(body=text, html=page)
    assert message.get_content_type() == "multipart/alternative"
    parts = list(message.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    parsed = email.message_from_bytes(message.as_bytes(), policy=default_policy)
    assert parsed.get_body(("plain",)).get_content() == text
    assert parsed.get_body(("html",)).get_content() == page
    # ASCII pages travel as 7bit: readable in any reader, no encoding overhead.
    assert all(p["Content-Transfer-Encoding"] == "7bit" for p in parsed.iter_parts())
    assert parsed["X-Loop"] and parsed["Message-ID"] and parsed["Auto-Submitted"]


_ADDRESS_CHARS = st.sampled_from(list("abcXYZ019.+-_=!#'@") + ["..", "@@", " ", "<", ">",
                                                                 '"', '"Abalone" <'])


@settings(max_examples=400, deadline=None)
@given(st.lists(_ADDRESS_CHARS, min_size=1, max_size=14).map("".join))
def test_bare_address_shortcut_finds_what_getaddresses_finds(text):
    from email.utils import getaddresses

    found = [addr for _, addr in getaddresses([text]) if addr]
    expected = found[0] if len(found) == 1 and "@" in found[0] else None
    try:
        got: str | None = one_address(text)
    except ValueError:
        got = None
    assert got == expected


@pytest.mark.parametrize("text", ["fred@example.org", "f.r+101.abc@mail.example.org",
                                  "o'neil=x@ex-ample.org"])
def test_bare_addresses_are_themselves(text):
    assert one_address(text) == text


@pytest.mark.parametrize("text", ['"Abalone" <abalone@localhost>',
                                  '"Abalone Server 2" <a.b+c@x-y.example.org>'])
def test_a_plainly_named_address_is_its_address(text):
    from email.utils import getaddresses

    assert one_address(text) == getaddresses([text])[0][1] == text.split("<")[1][:-1]
