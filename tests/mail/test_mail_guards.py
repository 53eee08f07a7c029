"""Mail the server must not answer (DESIGN §2.4), rule by rule."""

from __future__ import annotations

import email
from email.policy import default as default_policy

import pytest

from abalone_pbm.mail.guards import is_our_address, reason_to_ignore

OURS = "abalone@example.org"
PERSON = "fred@example.net"


def _message(headers: str = "", *, from_: str = "Fred <fred@example.net>", body: str = "hi\n"):
    text = f"From: {from_}\nTo: {OURS}\nSubject: abalone help\nMessage-ID: <1@x>\n{headers}\n{body}"
    return email.message_from_bytes(text.encode(), policy=default_policy)


DSN = b"""From: Mail Delivery System <MAILER-DAEMON@mx.example.net>
To: abalone@example.org
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

The mail could not be delivered.
--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net

Final-Recipient: rfc822; nobody@example.net
Action: failed
Status: 5.1.1
--B--
"""

# A delivery-status part inside an ordinary multipart (badly made bounces do this).
HIDDEN_DSN = b"""From: Fred <fred@example.net>
To: abalone@example.org
Subject: failure notice
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="B"

--B
Content-Type: text/plain

Sorry.
--B
Content-Type: message/delivery-status

Action: failed
--B--
"""

REPORT_TYPE_ONLY = b"""From: Fred <fred@example.net>
To: abalone@example.org
Subject: read
MIME-Version: 1.0
Content-Type: multipart/mixed; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

x
--B--
"""


@pytest.mark.parametrize(
    ("headers", "from_", "envelope", "expected"),
    [
        # People's mail is answered.
        ("", "Fred <fred@example.net>", PERSON, None),
        ("Auto-Submitted: no\n", "fred@example.net", PERSON, None),
        ("Auto-Submitted: NO (comment)\n", "fred@example.net", PERSON, None),
        ("Precedence: first-class\n", "fred@example.net", PERSON, None),
        ("X-Loop: someone-else@example.net\n", "fred@example.net", PERSON, None),
        # Automatic mail.
        ("Auto-Submitted: auto-replied\n", "fred@example.net", PERSON, "Auto-Submitted"),
        ("Auto-Submitted: auto-generated\n", "fred@example.net", PERSON, "Auto-Submitted"),
        ("Auto-Submitted: auto-notified; owner-email=x@y\n", "fred@example.net", PERSON,
         "Auto-Submitted"),
        ("Precedence: bulk\n", "fred@example.net", PERSON, "Precedence: bulk"),
        ("Precedence: JUNK\n", "fred@example.net", PERSON, "Precedence: junk"),
        ("Precedence: list\n", "fred@example.net", PERSON, "Precedence: list"),
        # Auto-replies marked other than by RFC 3834 (more in test_auto_replies.py).
        ("Precedence: auto_reply\n", "fred@example.net", PERSON, "auto-reply"),
        ("X-Autoreply: yes\n", "fred@example.net", PERSON, "X-Autoreply"),
        ("X-Autorespond: away\n", "fred@example.net", PERSON, "X-Autorespond"),
        ("X-Auto-Response-Suppress: All\n", "fred@example.net", PERSON, None),
        ("List-Id: Abalone fans <abalone.lists.example.net>\n", "fred@example.net", PERSON,
         "List-Id"),
        # Our own mail coming back.
        ("X-Loop: abalone@example.org\n", "fred@example.net", PERSON, "X-Loop"),
        ("X-Loop: ABALONE@Example.ORG\n", "fred@example.net", PERSON, "X-Loop"),
        ("X-Loop: other@x.net\nX-Loop: <abalone@example.org>\n", "fred@example.net", PERSON,
         "X-Loop"),
        ("", "abalone@example.org", PERSON, "our own"),
        ("", "abalone+101.k3x9q7mf2a@example.org", PERSON, "our own"),
        ("", "fred@example.net", "abalone@example.org", "our own"),
        ("Reply-To: abalone+101.k3x9q7mf2a@example.org\n", "fred@example.net", PERSON,
         "Reply-To is our own"),
        ("Reply-To: Fred at home <fred@home.example.net>\n", "fred@example.net", PERSON, None),
        # Bounces: the null envelope sender.
        ("", "fred@example.net", "", "empty envelope sender"),
        ("", "fred@example.net", "<>", "empty envelope sender"),
        # System senders, in the From header or the envelope, any case.
        ("", "MAILER-DAEMON@mx.example.net", PERSON, "mailer-daemon"),
        ("", "Mail Delivery Subsystem <mailer-daemon@mx.example.net>", PERSON, "mailer-daemon"),
        ("", "fred@example.net", "MAILER-DAEMON@mx.example.net", "mailer-daemon"),
        ("", "postmaster@example.net", PERSON, "postmaster"),
        ("", "fred@example.net", "Postmaster@example.net", "postmaster"),
        ("", "owner-abalone-l@lists.example.net", PERSON, "owner-*"),
        ("", "fred@example.net", "owner-games@lists.example.net", "owner-*"),
        ("", "games-request@lists.example.net", PERSON, "*-request"),
        ("", "fred@example.net", "Games-Request@lists.example.net", "*-request"),
    ],
)
def test_rules(headers, from_, envelope, expected):
    reason = reason_to_ignore(_message(headers, from_=from_), envelope, OURS)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected.lower() in reason.lower(), reason


@pytest.mark.parametrize("raw", [DSN, HIDDEN_DSN, REPORT_TYPE_ONLY])
def test_delivery_reports(raw):
    message = email.message_from_bytes(raw, policy=default_policy)
    # Even with a person's envelope sender (some MTAs get this wrong).
    reason = reason_to_ignore(message, PERSON, OURS)
    assert reason is not None and "report" in reason


def test_a_lookalike_of_the_system_names_is_a_person():
    for sender in ("postmasters@example.net", "daemon@example.net", "request@example.net",
                   "owner@example.net", "fred-requests@example.net"):
        assert reason_to_ignore(_message(from_=sender), sender, OURS) is None, sender


def test_garbage_headers_do_not_crash_the_guard():
    raw = b"From: <<<>>>\nAuto-Submitted:\nX-Loop: \nSubject: x\n\nbody\n"
    message = email.message_from_bytes(raw, policy=default_policy)
    assert reason_to_ignore(message, PERSON, OURS) is None


def test_our_addresses():
    assert is_our_address("abalone@example.org", OURS)
    assert is_our_address("<Abalone@EXAMPLE.org>", OURS)
    assert is_our_address("abalone+101.k3x9q7mf2a@example.org", OURS)
    assert is_our_address("ABALONE+anything@example.org", OURS)
    assert not is_our_address("abalone@example.net", OURS)
    assert not is_our_address("abalonex@example.org", OURS)
    assert not is_our_address("xabalone+1@example.org", OURS)
    assert not is_our_address("abalone+1@other.example.org", OURS)
    assert not is_our_address("", OURS)
    assert not is_our_address("abalone", OURS)
