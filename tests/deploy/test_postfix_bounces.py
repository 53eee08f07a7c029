"""Bounces through a real Postfix (DESIGN §2.8): the players' server refuses a recipient
at RCPT, the site's Postfix writes its own delivery report to the mail's bounce address
(``verp``), the report comes back through LMTP and is counted against the address;
a forged bounce address is refused at RCPT by the policy service.

The site is set up as in test_postfix (the README's recipe on a private Postfix);
Postfix comes from Debian's packages, the test is skipped, saying why, where it cannot
be installed.
"""

from __future__ import annotations

import smtplib
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_postfix import GAME, Internet, Site, running_site  # noqa: E402

from abalone_pbm.db.models import BounceScore, InboxMail, OutboxMail  # noqa: E402
from abalone_pbm.db.session import Database  # noqa: E402

FRED, GONE = "fred@players.test", "gone@players.test"


class RefusingInternet(Internet):
    """The players' servers: ``gone@players.test`` does not exist (550 at RCPT)."""

    async def handle_RCPT(self, server: object, session: object, envelope: object,
                          address: str, rcpt_options: list[str]) -> str:
        if address.lower() == GONE:
            return "550 5.1.1 <gone@players.test>: Recipient address rejected: User unknown"
        envelope.rcpt_tos.append(address)  # type: ignore[attr-defined]
        return "250 OK"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with running_site(RefusingInternet(), "abalone-postfix-bounces-") as result:
        yield result


def _database(site: Site) -> Database:
    return Database(site.env["ABALONE_PBM_DATABASE_URL"])


def test_postfix_report_of_a_refused_recipient_is_counted(site: Site) -> None:
    mark = site.internet.count()
    site.send(FRED, GAME, "signup fred chocolate")
    site.internet.wait_for(FRED, "", mark)
    # The answer to gone@ is refused by the players' server; Postfix reports it to the
    # answer's bounce address, and the report comes back through LMTP.
    site.send(GONE, GAME, "help")
    database = _database(site)
    try:
        deadline = time.monotonic() + 60
        while True:
            with database.read() as session:
                score = session.scalars(
                    select(BounceScore).where(BounceScore.address == GONE)).first()
                if score is not None:
                    break
            assert time.monotonic() < deadline, (site.server_log()[-3000:],
                                                 site.postfix.log()[-3000:])
            time.sleep(0.5)
        assert score.score == 1 and score.suppressed_at is None
        assert "5.1.1" in score.last_reason
        with database.read() as session:
            answer = session.scalars(select(OutboxMail).where(OutboxMail.recipient == GONE)
                                     ).one()
            report = session.scalars(select(InboxMail).where(
                InboxMail.envelope_to == answer.sender)).one()
            assert report.envelope_from == ""  # Postfix's own report, null sender
            assert report.status == "dropped"
            assert "delivery report (RFC 3464)" in (report.note or "")
            assert f"counted for {GONE}" in (report.note or "")
            # The report is about the very mail that was refused.
            assert f"outbox {answer.id}" in (report.note or "")
        # Fred's mail was never touched.
        with database.read() as session:
            assert session.scalars(select(BounceScore).where(
                BounceScore.address == FRED)).first() is None
    finally:
        database.dispose()


def test_a_forged_bounce_address_is_refused_at_rcpt(site: Site) -> None:
    database = _database(site)
    try:
        with database.read() as session:
            ours = session.scalars(select(OutboxMail.sender)).first()
    finally:
        database.dispose()
    assert ours is not None and ours.startswith("abalone+bounce.")
    forged = "abalone+bounce." + "q" * 16 + "@pbm.example.org"
    with smtplib.SMTP("127.0.0.1", site.postfix.smtp_port, timeout=60) as client:
        client.ehlo("mx.players.test")
        client.mail("<>")
        code, text = client.rcpt(forged)
        assert code == 550 and b"bounce address" in text, (code, text)
        # The real one is accepted (its mail, no report, counts against nobody).
        assert client.rcpt(ours)[0] == 250
