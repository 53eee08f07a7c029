"""A throw-away PostgreSQL server for the tests.

``PostgresServer.start()`` runs ``initdb`` into a temporary directory and starts
``postgres`` on 127.0.0.1 on a free port (its unix socket also in that directory),
with durability switched off for speed. ``initdb`` and ``postgres`` refuse to run as
root, so as root they run as an unprivileged user (``postgres`` when the system has
one, else ``nobody``) through ``subprocess``'s ``user=``/``group=``, and the
directory is handed to that user. ``create_database()`` makes a fresh empty database
for a test (a schema of its own in one shared database, which is much faster than
``CREATE DATABASE``) and returns its URL. ``stop()`` shuts the server down and
removes the directory.

Set ``ABALONE_PBM_TEST_POSTGRESQL_URL`` (an admin URL, e.g.
``postgresql://postgres@127.0.0.1:5432/postgres``) to use an existing server instead.
Every step has a timeout; when the server cannot be started, ``start()`` raises
``PostgresUnavailable`` with the reason.
"""

from __future__ import annotations

import atexit
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ENV_URL = "ABALONE_PBM_TEST_POSTGRESQL_URL"
SEARCH_PATH = ("/usr/local/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin")
START_TIMEOUT = 30.0
STEP_TIMEOUT = 60.0


class PostgresUnavailable(Exception):
    """PostgreSQL cannot be started here; the message says why."""


def _find(program: str) -> str | None:
    found = shutil.which(program)
    if found:
        return found
    for directory in SEARCH_PATH:
        candidate = Path(directory) / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _unprivileged_user() -> pwd.struct_passwd:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresUnavailable("running as root and there is no postgres or nobody user")


class PostgresServer:
    def __init__(self) -> None:
        self.host = "127.0.0.1"
        self.port = 0
        self.superuser = "postgres"
        self.directory: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.admin_url: str | None = None
        self.startup_seconds = 0.0
        self._user: pwd.struct_passwd | None = None
        self._names = itertools.count(1)

    # -- life cycle ---------------------------------------------------------------

    def start(self) -> PostgresServer:
        started = time.monotonic()
        external = os.environ.get(ENV_URL)
        if external:
            self.admin_url = external
            self._check_admin_connection()
        else:
            self._start_local()
        self.startup_seconds = time.monotonic() - started
        return self

    def _start_local(self) -> None:
        initdb, postgres = _find("initdb"), _find("postgres")
        if not initdb or not postgres:
            raise PostgresUnavailable("initdb/postgres not found on PATH or in " +
                                      ", ".join(SEARCH_PATH))
        if os.geteuid() == 0:
            self._user = _unprivileged_user()
        self.directory = self._make_directory()
        data = self.directory / "data"
        log = self.directory / "initdb.log"
        try:
            result = subprocess.run(
                [initdb, "-D", str(data), "-U", self.superuser, "-A", "trust", "-E", "UTF8",
                 "--locale=C", "--no-sync", "--no-instructions"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                timeout=STEP_TIMEOUT, env=self._env(), user=self._uid, group=self._gid,
                extra_groups=self._groups,
            )
        except subprocess.TimeoutExpired:
            self._cleanup()
            raise PostgresUnavailable("initdb did not finish in time") from None
        except OSError as error:
            self._cleanup()
            raise PostgresUnavailable(f"cannot run initdb: {error}") from None
        if result.returncode != 0:
            log.write_bytes(result.stdout)
            output = result.stdout.decode(errors="replace").strip().splitlines()
            self._cleanup()
            raise PostgresUnavailable("initdb failed: " + " / ".join(output[-3:]))
        last_error = "?"
        for _attempt in range(3):
            self.port = _free_port()
            try:
                self._launch(postgres, data)
                return
            except PostgresUnavailable as error:
                last_error = str(error)
        self._cleanup()
        raise PostgresUnavailable(last_error)

    def _launch(self, postgres: str, data: Path) -> None:
        assert self.directory is not None
        log_path = self.directory / "postgres.log"
        with open(log_path, "ab") as log:
            if self._user is not None:
                os.chown(log_path, self._user.pw_uid, self._user.pw_gid)
            self.process = subprocess.Popen(
                [postgres, "-D", str(data), "-h", self.host, "-p", str(self.port),
                 "-k", str(self.directory),
                 "-c", "fsync=off", "-c", "synchronous_commit=off",
                 "-c", "full_page_writes=off", "-c", "max_connections=100",
                 "-c", "shared_buffers=32MB", "-c", "logging_collector=off"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self._env(), start_new_session=True, user=self._uid, group=self._gid,
                extra_groups=self._groups,
            )
        atexit.register(self.stop)
        self.admin_url = f"postgresql+psycopg://{self.superuser}@{self.host}:{self.port}/postgres"
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
                self.process = None
                raise PostgresUnavailable("postgres exited: " + " / ".join(tail))
            try:
                self._check_admin_connection()
                return
            except PostgresUnavailable:
                if time.monotonic() > deadline:
                    self.stop(remove=False)
                    raise PostgresUnavailable(
                        f"postgres did not accept connections within {START_TIMEOUT:.0f} s"
                    ) from None
                time.sleep(0.05)

    def stop(self, remove: bool = True) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGQUIT)  # immediate shutdown
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)
        if remove:
            self._cleanup()

    def _cleanup(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    # -- databases ----------------------------------------------------------------

    def create_database(self, prefix: str = "t") -> str:
        """A fresh, empty database for one test; returns its URL.

        It is a schema of its own in one shared database (``CREATE DATABASE`` costs a
        checkpoint, about 0.2 s; a schema a few ms): the URL sets ``search_path`` to
        that schema only, so tables, the ``alembic_version`` table and reflection all
        live there, and the test sees an empty database. The shared database is the
        admin URL's (``postgres`` on the throw-away server).
        """
        import psycopg

        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self._conninfo(), autocommit=True,
                             connect_timeout=10) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            conn.execute(f'CREATE SCHEMA "{name}"')
        return self._url_for(self._admin_database()) + f"?options=-csearch_path%3D{name}"

    def drop_database(self, url: str) -> None:
        """Remove a database made by ``create_database`` (closing its connections)."""
        import psycopg

        name = url.rsplit("%3D", 1)[1]
        with psycopg.connect(self._conninfo(), autocommit=True,
                             connect_timeout=10) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid() "
                "AND state = 'idle in transaction'",
                (self._admin_database(),),
            )
            conn.execute("SET lock_timeout = '10s'")
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    # -- helpers ------------------------------------------------------------------

    def _admin_database(self) -> str:
        from sqlalchemy.engine import make_url

        assert self.admin_url is not None
        return make_url(self.admin_url).database or "postgres"

    def _url_for(self, database: str) -> str:
        from sqlalchemy.engine import make_url

        assert self.admin_url is not None
        url = make_url(self.admin_url).set(drivername="postgresql+psycopg", database=database)
        return url.render_as_string(hide_password=False)

    def _conninfo(self, database: str | None = None) -> str:
        from sqlalchemy.engine import make_url

        assert self.admin_url is not None
        url = make_url(self.admin_url)
        parts = {
            "host": url.host or self.host,
            "port": url.port or 5432,
            "user": url.username or self.superuser,
            "dbname": database or url.database or "postgres",
        }
        if url.password:
            parts["password"] = url.password
        return " ".join(f"{key}='{value}'" for key, value in parts.items())

    def _check_admin_connection(self) -> None:
        import psycopg

        try:
            with psycopg.connect(self._conninfo(), autocommit=True, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as error:
            raise PostgresUnavailable(f"cannot connect: {error}".strip()) from None

    def _make_directory(self) -> Path:
        """A private directory the server's user can write (and reach from /)."""
        for base in (None, "/tmp", "/var/tmp", "/dev/shm"):
            if base is not None and not os.path.isdir(base):
                continue
            directory = Path(tempfile.mkdtemp(prefix="abalone-pg-", dir=base))
            if self._user is None:
                return directory
            os.chown(directory, self._user.pw_uid, self._user.pw_gid)
            probe = subprocess.run(
                ["test", "-w", str(directory)], timeout=10,
                user=self._uid, group=self._gid, extra_groups=self._groups,
            )
            if probe.returncode == 0:
                return directory
            shutil.rmtree(directory, ignore_errors=True)
        raise PostgresUnavailable(
            f"no temporary directory that user {self._user.pw_name} can write"  # type: ignore[union-attr]
        )

    @property
    def _uid(self) -> int | None:
        return self._user.pw_uid if self._user else None

    @property
    def _gid(self) -> int | None:
        return self._user.pw_gid if self._user else None

    @property
    def _groups(self) -> list[int] | None:
        return [] if self._user else None  # drop root's supplementary groups

    def _env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
        env.update(LC_ALL="C", LANG="C", TZ="UTC")
        if self._user is not None:
            env.update(HOME=str(self.directory), USER=self._user.pw_name,
                       LOGNAME=self._user.pw_name)
        return env
