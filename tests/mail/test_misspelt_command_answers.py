"""A misspelt command's password is in no answer, no outgoing file and no stored copy
(DESIGN §2.3: the original is quoted back "with every password replaced by
``********``"; §2.6: "including ... a misspelt command").

``abalone singup bar Secr3tPw`` (signup misspelt, after the game word) was answered
with ``abalone singup ******** Secr3tPw``: the masking took "singup" for a userid.
Here through the whole server: a sample of every command with a password written with
slips (tests/protocol/misspelt_commands.py: also a letter put in, ``signnup bar
hunter``, and the userid left out, ``liit Secr3tPw``) through the service, in each
place a command is read; and the reported lines through a real ``serve`` that writes
its mail to the Maildir ``var/outgoing``. A letter put in hides the passwords and runs
nothing: ``signnup`` is answered as the unknown command it is.
"""

from __future__ import annotations

import os
import smtplib
import time
from collections.abc import Iterator
from email.message import EmailMessage
from itertools import count
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from abalone_pbm.db.models import InboxMail
from abalone_pbm.protocol.registry import COMMAND_WORDS
from tests.e2e.conftest import _start_serve, _stop, _wait_listening, free_port
from tests.protocol.misspelt_commands import misspelt_commands, misspelt_without_userid, put_in
from tests.mail.readable import last_stored_copy, outgoing, readable
from tests.service.harness import Harness, make_harness

_senders = count(1)


# ------------------------------------------------------------- through the service
@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    folder = tmp_path_factory.mktemp("misspelt")
    made = make_harness(f"sqlite:///{folder / 'abalone.sqlite3'}", folder)
    yield made
    made.database.dispose()


#: Every how many lines of ``misspelt_commands`` and ``misspelt_without_userid`` one
#: is sent (each takes a mail).
_EVERY = 200
#: Where a command is read, and how a line stands there: (Subject, body).
#: ("{line}" stands for the line.)
_PLACES: dict[str, tuple[str, str]] = {
    "Subject": ("{line}", ""),
    "Re: Subject": ("Re: {line}", "my comment\n"),
    "first line under a blank Subject": ("", "{line}\nthanks\n"),
    "line of multiple": ("multiple", "help\n{line}\n"),
    "body under a Subject of one word": ("hello", "{line}\n"),
}


def _sample() -> list[tuple[str, tuple[str, ...], str]]:
    """Every 200th line of each kind (each command has some), each in the next place
    of ``_PLACES``."""
    places = list(_PLACES)
    lines = [(line, secrets) for line, secrets, _, _ in misspelt_commands()[::_EVERY]]
    lines += [(line, secrets) for line, secrets, _ in misspelt_without_userid()[::_EVERY]]
    return [(line, secrets, places[number % len(places)])
            for number, (line, secrets) in enumerate(lines)]


def test_the_sample_holds_every_command_with_a_password_and_every_place() -> None:
    sample = _sample()
    names = {name for _, _, name, _ in misspelt_commands()}
    sampled = {name for _, _, name, _ in misspelt_commands()[::_EVERY]}
    assert sampled == names
    without_userid = {name for _, _, name in misspelt_without_userid()}
    assert {name for _, _, name in misspelt_without_userid()[::_EVERY]} == without_userid
    assert {place for _, _, place in sample} == set(_PLACES)
    # a letter put in (doubled or another) in many of them
    put_in_words = {slip for key in COMMAND_WORDS for word in key for slip in put_in(word)}
    assert sum(bool(put_in_words & set(line.split())) for line, _, _ in sample) > 100


def test_no_answer_or_stored_copy_of_a_misspelt_command_shows_its_password(
        harness: Harness) -> None:
    shown: list[str] = []
    for line, secrets, place in _sample():
        subject, body = (text.replace("{line}", line) for text in _PLACES[place])
        sender = f"stranger{next(_senders)}@example.org"
        answers = harness.mail(sender, subject, body)
        assert answers, (line, place)
        for answer in answers:
            text = readable(answer.message.as_bytes())
            if any(secret in text for secret in secrets):
                shown.append(f"answer, {place}: {line!r}")
        stored = last_stored_copy(harness)
        if any(secret in stored for secret in secrets):
            shown.append(f"stored copy, {place}: {line!r}")
    assert not shown, f"{len(shown)} shown, e.g.\n" + "\n".join(shown[:20])


def test_the_reported_line_is_answered_with_its_password_masked(harness: Harness) -> None:
    for subject, body in (("abalone singup bar Secr3tPw", ""),
                          ("", "abalone singup bar Secr3tPw\n")):
        (answer,) = harness.mail(f"stranger{next(_senders)}@example.org", subject, body)
        assert answer.subject == "Abalone error"
        assert "abalone singup bar ********" in answer.body
        assert "Secr3tPw" not in readable(answer.message.as_bytes())


@pytest.mark.parametrize(("written", "command"), [
    ("signnup {userid} hunter", "signnup"),
    ("abalone signnup {userid} hunter", "abalone signnup"),
    ("signups {userid} hunter7", "signups"),
])
def test_a_letter_put_in_hides_the_password_and_runs_nothing(
        harness: Harness, written: str, command: str) -> None:
    """The masking reads the word as the command for its passwords only: the answer is
    the unknown command's, as before, and no user is signed up."""
    number = next(_senders)
    sender, newcomer = f"stranger{number}@example.org", f"newcomer{number}"
    line = written.format(userid=newcomer)
    for subject, body in ((line, ""), ("", f"{line}\n"), ("multiple", f"{line}\n")):
        answers = harness.mail(sender, subject, body)
        texts = [readable(answer.message.as_bytes()) for answer in answers]
        assert any(f'Unknown command "{command}"' in text for text in texts), texts
        assert all(line.rsplit(" ", 1)[1] not in text for text in texts), texts
        assert any(f"{line.rsplit(' ', 1)[0]} ********" in text for text in texts), texts
    # Nobody was signed up: the command written right signs the newcomer up now.
    (signed,) = harness.mail(sender, f"signup {newcomer} Secr3tPw", "")
    assert signed.subject.startswith("Abalone signup"), signed.body


# ------------------------------------------------------------------ a real serve
def _send(port: int, sender: str, subject: str, body: str) -> None:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "abalone@localhost"
    message["Subject"] = subject
    message["Message-ID"] = f"<misspelt{next(_senders)}.{time.time_ns()}@players.test>"
    message.set_content(body or "\n")
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.sendmail(sender, ["abalone@localhost"], message.as_bytes())




def test_serve_writes_no_password_of_the_reported_line(tmp_path: Path, db_url: str) -> None:
    """A stranger and the user "bar" (whose password it is) write the line in the
    Subject, in the body under a blank Subject and under a Subject of one word, and
    in a ``multiple``; and the lines with a letter put in (``signnup bar hunter``,
    ``abalone passwword set ...``) and without the userid (``liit Secr3tPw``,
    ``sigup Secr3tPw``): no mail in var/outgoing, no stored copy and no line of the
    log holds a password."""
    env = {key: value for key, value in os.environ.items() if key != "ABALONE_PBM_RELAY"}
    port = free_port()
    env.update(ABALONE_PBM_LISTEN=f"127.0.0.1:{port}", ABALONE_PBM_DATABASE_URL=db_url)
    process = _start_serve(tmp_path, env)
    line = "abalone singup bar Secr3tPw"
    mails = [
        ("bar@players.test", "signup bar Secr3tPw", ""),
        ("stranger@players.test", line, ""),
        ("stranger2@players.test", "", f"{line}\n"),
        ("stranger3@players.test", "hello", f"{line}\n"),
        ("bar@players.test", line, ""),
        ("bar@players.test", "multiple", f"{line}\nabalone singup bar Secr3tPw on\n"),
    ]
    # (Each with the line its answer quotes, the password masked.)
    more = [
        ("stranger4@players.test", "signnup bar hunter", "", "signnup bar ********"),
        ("stranger5@players.test", "", "abalone passwword set bar k3x9q7mf2a hunter\n",
         "abalone passwword set bar ******** ********"),
        ("stranger6@players.test", "Re: signnup bar hunter", "my comment\n",
         "signnup bar ********"),
        ("bar@players.test", "multiple", "help\nsignnup bar hunter\n", "signnup bar ********"),
        ("bar@players.test", "liit Secr3tPw", "", "liit ********"),
        ("stranger7@players.test", "", "sigup Secr3tPw\n", "sigup ********"),
    ]
    mails += [(sender, subject, body) for sender, subject, body, _ in more]
    secrets = ("Secr3tPw", "hunter", "k3x9q7mf2a")
    try:
        _wait_listening("127.0.0.1", port, process, timeout=30)
        for sender, subject, body in mails:
            _send(port, sender, subject, body)
        deadline = time.monotonic() + 60
        while len(outgoing(tmp_path)) < len(mails) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        _stop(process)
    log = process.stdout.read() if process.stdout is not None else ""
    written = [readable(raw) for raw in outgoing(tmp_path)]
    assert len(written) == len(mails), log
    assert not [text for text in written if any(secret in text for secret in secrets)]
    # Each answer quotes the line, the password masked.
    assert sum("abalone singup bar ********" in text for text in written) >= (
        len(mails) - len(more) - 1)
    for _, _, _, quoted in more:
        assert any(quoted in text for text in written), quoted
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            stored = [bytes(raw) for raw in connection.scalars(select(InboxMail.raw))]
    finally:
        engine.dispose()
    assert len(stored) == len(mails)
    assert not [raw for raw in stored if any(secret in readable(raw) for secret in secrets)]
    assert not [secret for secret in secrets if secret in log]


@pytest.mark.parametrize(("subject", "error"), [
    ("hello", 'Unknown command "hello"'),
    ("abalone", 'The word "abalone" must be followed by a command'),
])
def test_a_subject_of_one_word_is_answered_and_the_body_is_not_run(
        harness: Harness, subject: str, error: str) -> None:
    """DESIGN §2.1: "A command is written in the Subject (pbmserv's rule); the body of
    that mail is a comment": the body is read for a command only under a blank
    Subject. The body's password is masked in the quote all the same."""
    number = next(_senders)
    sender, newcomer = f"stranger{number}@example.org", f"newcomer{number}"
    (answer,) = harness.mail(sender, subject, f"signup {newcomer} Secr3tPw\n")
    assert answer.subject == "Abalone error" and error in answer.body
    assert f"signup {newcomer} ********" in answer.body
    assert "Secr3tPw" not in readable(answer.message.as_bytes())
    # Not signed up by the first mail: the same body under a blank Subject signs up.
    (again,) = harness.mail(sender, "", f"signup {newcomer} Secr3tPw\n")
    assert again.subject.startswith("Abalone signup"), again.body
