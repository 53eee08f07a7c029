"""Header injection through a real `abalone-pbm serve`: line breaks hidden in the headers
of a mail (encoded words, folded lines, raw bytes) never become headers or recipients
of what the server sends back (DESIGN §2.6)."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ..e2e.conftest import LiveServer
from .conftest import mails_to, scalar, settle, signup, unique

VICTIM = "victim@evil.test"


def _raw(sender: str, headers: list[str], body: str = "\r\n") -> bytes:
    """A mail written byte for byte as given (no library tidies its headers)."""
    lines = [f"From: {sender}" if not any(h.lower().startswith("from:") for h in headers)
             else None, "To: abalone@localhost", *headers]
    head = "\r\n".join(line for line in lines if line is not None)
    return (head + "\r\n\r\n" + body).encode("utf-8")


def test_line_breaks_in_headers_never_become_headers_or_recipients(
    server: LiveServer, engine: Engine
) -> None:
    fred = unique("inject")
    address = f"{fred}@players.test"
    signup(server, fred, "pw-inject-1", address)
    before = len(server.mailbox.sink.messages)
    crlf_bcc = f"=0D=0ABcc:_{VICTIM}"
    attacks = [
        # An encoded line break in the subject, which answers quote.
        [f"Subject: =?utf-8?q?help{crlf_bcc}?=", f"Message-ID: <{unique('a')}@players.test>"],
        [f"Subject: =?utf-8?q?abalone_games_{fred}{crlf_bcc}?=",
         f"Message-ID: <{unique('b')}@players.test>"],
        ["Subject: =?utf-8?b?aGVscA0KQmNjOiB2aWN0aW1AZXZpbC50ZXN0?=",  # help\r\nBcc: …
         f"Message-ID: <{unique('c')}@players.test>"],
        # Message-IDs and references, which answers thread under.
        ["Subject: help", f"Message-ID: <{unique('d')}@players.test>\r\n Bcc: {VICTIM}"],
        ["Subject: help", f"Message-ID: =?utf-8?q?<{unique('e')}{crlf_bcc}>?="],
        ["Subject: help", f"Message-ID: <{unique('f')}@players.test>",
         f"In-Reply-To: <x@players.test>\r\n\tBcc: {VICTIM}",
         f"References: =?utf-8?q?<y@players.test>{crlf_bcc}?="],
        # The display name of the sender, and a Reply-To that tries to add a recipient.
        [f"From: =?utf-8?q?Fred{crlf_bcc}?= <{address}>", "Subject: help",
         f"Message-ID: <{unique('g')}@players.test>"],
        ["Subject: help", f"Reply-To: {address}, {VICTIM}",
         f"Message-ID: <{unique('h')}@players.test>"],
        # A bare carriage return inside a header line.
        [f"Subject: help\rBcc: {VICTIM}", f"Message-ID: <{unique('i')}@players.test>"],
    ]
    for headers in attacks:
        server.send_raw(address, "abalone@localhost", _raw(address, headers))
    settle(server)

    relayed = server.mailbox.sink.messages[before:]
    assert all(VICTIM not in recipients for _, recipients, _ in relayed)
    answers = mails_to(server, address)[1:]  # after the signup's confirmation
    # Every attack was answered (none parked or dropped), and only to its sender.
    assert len(answers) >= len(attacks)
    for _, recipients, message in relayed:
        assert len(recipients) == 1
        names = [name.lower() for name in message]
        assert names.count("to") == 1
        assert not {"bcc", "cc", "resent-to", "resent-bcc"} & set(names)
        for name, value in message.items():
            assert "\r" not in str(value) and "\n" not in str(value), (name, value)
            assert VICTIM not in str(value) or name.lower() in ("subject", "in-reply-to",
                                                              "references"), (name, value)
    assert scalar(engine, "SELECT count(*) FROM inbox WHERE status = 'parked'") == 0
