"""``abalone-pbm bounces``: the addresses whose mail bounces (DESIGN §2.8), and
``abalone-pbm bounces clear ADDRESS`` to mail one again."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import Failure, add_config, run, table, when

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..db.session import Database


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _list(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service.bounce_scores import bouncing

    with database.read() as session:
        rows = [(row.address, ",".join(users) or "-",
                 "no longer mailed" if row.suppressed_at is not None
                 else f"{row.score} of {settings.bounce_threshold}",
                 when(row.first_at), when(row.last_at), _clip(row.last_reason, 60))
                for row, users in bouncing(session)]
    if not rows:
        print("no address bounces")
        return 0
    print(table(("ADDRESS", "USERS", "SCORE", "SINCE", "LAST", "LAST REASON"), rows))
    stopped = sum(1 for row in rows if row[2] == "no longer mailed")
    print(f"\n{len(rows)} address(es) bounce, {stopped} no longer mailed (at "
          f"{settings.bounce_threshold} days of bounces; a score is forgotten after "
          f"{settings.bounce_stale_days} days without one); `abalone-pbm bounces clear "
          "ADDRESS` mails one again, as a valid command from it does")
    return 0


def _clear(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service.bounce_scores import clear

    with database.write() as session:
        row = clear(session, args.address)
    if row is None:
        raise Failure(f"{args.address} has no bounces (`abalone-pbm bounces` lists them)")
    state = "was no longer mailed" if row.suppressed_at is not None else \
        f"had a score of {row.score}"
    print(f"{row.address} {state}; its bounces are forgotten and it is mailed again")
    return 0


def cmd_bounces(args: argparse.Namespace) -> int:
    action = args.bounces_command or "list"
    return run(f"bounces {action}", args, {"list": _list, "clear": _clear}[action])


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    bounces = sub.add_parser(
        "bounces", help="addresses whose mail bounces: list, clear ADDRESS",
        description="Addresses whose mail bounced (delivery reports, the relay's refusals): "
        "their score, since when, the last reason; past the threshold an address is no "
        "longer mailed until a valid command comes from it or it is cleared here.")
    add_config(bounces)
    actions = bounces.add_subparsers(dest="bounces_command", metavar="ACTION")
    listing = actions.add_parser("list", help="list the addresses that bounce (the default)")
    add_config(listing)
    clearing = actions.add_parser("clear", help="forget an address's bounces: mail it again")
    clearing.add_argument("address", metavar="ADDRESS")
    add_config(clearing)
    bounces.set_defaults(handler=cmd_bounces)
