"""Commands with a password written with each kind of slip the masking reads as one
(rule 2 of ``protocol.masking``: in a command word of four letters or more, a letter
left out, changed or swapped with its neighbour) at every place of every word, with
the game word before them and without it: for the tests that such a line shows its
password nowhere."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from string import ascii_lowercase

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


def slips(word: str) -> list[str]:
    """The slips of ``word`` the masking reads as that word (none under four letters):
    each letter left out, changed to a key beside it (the masking takes any letter; a
    changed letter's place decides its reading, the letter does not), swapped with
    the next; and each letter put in (``put_in``)."""
    if len(word) < 4:
        return []
    left_out = [word[:i] + word[i + 1:] for i in range(len(word))]
    changed = [word[:i] + near + word[i + 1:]
               for i, letter in enumerate(word) for near in _neighbours(letter)]
    swapped = [word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)]
    return [slip for slip in dict.fromkeys(left_out + changed + swapped + put_in(word))
            if slip != word]


def put_in(word: str) -> list[str]:
    """``word`` (four letters or more) with one letter put in at each place: the letters
    beside that place doubled ("signnup", "signupp"), the letters of English endings
    ("s", "d", "r": what the masking reads apart), and four more that change from place
    to place, so that every letter a-z is put in somewhere in every word of seven
    letters or more.  The masking reads such a word of a command with a password for
    hiding its passwords only (the command is not run); it looks at the letter only for
    an ending, so a few letters a place stand for all of them (the whole alphabet at
    every place made three times the lines and half a minute more of tests)."""
    if len(word) < 4:
        return []
    return list(dict.fromkeys(
        word[:i] + letter + word[i:]
        for i in range(len(word) + 1)
        for letter in (*word[max(0, i - 1):i + 1], "s", "d", "r",
                       *(ascii_lowercase[(4 * i + k) % 26] for k in range(4)))))


def _written(words: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """The command's words as written: right, with one slip in one word, and with a
    slip in every word of four letters or more at once (each slip of each word in some
    line: the lists of slips side by side, the shorter ones taken again from the start)."""
    yield words
    each_word = [slips(word) for word in words]
    for index, of_word in enumerate(each_word):
        for slip in of_word:
            yield (*words[:index], slip, *words[index + 1:])
    if sum(1 for of_word in each_word if of_word) >= 2:
        for n in range(max(len(of_word) for of_word in each_word)):
            yield tuple(of_word[n % len(of_word)] if of_word else word
                        for word, of_word in zip(words, each_word))


#: What stands for each word of a syntax other than a password.
_FILLING = {"<board>": "101", "<userid>": "bar", "<address>": "bar@example.org",
            "<to-userid>": "wilma", "on|off": "on", "text|html": "text", "<N>": "3",
            "<move>": "c3-c5,d4", "<name>": "spring", "<code>": "k3x9q7mf2a"}
#: Passwords as people choose them: written as passwords are, and a plain word.
PASSWORD_STEMS = ("Secr3tPw", "hunter")


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
def misspelt_lines() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every command with a password, written with each slip, with and without the game
    word; each line with its passwords."""
    return tuple((line, secrets) for line, secrets, _, _ in misspelt_commands())


@cache
def misspelt_commands() -> tuple[tuple[str, tuple[str, ...], str, str], ...]:
    """The lines of ``misspelt_lines``, each with its passwords, its command and its
    command's words as written."""
    lines: dict[str, tuple[tuple[str, ...], str, str]] = {}
    for key, spec in COMMAND_WORDS.items():
        if not spec.secret:
            continue
        other_form = key[1:] if key[0] == GAME_WORD else (GAME_WORD, *key)
        for stem in PASSWORD_STEMS:
            arguments, secrets = _arguments(spec, stem)
            for form in (key, other_form):
                for words in _written(form):
                    lines[" ".join([*words, *arguments])] = (
                        tuple(secrets), spec.name, " ".join(words))
    return tuple((line, *found) for line, found in lines.items())


@cache
def misspelt_without_userid() -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """Every command whose userid stands right before its password, written with each
    slip (``_written``), with and without the game word, its userid left out and its
    passwords written as passwords are (``liit Secr3tPw1``, ``sigup Secr3tPw1``,
    ``resgn 101 Secr3tPw1``); each line with its passwords and its command."""
    lines: dict[str, tuple[tuple[str, ...], str]] = {}
    for key, spec in COMMAND_WORDS.items():
        tokens = spec.syntax.split()[len(spec.words):]
        if not spec.secret or tokens[min(spec.secret) - 1:min(spec.secret)] != ["<userid>"]:
            continue
        arguments, secrets = _arguments(spec, PASSWORD_STEMS[0])
        # (The required words before the password are written as the syntax has them:
        # the userid is the last of them.)
        userid_at = sum(1 for token in tokens[:min(spec.secret)] if not token.startswith("["))
        del arguments[userid_at - 1]
        other_form = key[1:] if key[0] == GAME_WORD else (GAME_WORD, *key)
        for form in (key, other_form):
            for words in _written(form):
                lines[" ".join([*words, *arguments])] = (tuple(secrets), spec.name)
    return tuple((line, *found) for line, found in lines.items())
