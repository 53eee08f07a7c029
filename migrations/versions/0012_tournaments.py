"""Tournaments (DESIGN §2.9): the tournaments, their entrants, and their games and byes.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

#: Every moment is stored with its zone (SQLite: as UTC text; see models.UTCDateTime).
Moment = sa.DateTime(timezone=True)

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("games_per_pairing", sa.Integer(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=True),
        sa.Column("current_round", sa.Integer(), nullable=False),
        sa.Column("reported_round", sa.Integer(), nullable=False),
        sa.Column("options", sa.Text(), nullable=False),
        sa.Column("min_players", sa.Integer(), nullable=False),
        sa.Column("max_players", sa.Integer(), nullable=False),
        sa.Column("signup_until", Moment, nullable=True),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("started_at", Moment, nullable=True),
        sa.Column("finished_at", Moment, nullable=True),
        sa.Column("series", sa.String(40), nullable=True),
        sa.Column("edition", sa.Integer(), nullable=False),
        sa.Column("division_size", sa.Integer(), nullable=False),
        sa.Column("interval_days", sa.Integer(), nullable=False),
        sa.Column("stall_reported_at", Moment, nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_tournaments"),
        sa.UniqueConstraint("name", name="uq_tournaments_name"),
    )
    op.create_index("ix_tournaments_status", "tournaments", ["status"])
    op.create_table(
        "tournament_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("joined_at", Moment, nullable=False),
        sa.Column("left_at", Moment, nullable=True),
        sa.Column("rating_at_start", sa.Float(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("division", sa.Integer(), nullable=False),
        sa.Column("once", sa.Boolean(), nullable=False),
        sa.Column("standings_mail", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE",
                                name="fk_tournament_entries_tournament_id_tournaments"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE",
                                name="fk_tournament_entries_user_id_users"),
        sa.PrimaryKeyConstraint("id", name="pk_tournament_entries"),
        sa.UniqueConstraint("tournament_id", "user_id",
                            name="uq_tournament_entries_tournament_id_user_id"),
    )
    op.create_index("ix_tournament_entries_user_id", "tournament_entries", ["user_id"])
    op.create_table(
        "tournament_games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("match", sa.Integer(), nullable=False),
        sa.Column("division", sa.Integer(), nullable=False),
        sa.Column("first_user_id", sa.Integer(), nullable=False),
        sa.Column("second_user_id", sa.Integer(), nullable=True),
        sa.Column("board", sa.Integer(), nullable=True),
        sa.Column("score_first", sa.Float(), nullable=True),
        sa.Column("marbles_first", sa.Integer(), nullable=False),
        sa.Column("marbles_second", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE",
                                name="fk_tournament_games_tournament_id_tournaments"),
        sa.ForeignKeyConstraint(["first_user_id"], ["users.id"],
                                name="fk_tournament_games_first_user_id_users"),
        sa.ForeignKeyConstraint(["second_user_id"], ["users.id"],
                                name="fk_tournament_games_second_user_id_users"),
        sa.PrimaryKeyConstraint("id", name="pk_tournament_games"),
        sa.UniqueConstraint("board", name="uq_tournament_games_board"),
    )
    op.create_index("ix_tournament_games_tournament_id", "tournament_games",
                    ["tournament_id"])


def downgrade() -> None:
    op.drop_index("ix_tournament_games_tournament_id", table_name="tournament_games")
    op.drop_table("tournament_games")
    op.drop_index("ix_tournament_entries_user_id", table_name="tournament_entries")
    op.drop_table("tournament_entries")
    op.drop_index("ix_tournaments_status", table_name="tournaments")
    op.drop_table("tournaments")
