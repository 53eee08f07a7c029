"""The ``abalone-pbm`` command line: one parser, its sub-commands added by the modules
of this package (each has ``register(sub)``; none imports this one)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from . import bounces, db, dns, games, mail, rules, server, status, tournaments, users

Handler = Callable[[argparse.Namespace], int]

#: The modules that add sub-commands, in the order ``--help`` lists them.
SUB_COMMANDS = (rules, server, status, db, users, games, mail, bounces, dns, tournaments)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="abalone-pbm", description="A play-by-email Abalone server and its rules tools."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUB_COMMANDS:
        module.register(sub)
    return parser


#: Bits no file or directory the server creates gives to other users or its group.
PRIVATE_UMASK = 0o077


@contextmanager
def private_umask() -> Iterator[None]:
    """Every file a command creates is its owner's alone while it runs: the database
    and its -wal/-shm, the Maildir of outgoing mail, backups, lock files, also those
    that libraries create (mailbox asks for 0666, SQLite for 0644). The server writes
    only its own files, so nothing it makes needs other readers; an admin who wants
    the service's group to read the database gives the file mode 0640 and the server
    keeps it. The umask the command found is restored at the end (``main`` also runs
    inside other programs, e.g. the tests)."""
    before = os.umask(PRIVATE_UMASK)
    os.umask(before | PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(before)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    with private_umask():
        return handler(args)
