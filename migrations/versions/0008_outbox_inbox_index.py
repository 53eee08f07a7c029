"""An index on the outbox's inbox id: the answers of one mail are read after it is
processed (rate limits), and without it each read scans the whole outbox.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_outbox_inbox_id", "outbox", ["inbox_id"])


def downgrade() -> None:
    op.drop_index("ix_outbox_inbox_id", table_name="outbox")
