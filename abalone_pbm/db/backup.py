"""A consistent copy of the SQLite database while the server runs.

SQLite's online backup API (``sqlite3.Connection.backup``) copies the pages under a
read transaction, so the copy is one moment's state even while the server writes
(WAL mode lets it go on writing meanwhile). The copy is written next to the target
under a temporary name, checked with ``PRAGMA integrity_check``, switched to the
rollback journal (one self-contained file), then renamed into place, so a half-written
backup never carries the target's name.

The copy holds every received mail, as the database does: it is created with the
database file's mode at most, 0600 (0640 when the admin let the service's group read
the database), whatever the umask; a directory made for it is 0700.

PostgreSQL is backed up with ``pg_dump`` (the README says how).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from .session import create_private_file, private_file_mode

if TYPE_CHECKING:  # pragma: no cover
    from .session import Database

__all__ = ["BackupError", "backup_sqlite", "backup_path", "prune_backups", "PREFIX"]

PREFIX = "abalone-pbm-"
SUFFIX = ".sqlite3"


class BackupError(Exception):
    """Why no backup was made (said to the admin in one line)."""


def backup_path(target: Path, now: datetime, *, directory: bool = False) -> Path:
    """The file to write: ``target`` itself, or a timestamped file in it when it is a
    directory (or ``directory``: the admin wrote it with a trailing slash)."""
    if directory or target.is_dir():
        stamp = now.astimezone(timezone.utc).strftime("%Y%m%d-%H%M%S")
        return target / f"{PREFIX}{stamp}{SUFFIX}"
    return target


def backup_sqlite(database: Database, target: Path, now: datetime, *,
                  directory: bool = False) -> Path:
    """Copy ``database`` (SQLite) to ``target`` (see ``backup_path``); returns the file
    written."""
    source_path = database.sqlite_path
    if not database.is_sqlite or source_path is None:
        raise BackupError(
            f"{database.display_url} is not an SQLite file; back PostgreSQL up with "
            "pg_dump (see the README)")
    if not source_path.exists():
        raise BackupError(f"there is no database file {source_path}")
    destination = backup_path(target, now, directory=directory)
    destination.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if destination.resolve() == source_path.resolve():
        raise BackupError("the backup cannot be the database file itself")
    partial = destination.with_name(f".{destination.name}.partial")
    partial.unlink(missing_ok=True)
    create_private_file(partial, private_file_mode(source_path.stat().st_mode))
    source = sqlite3.connect(source_path, timeout=30)
    try:
        # SQLite takes the empty file as a new database (and gives its journal the
        # file's mode).
        copy = sqlite3.connect(partial)
        try:
            # All pages in one step, so in one read transaction: copied step by step,
            # every write of the server in between would restart the copy.
            source.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
            verdict = copy.execute("PRAGMA integrity_check").fetchone()
            if verdict is None or verdict[0] != "ok":
                raise BackupError(f"the copy failed its integrity check: {verdict}")
            copy.commit()
        finally:
            copy.close()
    except sqlite3.Error as error:
        partial.unlink(missing_ok=True)
        raise BackupError(f"copying {source_path} failed: {error}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    with open(partial, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(partial, destination)
    return destination


def prune_backups(directory: Path, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` timestamped backups in ``directory``."""
    backups = sorted(p for p in directory.glob(f"{PREFIX}*{SUFFIX}") if p.is_file())
    doomed = backups[:-keep] if keep > 0 else []
    for path in doomed:
        path.unlink()
    return doomed
