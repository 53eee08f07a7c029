"""Inbox keys that one sender cannot squat: envelope sender + Message-ID.

Adds ``inbox.message_id`` (the Message-ID as clean text, for the admin) and rewrites
the keys of stored mails that had a Message-ID into the new form, so that a mail stored
before the upgrade and redelivered after it is still recognised. Mails stored without a
Message-ID keep their old ``sha256:`` key (no new key has that form).

Revision ID: 0007
Revises: 0006
Create Date: 2026-01-04 00:00:00
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _digest(*parts: bytes) -> str:
    # A frozen copy of mail.idempotency's digest (migrations do not import the package).
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big"))
        hasher.update(part)
    return hasher.hexdigest()


def _message_id(raw: bytes) -> str:
    from email.parser import BytesHeaderParser
    from email.policy import compat32

    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    for key, value in headers.raw_items():
        if key.strip().lower() == "message-id":
            return " ".join(str(value).split())
    return ""


def _clean(text: str) -> str:
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("message_id", sa.String(length=255), nullable=True))
    inbox = sa.table(
        "inbox",
        sa.column("id", sa.Integer),
        sa.column("dedup_key", sa.String),
        sa.column("envelope_from", sa.String),
        sa.column("raw", sa.LargeBinary),
        sa.column("message_id", sa.String),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(inbox.c.id, inbox.c.envelope_from, inbox.c.raw)
        .where(~inbox.c.dedup_key.like("sha256:%"))
    ).all()
    for row_id, envelope_from, raw in rows:
        message_id = _message_id(bytes(raw))
        if not message_id:
            continue
        sender = _clean(envelope_from or "").strip("<>").strip().lower()
        key = "mid:" + _digest(sender.encode("utf-8", "surrogatepass"),
                               message_id.encode("utf-8", "surrogatepass"))
        connection.execute(
            inbox.update().where(inbox.c.id == row_id)
            .values(dedup_key=key, message_id=_clean(message_id)[:255] or None)
        )


def downgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("message_id")
