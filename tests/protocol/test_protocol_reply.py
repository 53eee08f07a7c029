"""Moving by reply (DESIGN 2.2): the reply address, the first line, the comment."""

from __future__ import annotations

import pytest

from abalone_pbm.protocol.comments import extract_comment
from abalone_pbm.protocol.reply import (
    ReplyAction,
    first_reply_line,
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
    body = OLD_BOARD + "\nc5,d5\nmy comment\n> more old text\nan inline answer\n"
    assert parse_reply_body(body) == ReplyAction(
        "move", "c5,d5", None, "my comment\n\nan inline answer")


def test_first_reply_line_names_what_was_read() -> None:
    assert first_reply_line("> x\n\n  Thanks!  \nmore") == "Thanks!"
    assert first_reply_line("> only quotes\n") is None


def test_extract_comment_for_subject_commands() -> None:
    assert extract_comment("") == ""
    assert extract_comment("Good luck!\n\nOn Mon fred wrote:\n> hi\n") == "Good luck!"
    assert extract_comment("> hi\n\nbottom post\n-- \nsig\n") == "bottom post"
    assert extract_comment("\n  line one\nline two  \n\n") == "  line one\nline two"
    assert extract_comment("-- \nonly a signature\n") == ""


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


# ---------------------------------------------------------------- the Subject
@pytest.mark.parametrize(
    "subject, expected",
    [
        ("c3-c5,d4", ReplyAction("move", "c3-c5,d4")),
        ("resign", ReplyAction("resign")),
        ("c3-c5,d4 Re: Abalone Board 101 fred", ReplyAction("move", "c3-c5,d4")),
        ("Abalone Board 101 fred c3-c5,d4", ReplyAction("move", "c3-c5,d4")),
        ("New Abalone Board 101 fred ** c3-c5,d4#3", ReplyAction("move", "c3-c5,d4", 3)),
        ("Abalone Board 101 fred", None),
        ("Abalone Board 101 fred **", None),
        ("Abalone Board 101 accept", None),  # the userid of the player to move
        ("Abalone Board 102 fred c3-c5,d4", None),  # another board
        ("c3-c5,d4 Abalone Board 101 fred c5,d5", None),  # two moves: which one?
        ("Abalone Board 101 fred thanks", None),
    ],
)
def test_subject_action(subject: str, expected: ReplyAction | None) -> None:
    from abalone_pbm.protocol.reply import subject_action

    assert subject_action(subject, 101, ("fred", "accept")) == expected
