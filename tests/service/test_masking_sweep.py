"""Every command of the registry, written correctly, with a slip in a word, with a word
missing, twice on one line and naming a user who does not exist, sent through the real
service: no outgoing mail, log record or stored inbox row holds a password, and the
quoted Subject shows every other word (userids, board numbers, ordinary words) as it was
written; an error about an unknown userid names it."""

from __future__ import annotations

import email
import email.policy
import logging
from dataclasses import dataclass

import pytest
from sqlalchemy import select

from abalone_pbm.db.models import InboxMail
from abalone_pbm.protocol.registry import COMMANDS, CommandSpec

from .harness import Harness, Sent

M = "********"
SENDER = "fred@example.org"
UNKNOWN = "ghostly"


@dataclass(frozen=True)
class Form:
    """One way of writing a command: its words, which of them are passwords."""

    kind: str
    words: tuple[str, ...]
    secret: frozenset[int]  # indexes into words
    #: Whether a password was left out (the rule may then mask the word standing there).
    password_missing: bool = False
    #: Words the server reads as passwords where one is missing (the word standing at
    #: a password's place in the syntax: "abalone limit Pw 3" reads "3" so).
    read_as_password: frozenset[int] = frozenset()

    @property
    def line(self) -> str:
        return " ".join(self.words)

    @property
    def passwords(self) -> set[str]:
        return {self.words[i] for i in self.secret}


def _arguments(spec: CommandSpec, number: int, board: str) -> list[tuple[str, bool]]:
    """The words after the command words, each with whether it is a password."""
    words: list[tuple[str, bool]] = []
    tokens = spec.syntax.split()[len(spec.words):]
    for position, token in enumerate(tokens):
        bare = token.strip("[]").removesuffix("...").removesuffix("]")
        if position in spec.secret:
            words.append((f"Zq{number}Pw{position}x", True))
        elif token.startswith("[-") or token.startswith("[..."):
            continue  # challenge options, more userids
        elif "<board>" in bare:
            words.append((board, False))
        elif bare.startswith("<userid2") or bare.startswith("<to-userid") or (
                bare == "<userid>" and words and not words[-1][1] and words[-1][0] == "fred"):
            words.append(("wilma", False))
        elif bare.startswith("<userid"):
            words.append(("fred", False))
        elif bare == "<move>":
            words.append(("c3-c5", False))
        elif bare == "<address>":
            words.append(("fred.two@example.org", False))
        elif bare in ("<N>", "<N>|accept|reject"):
            words.append(("3", False))
        elif bare == "<code>":
            words.append(("12345678", False))
        elif bare == "<name>":
            words.append(("spring", False))
        elif bare == "<topic>":
            words.append(("rules", False))
        elif "|" in bare and not token.startswith("[all"):
            words.append((bare.split("|")[0], False))
    return words


def forms_of(spec: CommandSpec, number: int, board: str) -> list[Form]:
    arguments = _arguments(spec, number, board)
    head = spec.words
    words = (*head, *(w for w, _ in arguments))
    secret = frozenset(len(head) + i for i, (_, s) in enumerate(arguments) if s)
    forms = [Form("correct", words, secret)]
    for index, word in enumerate(head):  # one slip: the second letter left out
        if len(word) >= 4:
            slipped = (*words[:index], word[0] + word[2:], *words[index + 1:])
            forms.append(Form(f"slip in {word}", slipped, secret))
    for index in range(len(head), len(words)):  # one word missing
        kept = (*words[:index], *words[index + 1:])
        moved = frozenset(i if i < index else i - 1 for i in secret if i != index)
        forms.append(Form(f"without {words[index]}", kept, moved,
                          password_missing=index in secret,
                          read_as_password=frozenset(len(head) + p for p in spec.secret)))
    if secret:
        second = f"Zq{number}Pw9y"
        doubled = (*words, "signoff", "fred", second)
        forms.append(Form("doubled", doubled, secret | {len(doubled) - 1}))
        lowered = (*words[:min(secret)], f"zq{number}low", *words[min(secret) + 1:])
        forms.append(Form("lower-case password", lowered, secret))
    for name in ("fred", "wilma"):
        if name in words:
            index = words.index(name)
            forms.append(Form(f"unknown {name}",
                              (*words[:index], UNKNOWN, *words[index + 1:]), secret))
    return forms


def _quoted_subject(sent: Sent) -> str | None:
    for line in sent.body.splitlines():
        if line.startswith("> Subject: "):
            return line[len("> Subject: "):]
    return None


def _written(sent: Sent) -> str:
    return "\n".join([sent.subject, sent.body, sent.html or ""])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_form_of_a_command_hides_passwords_and_only_them(
        harness: Harness, caplog: pytest.LogCaptureFixture, name: str) -> None:
    harness.signup("fred", "FredOwn7pw")
    harness.signup("wilma", "WilmaOwn7pw")
    board = harness.challenge("fred", "wilma")["fred"].subject.split()[3]
    spec = COMMANDS[name]
    caplog.set_level(logging.DEBUG)
    for number, form in enumerate(forms_of(spec, sorted(COMMANDS).index(name), board)):
        caplog.clear()
        sent = harness.mail(SENDER, form.line)
        where = f"{form.kind}: {form.line!r}"
        for mail in sent:
            for password in form.passwords:
                # (also as the server writes a userid: in lower case)
                assert password.lower() not in _written(mail).lower(), (
                    where, mail.subject, mail.body)
        for record in caplog.records:
            for password in form.passwords:
                assert password.lower() not in record.getMessage().lower(), (
                    where, record.getMessage())
        for mail in sent:
            quoted = _quoted_subject(mail)
            if quoted is None or mail.to != SENDER or form.password_missing:
                continue
            shown = quoted.split(" ")
            assert len(shown) == len(form.words), (where, quoted)
            for index, (word, seen) in enumerate(zip(form.words, shown)):
                expected = M if index in form.secret else word
                if index in form.read_as_password and seen == M:
                    continue
                assert seen == expected, (where, quoted)
        if form.kind.startswith("unknown"):
            for mail in sent:
                if "no user" in mail.body:
                    assert f"no user {UNKNOWN}" in mail.body, (where, mail.body)
    with harness.database.read() as session:
        stored = [bytes(raw) for raw in session.scalars(select(InboxMail.raw))]
    every = {p for form in forms_of(spec, sorted(COMMANDS).index(name), board) for p in form.passwords}
    every |= {"FredOwn7pw", "WilmaOwn7pw"}
    for raw in stored:
        text = raw.decode("utf-8", "replace")
        message = email.message_from_bytes(raw, policy=email.policy.default)
        decoded = text + str(message["Subject"])
        for password in every:
            assert password not in decoded, (password, text[:300])
