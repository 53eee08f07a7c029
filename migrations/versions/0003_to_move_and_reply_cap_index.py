"""The seat to move stored with each game; an index for the daily reply cap.

Revision ID: 0003
Revises: 0002
Create Date: 2026-01-03 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("to_move", sa.Integer(), nullable=False, server_default="1"))
    games = sa.table("games", sa.column("id", sa.Integer), sa.column("position", sa.Text),
                     sa.column("to_move", sa.Integer))
    connection = op.get_bind()
    for game_id, position in connection.execute(sa.select(games.c.id, games.c.position)):
        fields = (position or "").split()
        seat = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 1
        connection.execute(games.update().where(games.c.id == game_id).values(to_move=seat))
    with op.batch_alter_table("games") as batch:
        batch.alter_column("to_move", server_default=None)
    op.create_index("ix_outbox_recipient_created", "outbox", ["recipient", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_outbox_recipient_created", table_name="outbox")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("to_move")
