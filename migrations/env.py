"""Alembic environment of abalone-pbm.

Normally run in code by ``abalone_pbm.db.session.Database`` (``abalone-pbm db
upgrade``, ``serve``, ``process``), which passes an open connection in
``config.attributes["connection"]``; the migrations then run inside that
connection's transaction. Run by the ``alembic`` command (developers, with the
top-level ``alembic.ini``), the URL is ``sqlalchemy.url`` from the ini file or else
the server's own setting (``ABALONE_PBM_DATABASE_URL``).
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy.engine import Connection

from abalone_pbm.db.models import Base

config = context.config
target_metadata = Base.metadata

if config.config_file_name is not None and config.attributes.get("connection") is None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from abalone_pbm.config import load_settings

    return load_settings().database_url


def _configure(**options: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        **options,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    """``alembic upgrade --sql``: print the SQL instead of running it."""
    from abalone_pbm.db.session import normalise_url

    url = normalise_url(_url())
    _configure(
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.get_backend_name() == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    _configure(
        connection=connection,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from abalone_pbm.db.session import Database

    database = Database(_url())
    try:
        with database._migration_connection() as connection:
            _run(connection)
    finally:
        database.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
