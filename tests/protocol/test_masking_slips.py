"""A misspelt command never shows its password (DESIGN §2.6: "a password is masked
wherever a command line is stored, logged, quoted or shown, including ... a misspelt
command").

Every command that takes a password is written with every slip the masking reads as
one (rule 2 of ``protocol.masking``: in a command word of four letters or more, a
letter left out, changed or swapped with its neighbour), with the game word before it
and without it, in every place a command is read (the Subject, also after ``Re:``, the
body's first line under a blank Subject, a line of ``multiple``); the password stands
nowhere in the masked text, the quote of an answer or the stored copy of the mail.
"""

from __future__ import annotations

import email.policy
from collections.abc import Iterator
from email.message import EmailMessage
from functools import cache

import pytest

from abalone_pbm.mail.stored_copy import masked_raw
from abalone_pbm.protocol.masking import find_passwords, mask_passwords, quote_original
from abalone_pbm.protocol.registry import COMMAND_WORDS, CommandSpec
from abalone_pbm.protocol.words import GAME_WORD

#: The keys next to each letter on a QWERTY keyboard: what a changed letter most often is.
_QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours(letter: str) -> str:
    """The letters beside ``letter`` on its row and above and below it."""
    for row_number, row in enumerate(_QWERTY_ROWS):
        column = row.find(letter)
        if column < 0:
            continue
        near = {row[i] for i in (column - 1, column + 1) if 0 <= i < len(row)}
        for other in (row_number - 1, row_number + 1):
            if 0 <= other < len(_QWERTY_ROWS):
                near |= {_QWERTY_ROWS[other][i] for i in (column - 1, column, column + 1)
                         if 0 <= i < len(_QWERTY_ROWS[other])}
        return "".join(sorted(near))
    return ""


def _slips(word: str) -> list[str]:
    """Every slip of ``word`` the masking reads as that word (none under four letters):
    each letter left out, changed to a key beside it, swapped with the next."""
    if len(word) < 4:
        return []
    left_out = [word[:i] + word[i + 1:] for i in range(len(word))]
    changed = [word[:i] + near + word[i + 1:]
               for i, letter in enumerate(word) for near in _neighbours(letter)]
    swapped = [word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)]
    return [slip for slip in dict.fromkeys(left_out + changed + swapped) if slip != word]


def _written(words: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """The command's words as written: right, with one slip in one word, and with a
    slip in every word of four letters or more at once (each slip of each word in some
    line: the lists of slips side by side, the shorter ones taken again from the start)."""
    yield words
    slips = [_slips(word) for word in words]
    for index, of_word in enumerate(slips):
        for slip in of_word:
            yield (*words[:index], slip, *words[index + 1:])
    if sum(1 for of_word in slips if of_word) >= 2:
        for n in range(max(len(of_word) for of_word in slips)):
            yield tuple(of_word[n % len(of_word)] if of_word else word
                        for word, of_word in zip(words, slips))


#: What stands for each word of a syntax other than a password.
_FILLING = {"<board>": "101", "<userid>": "bar", "<address>": "bar@example.org",
            "<to-userid>": "wilma", "on|off": "on", "text|html": "text", "<N>": "3",
            "<move>": "c3-c5,d4", "<name>": "spring", "<code>": "k3x9q7mf2a"}
#: Passwords as people choose them: written as passwords are, and a plain word.
_PASSWORD_STEMS = ("Secr3tPw", "hunter")


def _arguments(spec: CommandSpec, stem: str) -> tuple[list[str], list[str]]:
    """The words after the command's words (its required ones, each password a word of
    its own made from ``stem``), and the passwords among them."""
    tokens = spec.syntax.split()[len(spec.words):]
    words: list[str] = []
    secrets: list[str] = []
    for index, token in enumerate(tokens):
        if index in spec.secret:
            secrets.append(f"{stem}{len(secrets) + 1}")
            words.append(secrets[-1])
        elif not token.startswith("["):
            words.append(_FILLING[token.removesuffix("...")])
    return words, secrets


@cache
def _misspelt_lines() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every command with a password, written with each slip, with and without the game
    word; each line with its passwords."""
    return tuple((line, secrets) for line, secrets, _, _ in _misspelt_commands())


@cache
def _misspelt_commands() -> tuple[tuple[str, tuple[str, ...], str, str], ...]:
    """The lines of ``_misspelt_lines``, each with its passwords, its command and its
    command's words as written."""
    lines: dict[str, tuple[tuple[str, ...], str, str]] = {}
    for key, spec in COMMAND_WORDS.items():
        if not spec.secret:
            continue
        other_form = key[1:] if key[0] == GAME_WORD else (GAME_WORD, *key)
        for stem in _PASSWORD_STEMS:
            arguments, secrets = _arguments(spec, stem)
            for form in (key, other_form):
                for words in _written(form):
                    lines[" ".join([*words, *arguments])] = (
                        tuple(secrets), spec.name, " ".join(words))
    return tuple((line, *found) for line, found in lines.items())


def test_the_lines_hold_every_slip_of_every_command_with_a_password() -> None:
    lines = {line: name for line, _, name, _ in _misspelt_commands()}
    written_forms = {written for _, _, _, written in _misspelt_commands()}
    assert lines["abalone singup bar Secr3tPw1"] == "signup"  # the line that leaked
    assert lines["abalone signup bar hunter1"] == "signup"
    assert lines["abalone chnage password bar Secr3tPw1 Secr3tPw2"] == "change password"
    assert lines["abalnoe change password bar Secr3tPw1 Secr3tPw2"] == "change password"
    both_slipped = [line for line in lines if line.split()[0] in _slips("change")
                    and line.split()[1] in _slips("password")]
    assert len(both_slipped) >= len(_slips("password"))  # each slip, with another
    assert lines["move 101 bar hunter1 c3-c5,d4"] == "abalone move"
    assert lines["liit bar hunter1"] == "abalone limit"  # also a slip of "list"
    # Every command with a password, with each slip of each of its words of four
    # letters or more, with and without the game word.
    for key, spec in COMMAND_WORDS.items():
        if not spec.secret:
            continue
        for form in (key, key[1:] if key[0] == GAME_WORD else (GAME_WORD, *key)):
            for index, word in enumerate(form):
                for slip in _slips(word):
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


@pytest.mark.parametrize("stem", _PASSWORD_STEMS)
def test_no_slip_of_a_command_shows_its_password(stem: str) -> None:
    shown: list[str] = []
    for line, secrets in _misspelt_lines():
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
    for number, (line, secrets) in enumerate(_misspelt_lines()):
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
