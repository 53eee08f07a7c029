"""Migration 0002 (Game.withdrawn, the seeks table): down to 0001 and up, data kept."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import inspect, text

from abalone_pbm.db.session import Database


def test_migration_0002_down_and_up_keeps_the_games(database: Database) -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with database.write() as session:
        session.execute(
            text(
                "INSERT INTO games (number, layout, players, options, start_position, "
                "position, ply, version, status, created_at, updated_at, turn_started_at, "
                "proposal_votes, withdrawn, to_move) VALUES (101, 'standard', 2, '{}', 'x', 'x', 0, 1, "
                "'active', :now, :now, :now, '', 'barney', 1)"
            ),
            {"now": now},
        )
    database.downgrade("0001")
    assert database.current() == "0001"
    inspector = inspect(database.engine)
    assert "seeks" not in inspector.get_table_names()
    assert "withdrawn" not in {c["name"] for c in inspector.get_columns("games")}
    database.upgrade()
    assert database.current() == database.head()
    with database.read() as session:
        rows = session.execute(text("SELECT number, status, withdrawn FROM games")).all()
    assert [tuple(r) for r in rows] == [(101, "active", None)]
    names = {c["name"] for c in inspect(database.engine).get_columns("games")}
    assert "withdrawn" in names
    assert "ix_seeks_players" in {i["name"] for i in inspect(database.engine).get_indexes("seeks")}


def test_migration_0003_reads_the_seat_to_move_off_the_position(database: Database) -> None:
    database.downgrade("0002")
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with database.write() as session:
        session.execute(
            text(
                "INSERT INTO games (number, layout, players, options, start_position, "
                "position, ply, version, status, created_at, updated_at, turn_started_at, "
                "proposal_votes) VALUES (101, 'standard', 3, '{}', 'x', :position, 1, 1, "
                "'active', :now, :now, :now, '')"
            ),
            {"now": now, "position": "11111/111111/......./3......2/33.....22/33....22/"
                                     "33...22/33..22/33.22 2 0,0,0"},
        )
    database.upgrade()
    with database.read() as session:
        assert session.execute(text("SELECT to_move FROM games")).scalar_one() == 2
