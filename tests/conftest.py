"""Fixtures shared by the whole suite: databases on SQLite and on a real PostgreSQL.

- ``postgres_server`` (session): a throw-away PostgreSQL 15 server (``tests/pg.py``),
  started on first use and stopped at the end; when it cannot be started, the tests
  that need it are skipped with "PostgreSQL not available: <why>".
- ``sqlite_url`` / ``postgres_url``: a fresh, empty database (a file in ``tmp_path``;
  a schema of its own on the PostgreSQL server, dropped after the test).
- ``backend``: ``sqlite`` then ``postgresql`` (test ids ``[sqlite]``/``[postgresql]``).
- ``db_url``: a fresh, empty database of each backend (for tests of migrations).
- ``migrated_db_url``: a database of each backend migrated to head, with no rows;
  fast (a copied SQLite file; one PostgreSQL schema migrated once and emptied).
- ``database``: a ``Database`` on ``migrated_db_url``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from pg import ENV_URL as PG_ENV_URL  # noqa: E402
from pg import PostgresServer, PostgresUnavailable  # noqa: E402

from sqlalchemy import text  # noqa: E402

from abalone_pbm.db.models import Base  # noqa: E402
from abalone_pbm.db.session import Database  # noqa: E402

BACKENDS = ["sqlite", "postgresql"]


_started: list[PostgresServer] = []


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        server.start()
    except PostgresUnavailable as error:
        pytest.skip("PostgreSQL not available: " + " ".join(str(error).split()))
    _started.append(server)
    try:
        yield server
    finally:
        server.stop()


#: The start-up seconds that pytest-xdist's workers reported for their servers (the
#: controlling process, which prints the summary, starts none itself).
_worker_startup_seconds: list[float] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # an xdist worker: hand the figures to the controller
        output["postgres_startup_seconds"] = [s.startup_seconds for s in _started]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """(pytest-xdist) A worker ended: keep the start-up figures it reported."""
    _worker_startup_seconds.extend(getattr(node, "workeroutput", {}).get(
        "postgres_startup_seconds", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    where = "given by " + PG_ENV_URL if os.environ.get(PG_ENV_URL) else "started"
    for seconds in [s.startup_seconds for s in _started] + _worker_startup_seconds:
        terminalreporter.write_line(f"PostgreSQL test server {where} in {seconds:.1f} s")


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'abalone-pbm.sqlite3'}"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each database backend in turn: ``sqlite``, ``postgresql``."""
    return str(request.param)


@pytest.fixture
def db_url(request: pytest.FixtureRequest, backend: str) -> str:
    """A fresh, empty database of each backend (nothing migrated)."""
    name = "sqlite_url" if backend == "sqlite" else "postgres_url"
    return str(request.getfixturevalue(name))


@pytest.fixture(scope="session")
def _migrated_sqlite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("migrated") / "template.sqlite3"
    db = Database(f"sqlite:///{path}")
    db.ensure_schema()
    db.dispose()
    return path


@pytest.fixture(scope="session")
def _migrated_postgres_url(postgres_server: PostgresServer) -> str:
    return postgres_server.create_database("migrated")


def _empty_tables(db: Database) -> None:
    """Delete every row and restart the ids (faster than TRUNCATE on small tables)."""
    with db.write() as session:
        session.execute(text("SET LOCAL lock_timeout = '10s'"))  # never hang on a leak
        for table in reversed(Base.metadata.sorted_tables):
            session.execute(table.delete())
        session.execute(text(
            "SELECT setval(pg_get_serial_sequence(quote_ident(c.relname), 'id'), 1, false) "
            "FROM pg_class c WHERE c.relkind = 'r' AND c.relname <> 'alembic_version' "
            "AND c.relnamespace = current_schema()::regnamespace"
        ))


@pytest.fixture
def migrated_db_url(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> str:
    """A database of each backend already migrated to head, with no rows (fast).

    SQLite: a copy of a file migrated once per session. PostgreSQL: one schema
    migrated once per session and emptied before each test (so whatever used it in
    the previous test, e.g. a server subprocess, must be gone).
    """
    if backend == "sqlite":
        path = tmp_path / "abalone-pbm.sqlite3"
        shutil.copyfile(request.getfixturevalue("_migrated_sqlite_file"), path)
        return f"sqlite:///{path}"
    url = str(request.getfixturevalue("_migrated_postgres_url"))
    db = Database(url)
    try:
        db.ensure_schema()  # a test may have migrated it down
        _empty_tables(db)
    finally:
        db.dispose()
    return url


@pytest.fixture
def database(migrated_db_url: str) -> Iterator[Database]:
    """A ``Database`` of each backend, migrated to head, with no rows."""
    db = Database(migrated_db_url)
    try:
        yield db
    finally:
        db.dispose()
