"""Double opt-in for mail addresses; counted events for rate limits and throttles.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

#: Every moment is stored with its zone (SQLite: as UTC text; see models.UTCDateTime).
Moment = sa.DateTime(timezone=True)

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Addresses registered before opt-in existed were accepted then: they stay confirmed.
    with op.batch_alter_table("addresses") as batch:
        batch.add_column(sa.Column("confirmed", sa.Boolean(), nullable=False,
                                   server_default=sa.true()))
        batch.add_column(sa.Column("confirm_code_hash", sa.String(64), nullable=True))
        batch.add_column(sa.Column("confirm_sent_at", Moment, nullable=True))
    with op.batch_alter_table("addresses") as batch:
        batch.alter_column("confirmed", server_default=None)
    op.create_index("ix_addresses_confirm_code_hash", "addresses", ["confirm_code_hash"])
    op.create_table(
        "rate_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(320), nullable=False),
        sa.Column("at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rate_events"),
    )
    op.create_index("ix_rate_events_scope_subject_at", "rate_events",
                    ["scope", "subject", "at"])
    op.create_index("ix_rate_events_at", "rate_events", ["at"])


def downgrade() -> None:
    op.drop_index("ix_rate_events_at", table_name="rate_events")
    op.drop_index("ix_rate_events_scope_subject_at", table_name="rate_events")
    op.drop_table("rate_events")
    op.drop_index("ix_addresses_confirm_code_hash", table_name="addresses")
    with op.batch_alter_table("addresses") as batch:
        batch.drop_column("confirm_sent_at")
        batch.drop_column("confirm_code_hash")
        batch.drop_column("confirmed")
