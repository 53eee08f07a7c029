"""Bounce processing: a score per address whose mail bounces (``bounce_scores``), and
the index that ties a delivery report at a bounce address to its outbox row
(``outbox.sender`` holds each mail's own bounce address, ``verp``).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

#: Every moment is stored with its zone (SQLite: as UTC text; see models.UTCDateTime).
Moment = sa.DateTime(timezone=True)

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "bounce_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(320), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("first_at", Moment, nullable=False),
        sa.Column("last_at", Moment, nullable=False),
        sa.Column("last_reason", sa.String(500), nullable=False),
        sa.Column("suppressed_at", Moment, nullable=True),
        sa.Column("notice_sent_at", Moment, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_bounce_scores"),
        sa.UniqueConstraint("address", name="uq_bounce_scores_address"),
    )
    op.create_index("ix_bounce_scores_suppressed_at", "bounce_scores", ["suppressed_at"])
    op.create_index("ix_outbox_sender", "outbox", ["sender"])


def downgrade() -> None:
    op.drop_index("ix_outbox_sender", table_name="outbox")
    op.drop_index("ix_bounce_scores_suppressed_at", table_name="bounce_scores")
    op.drop_table("bounce_scores")
