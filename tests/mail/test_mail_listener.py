"""The SMTP/LMTP edge, live on a free port, driven by smtplib."""

from __future__ import annotations

import asyncio
import smtplib
import threading
import time

import pytest

from abalone_pbm.config import Settings
from abalone_pbm.mail.listener import IntakeHandler, make_accepts, start_listener, stop_listener

OURS = "abalone@example.org"
MAIL = (
    b"From: Fred <fred@example.net>\r\n"
    b"To: abalone@example.org\r\n"
    b"Subject: abalone help\r\n"
    b"Message-ID: <help-1@example.net>\r\n"
    b"\r\n"
    b"Please help.\r\n"
)


class Recorder:
    """A store function that keeps what it was given (and can fail or block)."""

    def __init__(self) -> None:
        self.stored: list[tuple[bytes, str, list[str]]] = []
        self.fail = False
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def __call__(self, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> None:
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.fail:
            raise RuntimeError("the database is away")
        self.stored.append((raw, mail_from, rcpt_tos))


@pytest.fixture
def recorder():
    return Recorder()


@pytest.fixture
def listen(recorder):
    controllers = []

    def start(**overrides):
        values = dict(address=OURS, listen="127.0.0.1:0", max_message_bytes=4096)
        values.update(overrides)
        settings = Settings(**values)
        controller = start_listener(settings, recorder, make_accepts(settings))
        controllers.append(controller)
        return controller

    yield start
    for controller in controllers:
        stop_listener(controller)


def test_listens_on_the_configured_address_and_advertises_size(listen):
    controller = listen()
    assert controller.hostname == "127.0.0.1" and controller.port > 0
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        code, _ = client.ehlo("client.example.net")
        assert code == 250
        assert client.has_extn("size")
        assert client.esmtp_features["size"] == "4096"


def test_a_mail_is_stored_before_it_is_answered_250(listen, recorder):
    controller = listen()
    recorder.gate = threading.Event()
    answers: list[object] = []

    def send() -> None:
        with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
            answers.append(client.sendmail("fred@example.net", [OURS], MAIL))

    thread = threading.Thread(target=send)
    thread.start()
    assert recorder.entered.wait(10)
    time.sleep(0.3)
    # The store is still running: the client has no answer yet.
    assert thread.is_alive() and answers == [] and recorder.stored == []
    recorder.gate.set()
    thread.join(10)
    assert answers == [{}]  # 250 for every recipient
    assert recorder.stored == [(MAIL, "fred@example.net", [OURS])]


def test_the_event_loop_is_not_blocked_while_storing(listen, recorder):
    controller = listen()
    recorder.gate = threading.Event()
    thread = threading.Thread(
        target=lambda: smtplib.SMTP(controller.hostname, controller.port, timeout=10)
        .sendmail("fred@example.net", [OURS], MAIL)
    )
    thread.start()
    try:
        assert recorder.entered.wait(10)
        # A second connection is served while the first mail is being stored.
        with smtplib.SMTP(controller.hostname, controller.port, timeout=5) as client:
            assert client.noop()[0] == 250
    finally:
        recorder.gate.set()
        thread.join(10)


def test_reply_addresses_are_ours_and_foreign_addresses_are_refused_at_rcpt(listen, recorder):
    controller = listen()
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        client.ehlo()
        assert client.mail("fred@example.net")[0] == 250
        code, text = client.rcpt("someone@example.net")
        assert code == 550 and text.startswith(b"5.1.1")
        assert client.rcpt("abalone+101.k3x9q7mf2a@EXAMPLE.org")[0] == 250
        assert client.rcpt("Abalone@example.org")[0] == 250
        assert client.rcpt("abalone@example.net")[0] == 550
        assert client.data(MAIL)[0] == 250
    assert recorder.stored == [
        (MAIL, "fred@example.net", ["abalone+101.k3x9q7mf2a@EXAMPLE.org", "Abalone@example.org"])
    ]


def test_only_foreign_recipients_means_no_mail(listen, recorder):
    controller = listen()
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            client.sendmail("fred@example.net", ["wilma@example.net"], MAIL)
        assert refused.value.recipients["wilma@example.net"][0] == 550
    assert recorder.stored == []


def test_a_bounce_has_the_empty_envelope_sender(listen, recorder):
    controller = listen()
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        client.sendmail("<>", [OURS], MAIL)
    assert recorder.stored[0][1] == ""


def test_a_mail_over_the_size_limit_is_refused_at_mail_from(listen, recorder):
    controller = listen(max_message_bytes=1000)
    big = MAIL + (b"x" * 70 + b"\r\n") * 30
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        # smtplib announces SIZE=..., refused before any data is sent.
        with pytest.raises(smtplib.SMTPSenderRefused) as refused:
            client.sendmail("fred@example.net", [OURS], big)
        assert refused.value.smtp_code == 552
    assert recorder.stored == []


def test_a_mail_over_the_size_limit_is_refused_after_data(listen, recorder):
    controller = listen(max_message_bytes=1000)
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        client.ehlo()
        assert client.mail("fred@example.net")[0] == 250  # no SIZE= given
        assert client.rcpt(OURS)[0] == 250
        code, _ = client.data(MAIL + (b"y" * 70 + b"\r\n") * 20)
        assert code == 552
        # The session goes on; a small mail is accepted.
        assert client.sendmail("fred@example.net", [OURS], MAIL) == {}
    assert [mail[0] for mail in recorder.stored] == [MAIL]


def test_a_store_failure_answers_451_and_keeps_nothing(listen, recorder):
    controller = listen()
    recorder.fail = True
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        with pytest.raises(smtplib.SMTPDataError) as failed:
            client.sendmail("fred@example.net", [OURS], MAIL)
        assert failed.value.smtp_code == 451
        assert failed.value.smtp_error.startswith(b"4.3.0")
        recorder.fail = False
        # The client retries (as an MTA would) and the mail is taken.
        assert client.sendmail("fred@example.net", [OURS], MAIL) == {}
    assert len(recorder.stored) == 1


def test_a_failing_recipient_check_is_a_temporary_failure(recorder):
    def broken(address: str) -> bool:
        raise RuntimeError("boom")

    controller = start_listener(
        Settings(address=OURS, listen="127.0.0.1:0"), recorder, broken
    )
    try:
        with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
            client.ehlo()
            client.mail("fred@example.net")
            assert client.rcpt(OURS)[0] == 451
    finally:
        stop_listener(controller)


def test_handle_exception_answers_451():
    handler = IntakeHandler(lambda *a: None, lambda a: True, 100)
    status = asyncio.run(handler.handle_exception(RuntimeError("internal")))
    assert status.startswith("451 ")


def test_lmtp_mode_answers_once_per_recipient(listen, recorder):
    controller = listen(lmtp=True)
    with smtplib.LMTP(controller.hostname, controller.port, timeout=10) as client:
        code, features = client.ehlo()  # smtplib.LMTP sends LHLO
        assert code == 250 and b"SIZE 4096" in features
        refused = client.sendmail(
            "fred@example.net",
            [OURS, "abalone+101.k3x9q7mf2a@example.org", "wilma@example.net"],
            MAIL,
        )
        assert set(refused) == {"wilma@example.net"}
        # smtplib reads only the first reply to DATA; LMTP sent one per accepted recipient.
        assert client.getreply() == (250, b"2.0.0 OK")
        # Per-recipient replies, read by hand: one 250 for each accepted recipient.
        client.mail("fred@example.net")
        client.rcpt(OURS)
        client.rcpt("abalone+101.x@example.org")
        client.putcmd("data")
        assert client.getreply()[0] == 354
        client.send(b"Subject: two\r\n\r\nx\r\n.\r\n")
        assert client.getreply() == (250, b"2.0.0 OK")
        assert client.getreply() == (250, b"2.0.0 OK")
        assert client.noop()[0] == 250
    assert [mail[2] for mail in recorder.stored] == [
        [OURS, "abalone+101.k3x9q7mf2a@example.org"],
        [OURS, "abalone+101.x@example.org"],
    ]


def test_lmtp_refuses_helo_and_ehlo(listen):
    controller = listen(lmtp=True)
    with smtplib.SMTP(controller.hostname, controller.port, timeout=10) as client:
        assert client.ehlo()[0] == 500
        assert client.helo()[0] == 500


def test_lmtp_too_big_and_tempfail_answer_every_recipient(listen, recorder):
    controller = listen(lmtp=True, max_message_bytes=500)
    with smtplib.LMTP(controller.hostname, controller.port, timeout=10) as client:
        client.ehlo()
        for body, expected in ((b"z" * 70 + b"\r\n") * 20, 552), (b"ok\r\n", 451):
            recorder.fail = expected == 451
            client.mail("fred@example.net")
            client.rcpt(OURS)
            client.rcpt("abalone+1@example.org")
            client.putcmd("data")
            assert client.getreply()[0] == 354
            client.send(b"Subject: x\r\n\r\n" + body + b".\r\n")
            assert client.getreply()[0] == expected
            assert client.getreply()[0] == expected
            assert client.noop()[0] == 250
    assert recorder.stored == []
