"""List-Unsubscribe (RFC 2369) and List-Unsubscribe-Post (RFC 8058) as compose writes
them: URIs never encoded or broken, the direct path and the email package giving the
same bytes, one-click only with an https URI, nothing injected through a URI."""

from __future__ import annotations

import email
import re
from datetime import datetime, timezone
from email.policy import default as default_policy

import pytest

from abalone_pbm.mail.compose import OUTBOX_POLICY, compose, compose_mail

MAILTO = ("mailto:abalone-game-server+unsub.o.2s.2t.abcdefghijklmnop@pbm.example.org"
          "?subject=unsubscribe")
HTTPS = "https://pbm.example.org/a/longer/base/unsubscribe/o.2s.2t.abcdefghijklmnop"


def _arguments(subject: str, body: str, uris: list[str]) -> dict[str, object]:
    return dict(sender='"Abalone" <abalone-game-server@pbm.example.org>',
                to="betty@example.org", subject=subject, body=body,
                references=["<abalone.board-101.abcdefghijklmnopqrst@pbm.example.org>"],
                auto_submitted="auto-generated", loop_token="abalone@pbm.example.org",
                date=datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc),
                message_id="<fixed.1@pbm.example.org>", list_unsubscribe=uris)


@pytest.mark.parametrize("subject", ["Abalone Board 101 fred", "Abalone Board 101 jürgen"])
@pytest.mark.parametrize("body", ["The board.\n", "Jürgen's comment.\n", "x" * 1200 + "\n"])
@pytest.mark.parametrize("uris", [[MAILTO], [MAILTO, HTTPS]])
def test_outbox_bytes_with_list_headers_are_those_of_the_email_package(
        subject: str, body: str, uris: list[str]) -> None:
    arguments = _arguments(subject, body, uris)
    raw = compose_mail(**arguments).raw  # type: ignore[arg-type]
    assert raw == compose(**arguments).as_bytes(policy=OUTBOX_POLICY)  # type: ignore[arg-type]
    assert all(len(line) <= 998 for line in raw.split(b"\r\n"))
    parsed = email.message_from_bytes(raw, policy=default_policy)
    assert re.findall(r"<([^<>]+)>", str(parsed["List-Unsubscribe"])) == uris
    assert b"=?utf-8?" not in raw.split(b"List-Unsubscribe:")[1].split(b"\r\n")[0]
    one_click = parsed["List-Unsubscribe-Post"]
    if HTTPS in uris:
        assert str(one_click) == "List-Unsubscribe=One-Click"
    else:
        assert one_click is None


def test_a_mail_without_a_way_out_has_no_list_headers() -> None:
    raw = compose_mail(**_arguments("Abalone Board 101 fred", "x\n", [])).raw  # type: ignore[arg-type]
    assert b"List-Unsubscribe" not in raw


@pytest.mark.parametrize("uri", [
    "mailto:a@b\r\nBcc: victim@example.com", "https://x/y> <mailto:other@example.com",
    "http://plain.example.org/unsubscribe", "javascript:alert(1)", "mailto:a b@c",
])
def test_a_uri_that_is_not_one_is_refused(uri: str) -> None:
    with pytest.raises(ValueError):
        compose_mail(**_arguments("Abalone Board 101", "x\n", [uri]))  # type: ignore[arg-type]
