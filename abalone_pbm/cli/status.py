"""``abalone-pbm status``: health at a glance; the exit status is the verdict (0 OK,
1 WARNING, 2 CRITICAL, 3 UNKNOWN when the settings cannot be read), for monitoring."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta

from ..redact import mask_database_url
from .common import add_config, load

UNKNOWN = 3


def cmd_status(args: argparse.Namespace) -> int:
    from ..db.session import Database
    from ..status import CRITICAL, Thresholds, check

    try:
        settings = load(args)
    except (OSError, ValueError) as error:
        print(f"abalone-pbm status: UNKNOWN - {error}")
        return UNKNOWN
    thresholds = Thresholds(inbox_stuck=timedelta(minutes=args.stuck_after),
                            outbox_failing=timedelta(minutes=args.failing_after))
    database: Database | None = None
    try:
        database = Database(settings.database_url)
    except Exception as error:
        print("abalone-pbm status: CRITICAL - database URL unusable: "
              + mask_database_url(str(error)))
        return CRITICAL
    try:
        path = database.sqlite_path
        if path is not None and not path.exists():
            report = check(settings, None, settings.clock().now(), thresholds,
                           probe_listener=not args.no_listener)
            report.add("database", f"{path} does not exist (`abalone-pbm serve` or "
                                   "`abalone-pbm db upgrade` creates it)")
            report.problem(CRITICAL, f"no database file {path}")
        else:
            report = check(settings, database, settings.clock().now(), thresholds,
                           probe_listener=not args.no_listener)
    finally:
        database.dispose()
    print(report.render())
    sys.stdout.flush()
    return report.level


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    status = sub.add_parser(
        "status", help="health at a glance (exit 0 OK, 1 warning, 2 critical)",
        description="The listener, the database, incoming mail waiting or parked, outgoing "
        "mail waiting, retrying or failed with the last error. The first line is the "
        "verdict; the exit status is 0 (OK), 1 (WARNING), 2 (CRITICAL) or 3 (UNKNOWN), "
        "as monitoring checks (Nagios, Icinga, ...) expect.",
    )
    status.add_argument("--no-listener", action="store_true",
                        help="do not check the listening ports (e.g. on another machine)")
    status.add_argument("--stuck-after", type=float, default=10, metavar="MINUTES",
                        help="incoming mail unprocessed this long is critical (default 10)")
    status.add_argument("--failing-after", type=float, default=30, metavar="MINUTES",
                        help="outgoing mail retrying this long is critical (default 30)")
    add_config(status)
    status.set_defaults(handler=cmd_status)
