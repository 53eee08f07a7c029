"""A mail's reading (``precheck.read_mail``) turns its HTML part into text only when the
text part's new text has no command: the body chosen is ``choose_reply_text``'s."""

from __future__ import annotations

import pytest

from abalone_pbm import protocol
from abalone_pbm.db.models import InboxMail
from abalone_pbm.mail import decoding
from abalone_pbm.mail.decoding import extract_body_texts
from abalone_pbm.service import precheck
from abalone_pbm.worker import parse_mail

from .harness import Harness


def _alternative(plain: str, html: str, number: int) -> bytes:
    return (f"From: fred@example.org\r\nTo: abalone@pbm.test\r\nSubject: Re: board\r\n"
            f"Message-ID: <lazy-{number}@players.test>\r\nMIME-Version: 1.0\r\n"
            'Content-Type: multipart/alternative; boundary="b"\r\n\r\n'
            "--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + plain +
            "\r\n--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + html +
            "\r\n--b--\r\n").encode()


@pytest.mark.parametrize("plain, html, converted", [
    ("c3-c5,d4\r\n\r\nOn Mon, fred wrote:\r\n> old board", "<div>c3-c5,d4</div>", False),
    ("\r\nOn Mon, fred wrote:\r\n> old board", "<div>resign</div>", True),
    ("thanks\r\n", "<p>thanks</p>", True),
])
def test_the_html_part_is_read_only_when_the_text_part_has_no_command(
        harness: Harness, monkeypatch: pytest.MonkeyPatch, plain: str, html: str,
        converted: bool) -> None:
    raw = _alternative(plain, html, hash((plain, html)) % 10 ** 6)
    message = parse_mail(raw)
    texts = extract_body_texts(parse_mail(raw))
    expected = protocol.reply.choose_reply_text(texts.plain, texts.html)
    calls: list[str] = []
    real = decoding.html_to_text

    def noted(markup: str) -> str:
        calls.append(markup)
        return real(markup)

    monkeypatch.setattr(decoding, "html_to_text", noted)
    row = InboxMail(id=1, envelope_from="fred@example.org", envelope_to="abalone@pbm.test")
    assert precheck.read_mail(row, message, harness.settings).body == expected
    assert bool(calls) is converted
