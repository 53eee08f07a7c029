"""Analyses queued for the robots' threads (searched outside the worker's write
transaction), and the robots' CPU seconds per user (a daily allowance).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

#: Every moment is stored with its zone (SQLite: as UTC text; see models.UTCDateTime).
Moment = sa.DateTime(timezone=True)

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "analysis_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("recipient", sa.String(320), nullable=False),
        sa.Column("queue", sa.String(320), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=True),
        sa.Column("references", sa.Text(), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_analysis_requests"),
    )
    op.create_index("ix_analysis_requests_created_at", "analysis_requests", ["created_at"])
    op.create_table(
        "robot_usage",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(20), nullable=False),
        sa.Column("at", Moment, nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_robot_usage"),
    )
    op.create_index("ix_robot_usage_userid_at", "robot_usage", ["userid", "at"])
    op.create_index("ix_robot_usage_at", "robot_usage", ["at"])


def downgrade() -> None:
    op.drop_index("ix_robot_usage_at", table_name="robot_usage")
    op.drop_index("ix_robot_usage_userid_at", table_name="robot_usage")
    op.drop_table("robot_usage")
    op.drop_index("ix_analysis_requests_created_at", table_name="analysis_requests")
    op.drop_table("analysis_requests")
