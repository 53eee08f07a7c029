"""``abalone-pbm db upgrade|downgrade|current``: the Alembic migrations;
``abalone-pbm db backup FILE``: a consistent copy of the SQLite database while serving.

SQLAlchemy and Alembic are imported only when a ``db`` command runs, so the rules
tools start fast.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..redact import mask_database_url
from .common import add_config

if TYPE_CHECKING:  # pragma: no cover
    from ..db.session import Database


def _open(args: argparse.Namespace, command: str) -> Database | None:
    from ..config import load_settings
    from ..db.session import Database

    try:
        settings = load_settings(getattr(args, "config", None))
        return Database(settings.database_url)
    except Exception as error:  # a bad file, setting or URL: say so, no traceback
        print(f"abalone-pbm db {command}: {mask_database_url(str(error))}", file=sys.stderr)
        return None


def _describe(revision: str | None, head: str | None) -> str:
    if revision is None:
        return "empty"
    return f"revision {revision}" + (" (head)" if revision == head else "")


def _state(revision: str | None, head: str | None) -> str:
    if revision is None:
        return "is empty (no schema yet)"
    return f"is at {_describe(revision, head)}"


def _migrate(args: argparse.Namespace, command: str) -> int:
    database = _open(args, command)
    if database is None:
        return 2
    try:
        head = database.head()
        before = database.current()
        if command == "upgrade":
            database.upgrade(args.revision)
        else:
            database.downgrade(args.revision)
        after = database.current()
    except Exception as error:
        print(f"abalone-pbm db {command}: {database.display_url}: "
              f"{error.__class__.__name__}: {mask_database_url(str(error))}", file=sys.stderr)
        return 1
    finally:
        database.dispose()
    where = database.describe()
    if before == after:
        print(f"database {where} {_state(after, head)}; nothing to do")
    else:
        print(f"database {where} {command}d from {_describe(before, head)} "
              f"to {_describe(after, head)}")
    return 0


def cmd_upgrade(args: argparse.Namespace) -> int:
    """Create the schema, or bring it up to date (or up to REVISION)."""
    return _migrate(args, "upgrade")


def cmd_downgrade(args: argparse.Namespace) -> int:
    """Go back to REVISION (``base``: drop every table)."""
    return _migrate(args, "downgrade")


def cmd_current(args: argparse.Namespace) -> int:
    """Print the revision the database is at."""
    database = _open(args, "current")
    if database is None:
        return 2
    path = database.sqlite_path
    if path is not None and not path.exists():
        print(f"database {database.describe()} does not exist yet; "
              "`abalone-pbm db upgrade` creates it")
        return 0
    try:
        head = database.head()
        revision = database.current()
    except Exception as error:
        print(f"abalone-pbm db current: {database.display_url}: "
              f"{error.__class__.__name__}: {mask_database_url(str(error))}", file=sys.stderr)
        return 1
    finally:
        database.dispose()
    print(f"database {database.describe()} {_state(revision, head)}")
    if revision != head:
        print(f"the newest revision is {head}; run `abalone-pbm db upgrade`")
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    """Copy the SQLite database (online backup API) to FILE, or into a directory."""
    import os
    from pathlib import Path

    from ..clock import SystemClock
    from ..db.backup import BackupError, backup_sqlite, prune_backups

    database = _open(args, "backup")
    if database is None:
        return 2
    target = Path(args.file)
    try:
        # (Real time, not the site's clock: a backup's name says when it was taken.)
        written = backup_sqlite(database, target, SystemClock().now(),
                                directory=args.file.endswith(('/', os.sep)))
        pruned = prune_backups(written.parent, args.keep) if args.keep else []
    except (BackupError, OSError) as error:
        print(f"abalone-pbm db backup: {mask_database_url(str(error))}", file=sys.stderr)
        return 1
    finally:
        database.dispose()
    size = written.stat().st_size
    print(f"database {database.describe()} copied to {written} ({size} bytes)")
    if pruned:
        print(f"removed {len(pruned)} older backup(s): " + ", ".join(p.name for p in pruned))
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    db = sub.add_parser("db", help="database migrations (upgrade, downgrade, current) "
                        "and backup",
                        description="Database migrations (Alembic).")
    add_config(db)
    actions = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")

    upgrade = actions.add_parser("upgrade", help="create or upgrade the database schema")
    upgrade.add_argument("revision", nargs="?", default="head",
                         help="the revision to go to (default: head, the newest)")
    add_config(upgrade)
    upgrade.set_defaults(handler=cmd_upgrade)

    downgrade = actions.add_parser("downgrade", help="go back to an older revision")
    downgrade.add_argument("revision", help="the revision to go to (base: no tables at all)")
    add_config(downgrade)
    downgrade.set_defaults(handler=cmd_downgrade)

    current = actions.add_parser("current", help="show the revision of the database")
    add_config(current)
    current.set_defaults(handler=cmd_current)

    backup = actions.add_parser(
        "backup", help="a consistent copy of the SQLite database, also while serving",
        description="Copy the SQLite database with SQLite's online backup API: a "
        "consistent copy while `serve` runs. FILE may be a directory (ending in /): the "
        "copy is then abalone-pbm-YYYYmmdd-HHMMSS.sqlite3 in it. PostgreSQL: use pg_dump.")
    backup.add_argument("file", metavar="FILE", help="the copy to write, or a directory")
    backup.add_argument("--keep", type=int, default=0, metavar="N",
                        help="then keep only the newest N timestamped copies in its directory")
    add_config(backup)
    backup.set_defaults(handler=cmd_backup)
