"""Outbox leases name their sender process; live senders keep a heartbeat.

A restarted sender recognises the leases of a dead predecessor (same host, process
gone; or no heartbeat for a while) and sends those mails at once instead of waiting
for the lease to run out.

Revision ID: 0004
Revises: 0003
Create Date: 2026-01-04 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("lease_owner", sa.String(200), nullable=True))
    op.create_table(
        "mail_senders",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_mail_senders"),
        sa.UniqueConstraint("owner", name="uq_mail_senders_owner"),
    )


def downgrade() -> None:
    op.drop_table("mail_senders")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("lease_owner")
