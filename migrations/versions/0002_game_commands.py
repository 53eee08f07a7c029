"""Game commands: who withdrew from a game, and the players seeking opponents.

Revision ID: 0002
Revises: 0001
Create Date: 2026-01-02 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Every moment is stored with its zone (SQLite: as UTC text; see models.UTCDateTime).
Moment = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("withdrawn", sa.Text(), nullable=True))

    op.create_table(
        "seeks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_seeks_user_id_users", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_seeks"),
        sa.UniqueConstraint("user_id", "players", name="uq_seeks_user_id_players"),
    )
    op.create_index("ix_seeks_players", "seeks", ["players"])


def downgrade() -> None:
    op.drop_index("ix_seeks_players", table_name="seeks")
    op.drop_table("seeks")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("withdrawn")
