"""Alembic migrations from empty, on SQLite and PostgreSQL: they build exactly the models."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from abalone_pbm.db.models import Base
from abalone_pbm.db.session import Database, migrations_directory

ALL_TABLES = {
    "addresses", "counters", "games", "inbox", "moves", "observers", "outbox", "seats",
    "rate_events", "seeks", "users", "mail_senders", "analysis_requests", "robot_usage", "bounce_scores",
    "tournaments", "tournament_entries", "tournament_games",
}


def schema_differences(database: Database) -> list[object]:
    with database.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "target_metadata": Base.metadata}
        )
        return list(compare_metadata(context, Base.metadata))


def test_migrations_are_found_and_have_one_head() -> None:
    assert (migrations_directory() / "env.py").is_file()
    assert Database("sqlite://").head() == "0012"


def test_upgrade_from_empty_builds_exactly_the_models(db_url: str) -> None:
    database = Database(db_url)
    try:
        assert database.current() is None
        assert database.ensure_schema() == "0012"
        assert database.current() == "0012"
        tables = set(inspect(database.engine).get_table_names())
        assert tables == ALL_TABLES | {"alembic_version"}
        assert schema_differences(database) == []
        # Again: nothing to do.
        assert database.ensure_schema() == "0012"
    finally:
        database.dispose()


def test_constraint_names_follow_the_convention(database: Database) -> None:
    inspector = inspect(database.engine)
    uniques = {c["name"] for c in inspector.get_unique_constraints("seats")}
    assert uniques == {"uq_seats_game_id_seat", "uq_seats_reply_token"}
    indexes = {i["name"] for i in inspector.get_indexes("outbox")}
    assert {"ix_outbox_recipient", "ix_outbox_status_next"} <= indexes
    foreign = {f["name"] for f in inspector.get_foreign_keys("seats")}
    assert foreign == {"fk_seats_game_id_games", "fk_seats_user_id_users"}


def test_downgrade_to_base_and_up_again(database: Database) -> None:
    database.downgrade("base")
    assert database.current() is None
    assert set(inspect(database.engine).get_table_names()) <= {"alembic_version"}
    database.upgrade()
    assert database.current() == "0012"
    assert schema_differences(database) == []


def test_sqlite_file_settings(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'a' / 'b' / 'x.sqlite3'}")
    try:
        assert database.is_sqlite and not database.is_postgresql
        database.ensure_schema()
        assert (tmp_path / "a" / "b" / "x.sqlite3").is_file()
        with database.engine.connect() as connection:
            pragma = connection.exec_driver_sql
            assert pragma("PRAGMA journal_mode").scalar() == "wal"
            assert pragma("PRAGMA foreign_keys").scalar() == 1
            assert pragma("PRAGMA busy_timeout").scalar() == 30000
        assert database.sqlite_path == tmp_path / "a" / "b" / "x.sqlite3"
    finally:
        database.dispose()


def test_a_relative_sqlite_path_is_taken_from_where_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    database = Database("sqlite:///var/abalone-pbm.sqlite3")
    monkeypatch.chdir("/")
    try:
        assert database.url == "sqlite:///var/abalone-pbm.sqlite3"
        assert database.sqlite_path == tmp_path / "var" / "abalone-pbm.sqlite3"
        database.ensure_schema()
        assert (tmp_path / "var" / "abalone-pbm.sqlite3").is_file()
    finally:
        database.dispose()


def test_postgresql_urls_use_psycopg_3(postgres_url: str) -> None:
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    database = Database(plain)
    try:
        assert database.is_postgresql and not database.is_sqlite
        assert database.url == plain
        assert database.engine.url.drivername == "postgresql+psycopg"
        assert database.ensure_schema() == "0012"
    finally:
        database.dispose()


def test_0010_gives_the_waiting_mails_their_board(db_url: str) -> None:
    """Upgraded while a backlog waits: each waiting mail gets the board that storing it
    now would give it (``intake.inbox_values``); processed mails are left alone."""
    from datetime import datetime, timezone

    import sqlalchemy as sa

    from abalone_pbm.mail import intake

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    mails = [
        (b"Subject: abalone move 101 fred pw c3-c4#3\r\n\r\nx", "abalone@l", "new"),
        (b"Subject: Re: AW: accept 102 fred pw\r\n\r\nx", "abalone@l", "new"),
        (b"Subject: =?utf-8?q?abalone_show_board_103=23=35?=\r\n\r\nx", "abalone@l", "new"),
        (b"Subject: Re: Abalone Board 101 fred\r\n\r\nc3-c4", "abalone+104.k3x9q7mf@l", "new"),
        (b"Subject: multiple\r\n\r\nabalone move 105 fred pw c3-c4", "abalone@l", "new"),
        (b"Subject: abalone move 99999999999 fred pw c3-c4\r\n\r\nx", "abalone@l", "new"),
        (b"Subject: abalone move 106 fred pw c3-c4\r\n\r\nx", "abalone@l", "done"),
    ]
    database = Database(db_url)
    try:
        database.upgrade("0009")
        inbox = sa.table("inbox", *(sa.column(name) for name in (
            "received_at", "dedup_key", "envelope_from", "envelope_to", "raw", "status",
            "attempts")))
        with database.engine.begin() as connection:
            for number, (raw, recipient, status) in enumerate(mails):
                connection.execute(inbox.insert().values(
                    received_at=now, dedup_key=f"k{number}", envelope_from="f@e",
                    envelope_to=recipient, raw=raw, status=status, attempts=0))
        database.upgrade("0010")
        with database.engine.connect() as connection:
            boards = [board for (board,) in connection.execute(
                sa.text("SELECT board FROM inbox ORDER BY id"))]
        expected = [intake.inbox_values(raw, "f@e", [recipient], now)["board"]
                    if status == "new" else None for raw, recipient, status in mails]
        assert expected == [101, 102, 103, 104, None, None, None]
        assert boards == expected
    finally:
        database.dispose()
