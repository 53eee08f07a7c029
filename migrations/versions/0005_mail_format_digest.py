"""Mail preferences (HTML or text only, the daily digest, the results of every game) and the position before the
last move (to mark that move in the board picture).

Revision ID: 0005
Revises: 0004
Create Date: 2026-01-04 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("mail_format", sa.String(8), nullable=False, server_default="html")
        )
        batch.add_column(
            sa.Column("digest", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("digest_sent_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("notify_all", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("previous_position", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("previous_position")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("notify_all")
        batch.drop_column("digest_sent_at")
        batch.drop_column("digest")
        batch.drop_column("mail_format")
