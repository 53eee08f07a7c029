"""The limits of DESIGN §2.6 through the mail path with a clock that tests move: growing
password delays, confirmation codes that expire, relay and answer bounds, pruning."""

from __future__ import annotations

import re

from sqlalchemy import func, select

from abalone_pbm.db import repository
from abalone_pbm.db.models import RateEvent
from abalone_pbm.service import rates

from .harness import Harness, make_harness


def _bodies(sent: list) -> str:  # type: ignore[type-arg]
    return "\n".join(s.body for s in sent)


def test_wrong_passwords_wait_longer_each_time(harness: Harness) -> None:
    harness.signup("fred", "right-pw")
    stranger = "mallory@evil.example"
    for n in range(3):
        assert "Invalid password" in _bodies(harness.mail(stranger, f"vacation fred bad{n} on"))
    # Three free failures, then the wait: 1 minute, then 2, then 4 ...
    assert "Too many wrong passwords" in _bodies(harness.mail(stranger, "vacation fred bad on"))
    harness.clock.advance(seconds=61)
    assert "Invalid password" in _bodies(harness.mail(stranger, "vacation fred bad3 on"))
    harness.clock.advance(seconds=61)
    body = _bodies(harness.mail(stranger, "vacation fred right-pw on"))
    assert "Too many wrong passwords" in body and "Vacation is on" not in body
    harness.clock.advance(seconds=60)
    assert "Vacation is on" in _bodies(harness.mail(stranger, "vacation fred right-pw on"))


def test_the_owner_is_told_once_and_is_never_locked_out(harness: Harness) -> None:
    harness.signup("fred", "right-pw")
    notices = []
    for n in range(8):
        sent = harness.mail(f"mallory{n}@evil.example", f"vacation fred bad{n} on")
        notices += [s for s in sent if s.to == "fred@example.org"]
    assert [s.subject for s in notices] == ["Abalone: wrong passwords for fred"]
    assert "bad" not in notices[0].body
    # Other strangers are refused for fred; fred's own address is not.
    assert "Too many wrong passwords for fred" in _bodies(
        harness.mail("someone@else.example", "vacation fred right-pw on"))
    assert "Vacation is on" in _bodies(harness.mail("fred@example.org", "vacation fred right-pw on"))


def test_reset_codes_are_throttled_like_passwords(harness: Harness) -> None:
    harness.signup("fred", "right-pw")
    sent = harness.mail("fred@example.org", "password reset fred")
    code = re.search(r"code is:\s+(\S+)", sent[0].body).group(1)  # type: ignore[union-attr]
    guesser = "mallory@evil.example"
    for n in range(3):
        assert "not valid" in _bodies(harness.mail(guesser, f"password set fred guess{n} x"))
    body = _bodies(harness.mail(guesser, f"password set fred {code} hijacked"))
    assert "Too many wrong passwords" in body
    with harness.database.read() as session:
        user = repository.get_user(session, "fred")
        assert user is not None and user.reset_code_hash is not None  # still unused


def test_a_confirmation_code_expires(harness: Harness) -> None:
    harness.signup("fred", "pw")
    sent = harness.mail("fred@example.org", "add fred pw fred@home.example")
    request = next(s for s in sent if s.to == "fred@home.example")
    assert request.subject.startswith("confirm address ")
    assert "fred@example.org" not in request.body
    harness.clock.advance(days=8)
    sent = harness.mail("fred@home.example", f"Re: {request.subject}")
    assert "not valid" in _bodies(sent)
    # Asked again, a new code comes, and it works.
    sent = harness.mail("fred@example.org", "add fred pw fred@home.example")
    request = next(s for s in sent if s.to == "fred@home.example")
    sent = harness.mail("fred@home.example", request.subject)
    assert [s.subject for s in sent] == ["Abalone address confirmed"]


def test_one_mail_gets_a_bounded_number_of_answers(migrated_db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    harness = make_harness(migrated_db_url, tmp_path, answers_per_mail=10)
    try:
        harness.signup("fred")
        harness.signup("wilma")
        for _ in range(14):
            harness.challenge("fred", "wilma")
        boards = " ".join(str(n) for n in range(101, 115))
        sent = harness.mail("fred@example.org", f"abalone show {boards}")
        assert len(sent) == 10
        assert sent[-1].subject == "Abalone: answers not sent"
        assert "5 were not sent" in sent[-1].body
    finally:
        harness.database.dispose()


def test_texts_to_one_address_are_capped(harness: Harness) -> None:
    harness.signup("target")
    senders = [f"talker{n}" for n in range(4)]
    for name in senders:
        harness.signup(name)
    got = 0
    for name in senders:
        for n in range(10):
            sent = harness.mail(f"{name}@example.org", f"message {name} {name}-pw target",
                                f"hello {n}\n")
            got += sum(1 for s in sent if s.to == "target@example.org")
    assert got == 30  # relay_per_recipient_daily
    harness.clock.advance(days=1, seconds=1)
    sent = harness.mail("talker0@example.org", "message talker0 talker0-pw target", "again\n")
    assert any(s.to == "target@example.org" for s in sent)


def test_a_sender_has_a_daily_share_of_mails(migrated_db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    harness = make_harness(migrated_db_url, tmp_path, sender_daily_mails=3)
    try:
        answered = [len(harness.mail("busy@example.org", "help")) for _ in range(5)]
        assert answered == [1, 1, 1, 0, 0]
        harness.clock.advance(days=1, seconds=1)
        assert len(harness.mail("busy+tag@EXAMPLE.org", "help")) == 1
    finally:
        harness.database.dispose()


def test_old_events_are_pruned(harness: Harness) -> None:
    for n in range(3):
        harness.mail(f"someone{n}@example.org", "help")
    harness.clock.advance(days=3)
    harness.tick()
    with harness.database.read() as session:
        assert session.scalar(select(func.count(RateEvent.id))) == 0


def test_addresses_are_counted_without_tags_and_case() -> None:
    assert rates.normalise_address("<Fred+Games@Example.ORG>") == "fred@example.org"
    assert rates.normalise_address("fred@example.org") == "fred@example.org"
    assert rates.normalise_address("+x@example.org") == "+x@example.org"


def test_challenges_are_limited_per_sender_and_per_player(migrated_db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    harness = make_harness(migrated_db_url, tmp_path, challenges_per_sender_daily=3,
                           challenges_per_player_daily=2)
    try:
        for name in ("fred", "wilma", "barney", "betty", "dino", "pebbles"):
            harness.signup(name)

        def challenge(sender: str, *players: str) -> str:
            sent = harness.mail(sender, f"abalone challenge {' '.join(players)}")
            return "\n".join(s.subject + "\n" + s.body for s in sent)

        stranger = "mallory@evil.example"
        assert "New Abalone Board" in challenge(stranger, "fred", "wilma")
        assert "New Abalone Board" in challenge(stranger, "fred", "barney")
        assert "fred has been challenged by others 2 times today" in challenge(
            stranger, "fred", "betty")
        # fred's own challenges do not count against him.
        assert "New Abalone Board" in challenge("fred@example.org", "fred", "betty")
        assert "New Abalone Board" in challenge(stranger, "dino", "pebbles")
        assert "at most 3 challenges a day" in challenge(stranger, "wilma", "betty")
        harness.clock.advance(days=1, seconds=1)
        assert "New Abalone Board" in challenge(stranger, "fred", "betty")
    finally:
        harness.database.dispose()


def test_a_run_of_failures_is_read_as_count_and_latest_say(database) -> None:  # type: ignore[no-untyped-def]
    """``rates.run_since_ok`` (one query) answers as counting and the latest events do,
    stored and pending events mixed, on each backend."""
    from datetime import datetime, timedelta, timezone

    start = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    at = [start + timedelta(minutes=n) for n in range(12)]

    def expected(session, subject, since, pending):  # type: ignore[no-untyped-def]
        last_ok = rates.latest(session, "pw-ok-user", subject, pending)
        if last_ok is not None and last_ok > since:
            since = last_ok
        failures = rates.count(session, "pw-user", subject, since, pending)
        last = rates.latest(session, "pw-user", subject, pending) if failures else None
        return failures, last

    stored = {  # subject: (scope, minute) written
        "none": [],
        "fails": [("pw-user", 1), ("pw-user", 3), ("pw-user", 5)],
        "ok-between": [("pw-user", 1), ("pw-ok-user", 2), ("pw-user", 4), ("pw-user", 6)],
        "ok-last": [("pw-user", 1), ("pw-user", 2), ("pw-ok-user", 7)],
        "other-scope": [("pw-sender", 3), ("pw-ok-sender", 4), ("pw-user", 5)],
    }
    pendings = [
        [],
        [("pw-user", 8)],
        [("pw-ok-user", 8)],
        [("pw-ok-user", 5), ("pw-user", 9)],
        [("pw-user", 0)],
    ]
    with database.write() as session:
        for subject, events in stored.items():
            for scope, minute in events:
                rates.record(session, scope, subject, at[minute])
    with database.read() as session:
        for subject in stored:
            for pending_events in pendings:
                pending = [(scope, subject, at[minute]) for scope, minute in pending_events]
                for since in (at[0] - timedelta(days=1), at[2], at[4], at[11]):
                    assert rates.run_since_ok(session, "pw-user", "pw-ok-user", subject,
                                              since, pending) == \
                        expected(session, subject, since, pending), (subject, pending, since)
