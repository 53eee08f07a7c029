"""Files that hold received mail are private whatever the umask: the SQLite database, its
-wal/-shm/-journal files (also when a checkpoint or a new connection makes them again),
backups, and what the commands create (the Maildir of outgoing mail). An admin's 0640
(the service's group may read) is kept; anything for other users is taken away."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import text

from abalone_pbm.cli.main import main, private_umask
from abalone_pbm.db.backup import backup_sqlite
from abalone_pbm.db.session import Database, private_file_mode

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def umask_022() -> Iterator[None]:
    """The usual default umask, under which files come out 0644 unless made private."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _modes(directory: Path) -> dict[str, int]:
    return {path.name: _mode(path) for path in directory.iterdir() if path.is_file()}


def _write(database: Database) -> None:
    with database.write() as session:
        session.execute(text("CREATE TABLE IF NOT EXISTS notes (body TEXT)"))
        session.execute(text("INSERT INTO notes VALUES ('every mail in clear')"))


def test_the_mode_rule() -> None:
    assert private_file_mode(0o644) == 0o600
    assert private_file_mode(0o666) == 0o600
    assert private_file_mode(0o604) == 0o600
    assert private_file_mode(0o640) == 0o640
    assert private_file_mode(0o660) == 0o640
    assert private_file_mode(0o600) == 0o600
    assert private_file_mode(0o400) == 0o600


def test_a_new_database_and_its_wal_and_shm_are_0600(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'var' / 'db.sqlite3'}")
    try:
        database.ensure_schema()
        _write(database)
        modes = _modes(tmp_path / "var")
        assert {"db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm"} <= set(modes)
        assert set(modes.values()) == {0o600}, modes
        # A checkpoint that truncates the WAL, then new writes: still private.
        checkpoint = sqlite3.connect(tmp_path / "var" / "db.sqlite3", isolation_level=None)
        try:
            assert checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        finally:
            checkpoint.close()
        _write(database)
        assert set(_modes(tmp_path / "var").values()) == {0o600}
    finally:
        database.dispose()
    # The last connection removed -wal/-shm; the next one makes them again, private.
    database = Database(f"sqlite:///{tmp_path / 'var' / 'db.sqlite3'}")
    try:
        _write(database)
        modes = _modes(tmp_path / "var")
        assert "db.sqlite3-wal" in modes and set(modes.values()) == {0o600}, modes
    finally:
        database.dispose()


def test_an_existing_readable_database_is_made_private_at_open(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with sqlite3.connect(path) as connection:  # an older version's file, 0644
        connection.execute("CREATE TABLE notes (body TEXT)")
    (tmp_path / "db.sqlite3-writer").touch(0o644)
    assert _mode(path) == 0o644
    database = Database(f"sqlite:///{path}")
    try:
        _write(database)
        assert set(_modes(tmp_path).values()) == {0o600}, _modes(tmp_path)
    finally:
        database.dispose()


def test_the_admins_group_read_is_kept_and_followed(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    database = Database(f"sqlite:///{path}")
    _write(database)
    database.dispose()
    path.chmod(0o640)
    database = Database(f"sqlite:///{path}")
    try:
        _write(database)
        modes = _modes(tmp_path)
        assert modes["db.sqlite3"] == 0o640 and modes["db.sqlite3-wal"] == 0o640, modes
        # The backup follows the database: the group that may read one may read both.
        copy = backup_sqlite(database, tmp_path / "backups" / "copy.sqlite3", NOW)
        assert _mode(copy) == 0o640
    finally:
        database.dispose()


def test_a_backup_is_0600_in_a_0700_directory(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        _write(database)
        written = backup_sqlite(database, tmp_path / "backups", NOW, directory=True)
    finally:
        database.dispose()
    assert _mode(written) == 0o600
    assert _mode(tmp_path / "backups") == 0o700
    assert [p.name for p in (tmp_path / "backups").iterdir()] == [written.name]
    with sqlite3.connect(written) as copy:
        assert copy.execute("SELECT body FROM notes").fetchone() == ("every mail in clear",)


def test_the_command_line_runs_under_a_private_umask_and_restores_it(tmp_path: Path) -> None:
    with private_umask():
        (tmp_path / "made-by-a-command").write_text("x")  # asks for 0666
        (tmp_path / "a-folder").mkdir()
    assert _mode(tmp_path / "made-by-a-command") == 0o600
    assert _mode(tmp_path / "a-folder") == 0o700
    assert os.umask(0o022) == 0o022  # restored
    url = f"sqlite:///{tmp_path / 'cli' / 'db.sqlite3'}"
    os.environ["ABALONE_PBM_DATABASE_URL"] = url
    try:
        assert main(["db", "upgrade"]) == 0
        assert main(["db", "backup", str(tmp_path / "cli-backups") + "/"]) == 0
    finally:
        del os.environ["ABALONE_PBM_DATABASE_URL"]
    assert set(_modes(tmp_path / "cli").values()) == {0o600}
    assert set(_modes(tmp_path / "cli-backups").values()) == {0o600}


def test_outgoing_mail_in_the_maildir_is_0600(tmp_path: Path) -> None:
    """`process`, `work` and `send` as an MTA pipe and cron would run them, umask 022."""
    env = {**os.environ, "ABALONE_PBM_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("ABALONE_PBM_RELAY", None)
    mail = (b"From: fred@players.test\r\nTo: abalone@localhost\r\nSubject: help\r\n"
            b"Message-ID: <help1@players.test>\r\n\r\n\r\n")

    def run(*args: str, stdin: bytes = b"") -> None:
        done = subprocess.run([sys.executable, "-m", "abalone_pbm", *args], cwd=tmp_path,
                              env=env, input=stdin, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr

    run("db", "upgrade")
    run("process", "--sender", "fred@players.test", stdin=mail)
    run("work", "--once")
    run("send", "--once")
    sent = [p for p in (tmp_path / "var" / "outgoing" / "new").iterdir()]
    assert len(sent) == 1
    assert _mode(sent[0]) == 0o600
    assert _mode(tmp_path / "var" / "outgoing") == 0o700
    assert set(_modes(tmp_path).values()) <= {0o600}, _modes(tmp_path)
