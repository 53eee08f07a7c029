"""A command behind what mail programs and mail systems put first in a Subject (DESIGN
§2.1: a leading ``Re:`` is ignored): reply and forward prefixes in other languages and
scripts ("Odp:", "Vá:", "ΑΠ:", "回复：", "RE：" with a full-width colon), and the tags a
gateway adds ("[EXTERNAL]", "[Possible Spam]", "*SPAM*", "[list-name]").

The head is passed over only where a command follows it; a line that names a command
as it stands, one that begins with a command word glued to a colon ("abalone: ...",
"move: ..."), and prose behind a head ("Note: I will be away") read as before.
"""

from __future__ import annotations

import time

import pytest

from abalone_pbm.mail.intake import board_of_subject
from abalone_pbm.protocol import CommandSyntaxError, commands as c, parse_command
from abalone_pbm.protocol.grammar import command_line
from abalone_pbm.protocol.masking import PASSWORD_MASK, mask_passwords
from abalone_pbm.protocol.reply import ReplyAction, subject_action
from abalone_pbm.protocol.words import SUBJECT_HEAD_RE

#: Heads as mail programs and mail systems write them, one or several.
HEADS = (
    "Odp:", "ODP:", "Vá:", "VS:", "ΑΠ:", "ΠΡΘ:", "Ynt:", "YNT:", "回复：", "回复:", "答复：",
    "回覆：", "RE：", "R:", "Rif:", "I:", "Doorst:", "Fw:", "FW:", "Odg:", "Atb:", "RES:",
    "השב:", "رد:", "TR :", "Re[2]:", "AW(3):", "[EXTERNAL]", "[EXT]", "[Possible Spam]",
    "[abalone-players]", "*SPAM*", "***SPAM***", "*** SPAM ***", "{Spam?}",
    "[EXTERNAL] RE:", "Re: [EXT] AW:", "Odp: Odp:", "回复： Re:", "[abalone-players] Odp:",
    "*SPAM* [EXTERNAL] Vá:",
)

#: Commands read behind every head exactly as alone.
COMMANDS = (
    "abalone move 101 fred Secr3tPw c3-c5,d4",
    "abalone move 101 fred Secr3tPw c3-c5,d4#1",
    "abalone show 101",
    "abalone show 101#3 102",
    "signup fred Secr3tPw fred@example.org",
    "limit fred Secr3tPw 3",
    "help move",
)


def _outcome(subject: str) -> object:
    """The command a Subject is read as, or the answer to it (message and usage)."""
    try:
        return parse_command(subject, "")
    except CommandSyntaxError as error:
        return ("error", str(error))


@pytest.mark.parametrize("head", HEADS)
@pytest.mark.parametrize("line", COMMANDS)
def test_a_command_behind_a_head_is_read_as_alone(head: str, line: str) -> None:
    alone = parse_command(line, "")
    assert parse_command(f"{head} {line}", "") == alone
    assert parse_command(f"Re: {head} {line}", "") == alone
    assert command_line(f"{head} {line}") == line


@pytest.mark.parametrize("head", HEADS)
def test_the_commands_the_brief_names_behind_each_head(head: str) -> None:
    move = parse_command(f"{head} abalone move 12 fred Secr3tPw a1-b2", "")
    assert isinstance(move, c.Move)
    assert (move.board, move.userid, move.password, move.move_text) == (12, "fred", "Secr3tPw",
                                                                   "a1-b2")
    assert parse_command(f"{head} abalone show 12", "") == c.ShowBoards((c.ShowBoard(12),))
    signup = parse_command(f"{head} signup fred Secr3tPw", "")
    assert isinstance(signup, c.Signup)
    assert (signup.userid, signup.password) == ("fred", "Secr3tPw")


@pytest.mark.parametrize("head", HEADS)
def test_a_mistyped_command_behind_a_head_gets_the_answer_it_gets_alone(head: str) -> None:
    """A command with a slip in its arguments is still that command, and a line that
    begins with a command's first word is read too: its own answer, not "Unknown
    command" for the head."""
    for line in ("abalone move 12 a1-b2", "signup fred", "abalone show 101#x",
                 "abalone challenge", "abalone", "abalone frobnicate 12",
                 "abalone signup fred Secr3tPw"):
        alone = _outcome(line)
        assert isinstance(alone, tuple)  # each is an error
        assert _outcome(f"{head} {line}") == alone


@pytest.mark.parametrize("head", HEADS)
def test_the_password_behind_a_head_is_masked(head: str) -> None:
    for line in ("signup fred Secr3tPw", "abalone move 12 fred Secr3tPw a1-b2"):
        masked = mask_passwords(f"{head} {line}")
        assert "Secr3tPw" not in masked and PASSWORD_MASK in masked, masked
        assert masked.startswith(f"{head} ")


@pytest.mark.parametrize("subject, answer", [
    # Prose behind a head: what follows names no command.
    ("Note: I will be away", 'Unknown command "Note:"'),
    ("Re: Note: I will be away", 'Unknown command "Note:"'),
    ("Odp: see you tomorrow", 'Unknown command "Odp:"'),
    ("[EXTERNAL] thanks for the game", 'Unknown command "[EXTERNAL]"'),
    ("*SPAM* cheap watches", 'Unknown command "*SPAM*"'),
    # A head and nothing that names a command after it.
    ("Odp:", 'Unknown command "Odp:"'),
    ("[EXTERNAL]", 'Unknown command "[EXTERNAL]"'),
    # A command word glued to a colon is the command with a slip, never a head.
    ("abalone: move 101 fred pw c3-c5,d4", 'Unknown command "abalone:"'),
    ("abalone: limit fred pw 3", 'Unknown command "abalone:"'),
    ("Abalone : show 101", 'Unknown command "abalone :"'),
    ("move: 101 fred pw c3-c5,d4", 'Unknown command "move:"'),
    ("help: abalone show 101", 'Unknown command "help:"'),
    ("signup: fred pw", 'Unknown command "signup:"'),
    ("limit: abalone show 101", 'Unknown command "limit:"'),
    # An ASCII colon needs a blank after it to end a head (no "http:", "c3:c4").
    ("Odp:abalone show 101", 'Unknown command "Odp:abalone"'),
    ("http://example.org abalone show 101", 'Unknown command "http://example.org"'),
])
def test_lines_that_name_no_command_get_the_answer_they_got(subject: str, answer: str) -> None:
    outcome = _outcome(subject)
    assert isinstance(outcome, tuple) and outcome[1].startswith(answer + "\n"), outcome


@pytest.mark.parametrize("subject, expected", [
    # A line that names a command as it stands keeps every word, colons and tags
    # included.
    ("help Odp: abalone", c.Help(("odp:", "abalone"))),
    ("help [EXTERNAL] move", c.Help(("[external]", "move"))),
    ("Re: abalone show 101", c.ShowBoards((c.ShowBoard(101),))),
    ("limit fred pw 3", c.Limit("fred", "pw", 3)),
    # A word that is no command word (a userid too) is a head where a command follows.
    ("fred: abalone show 101", c.ShowBoards((c.ShowBoard(101),))),
])
def test_lines_that_name_a_command_read_as_they_stand(subject: str, expected: object) -> None:
    assert parse_command(subject, "") == expected


def test_a_password_with_a_colon_or_brackets_stays_the_password() -> None:
    signup = parse_command("Odp: signup fred Pass:word", "")
    assert isinstance(signup, c.Signup) and signup.password == "Pass:word"
    signup = parse_command("[EXTERNAL] signup fred [Secr3t]", "")
    assert isinstance(signup, c.Signup) and signup.password == "[Secr3t]"


def test_each_line_of_a_multiple_is_read_behind_a_head_too() -> None:
    assert parse_command("Odp: abalone show 101", "") == parse_command("abalone show 101", "")
    multiple = parse_command("[EXTERNAL] multiple", "Odp: abalone show 101\n")
    assert isinstance(multiple, c.Multiple)


@pytest.mark.parametrize("subject, board", [
    ("Odp: abalone move 101 fred pw c3-c4", 101),
    ("[EXTERNAL] RE: abalone show 102#5", 102),
    ("回复：accept 103 fred pw", 103),
    ("*SPAM* abalone show board 104", 104),
    ("Note: abalone show 105 is nice", 105),  # (a command follows the head)
    ("abalone: show 106", None),
    ("Note: board 107", None),
])
def test_the_board_of_a_subject_is_found_behind_a_head(subject: str, board: int | None) -> None:
    """The listener orders a mail behind the other mails of the board its Subject
    names: the same line the grammar reads."""
    assert board_of_subject(subject) == board


@pytest.mark.parametrize("subject, expected", [
    ("Odp: Abalone Board 101 fred c3-c5,d4", ReplyAction("move", "c3-c5,d4")),
    ("[EXTERNAL] RE: Abalone Board 101 fred - c3-c5,d4", ReplyAction("move", "c3-c5,d4")),
    ("*SPAM* Re: New Abalone Board 101 fred ** resign", ReplyAction("resign")),
    ("回复：Abalone Board 101 fred c3-c5,d4#3", ReplyAction("move", "c3-c5,d4", 3)),
    ("RE：Abalone Board 101 fred c3-c5,d4", ReplyAction("move", "c3-c5,d4")),
    ("[EXTERNAL] c3-c5,d4", ReplyAction("move", "c3-c5,d4")),
    ("Ynt: resign", ReplyAction("resign")),
    ("{Spam?} Vá: show", ReplyAction("show")),
    ("Odp: Abalone Board 101 fred", None),
    ("[EXTERNAL] Odp: Abalone Board 101 fred **", None),
    ("Odp: Abalone Board 102 fred c3-c5,d4", None),  # another board
    ("Note: I will be away", None),
    # The move typed before the board mail's Subject and its prefixes.
    ("c3-c5,d4 Odp: Abalone Board 101 fred", ReplyAction("move", "c3-c5,d4")),
    ("resign [EXTERNAL] Vá: Abalone Board 101 fred", ReplyAction("resign")),
    ("c3-c5,d4 回复：Abalone Board 101", ReplyAction("move", "c3-c5,d4")),
    ("c3-c5,d4#3 - Re[2]: AW: Abalone Board 101 fred", ReplyAction("move", "c3-c5,d4", 3)),
    ("c3-c5,d4 Odp: Abalone Board 102 fred", None),  # another board
    ("I think Odp: Abalone Board 101 fred", None),
    ("c3-c5,d4 Odp: Abalone Board 101 fred c5,d5", None),  # two moves: which one?
])
def test_a_reply_subject_is_read_behind_a_head(subject: str,
                                               expected: ReplyAction | None) -> None:
    assert subject_action(subject, 101, ("fred", "wilma")) == expected


def _seconds(subject: str) -> float:
    started = time.process_time()
    _outcome(subject)
    command_line(subject)
    board_of_subject(subject)
    return time.process_time() - started


@pytest.mark.parametrize("piece, tail", [
    ("Odp: ", "abalone show 101"),
    ("[EXT] Vá: *SPAM* ", "signup fred Secr3tPw"),
    ("Odp: ", "I will be away"),
    ("回复：", ""),
    ("Note: ", "abalone"),
])
def test_a_subject_of_16000_heads_is_cheap_and_linear(piece: str, tail: str) -> None:
    """A stranger's Subject of nothing but heads is read in one pass: 16,000 heads cost
    little, and four times the heads about four times the time, not sixteen."""
    assert SUBJECT_HEAD_RE.match(piece * 16_000 + tail) is not None
    if tail:
        # What begins with a command's first word is read behind the heads; prose not.
        assert command_line(piece * 3 + tail) == (tail if tail.startswith(("abalone", "signup"))
                                                 else (piece * 3 + tail).strip())
    _seconds(piece * 500 + tail)  # (warm)
    small = min(_seconds(piece * 4_000 + tail) for _ in range(3))
    large = min(_seconds(piece * 16_000 + tail) for _ in range(3))
    assert large < 0.25, large
    assert large < 8 * small + 0.01, (small, large)


def test_every_command_begins_with_a_word_read_behind_a_head() -> None:
    """What follows a head is read when its first word is a command's first word: so
    every command, its aliases included, begins with one of those words."""
    from abalone_pbm.protocol.grammar import _FIRST_WORDS
    from abalone_pbm.protocol.registry import COMMAND_WORDS

    assert {words[0] for words in COMMAND_WORDS} <= _FIRST_WORDS
