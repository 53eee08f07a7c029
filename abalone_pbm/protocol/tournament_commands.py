"""The tournament commands of the mail protocol (DESIGN §2.9), and how their words are
read: ``abalone tournaments``, ``abalone tournament show|standings NAME``,
``abalone tournament join|withdraw NAME userid password`` and
``abalone tournament mail NAME userid password on|off``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from .arguments import ArgumentReader
from .commands import Command

#: A tournament's name: a letter, then letters, digits, '-', '_' or '.'; at most 40.
NAME_RE = re.compile(r"[a-z][a-z0-9._-]{0,39}")


def name_problem(word: str) -> str | None:
    """Why ``word`` cannot be a tournament name, or None."""
    if not NAME_RE.fullmatch(word.lower()):
        shown = word[:40] + ("..." if len(word) > 40 else "")
        return (f'"{shown}" is not a tournament name (a letter, then letters, digits, '
                "'-', '_' or '.', at most 40)")
    return None


@dataclass(frozen=True)
class TournamentList(Command):
    name: ClassVar[str] = "abalone tournaments"


@dataclass(frozen=True)
class TournamentShow(Command):
    name: ClassVar[str] = "abalone tournament show"
    tournament: str


@dataclass(frozen=True)
class TournamentStandings(Command):
    name: ClassVar[str] = "abalone tournament standings"
    tournament: str


@dataclass(frozen=True)
class TournamentJoin(Command):
    """``once``: a championship entry for this edition only (no re-entry)."""

    name: ClassVar[str] = "abalone tournament join"
    tournament: str
    userid: str
    password: str = field(repr=False)
    once: bool = False


@dataclass(frozen=True)
class TournamentWithdraw(Command):
    name: ClassVar[str] = "abalone tournament withdraw"
    tournament: str
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class TournamentMail(Command):
    """``on``: the standings are mailed after each round (the default)."""

    name: ClassVar[str] = "abalone tournament mail"
    tournament: str
    userid: str
    password: str = field(repr=False)
    on: bool = True


def read_name(args: ArgumentReader) -> str:
    word = args.take("the name of the tournament")
    problem = name_problem(word)
    if problem:
        raise args.fail(problem)
    return word.lower()


def parse_list(args: ArgumentReader, body: str) -> Command:
    args.done()
    return TournamentList()


def parse_show(args: ArgumentReader, body: str) -> Command:
    name = read_name(args)
    args.done()
    return TournamentShow(name)


def parse_standings(args: ArgumentReader, body: str) -> Command:
    name = read_name(args)
    args.done()
    return TournamentStandings(name)


def parse_join(args: ArgumentReader, body: str) -> Command:
    name = read_name(args)
    userid = args.userid()
    password = args.password()
    once = False
    if args.peek() is not None:
        # Not quoted back: a stray word after a password may be part of it.
        if args.take("").lower() != "once":
            raise args.fail('Only the word "once" may follow the password')
        once = True
    args.done()
    return TournamentJoin(name, userid, password, once)


def parse_withdraw(args: ArgumentReader, body: str) -> Command:
    name = read_name(args)
    userid = args.userid()
    password = args.password()
    args.done()
    return TournamentWithdraw(name, userid, password)


def parse_mail(args: ArgumentReader, body: str) -> Command:
    name = read_name(args)
    userid = args.userid()
    password = args.password()
    on = args.either("on", "off")
    args.done()
    return TournamentMail(name, userid, password, on)
