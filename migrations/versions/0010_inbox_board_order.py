"""The board a waiting mail concerns, so that mails about one board are processed in
the order they were accepted (also after an outage, when the whole backlog waits).

Adds ``inbox.board`` (nullable: a mail whose board its envelope and Subject do not
name) and the index ``(status, board, id)``.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("board", sa.Integer(), nullable=True))
        batch.create_index("ix_inbox_status_board_id", ["status", "board", "id"])


def downgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.drop_index("ix_inbox_status_board_id")
        batch.drop_column("board")
