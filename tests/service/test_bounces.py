"""Bounces acted on through the real mail path (service.bounces): reports at a mail's
bounce address counted once a day, the address no longer mailed past the threshold,
the owner's other address told once, the opponent told in the board mail, a valid
command clearing it; reports that tie to no mail of ours count against nobody."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Iterator

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from abalone_pbm.db.models import Address, BounceScore, InboxMail, OutboxMail, User
from abalone_pbm.service import bounce_scores, bounces, passwords

from .harness import Harness, make_harness

FRED, FRED2, WILMA = "fred@example.org", "fred2@example.org", "wilma@example.org"


@pytest.fixture
def harness(migrated_db_url: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))
    h = make_harness(migrated_db_url, tmp_path, bounce_threshold=2)
    try:
        yield h
    finally:
        h.database.dispose()


def _dsn(to: str, failed: str, message_id: str, status: str = "5.1.1",
         action: str = "failed") -> bytes:
    """A Postfix delivery report to ``to`` about our mail ``message_id`` to ``failed``."""
    reply = "550" if status.startswith("5") else "450"
    return f"""From: MAILER-DAEMON@mx.players.test (Mail Delivery System)
To: {to}
Subject: Undelivered Mail Returned to Sender
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B1"

--B1
Content-Type: text/plain

This is the mail system at host mx.players.test.

--B1
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.players.test

Final-Recipient: rfc822; {failed}
Action: {action}
Status: {status}
Diagnostic-Code: smtp; {reply} {status} <{failed}>: Recipient address rejected

--B1
Content-Type: text/rfc822-headers

From: "Abalone" <abalone@example.org>
To: {failed}
Message-ID: {message_id}

--B1--
""".replace("\n", "\r\n").encode()


def _last_to(h: Harness, address: str) -> OutboxMail:
    with h.database.read() as session:
        row = session.scalars(select(OutboxMail).where(OutboxMail.recipient == address)
                              .order_by(OutboxMail.id.desc())).first()
        assert row is not None
        session.expunge(row)
        return row


def _note(h: Harness) -> tuple[str, str]:
    with h.database.read() as session:
        mail = session.scalars(select(InboxMail).order_by(InboxMail.id.desc())).first()
        assert mail is not None
        return mail.status, mail.note or ""


def _score(h: Harness, address: str) -> BounceScore | None:
    with h.database.read() as session:
        row = session.scalars(select(BounceScore).where(BounceScore.address == address)).first()
        if row is not None:
            session.expunge(row)
        return row


def _bounce(h: Harness, address: str, **kwargs: str) -> list[object]:
    """A report to the bounce address of the last mail to ``address``."""
    row = _last_to(h, address)
    return list(h.deliver("", row.sender, _dsn(row.sender, address, row.message_id,
                                               **kwargs)))


def _add_confirmed(h: Harness, userid: str, address: str) -> None:
    with h.database.write() as session:
        user = session.scalars(select(User).where(User.userid == userid)).one()
        session.add(Address(user_id=user.id, address=address, confirmed=True))


def test_bounces_stop_mail_tell_the_owner_and_a_command_clears(harness: Harness) -> None:
    h = harness
    h.signup("fred")
    h.signup("wilma")
    _add_confirmed(h, "fred", FRED2)
    h.challenge("fred", "wilma")

    # A report at the mail's bounce address: counted, never answered.
    assert _bounce(h, FRED) == []
    status, note = _note(h)
    assert status == "dropped" and "counted for fred@example.org (score 1 of 2)" in note
    # The same day: one bad day counts once.
    h.clock.advance(hours=3)
    h.mail(WILMA, "abalone show 101")
    _bounce(h, FRED)
    score = _score(h, FRED)
    assert score is not None and score.score == 1 and score.suppressed_at is None

    # The next day: the threshold; the other address gets one notice.
    h.clock.advance(days=1)
    h.mail(WILMA, "abalone show 101")
    sent = _bounce(h, FRED)
    score = _score(h, FRED)
    assert score is not None and score.score == 2 and score.suppressed_at == h.clock.now()
    assert [(s.to, s.subject) for s in sent] == [  # type: ignore[attr-defined]
        (FRED2, "Abalone: mail to fred@example.org bounces")]
    assert "send any valid command from it" in sent[0].body  # type: ignore[attr-defined]

    # Fred moves from his other address: no mail to the dead one; the game goes on.
    sent = h.mail(FRED2, "abalone move 101 fred fred-pw c3-c5,d4")
    assert {s.to for s in sent} == {FRED2, WILMA}
    # A report that comes late is recorded, but the notice is not sent again.
    _bounce(h, FRED, status="5.1.1")
    assert h.take_outbox() == []

    # A valid command from the address clears it, and it is answered.
    sent = h.mail(FRED, "abalone games fred")
    assert [s.to for s in sent] == [FRED]
    assert _score(h, FRED) is None
    sent = h.mail(WILMA, "abalone move 101 wilma wilma-pw g7-g5,f6")
    assert FRED in {s.to for s in sent}


def test_the_opponent_reads_since_when_and_the_timeout(harness: Harness) -> None:
    h = harness
    h.signup("fred")
    h.signup("wilma")
    h.challenge("fred", "wilma")
    h.mail(FRED, "abalone move 101 fred fred-pw c3-c5,d4")
    first = h.clock.now()
    _bounce(h, FRED)
    h.clock.advance(days=1, hours=1)
    h.mail(WILMA, "abalone show 101")
    _bounce(h, FRED)
    assert h.take_outbox() == []  # nobody else to tell: fred has one address

    sent = h.mail(WILMA, "abalone move 101 wilma wilma-pw g7-g5,f6")
    assert {s.to for s in sent} == {WILMA}  # none to fred
    board = sent[0]
    turn = h.clock.now()
    assert (f"Mail to fred bounces since {first:%Y-%m-%d %H:%M} UTC" in board.body
            and f"unless fred moves by {turn + timedelta(days=21):%Y-%m-%d %H:%M} UTC, "
                "fred forfeits" in " ".join(board.body.split()))
    assert board.html is not None and "Mail to fred bounces since" in board.html
    # A bounce alone never ends the game: the usual forfeit does, 21 days on.
    h.clock.advance(days=20)
    h.tick()
    with h.database.read() as session:
        from abalone_pbm.db.models import Game

        game = session.scalars(select(Game).where(Game.number == 101)).one()
        assert game.status == "active"


def test_reports_that_tie_to_no_mail_of_ours_count_against_nobody(harness: Harness) -> None:
    h = harness
    h.signup("fred")
    h.signup("wilma")
    h.challenge("fred", "wilma")
    row = _last_to(h, FRED)
    game = h.settings.address
    # At the game address, naming a Message-ID we never sent.
    h.deliver("", game, _dsn(game, FRED, "<forged@elsewhere.test>"))
    assert "returns no mail of ours, not counted" in _note(h)[1]
    # Our Message-ID, but another address than that mail went to.
    h.deliver("", game, _dsn(game, WILMA, row.message_id))
    assert "names another address" in _note(h)[1]
    assert _score(h, FRED) is None and _score(h, WILMA) is None
    # The right one at the game address (an MTA that ignored the envelope) counts.
    h.deliver("", game, _dsn(game, FRED, row.message_id))
    assert _score(h, FRED) is not None
    # An unknown bounce token; delays; an out-of-office at a bounce address.
    forged = row.sender.replace(row.sender.split(".")[1].split("@")[0], "a" * 16)
    h.deliver("", forged, _dsn(forged, FRED, row.message_id))
    assert "unknown bounce address" in _note(h)[1]
    h.clock.advance(days=2)
    _bounce(h, WILMA, status="4.4.1", action="delayed")
    assert "delayed" in _note(h)[1] and _score(h, WILMA) is None
    wilma = _last_to(h, WILMA)
    away = (f"From: Wilma <{WILMA}>\r\nTo: {wilma.sender}\r\nSubject: Out of office: "
            "Abalone Board 101\r\nAuto-Submitted: auto-replied\r\n\r\nAway until "
            "Monday; mail could not be delivered to me.\r\n").encode()
    assert h.deliver("", wilma.sender, away) == []
    assert "auto-reply" in _note(h)[1] and _score(h, WILMA) is None


def test_scores_decay_and_relay_refusals_count(harness: Harness) -> None:
    h = harness
    settings, now = h.settings, h.clock.now()
    with h.database.write() as session:
        assert bounces.record_refusal(session, settings, "x@players.test",
                                      "recipient refused: 554 5.7.1 Relay access denied",
                                      now) is None
        row = bounces.record_refusal(session, settings, "X@players.test",
                                     "recipient refused: 550 5.1.1 user unknown", now)
        assert row is not None and row.address == "x@players.test" and row.score == 1
    # Eight days without a bounce: the score starts again.
    later = now + timedelta(days=settings.bounce_stale_days + 1)
    with h.database.write() as session:
        row = bounce_scores.record_failure(session, settings, "x@players.test", "5.1.1", later)
        assert row.score == 1 and row.first_at == later and row.suppressed_at is None
        assert bounce_scores.suppressed_among(session, ["x@players.test"]) == set()
        row = bounce_scores.record_failure(session, settings, "x@players.test", "5.1.1",
                                           later + timedelta(days=1))
        assert row.suppressed_at is not None
        assert bounce_scores.suppressed_among(session, ["X@Players.test"]) == {
            "x@players.test"}
        assert bounce_scores.clear(session, "x@players.test") is not None
        assert bounce_scores.suppressed_among(session, ["x@players.test"]) == set()
