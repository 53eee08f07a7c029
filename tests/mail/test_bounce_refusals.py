"""A relay's permanent refusal at RCPT counts as a bounce of the address (DESIGN §2.8);
a 4xx and a 5.7.x policy refusal of our mail do not."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

from mail_helpers import OURS, Relay
from sqlalchemy import select

from abalone_pbm.db.models import BounceScore, OutboxMail
from abalone_pbm.db.repository import enqueue_outbox
from abalone_pbm.mail.compose import compose
from abalone_pbm.mail.sender import Sender
from abalone_pbm.service.bounces import record_refusal

#: What the refusing relay answers at RCPT, by recipient.
ANSWERS = {
    "gone@example.net": "550 5.1.1 <gone@example.net>: Recipient address rejected",
    "busy@example.net": "450 4.2.1 Mailbox busy, try later",
    "blocked@example.net": "554 5.7.1 Your mail is refused: DMARC policy",
}


class _Refusing:
    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if address in ANSWERS:
            return ANSWERS[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        return "250 OK"


def test_relay_refusals_at_rcpt(database, make_settings, clock) -> None:  # type: ignore[no-untyped-def]
    relay = Relay()
    relay.controller.handler = _Refusing()
    relay.start()
    try:
        settings = make_settings(relay=relay.url)
        with database.write() as session:
            for to in [*ANSWERS, "fred@example.net"]:
                message: EmailMessage = compose(
                    sender=OURS, to=to, subject="Abalone help", body="help\n",
                    loop_token=OURS, date=clock.now())
                enqueue_outbox(session, message, clock.now())
        sender = Sender(database, settings, clock, refused=record_refusal)
        sender.drain()
    finally:
        relay.stop()
    with database.read() as session:
        status = {row.recipient: row.status for row in session.scalars(select(OutboxMail))}
        scores = {row.address: row for row in session.scalars(select(BounceScore))}
    assert status == {"gone@example.net": "failed", "busy@example.net": "pending",
                      "blocked@example.net": "failed", "fred@example.net": "sent"}
    assert set(scores) == {"gone@example.net"}
    assert scores["gone@example.net"].score == 1
    assert "refused by the relay" in scores["gone@example.net"].last_reason
    assert "5.1.1" in scores["gone@example.net"].last_reason
