"""A misspelt command never shows its password (DESIGN §2.6: "a password is masked
wherever a command line is stored, logged, quoted or shown, including ... a misspelt
command").

Every command that takes a password is written with every slip the masking reads as
one (``misspelt_commands``: also letters put in each command word, every letter a-z
somewhere), with the
game word before it and without it, in every place a command is read (the Subject,
also after ``Re:``, the body's first line under a blank Subject, a line of
``multiple``); the password stands nowhere in the masked text, the quote of an answer
or the stored copy of the mail. The same with the userid left out and the password
written as passwords are (``misspelt_without_userid``: ``liit Secr3tPw``).
"""

from __future__ import annotations

from string import ascii_lowercase

import email.policy
from email.message import EmailMessage

import pytest

from abalone_pbm.mail.stored_copy import masked_raw
from abalone_pbm.protocol import COMMANDS, CommandSyntaxError, parse_command
from abalone_pbm.protocol.masking import (
    UseridCheck, mask_and_find_passwords, mask_passwords, quote_original,
)
from abalone_pbm.protocol.registry import COMMAND_WORDS
from abalone_pbm.protocol.words import GAME_WORD
from tests.protocol.misspelt_commands import (
    PASSWORD_STEMS, misspelt_commands, misspelt_lines, misspelt_without_userid, put_in, slips,
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
    # a letter put in: doubled, or any other, at any place
    assert lines["signnup bar hunter1"] == "signup"
    assert lines["abalone passwword set bar hunter1 hunter2"] == "password set"
    assert lines["signupz bar Secr3tPw1"] == lines["asignup bar Secr3tPw1"] == "signup"
    assert lines["signups bar hunter1"] == "signup"
    # At each place the doubled letters, the endings and four letters more; every letter
    # of the alphabet somewhere in a word of seven letters or more.
    assert {"ssignup", "siignup", "signupp", "signups", "signupd", "signupr"} <= set(
        put_in("signup"))
    assert {put[i] for i in range(9) for put in put_in("password")
            if put[:i] + put[i + 1:] == "password"} == set(ascii_lowercase)
    assert {"ssignup", "siignup", "signupp"} <= set(put_in("signup")) <= set(slips("signup"))
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
    assert len(lines) > 25_000


_KNOWN_USERS = {"bar", "wilma"}.__contains__
#: Where a command is read, and how a line stands there: (Subject, body) for
#: quote_original ("{line}" stands for the line).
_QUOTED_PLACES: dict[str, tuple[str, str]] = {
    "quoted Subject": ("{line}", ""),
    "quoted Re: Subject": ("Re: {line}", "a comment"),
    "quoted first line under a blank Subject": ("", "{line}\n"),
    "quoted line of multiple": ("multiple", "help\n{line}\nlist\n"),
}
#: Every word of a command with a letter put in (see put_in).
_PUT_IN_WORDS = frozenset(slip for key in COMMAND_WORDS for word in key for slip in put_in(word))


def _shown(line: str, secrets: tuple[str, ...], places: list[str],
           readings: tuple[UseridCheck, ...] = (_KNOWN_USERS, None)) -> list[str]:
    """Where ``line`` shows one of its ``secrets``: masked and found in each of
    ``readings`` (with the users "bar" and "wilma" known, as the server reads a mail;
    with no userid check, as a stored copy is read), and quoted in each of ``places``
    (read with no userid check)."""
    shown = []
    for is_userid in readings:
        masked, found = mask_and_find_passwords(line, is_userid)
        if any(secret in masked for secret in secrets):
            shown.append(f"masked, users {'known' if is_userid else 'unknown'}: {masked!r}")
        if not set(secrets) <= found:
            shown.append(f"not found: {line!r} {found}")
    for place in places:
        subject, body = (text.replace("{line}", line) for text in _QUOTED_PLACES[place])
        quoted = quote_original(subject, body)
        if any(secret in quoted for secret in secrets):
            shown.append(f"{place}: {quoted!r}")
    return shown


@pytest.mark.parametrize("stem", PASSWORD_STEMS)
def test_no_slip_of_a_command_shows_its_password(stem: str) -> None:
    """Each line masked and found with the users known, and quoted: a line with a letter
    put in (four in five lines) in one place, in turn; every other line in every place,
    and masked and found with no userid check too."""
    shown: list[str] = []
    places = list(_QUOTED_PLACES)
    put_in_lines = 0
    for line, secrets, _, written in misspelt_commands():
        if not secrets[0].startswith(stem):
            continue
        if _PUT_IN_WORDS & set(written.split()):
            shown += _shown(line, secrets, [places[put_in_lines % len(places)]],
                            readings=(_KNOWN_USERS,))
            put_in_lines += 1
        else:
            shown += _shown(line, secrets, places)
    assert put_in_lines > 7_000
    assert not shown, f"{len(shown)} shown, e.g.\n" + "\n".join(shown[:20])


#: Commands whose word after the password may be a userid or a second password
#: ("message Pw wilma", "change password Old1 New2"): with the userid left out only a
#: userid check tells that the first word is no userid (rule 2: the server reads with
#: one; without it the word in the userid's place is kept as the userid).
_TOLD_BY_USERS = {"message", "change password", "password set"}


def test_no_slip_of_a_command_without_its_userid_shows_its_password() -> None:
    """``liit Secr3tPw``, ``sigup Secr3tPw``, ``resgn 101 Secr3tPw``: every command whose
    userid stands before its password, with every slip, the userid left out."""
    shown: list[str] = []
    places = list(_QUOTED_PLACES)
    lines = misspelt_without_userid()
    for number, (line, secrets, name) in enumerate(lines):
        if name in _TOLD_BY_USERS:
            shown += _shown(line, secrets, [], readings=(_KNOWN_USERS,))
        else:
            shown += _shown(line, secrets, [places[number % len(places)]],
                            readings=(_KNOWN_USERS,))
    assert len(lines) > 12_000
    assert {"liit Secr3tPw1", "sigup Secr3tPw1", "resgn 101 Secr3tPw1",
            "signnup Secr3tPw1"} <= {line for line, _, _ in lines}
    assert not shown, f"{len(shown)} shown, e.g.\n" + "\n".join(shown[:20])


def _stored_copy(subject: str, body: str) -> str:
    message = EmailMessage()
    message["From"] = "stranger@example.org"
    message["To"] = "abalone@localhost"
    message["Subject"] = subject
    message.set_content(body or "\n")
    return masked_raw(message.as_bytes(policy=email.policy.SMTP), ()).decode("utf-8", "replace")


def test_the_stored_copy_of_a_misspelt_command_holds_no_password() -> None:
    """The stored copy reads the mail by itself (a mail dropped unanswered has no
    passwords found by the server): one slip of each kind of each command's words."""
    shown: list[str] = []
    for number, (line, secrets) in enumerate(misspelt_lines()):
        if number % 37:  # (every 37th line: each takes a mail's parse and writing)
            continue
        for subject, body in ((line, ""), ("", f"{line}\n"), ("hello", f"{line}\n")):
            copy = _stored_copy(subject, body)
            if any(secret in copy for secret in secrets):
                shown.append(f"{subject!r} / {body!r}")
    assert not shown, f"{len(shown)} shown, e.g.\n" + "\n".join(shown[:20])


M = "********"


@pytest.mark.parametrize(("line", "masked"), [
    ("signnup bar hunter", f"signnup bar {M}"),
    ("abalone signnup bar hunter", f"abalone signnup bar {M}"),
    ("abalone passwword set bar k3x9q7mf2a hunter", f"abalone passwword set bar {M} {M}"),
    ("abalonne move 101 bar hunter c3-c5,d4", f"abalonne move 101 bar {M} c3-c5,d4"),
    ("resignn 101 bar hunter", f"resignn 101 bar {M}"),
    ("vacationn bar hunter on", f"vacationn bar {M} on"),
    ("change paassword bar old new", f"change paassword bar {M} {M}"),
    ("ashowas bar hunter", f"ashowas bar {M}"),
    # an English ending: a word of prose in the password's place is the sentence
    # going on; another word is a password
    ("signups bar hunter1", f"signups bar {M}"),
    ("deleted fred Secr3tPw", f"deleted fred {M}"),
    ("changes password fred old Secr3tPw", f"changes password fred old {M}"),
])
def test_a_letter_put_in_a_command_word_hides_its_passwords_in_every_place(
        line: str, masked: str) -> None:
    secrets = set(line.split()) - set(masked.split())
    assert mask_passwords(line) == masked
    for subject, body in _QUOTED_PLACES.values():
        quoted = quote_original(subject.replace("{line}", line), body.replace("{line}", line))
        assert masked in quoted and not any(secret in quoted for secret in secrets), quoted


@pytest.mark.parametrize(("line", "masked"), [
    ("liit Secr3tPw", f"liit {M}"),
    ("sigup Secr3tPw", f"sigup {M}"),
    ("sigup Secr3tPw bar@example.org", f"sigup {M} bar@example.org"),
    ("resgn 101 Secr3tPw", f"resgn 101 {M}"),
    ("chta 101 Secr3tPw", f"chta 101 {M}"),
    ("shwas Secr3tPw", f"shwas {M}"),
    ("limt Secr3tPw 3", f"limt {M} 3"),
])
def test_a_password_shaped_word_after_a_short_slip_without_the_userid_is_masked(
        line: str, masked: str) -> None:
    assert mask_passwords(line) == masked
    assert quote_original("", line) == f"> Subject:\n>\n> {masked}"


@pytest.mark.parametrize("line", [
    # a letter put in that is an English ending, prose after it (rule 2)
    "deleted fred yesterday",
    "Messages from fred are nice",
    "messages from fred",
    "Moves are great",
    "limits are fine",
    "signups were many",
    # a short slip before a name written as passwords are, and a sentence after it
    "see McDonald at the club",
    "that iPhone rocks",
    "What McDonald said",
    "More iPhones",
    "liit Secr3tPw is what I typed",
])
def test_prose_after_a_slip_or_an_english_ending_stays(line: str) -> None:
    assert mask_passwords(line) == line


def test_what_a_letter_put_in_hides_stays_on_its_own_line() -> None:
    """A line a letter put in makes a command line may lose a word; the prose around
    it (the words of the password aside, which are hidden everywhere) does not."""
    prose = ["Dear fred,", "thanks for the game yesterday.", "Moves like yours are rare;",
             "I will play again next week.", "Wilma"]
    for line in ("signnup bar hunter", "abalone passwword set bar k3x9q7mf2a hunter",
                 "sleek design here", "deleted fred Secr3tPw"):
        for at in range(len(prose) + 1):
            text = [*prose[:at], line, *prose[at:]]
            masked = mask_passwords("\n".join(text)).split("\n")
            assert masked[:at] + masked[at + 1:] == prose, masked
            assert masked[at] != line


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
