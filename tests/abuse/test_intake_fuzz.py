"""Hypothesis fuzz of the whole intake: listener checks, store, worker, mailroom.

Each example is a batch of odd or hostile deliveries (tests/abuse/hostile_mail.py:
random bytes, broken MIME, unknown charsets, encoded words hiding line feeds, 8-bit
headers, long lines and fields, thousands of commands, squatted Message-IDs), plus
header values and bodies drawn by Hypothesis itself. After processing, nothing may be
left waiting or parked, every processed mail is answered (or was dropped with a
reason), no traceback reaches the log and no password gets out. Bounded to about
20 seconds; ``benchmarks/fuzz_intake.py`` is the long run over SMTP.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .hostile_mail import OURS, PASSWORDS, Delivery, command_line, hostile_mail
from .intake_inprocess import InProcessIntake

_DEADLINE_SECONDS = 20.0
_started: list[float] = []


@pytest.fixture(scope="module")
def fuzz_intake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessIntake]:
    """One intake for every example of both fuzz tests (Hypothesis takes no
    function-scoped fixture), its database in pytest's temporary directory."""
    directory = tmp_path_factory.mktemp("intake-fuzz")
    intake = InProcessIntake(f"sqlite:///{directory / 'fuzz.sqlite3'}", directory)
    yield intake
    intake.close()


header_bytes = st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" "))
header_text = st.text(max_size=200)


@st.composite
def drawn_mail(draw: st.DrawFn) -> Delivery:
    """A mail whose From, Subject, Message-ID and body Hypothesis writes itself."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    subject = draw(st.one_of(header_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
                             header_bytes,
                             st.just(command_line(rng).encode("utf-8", "surrogateescape"))))
    sender = draw(st.one_of(st.just(b"fred@example.org"), header_bytes,
                            header_text.map(lambda t: t.encode("utf-8", "surrogatepass"))))
    mid = draw(st.one_of(st.none(), header_bytes, st.just(b"<same@example.org>")))
    body = draw(st.one_of(st.binary(max_size=500),
                          st.text(max_size=500).map(lambda t: t.encode("utf-8", "surrogatepass"))))
    content_type = draw(st.one_of(st.none(), header_bytes,
                                  st.sampled_from([b"text/plain; charset=x-bogus",
                                                   b"multipart/mixed; boundary=\"b\"",
                                                   b"text/html; charset=utf-16"])))
    lines = [b"From: " + sender, b"To: " + OURS.encode(), b"Subject: " + subject]
    if mid is not None:
        lines.append(b"Message-ID: " + mid)
    if content_type is not None:
        lines.append(b"Content-Type: " + content_type)
    raw = b"\r\n".join(lines) + b"\r\n\r\n" + body
    envelope = draw(st.sampled_from(["fred@example.org", "wilma@example.org", "jörg@exämple.org"]))
    return Delivery(envelope, OURS, raw, "drawn")


def _fuzz(intake: InProcessIntake, seed: int, drawn: list[Delivery], slot: int
          ) -> InProcessIntake | None:
    """Deliver and process one example's batch; None once the time budget is spent."""
    while len(_started) <= slot:
        _started.append(time.monotonic())
    if time.monotonic() - _started[slot] > _DEADLINE_SECONDS / 2:
        return None
    rng = random.Random(seed)
    batch = [hostile_mail(rng, seed * 10 + n) for n in range(rng.randint(1, 4))] + drawn
    for delivery in batch:
        intake.deliver(delivery)
    intake.process()
    return intake


@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32), drawn=st.lists(drawn_mail(), max_size=3))
def test_no_mail_breaks_the_intake(fuzz_intake: InProcessIntake, seed: int,
                                   drawn: list[Delivery]) -> None:
    intake = _fuzz(fuzz_intake, seed, drawn, 0)
    if intake is None:
        return
    found = intake.findings()
    problems = (found.waiting, found.parked, found.unanswered, found.tracebacks)
    assert not any(problems), found.report()


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32), drawn=st.lists(drawn_mail(), max_size=3))
def test_no_password_gets_out(fuzz_intake: InProcessIntake, seed: int,
                              drawn: list[Delivery]) -> None:
    intake = _fuzz(fuzz_intake, seed, drawn, 1)
    if intake is None:
        return
    found = intake.findings()
    assert not found.passwords_out, found.report()


def test_the_password_check_finds_a_password_that_gets_out(tmp_path: Path) -> None:
    """The check above can fail: a password written into an answer is found."""
    intake = InProcessIntake(f"sqlite:///{tmp_path / 'check.sqlite3'}", tmp_path)
    try:
        from datetime import datetime, timezone

        from abalone_pbm.db import repository
        from abalone_pbm.mail.compose import compose_mail

        now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        mail = compose_mail(sender=OURS, to="fred@example.org", subject="leak",
                            body=f"your password is {PASSWORDS[3]}", loop_token=OURS,
                            date=now)
        with intake.database.write() as session:
            repository.enqueue_composed_many(session, [mail], now, inbox_id=None)
        found = intake.findings()
        assert [f for f in found.passwords_out if PASSWORDS[3] in f], found.report()
        assert not found.clean
    finally:
        intake.close()


def test_the_password_check_reads_the_stored_copies(tmp_path: Path) -> None:
    """A processed row whose stored copy holds a password in an encoded word is found."""
    import base64
    from datetime import datetime, timezone

    from abalone_pbm.db import repository
    from abalone_pbm.mail.intake import store_inbox

    intake = InProcessIntake(f"sqlite:///{tmp_path / 'stored.sqlite3'}", tmp_path)
    try:
        words = base64.b64encode(f"signup fred {PASSWORDS[5]}".encode()).decode()
        raw = (f"From: fred@example.org\r\nTo: {OURS}\r\nSubject: =?utf-8?B?{words}?=\r\n"
               "\r\nhello\r\n").encode()
        now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        with intake.database.write() as session:
            mail, _ = store_inbox(session, raw, "fred@example.org", [OURS], now)
            assert mail is not None
            repository.mark_inbox(session, mail, "dropped", now)
        found = intake.findings()
        assert [f for f in found.passwords_out if "stored copy" in f and PASSWORDS[5] in f], \
            found.report()
    finally:
        intake.close()
