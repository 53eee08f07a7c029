"""Moving by reply (DESIGN 2.2): the reply address, the first line, the comment, and
mail bodies (charsets, HTML, format=flowed)."""

from __future__ import annotations

import email
from email import policy
from email.message import EmailMessage

import pytest

from abalone_pbm.parsing import (
    ReplyAction,
    extract_body_text,
    extract_comment,
    first_reply_line,
    html_to_text,
    parse_reply_address,
    parse_reply_body,
    reply_local_part,
)

OLD_BOARD = """\
> Summary of Abalone Board 101
>
> It is fred's turn (o); the next move is move #7.
>
>         1 2 3 4 5
>         / / / / / 6
>     A- o o o o o / 7
> abalone move 101 fred pw resign
"""


# ------------------------------------------------------------------- the address
def test_reply_address_round_trip() -> None:
    local = reply_local_part("abalone", 101, "k3x9q7mf2a")
    assert local == "abalone+101.k3x9q7mf2a"
    assert parse_reply_address(local, "abalone") == (101, "k3x9q7mf2a")


@pytest.mark.parametrize(
    "address, base, expected",
    [
        ("abalone+101.k3x9q7mf2a", "abalone", (101, "k3x9q7mf2a")),
        ("Abalone+101.K3X9Q7MF2A", "abalone", (101, "k3x9q7mf2a")),
        ("abalone+101.k3x9q7mf2a@pbm.example.org", "abalone", (101, "k3x9q7mf2a")),
        ("<abalone+2345.abcdef12@host>", "abalone", (2345, "abcdef12")),
        ("games+101.k3x9q7mf2a", "games", (101, "k3x9q7mf2a")),
        ("games+101.k3x9q7mf2a", "abalone", None),
        ("abalone", "abalone", None),
        ("abalone@host", "abalone", None),
        ("abalone+101", "abalone", None),
        ("abalone+101.", "abalone", None),
        ("abalone+x.k3x9q7mf2a", "abalone", None),
        ("abalone+101.k3x9-q7mf2a", "abalone", None),
        ("abalone+101.ab", "abalone", None),
        ("abalonex+101.k3x9q7mf2a", "abalone", None),
    ],
)
def test_parse_reply_address(address: str, base: str, expected: tuple[int, str] | None) -> None:
    assert parse_reply_address(address, base) == expected


# --------------------------------------------------------------------- the body
@pytest.mark.parametrize(
    "body, expected",
    [
        ("c3-c5,d4\n", ReplyAction("move", "c3-c5,d4")),
        ("C3-C5,D4", ReplyAction("move", "c3-c5,d4")),
        ("  c3 - c5 , d4  \n", ReplyAction("move", "c3-c5,d4")),
        ("c3-c5,d4#7\n", ReplyAction("move", "c3-c5,d4", 7)),
        ("c3-c5,d4 #12\n", ReplyAction("move", "c3-c5,d4", 12)),
        ("c5,d5\n", ReplyAction("move", "c5,d5")),
        ("j1,j2\n", ReplyAction("move", "j1,j2")),  # the rules explain that j1 is no cell
        ("\n\n\nc5,d5\n", ReplyAction("move", "c5,d5")),
        ("resign\n", ReplyAction("resign")),
        ("Resign.\n", ReplyAction("resign")),
        ("PROPOSE\n", ReplyAction("propose")),
        ("undo\n", ReplyAction("undo")),
        ("accept!\n", ReplyAction("accept")),
        ("reject\n", ReplyAction("reject")),
        ("show\n", ReplyAction("show")),
    ],
)
def test_first_line_is_a_move_or_an_action(body: str, expected: ReplyAction) -> None:
    assert parse_reply_body(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "",
        "\n\n",
        "Thanks for the game!\nc3-c5,d4\n",
        "c3-c5,d4 and good luck\n",
        "resign now\n",
        "abalone move 101 fred pw c3-c5,d4\n",
        OLD_BOARD,
        "> c3-c5,d4\n> resign\n",
        "-- \nc3-c5,d4\n",
        "--\nresign\n",
    ],
)
def test_no_action_is_found(body: str) -> None:
    assert parse_reply_body(body) is None


def test_quoted_lines_are_never_read_as_commands() -> None:
    body = OLD_BOARD + "\nc3-c5,d4\nwell played\n"
    assert parse_reply_body(body) == ReplyAction("move", "c3-c5,d4", None, "well played")
    assert parse_reply_body("> resign\n>\n\nundo\n") == ReplyAction("undo")


def test_attribution_line_before_the_quote_is_skipped() -> None:
    body = "On Mon, 1 Jan 2024 at 10:00, Abalone <abalone@example.org> wrote:\n" + OLD_BOARD
    body += "\nc3-c5,d4\n"
    assert parse_reply_body(body) == ReplyAction("move", "c3-c5,d4")


def test_wrapped_two_line_attribution_is_skipped() -> None:
    body = (
        "On Mon, Jan 1, 2024 at 10:00 AM Abalone Server <\n"
        "abalone+101.k3x9q7mf2a@example.org> wrote:\n\n" + OLD_BOARD + "\nresign\n"
    )
    assert parse_reply_body(body) == ReplyAction("resign")


def test_german_attribution_is_skipped() -> None:
    body = "Am 01.01.2024 um 10:00 schrieb Abalone:\n> resign\n\nc5,d5\n"
    assert parse_reply_body(body) == ReplyAction("move", "c5,d5")


def test_comment_runs_up_to_the_quote_and_drops_the_attribution() -> None:
    body = (
        "c3-c5,d4\n"
        "Nice game so far.\n"
        "\n"
        "Second paragraph.\n"
        "\n"
        "On Tue, 2 Jan 2024, Abalone <abalone@example.org> wrote:\n" + OLD_BOARD
    )
    assert parse_reply_body(body) == ReplyAction(
        "move", "c3-c5,d4", None, "Nice game so far.\n\nSecond paragraph."
    )


def test_comment_runs_up_to_the_signature() -> None:
    body = "resign\nYou played well.\n-- \nFred Flintstone\nc3-c5,d4\n"
    assert parse_reply_body(body) == ReplyAction("resign", comment="You played well.")
    body = "c5,d5#3\ngg\n--\nFred\n"
    assert parse_reply_body(body) == ReplyAction("move", "c5,d5", 3, "gg")


def test_comment_stops_at_an_outlook_original_message() -> None:
    body = "c5,d5\nok\n\n-----Original Message-----\nFrom: abalone@example.org\nresign\n"
    assert parse_reply_body(body) == ReplyAction("move", "c5,d5", None, "ok")
    body = "c5,d5\n________________________________\nFrom: abalone\nresign\n"
    assert parse_reply_body(body) == ReplyAction("move", "c5,d5")


def test_bottom_posting_and_interleaved_quotes() -> None:
    body = OLD_BOARD + "\nc5,d5\nmy comment\n> more old text\nnot part of it\n"
    assert parse_reply_body(body) == ReplyAction("move", "c5,d5", None, "my comment")


def test_first_reply_line_names_what_was_read() -> None:
    assert first_reply_line("> x\n\n  Thanks!  \nmore") == "Thanks!"
    assert first_reply_line("> only quotes\n") is None


def test_extract_comment_for_subject_commands() -> None:
    assert extract_comment("") == ""
    assert extract_comment("Good luck!\n\nOn Mon fred wrote:\n> hi\n") == "Good luck!"
    assert extract_comment("> hi\n\nbottom post\n-- \nsig\n") == "bottom post"
    assert extract_comment("\n  line one\nline two  \n\n") == "  line one\nline two"
    assert extract_comment("-- \nonly a signature\n") == ""


# ----------------------------------------------------------------- mail bodies
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


def test_comment_stops_at_an_outlook_header_block_and_drops_phone_footers() -> None:
    body = (
        "c5,d5\n"
        "Nice one.\n"
        "Sent from my iPhone\n"
        "\n"
        "From: Abalone <abalone@example.org>\n"
        "Sent: Monday, 1 January 2024 10:00\n"
        "To: fred@example.org\n"
        "Subject: Abalone Board 101 fred\n"
        "\n"
        "Summary of Abalone Board 101\n"
    )
    assert parse_reply_body(body) == ReplyAction("move", "c5,d5", None, "Nice one.")
    assert extract_comment("From here on I attack.\nTo: nobody in particular\n") == (
        "From here on I attack.\nTo: nobody in particular"
    )
