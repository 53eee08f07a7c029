"""What the sub-commands share: the --config option, settings, logging, the database
of an admin command, and plain aligned text."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..redact import mask_database_url

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..db.session import Database


class Failure(Exception):
    """A problem to print on stderr (exit status 1), without a traceback."""


def add_config(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a --config given before the sub-command is not overwritten.
    parser.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                        help="a TOML settings file (the environment wins over it)")


def add_common(parser: argparse.ArgumentParser) -> None:
    """--config and -v, for the server's commands."""
    add_config(parser)
    parser.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="log more")


def load(args: argparse.Namespace) -> Settings:
    """The settings: the environment over the --config file."""
    from ..config import load_settings

    return load_settings(getattr(args, "config", None))


def setup_logging(args: argparse.Namespace) -> None:
    level = logging.DEBUG if getattr(args, "verbose", False) else logging.INFO
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # aiosmtpd logs every SMTP command at INFO, Alembic each plugin it loads.
    for noisy in ("mail.log", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    from ..log_format import install_one_line_logging

    install_one_line_logging()


# ------------------------------------------------------------------ admin commands
def _database(settings: Settings) -> Database:
    """The settings' database, brought up to date; an SQLite file must exist already."""
    from ..db.session import Database

    database = Database(settings.database_url)
    path = database.sqlite_path
    if path is not None and not path.exists():
        raise Failure(f"database {database.describe()} does not exist yet; "
                      "`abalone-pbm db upgrade` (or `serve`) creates it")
    database.ensure_schema()
    return database


def run(name: str, args: argparse.Namespace, action: Any) -> int:
    """Open the database, run ``action(database, settings, args)``, report failures."""
    database = None
    try:
        settings = load(args)
        database = _database(settings)
        result = action(database, settings, args)
        return int(result or 0)
    except Failure as failure:
        print(f"abalone-pbm {name}: {mask_database_url(str(failure))}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"abalone-pbm {name}: {mask_database_url(str(error))}", file=sys.stderr)
        return 2
    finally:
        if database is not None:
            database.dispose()


def when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment is not None else "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns separated by two blanks; numbers right-aligned, the rest left-aligned."""
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in r] for r in rows]
    numeric = [
        bool(rows) and all(isinstance(r[i], (int, float)) for r in rows if r[i] is not None)
        for i in range(len(headers))
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            row[i].rjust(widths[i]) if numeric[i] else row[i].ljust(widths[i])
            for i in range(len(headers))
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def fields(pairs: Sequence[tuple[str, Any]]) -> str:
    width = max(len(name) for name, _ in pairs) + 1
    return "\n".join(f"{(name + ':').ljust(width)}  {value}".rstrip() for name, value in pairs)
