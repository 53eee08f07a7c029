"""The initial schema: users, games, seats, moves, observers, inbox, outbox, counters.

Revision ID: 0001
Revises:
Create Date: 2026-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Every moment is stored with its zone (SQLite: as UTC text; see models.UTCDateTime).
Moment = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("userid", sa.String(length=20), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("vacation", sa.Boolean(), nullable=False),
        sa.Column("robot", sa.String(length=40), nullable=True),
        sa.Column("game_limit", sa.Integer(), nullable=True),
        sa.Column("accepts_challenges", sa.Boolean(), nullable=False),
        sa.Column("subscribe_all", sa.Boolean(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rated_games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("reset_code_hash", sa.String(length=255), nullable=True),
        sa.Column("reset_code_expires", Moment, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("userid", name="uq_users_userid"),
    )

    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("layout", sa.String(length=40), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("options", sa.Text(), nullable=False),
        sa.Column("start_position", sa.Text(), nullable=False),
        sa.Column("position", sa.Text(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("challenger", sa.String(length=20), nullable=True),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("updated_at", Moment, nullable=False),
        sa.Column("turn_started_at", Moment, nullable=False),
        sa.Column("last_nag_at", Moment, nullable=True),
        sa.Column("proposal", sa.String(length=8), nullable=True),
        sa.Column("proposal_seat", sa.Integer(), nullable=True),
        sa.Column("proposal_votes", sa.String(length=32), nullable=False),
        sa.Column("winners", sa.String(length=32), nullable=True),
        sa.Column("result_reason", sa.Text(), nullable=True),
        sa.Column("finished_at", Moment, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
        sa.UniqueConstraint("number", name="uq_games_number"),
    )
    op.create_index("ix_games_status", "games", ["status"])

    op.create_table(
        "inbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("received_at", Moment, nullable=False),
        sa.Column("dedup_key", sa.String(length=255), nullable=False),
        sa.Column("envelope_from", sa.String(length=320), nullable=False),
        sa.Column("envelope_to", sa.Text(), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("processed_at", Moment, nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_inbox"),
        sa.UniqueConstraint("dedup_key", name="uq_inbox_dedup_key"),
    )
    op.create_index("ix_inbox_status_id", "inbox", ["status", "id"])

    op.create_table(
        "counters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.Column("updated_at", Moment, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_counters"),
        sa.UniqueConstraint("name", name="uq_counters_name"),
    )

    op.create_table(
        "addresses",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_addresses_user_id_users", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_addresses"),
        sa.UniqueConstraint("user_id", "address", name="uq_addresses_user_id_address"),
    )
    op.create_index("ix_addresses_address", "addresses", ["address"])

    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("reply_token", sa.String(length=40), nullable=False),
        sa.Column("resigned", sa.Boolean(), nullable=False),
        sa.Column("resign_pending", sa.Boolean(), nullable=False),
        sa.Column("queued_move", sa.String(length=40), nullable=True),
        sa.Column("submitted_move", sa.String(length=40), nullable=True),
        sa.Column("rating_before", sa.Float(), nullable=True),
        sa.Column("rating_after", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_seats_game_id_games", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_seats_user_id_users"),
        sa.PrimaryKeyConstraint("id", name="pk_seats"),
        sa.UniqueConstraint("game_id", "seat", name="uq_seats_game_id_seat"),
        sa.UniqueConstraint("reply_token", name="uq_seats_reply_token"),
    )

    op.create_table(
        "moves",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("text", sa.String(length=40), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("source_message_id", sa.String(length=255), nullable=True),
        sa.Column("automatic", sa.Boolean(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_moves_game_id_games", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_moves"),
        sa.UniqueConstraint("game_id", "ply", name="uq_moves_game_id_ply"),
    )

    op.create_table(
        "observers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("results_only", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name="fk_observers_game_id_games", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_observers_user_id_users", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_observers"),
        sa.UniqueConstraint("game_id", "user_id", name="uq_observers_game_id_user_id"),
    )

    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("message_id", sa.String(length=255), nullable=False),
        sa.Column("sender", sa.String(length=320), nullable=False),
        sa.Column("recipient", sa.String(length=320), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", Moment, nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("sent_at", Moment, nullable=True),
        sa.Column("inbox_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["inbox_id"], ["inbox.id"], name="fk_outbox_inbox_id_inbox"),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
        sa.UniqueConstraint("message_id", name="uq_outbox_message_id"),
    )
    op.create_index("ix_outbox_recipient", "outbox", ["recipient"])
    op.create_index("ix_outbox_status_next", "outbox", ["status", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_outbox_status_next", table_name="outbox")
    op.drop_index("ix_outbox_recipient", table_name="outbox")
    op.drop_table("outbox")
    op.drop_table("observers")
    op.drop_table("moves")
    op.drop_table("seats")
    op.drop_index("ix_addresses_address", table_name="addresses")
    op.drop_table("addresses")
    op.drop_table("counters")
    op.drop_index("ix_inbox_status_id", table_name="inbox")
    op.drop_table("inbox")
    op.drop_index("ix_games_status", table_name="games")
    op.drop_table("games")
    op.drop_table("users")
