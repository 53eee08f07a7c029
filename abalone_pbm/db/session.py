"""The database: one engine per process, read and write transactions, migrations.

``Database(url)`` works with SQLite (the default, one file, WAL) and PostgreSQL
(several server processes sharing one database):

- ``with db.write() as session:`` is one write transaction, committed when the block
  ends and rolled back when it raises. On SQLite it starts with ``BEGIN IMMEDIATE``,
  so two writers queue up on the file lock (waiting up to ``SQLITE_BUSY_TIMEOUT``)
  instead of failing with "database is locked" when the second one first writes. On
  PostgreSQL it is READ COMMITTED; callers lock the rows they change with
  ``SELECT ... FOR UPDATE`` (see ``repository``).
- ``with db.read() as session:`` is a read-only transaction (SQLite: ``PRAGMA
  query_only``; PostgreSQL: ``SET TRANSACTION READ ONLY``); it is rolled back at the end.
- ``db.ensure_schema()`` creates or upgrades the schema with the Alembic migrations
  shipped with the package; ``db.upgrade()``, ``db.downgrade()`` and ``db.current()``
  are the same as the ``alembic`` commands, run in code (no ``alembic.ini`` needed).

Sessions do not expire their objects on commit, so what was loaded in a transaction
can still be read after it (but relationships not loaded yet cannot).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from ..redact import mask_database_url

__all__ = [
    "Database",
    "SQLITE_BUSY_TIMEOUT",
    "SQLITE_SIDE_FILES",
    "create_private_file",
    "migrations_directory",
    "normalise_url",
    "private_file_mode",
    "secure_sqlite_files",
]

log = logging.getLogger(__name__)

#: Seconds a SQLite writer waits for the file lock before giving up.
SQLITE_BUSY_TIMEOUT = 30.0

#: Execution option telling the ``begin`` hook what kind of transaction to start.
_MODE = "abalone_pbm_mode"

#: ``info`` key of a pooled SQLite connection: whether ``PRAGMA query_only`` is on.
_QUERY_ONLY = "abalone_pbm_query_only"

#: Key of the PostgreSQL advisory lock that serialises migrations between processes.
MIGRATION_LOCK_KEY = zlib.crc32(b"abalone-pbm migrations")


def normalise_url(url: str | URL) -> URL:
    """The URL with PostgreSQL pointed at psycopg 3 (``postgresql://`` means psycopg2)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def migrations_directory() -> Path:
    """Where the Alembic scripts are: inside the installed package, else in the checkout."""
    import abalone_pbm

    package = Path(abalone_pbm.__file__).resolve().parent
    candidates = (package / "migrations", package.parent / "migrations")
    for candidate in candidates:
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError(
        "the database migrations are missing; looked in "
        + " and ".join(str(c) for c in candidates)
    )


#: The files SQLite (and ``WriteLock``) keep beside the database file.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal", "-writer")
#: The mode a new database file gets: every received mail is in it, in clear.
PRIVATE_MODE = 0o600
#: The most an existing file may keep: the admin may let the service's group read it.
GROUP_READABLE_MODE = 0o640


def private_file_mode(mode: int) -> int:
    """The permission bits a file of the server's should have, given its ``mode``: any
    bit for other users makes it 0600; otherwise it keeps at most 0640 (the owner's read
    and write, the group's read, which an admin may have chosen for the service's
    group)."""
    if mode & 0o007:
        return PRIVATE_MODE
    return (mode & GROUP_READABLE_MODE) | PRIVATE_MODE


def secure_sqlite_files(path: Path) -> None:
    """Create the database file ``path`` with mode 0600 if it does not exist, and take
    from it, and from the files beside it, every bit other users have.

    SQLite creates its -wal, -shm and -journal files with the mode of the database
    file whatever the umask (it sets the mode after creating them), so a private
    database file keeps them private too; the ones an older version left are fixed
    here. No descriptor of the database file is ever opened here: closing one would
    drop every POSIX lock this process holds on it, SQLite's among them (another
    process could then take the file for its own and delete the WAL in use).
    """
    if not path.exists():
        _create_empty(path, PRIVATE_MODE)
    wanted = private_file_mode(path.stat().st_mode)
    for file in (path, *(path.with_name(path.name + s) for s in SQLITE_SIDE_FILES)):
        try:
            if file.stat().st_mode & 0o777 != wanted:
                file.chmod(wanted)
        except FileNotFoundError:
            continue


def create_private_file(path: Path, mode: int) -> None:
    """Create ``path`` empty with exactly ``mode`` (FileExistsError if it exists; the
    umask may only take bits away at creation, so the mode is set again to be sure)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _create_empty(path: Path, mode: int) -> None:
    """Create ``path`` empty with ``mode`` unless it exists: made under another name and
    linked into place (atomic), so no descriptor of ``path`` itself is opened."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.new")
    create_private_file(temporary, mode)
    try:
        # Another process may have made it meanwhile: then its file stands, and the
        # caller checks its mode as any existing file's.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink()


def _sqlite_is_memory(url: URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or url.query.get("mode") == "memory"


class WriteLock:
    """One SQLite writer at a time, waiting in turn: the threads of this process on a
    lock, and the processes sharing the file (``serve`` and its worker process, or an
    admin's command) on ``flock`` of a file beside it (``<database>-writer``). Both
    block until the holder lets go, where SQLite's busy handler sleeps and retries and
    can miss the short gaps between another writer's transactions for a second or more.
    """

    def __init__(self, path: Path | None) -> None:
        self._threads = threading.RLock()
        self._path = path
        self._fd: int | None = None
        self._depth = 0  # nested write() in one thread: flock once

    def __enter__(self) -> None:
        self._threads.acquire()
        try:
            if self._depth == 0 and self._path is not None:
                if self._fd is None:
                    self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                                       0o600)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise
        self._depth += 1

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()

    def close(self) -> None:
        """Close the lock file (opened again by the next writer)."""
        with self._threads:
            if self._depth == 0 and self._fd is not None:
                os.close(self._fd)
                self._fd = None


class Database:
    """One database, its engine and its transactions."""

    def __init__(self, url: str | URL, *, echo: bool = False) -> None:
        #: The URL as given (``postgresql://`` stays as written; see ``engine.url``).
        self.url: str = url if isinstance(url, str) else url.render_as_string(False)
        self._url = normalise_url(url)
        backend = self._url.get_backend_name()
        if backend == "sqlite" and not _sqlite_is_memory(self._url) \
                and "uri" not in self._url.query:
            # Relative to the working directory now, even if the process moves later.
            self._url = self._url.set(database=os.path.abspath(self._url.database or ""))
        self.is_sqlite: bool = backend == "sqlite"
        self.is_postgresql: bool = backend == "postgresql"
        if self.is_sqlite:
            self.engine: Engine = self._sqlite_engine(echo)
        elif self.is_postgresql:
            self.engine = create_engine(
                self._url, echo=echo, pool_pre_ping=True, isolation_level="READ COMMITTED"
            )
        else:
            self.engine = create_engine(self._url, echo=echo, pool_pre_ping=True)
        read_options: dict[str, Any] = {_MODE: "read"}
        if self.is_postgresql:
            read_options["postgresql_readonly"] = True
        self._read_engine = self.engine.execution_options(**read_options)
        self._write_engine = self.engine.execution_options(**{_MODE: "write"})
        self._write_lock: WriteLock | None = None
        if self.is_sqlite:
            path = self.sqlite_path
            self._write_lock = WriteLock(path.with_name(path.name + "-writer") if path else None)
        self._reads = sessionmaker(bind=self._read_engine, expire_on_commit=False)
        self._writes = sessionmaker(bind=self._write_engine, expire_on_commit=False)

    # -- what it is ---------------------------------------------------------------

    @property
    def display_url(self) -> str:
        """The URL with any password hidden (user-info or query), for messages and logs."""
        return mask_database_url(self.url)

    @property
    def sqlite_path(self) -> Path | None:
        """The absolute path of the SQLite file (None for PostgreSQL or in-memory)."""
        if not self.is_sqlite or _sqlite_is_memory(self._url):
            return None
        return Path(self._url.database or "")

    def describe(self) -> str:
        """Where the database is, for the start-up message: URL, and file for SQLite."""
        path = self.sqlite_path
        return f"{self.display_url} (file {path})" if path else self.display_url

    def __repr__(self) -> str:
        return f"Database({self.display_url!r})"

    # -- transactions -------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction; it ends (rolled back) with the block.

        Objects loaded in it keep their loaded attributes after the block (the session
        is closed, not rolled back, which would expire them).
        """
        with self._reads() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction: committed when the block ends, rolled back on error.

        On SQLite the threads of one process also queue on a lock of their own before
        BEGIN IMMEDIATE: SQLite's busy handler sleeps and retries, so a writer could
        otherwise miss the short gaps between the worker's transactions for a second or
        more (the listener storing a mail, the sender marking one sent).
        """
        if self._write_lock is None:
            with self._writes() as session, session.begin():
                yield session
            return
        with self._write_lock, self._writes() as session, session.begin():
            yield session

    def dispose(self) -> None:
        """Close every pooled connection (at exit, or before a fork)."""
        self.engine.dispose()
        if self._write_lock is not None:
            self._write_lock.close()

    # -- migrations ---------------------------------------------------------------

    def alembic_config(self, connection: Connection | None = None) -> Config:
        """An Alembic configuration for this database, built in code."""
        config = Config()
        config.set_main_option("script_location", str(migrations_directory()))
        config.set_main_option("path_separator", "os")
        config.set_main_option(
            "sqlalchemy.url", self._url.render_as_string(hide_password=False).replace("%", "%%")
        )
        config.attributes["connection"] = connection
        config.attributes["database"] = self
        return config

    def head(self) -> str | None:
        """The newest revision of the migrations."""
        return ScriptDirectory.from_config(self.alembic_config()).get_current_head()

    def current(self) -> str | None:
        """The revision the database is at (None: empty, never migrated)."""
        with self._read_engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    def upgrade(self, revision: str = "head") -> None:
        """Migrate up to ``revision`` (creating the schema in an empty database)."""
        with self._migration_connection() as connection:
            command.upgrade(self.alembic_config(connection), revision)

    def downgrade(self, revision: str) -> None:
        """Migrate down to ``revision`` (``"base"``: drop everything)."""
        with self._migration_connection() as connection:
            command.downgrade(self.alembic_config(connection), revision)

    def ensure_schema(self) -> str | None:
        """Create or upgrade the schema to the newest revision; returns that revision.

        Safe when several processes start at once: the migration runs in one
        transaction that holds the SQLite write lock or a PostgreSQL advisory lock,
        and Alembic reads the current revision inside it.
        """
        head = self.head()
        before = self.current()
        if before != head:
            self.upgrade("head")
            log.info("database %s upgraded from %s to %s", self.display_url,
                     before or "empty", head)
        return head

    @contextmanager
    def _migration_connection(self) -> Iterator[Connection]:
        """A connection in a transaction that migrations run in, then commit."""
        with self._write_engine.connect() as connection:
            if self.is_sqlite:
                # Batch migrations copy and drop tables; with foreign keys on, dropping
                # a parent would cascade. The pragma is a no-op inside a transaction, so
                # it is set on the bare connection before BEGIN.
                raw = connection.connection.driver_connection
                assert raw is not None
                raw.execute("PRAGMA foreign_keys = OFF")
                try:
                    with connection.begin():
                        yield connection
                        problems = connection.exec_driver_sql("PRAGMA foreign_key_check")
                        if problems.first() is not None:
                            raise RuntimeError("the migration broke foreign keys")
                finally:
                    raw.execute("PRAGMA foreign_keys = ON")
            else:
                with connection.begin():
                    if self.is_postgresql:
                        connection.exec_driver_sql(
                            f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})"
                        )
                    yield connection

    # -- engines ------------------------------------------------------------------

    def _sqlite_engine(self, echo: bool) -> Engine:
        url = self._url
        memory = _sqlite_is_memory(url)
        options: dict[str, Any] = {}
        if memory:
            # One shared connection, or every connection would see its own database.
            options["poolclass"] = StaticPool
        engine = create_engine(
            url,
            echo=echo,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT, "check_same_thread": False},
            **options,
        )
        busy_ms = int(SQLITE_BUSY_TIMEOUT * 1000)

        # A "file:" URI names no plain path to create or protect.
        plain_file = not memory and "uri" not in url.query

        @event.listens_for(engine, "do_connect")
        def _make_directory(*_args: Any) -> None:
            # The directory of the file (e.g. var/) is made when first connecting, and
            # the file is made (or kept) private before SQLite opens it.
            if not memory:
                Path(url.database or "").parent.mkdir(parents=True, exist_ok=True)
            if plain_file:
                secure_sqlite_files(Path(url.database or ""))

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, record: Any) -> None:
            # pysqlite would BEGIN (deferred) by itself before the first write; turn
            # that off and start every transaction in the begin hook below.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
                cursor.execute("PRAGMA foreign_keys = ON")
                if not memory:
                    cursor.execute("PRAGMA journal_mode = WAL")
                # Accepted mail must survive a power cut, not only a crash.
                cursor.execute("PRAGMA synchronous = FULL")
            finally:
                cursor.close()
            record.info[_QUERY_ONLY] = False  # a new SQLite connection writes

        @event.listens_for(engine, "begin")
        def _on_begin(connection: Connection) -> None:
            read = connection.get_execution_options().get(_MODE) == "read"
            # The pragma stays set on the SQLite connection: said again only when the
            # kind of transaction changes (a pooled connection serves both kinds).
            known = connection.connection.info
            if known.get(_QUERY_ONLY) is not read:
                connection.exec_driver_sql(f"PRAGMA query_only = {'ON' if read else 'OFF'}")
                known[_QUERY_ONLY] = read
            if read:
                connection.exec_driver_sql("BEGIN")
            else:
                # Writers take the write lock first, then read: no stale snapshot, and
                # a second writer waits for the first (busy_timeout) instead of failing.
                connection.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
