"""The ``abalone-pbm`` command line: one parser, its sub-commands added by the modules
of this package (each has ``register(sub)``; none imports this one)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from . import db, games, mail, rules, server, status, users

Handler = Callable[[argparse.Namespace], int]

#: The modules that add sub-commands, in the order ``--help`` lists them.
SUB_COMMANDS = (rules, server, status, db, users, games, mail)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="abalone-pbm", description="A play-by-email Abalone server and its rules tools."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUB_COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    return handler(args)
