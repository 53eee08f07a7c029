"""The board a waiting mail concerns, so that mails about one board are processed in
the order they were accepted (also after an outage, when the whole backlog waits).

Adds ``inbox.board`` (nullable: a mail whose board its envelope and Subject do not
name) and the index ``(status, board, id)``, and fills it in for the mails still
waiting (an upgrade made while a backlog waits keeps each board's order too).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 00:00:00
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# A frozen copy of mail.intake.board_named as of this revision (migrations do not
# import the package): the reply address among the recipients, else the board number
# right after a Subject's command words.
_REPLY_LOCAL = re.compile(r"[^+@\s]*\+([0-9]{1,9})\.[a-z0-9]{4,64}", re.IGNORECASE)
_PREFIXES = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|antw|vs|tr)\s*(?:\[\d+\]|\(\d+\))?\s*:\s*)+", re.IGNORECASE)
_BOARD_COMMAND = re.compile(
    r"(?:abalone\s+(?:move|board|mvoe|queue|submit|confirm|resign|chat|subscribe"
    r"|unsubscribe|show(?:\s+board)?|preview|analy[sz]e|accept|reject)|accept|reject)"
    r"\s+0*([1-9][0-9]{0,8})(?:#[0-9]*)?(?:\s|$)", re.IGNORECASE)
_LARGEST = 2**31 - 1


def _board(envelope_to: str, raw: bytes) -> int | None:
    from email.header import decode_header, make_header
    from email.parser import BytesHeaderParser
    from email.policy import compat32

    for address in envelope_to.split(","):
        local = address.strip().strip("<>").rpartition("@")[0]
        found = _REPLY_LOCAL.fullmatch(local)
        if found:
            return int(found.group(1))
    subject = str(BytesHeaderParser(policy=compat32).parsebytes(raw).get("Subject") or "")
    subject = subject[:4000]
    if "=?" in subject:
        try:
            subject = str(make_header(decode_header(subject)))
        except Exception:
            pass
    found = _BOARD_COMMAND.match(_PREFIXES.sub("", subject[:1000]))
    number = int(found.group(1)) if found else None
    return number if number is not None and number <= _LARGEST else None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("board", sa.Integer(), nullable=True))
        batch.create_index("ix_inbox_status_board_id", ["status", "board", "id"])
    inbox = sa.table("inbox", sa.column("id", sa.Integer), sa.column("status", sa.String),
                     sa.column("envelope_to", sa.Text), sa.column("raw", sa.LargeBinary),
                     sa.column("board", sa.Integer))
    connection = op.get_bind()
    waiting = connection.execute(
        sa.select(inbox.c.id, inbox.c.envelope_to, inbox.c.raw)
        .where(inbox.c.status == "new").order_by(inbox.c.id)).all()
    for row_id, envelope_to, raw in waiting:
        board = _board(envelope_to or "", bytes(raw))
        if board is not None:
            connection.execute(inbox.update().where(inbox.c.id == row_id).values(board=board))


def downgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.drop_index("ix_inbox_status_board_id")
        batch.drop_column("board")
