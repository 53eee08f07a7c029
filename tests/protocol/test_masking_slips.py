"""A misspelt command never shows its password (DESIGN §2.6: "a password is masked
wherever a command line is stored, logged, quoted or shown, including ... a misspelt
command").

Every command that takes a password is written with every slip the masking reads as
one (``misspelt_commands``), with the game word before it and without it, in every
place a command is read (the Subject, also after ``Re:``, the body's first line under a
blank Subject, a line of ``multiple``); the password stands nowhere in the masked text,
the quote of an answer or the stored copy of the mail.
"""

from __future__ import annotations

import email.policy
from email.message import EmailMessage

import pytest

from abalone_pbm.mail.stored_copy import masked_raw
from abalone_pbm.protocol import COMMANDS, CommandSyntaxError, parse_command
from abalone_pbm.protocol.masking import find_passwords, mask_passwords, quote_original
from abalone_pbm.protocol.registry import COMMAND_WORDS
from abalone_pbm.protocol.words import GAME_WORD
from tests.protocol.misspelt_commands import (
    PASSWORD_STEMS, misspelt_commands, misspelt_lines, slips,
)


def test_the_lines_hold_every_slip_of_every_command_with_a_password() -> None:
    lines = {line: name for line, _, name, _ in misspelt_commands()}
    written_forms = {written for _, _, _, written in misspelt_commands()}
    assert lines["abalone singup bar Secr3tPw1"] == "signup"  # the line that leaked
    assert lines["abalone signup bar hunter1"] == "signup"
    assert lines["abalone chnage password bar Secr3tPw1 Secr3tPw2"] == "change password"
    assert lines["abalnoe change password bar Secr3tPw1 Secr3tPw2"] == "change password"
    both_slipped = [line for line in lines if line.split()[0] in slips("change")
                    and line.split()[1] in slips("password")]
    assert len(both_slipped) >= len(slips("password"))  # each slip, with another
    assert lines["move 101 bar hunter1 c3-c5,d4"] == "abalone move"
    assert lines["liit bar hunter1"] == "abalone limit"  # also a slip of "list"
    # Every command with a password, with each slip of each of its words of four
    # letters or more, with and without the game word.
    for key, spec in COMMAND_WORDS.items():
        if not spec.secret:
            continue
        for form in (key, key[1:] if key[0] == GAME_WORD else (GAME_WORD, *key)):
            for index, word in enumerate(form):
                for slip in slips(word):
                    written = " ".join((*form[:index], slip, *form[index + 1:]))
                    assert written in written_forms, written
    assert len(lines) > 5000


def _stored_copy(subject: str, body: str) -> str:
    message = EmailMessage()
    message["From"] = "stranger@example.org"
    message["To"] = "abalone@localhost"
    message["Subject"] = subject
    message.set_content(body or "\n")
    return masked_raw(message.as_bytes(policy=email.policy.SMTP), ()).decode("utf-8", "replace")


_KNOWN_USERS = {"bar", "wilma"}.__contains__


@pytest.mark.parametrize("stem", PASSWORD_STEMS)
def test_no_slip_of_a_command_shows_its_password(stem: str) -> None:
    shown: list[str] = []
    for line, secrets in misspelt_lines():
        if not secrets[0].startswith(stem):
            continue
        texts = {
            "masked": mask_passwords(line),
            "masked, users known": mask_passwords(line, _KNOWN_USERS),
            "quoted Subject": quote_original(line, ""),
            "quoted Re: Subject": quote_original(f"Re: {line}", "a comment"),
            "quoted first line under a blank Subject": quote_original("", f"{line}\n"),
            "quoted line of multiple": quote_original("multiple", f"help\n{line}\nlist\n"),
        }
        found = find_passwords(line) | find_passwords(line, _KNOWN_USERS)
        for where, text in texts.items():
            if any(secret in text for secret in secrets):
                shown.append(f"{where}: {text!r}")
        if not set(secrets) <= found:
            shown.append(f"not found: {line!r} {found}")
    assert not shown, f"{len(shown)} shown, e.g.\n" + "\n".join(shown[:20])


def test_the_stored_copy_of_a_misspelt_command_holds_no_password() -> None:
    """The stored copy reads the mail by itself (a mail dropped unanswered has no
    passwords found by the server): one slip of each kind of each command's words."""
    shown: list[str] = []
    for number, (line, secrets) in enumerate(misspelt_lines()):
        if number % 7:  # (every seventh line: each takes a mail's parse and writing)
            continue
        for subject, body in ((line, ""), ("", f"{line}\n"), ("hello", f"{line}\n")):
            copy = _stored_copy(subject, body)
            if any(secret in copy for secret in secrets):
                shown.append(f"{subject!r} / {body!r}")
    assert not shown, f"{len(shown)} shown, e.g.\n" + "\n".join(shown[:20])


@pytest.mark.parametrize(("line", "masked"), [
    ("abalone singup bar Secr3tPw", "abalone singup bar ********"),
    ("abalone signup bar Secr3tPw", "abalone signup bar ********"),
    ("singup bar ney Secr3tPw", "singup bar ******** ********"),
    ("abalone singup bar ney", "abalone singup bar ********"),
    ("ablaone vacation bar hunter on", "ablaone vacation bar ******** on"),
    ("abalone change password bar Old1 New2", "abalone change password bar ******** ********"),
    # "liit" is a slip of "limit" (a password) and of "list" (none): masked as limit
    ("liit bar hunter", "liit bar ********"),
    ("limt bar hunter 3", "limt bar ******** 3"),
    # the game word alone on a line, the command folded into the next ones
    ("abalone\n signup\n bar hunter", "abalone\n signup\n bar ********"),
])
def test_a_server_command_after_the_game_word_and_an_ambiguous_slip_are_masked(
        line: str, masked: str) -> None:
    assert mask_passwords(line) == masked


@pytest.mark.parametrize("line", [
    "abalone signup for the tournament now",
    "Abalone list of games",
    "abalone help signup",
    "abalone delete fred from the list",
    "Abalone change of plans: meet at 5PM on A1",
    "abalone vacation in June was great",
    "list of the games fred plays",
])
def test_prose_after_the_game_word_stays_as_written(line: str) -> None:
    assert mask_passwords(line) == line


@pytest.mark.parametrize(("subject", "name"), [
    ("abalone singup bar Secr3tPw", "signup"),  # not "abalone resign"
    ("abalone signof bar Secr3tPw", "signoff"),
    ("abalone chnage password bar Old1 New2", "change password"),
    ("abalone resing 101 bar Secr3tPw", "abalone resign"),
    ("abalone standing", "abalone standings"),
    ("abalone tournament jion spring bar Secr3tPw", "abalone tournament join"),
    ("abalone blah blah blah", "abalone help"),
])
def test_the_answer_to_a_slip_after_the_game_word_shows_the_command_meant(
        subject: str, name: str) -> None:
    """The answer's usage line is of the command whose own words the words after the
    game word resemble, not of one that only shares the game word."""
    with pytest.raises(CommandSyntaxError) as raised:
        parse_command(subject)
    assert raised.value.syntax == f'Syntax is "{COMMANDS[name].syntax}"'
    assert "Secr3tPw" not in raised.value.message
