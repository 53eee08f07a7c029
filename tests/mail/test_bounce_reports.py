"""Delivery reports as real mail systems write them (mail.bounces): who failed, how, and
which of our mails it was; delays, policy refusals and auto-replies never count."""

from __future__ import annotations

import time

import pytest

from abalone_pbm.mail.bounces import read_report
from abalone_pbm.verp import bounce_address, bounce_token, canonical_bounce_address
from abalone_pbm.worker import parse_mail

OURS = "abalone@pbm.example.org"
DOMAIN = "pbm.example.org"
MID = "<18c2a.5f3e9d@pbm.example.org>"


def _crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode("utf-8")


def _dsn(reporter: str, from_: str, subject: str, explanation: str, fields: str,
         returned: str = "headers") -> bytes:
    """A multipart/report in the layout MTAs use: explanation, delivery-status, and the
    returned headers (or the whole message)."""
    kind = "text/rfc822-headers" if returned == "headers" else "message/rfc822"
    return _crlf(f"""Return-Path: <>
From: {from_}
To: <{bounce_address(OURS)}>
Subject: {subject}
Date: Tue, 01 Dec 2026 10:00:00 +0000
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
\tboundary="BOUND.{reporter}"

--BOUND.{reporter}
Content-Type: text/plain; charset=us-ascii

{explanation}

--BOUND.{reporter}
Content-Type: message/delivery-status

{fields}

--BOUND.{reporter}
Content-Type: {kind}

From: "Abalone" <{OURS}>
To: fred@players.test
Subject: Abalone Board 101 fred
Message-ID: {MID}

--BOUND.{reporter}--
""")


POSTFIX = _dsn("postfix", "MAILER-DAEMON@mx.site.test (Mail Delivery System)",
               "Undelivered Mail Returned to Sender",
               "This is the mail system at host mx.site.test.\n\nI'm sorry to have to "
               "inform you that your message could not\nbe delivered to one or more "
               "recipients.\n\n<fred@players.test>: host mx.players.test[10.0.0.2] said: "
               "550 5.1.1\n    <fred@players.test>: Recipient address rejected: User unknown",
               "Reporting-MTA: dns; mx.site.test\nX-Postfix-Queue-ID: 4F1A2B3C\n"
               "Arrival-Date: Tue,  1 Dec 2026 09:59:58 +0000 (UTC)\n\n"
               "Final-Recipient: rfc822; fred@players.test\n"
               "Original-Recipient: rfc822;fred@players.test\nAction: failed\n"
               "Status: 5.1.1\nRemote-MTA: dns; mx.players.test\n"
               "Diagnostic-Code: smtp; 550 5.1.1 <fred@players.test>: Recipient address\n"
               "    rejected: User unknown in virtual mailbox table")
POSTFIX_DELAYED = _dsn("postfixdelay", "MAILER-DAEMON@mx.site.test (Mail Delivery System)",
                       "Delayed Mail (still being retried)",
                       "This is the mail system at host mx.site.test.\n\n####### THIS IS A "
                       "WARNING ONLY.  YOU DO NOT NEED TO RESEND YOUR MESSAGE. #######",
                       "Reporting-MTA: dns; mx.site.test\n\n"
                       "Final-Recipient: rfc822; fred@players.test\nAction: delayed\n"
                       "Status: 4.4.1\nDiagnostic-Code: X-Postfix; connect to "
                       "mx.players.test[10.0.0.2]:25: Connection timed out\n"
                       "Will-Retry-Until: Sun, 6 Dec 2026 09:59:58 +0000")
EXIM_DSN = _dsn("exim", "Mail Delivery System <Mailer-Daemon@mail.players.test>",
                "Mail delivery failed: returning message to sender",
                "This message was created automatically by mail delivery software.\n\n"
                "A message that you sent could not be delivered to one or more of its\n"
                "recipients. This is a permanent error. The following address(es) failed:"
                "\n\n  fred@players.test\n    No Such User Here",
                "Reporting-MTA: dns; mail.players.test\n\nAction: failed\n"
                "Final-Recipient: rfc822;fred@players.test\nStatus: 5.0.0", "message")
SENDMAIL = _dsn("sendmail", "Mail Delivery Subsystem <MAILER-DAEMON@players.test>",
                "Returned mail: see transcript for details",
                "The original message was received at Tue, 1 Dec 2026 10:00:00 GMT\n"
                "from localhost [127.0.0.1]\n\n   ----- The following addresses had "
                "permanent fatal errors -----\n<fred@players.test>\n    (reason: 550 5.1.1 "
                "<fred@players.test>... User unknown)",
                "Reporting-MTA: dns; players.test\nReceived-From-MTA: DNS; localhost\n"
                "Arrival-Date: Tue, 1 Dec 2026 10:00:00 GMT\n\n"
                "Final-Recipient: RFC822; fred@players.test\nAction: failed\n"
                "Status: 5.1.1\nRemote-MTA: DNS; mx.players.test\n"
                "Diagnostic-Code: SMTP; 550 5.1.1 <fred@players.test>... User unknown\n"
                "Last-Attempt-Date: Tue, 1 Dec 2026 10:00:01 GMT")
SENDMAIL_DELAYED = _dsn("sendmaildelay", "Mail Delivery Subsystem <MAILER-DAEMON@players.test>",
                        "Warning: could not send message for past 4 hours",
                        "    **********************************************\n    **      "
                        "THIS IS A WARNING MESSAGE ONLY      **\n    **  YOU DO NOT NEED TO "
                        "RESEND YOUR MESSAGE  **",
                        "Reporting-MTA: dns; players.test\n\n"
                        "Final-Recipient: RFC822; fred@players.test\nAction: delayed\n"
                        "Status: 4.4.7\nRemote-MTA: DNS; mx.players.test\n"
                        "Diagnostic-Code: SMTP; 451 4.4.7 Deferred: Connection timed out\n"
                        "Will-Retry-Until: Sat, 5 Dec 2026 10:00:00 GMT")
OFFICE365 = _dsn("o365", "Microsoft Outlook <postmaster@players.onmicrosoft.test>",
                 "Undeliverable: Abalone Board 101 fred",
                 "Your message to fred@players.test couldn't be delivered.\nfred wasn't "
                 "found at players.test.\n\nRemote Server returned '550 5.1.10 "
                 "RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'",
                 "Reporting-MTA: dns;AM0PR01MB1234.eurprd01.prod.outlook.test\n"
                 "Received-From-MTA: dns;EUR01-HE1-obe.outbound.protection.outlook.test\n"
                 "Arrival-Date: Tue, 1 Dec 2026 10:00:00 +0000\n\n"
                 "Final-Recipient: rfc822;fred@players.test\nAction: failed\n"
                 "Status: 5.1.10\nDiagnostic-Code: smtp;550 5.1.10 "
                 "RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup")
GMAIL = _dsn("gmail", "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
             "Delivery Status Notification (Failure)",
             "** Address not found **\n\nYour message wasn't delivered to fred@players.test "
             "because the address couldn't be found, or is unable to receive mail.\n\n"
             "The response from the remote server was:\n550 5.1.1 The email account that "
             "you tried to reach does not exist.",
             "Reporting-MTA: dns; googlemail.com\nReceived-From-MTA: dns; "
             "abalone@pbm.example.org\nArrival-Date: Tue, 01 Dec 2026 02:00:00 -0800 (PST)"
             "\nX-Original-Message-ID: " + MID + "\n\n"
             "Final-Recipient: rfc822; fred@players.test\nAction: failed\nStatus: 5.1.1\n"
             "Remote-MTA: dns; gmail-smtp-in.l.google.com. (2a00:1450::1b, the server for\n"
             " the domain players.test.)\nDiagnostic-Code: smtp; 550-5.1.1 The email account "
             "that you tried to reach does\n not exist. https://support.google.com/mail/?p="
             "NoSuchUser 5b1f17b1804b1-4-v6si.123 - gsmtp\n"
             "Last-Attempt-Date: Tue, 01 Dec 2026 02:00:01 -0800 (PST)")
GMAIL_POLICY = _dsn("gmailpolicy", "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
                    "Delivery Status Notification (Failure)",
                    "Your message has been blocked.",
                    "Reporting-MTA: dns; googlemail.com\n\n"
                    "Final-Recipient: rfc822; fred@players.test\nAction: failed\n"
                    "Status: 5.7.26\nDiagnostic-Code: smtp; 550-5.7.26 Unauthenticated "
                    "email from pbm.example.org is not accepted due to domain's DMARC policy")

QMAIL = _crlf(f"""Return-Path: <>
From: MAILER-DAEMON@mail.players.test
To: {bounce_address(OURS)}
Subject: failure notice
Date: 1 Dec 2026 10:00:00 -0000

Hi. This is the qmail-send program at mail.players.test.
I'm afraid I wasn't able to deliver your message to the following addresses.
This is a permanent error; I've given up. Sorry it didn't work out.

<fred@players.test>:
Sorry, no mailbox here by that name. (#5.1.1)

--- Below this line is a copy of the message.

Return-Path: <{bounce_address(OURS)}>
From: "Abalone" <{OURS}>
To: fred@players.test
Subject: Abalone Board 101 fred
Message-ID: {MID}

Summary of Abalone Board 101
""")
YAHOO = _crlf(f"""Return-Path: <>
From: MAILER-DAEMON@yahoo.test
To: {bounce_address(OURS)}
Subject: Failure Notice
Date: Tue, 1 Dec 2026 10:00:00 +0000

Sorry, we were unable to deliver your message to the following address.

<fred@players.test>:
Remote host said: 554 delivery error: dd This user doesn't have a players.test account (fred@players.test) [-5] - mta1.mail.yahoo.test [RCPT_TO]

--- Below this line is a copy of the message.

From: "Abalone" <{OURS}>
To: fred@players.test
Subject: Abalone Board 101 fred
Message-ID: {MID}
""")
EXIM_TEXT = _crlf(f"""Return-path: <>
From: Mail Delivery System <Mailer-Daemon@mail.players.test>
To: {bounce_address(OURS)}
Subject: Mail delivery failed: returning message to sender
X-Failed-Recipients: fred@players.test
Auto-Submitted: auto-replied

This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. The following address(es) failed:

  fred@players.test
    host mx.players.test [10.0.0.2]
    SMTP error from remote mail server after RCPT TO:<fred@players.test>:
    550 5.1.1 <fred@players.test>: Recipient address rejected: User unknown

------ This is a copy of the message, including all the headers. ------

From: "Abalone" <{OURS}>
To: fred@players.test
Message-ID: {MID}
""")
EXIM_WARNING = _crlf(f"""Return-path: <>
From: Mail Delivery System <Mailer-Daemon@mail.players.test>
To: {bounce_address(OURS)}
Subject: Warning: message 1s2Abc-000123-Xy delayed 24 hours
Auto-Submitted: auto-replied

This message was created automatically by mail delivery software.
A message that you sent has not yet been delivered to one or more of its
recipients after more than 24 hours on the queue on mail.players.test.

The message identifier is:     1s2Abc-000123-Xy
The subject of the message is: Abalone Board 101 fred

The address to which the message has not yet been delivered is:

  fred@players.test
    host mx.players.test [10.0.0.2]
    Delay reason: SMTP error from remote mail server after RCPT TO:<fred@players.test>:
    451 4.3.0 Mailbox temporarily unavailable

No action is required on your part. Delivery attempts will continue for
some time, and this warning may be repeated at intervals if the message
remains undelivered. Eventually the mail delivery software will give up,
and when that happens, the message will be returned to you.
""")
OUT_OF_OFFICE = _crlf(f"""Return-Path: <>
From: Fred Flintstone <fred@players.test>
To: {bounce_address(OURS)}
Subject: Automatic reply: Abalone Board 101 fred
Auto-Submitted: auto-replied
X-Autoreply: yes

I am out of the office until Monday; your message could not be delivered to me
in person. For urgent matters write to wilma@players.test.
""")


@pytest.mark.parametrize("raw, form, status", [
    (POSTFIX, "RFC 3464", "5.1.1"),
    (EXIM_DSN, "RFC 3464", "5.0.0"),
    (SENDMAIL, "RFC 3464", "5.1.1"),
    (OFFICE365, "RFC 3464", "5.1.10"),
    (GMAIL, "RFC 3464", "5.1.1"),
    (QMAIL, "qmail", "5.1.1"),
    (YAHOO, "Yahoo", ""),
    (EXIM_TEXT, "Exim", "5.1.1"),
], ids=["postfix", "exim-dsn", "sendmail", "office365", "gmail", "qmail", "yahoo",
        "exim-text"])
def test_permanent_failures_count_against_the_recipient(raw: bytes, form: str,
                                                        status: str) -> None:
    report = read_report(parse_mail(raw), "", DOMAIN)
    assert report is not None and report.form == form
    counted = report.counted
    assert [r.address for r in counted] == ["fred@players.test"]
    assert counted[0].status == status
    assert counted[0].status_class == "5"
    assert MID in report.message_ids
    assert report.verdict().startswith("permanent failure")


@pytest.mark.parametrize("raw", [POSTFIX_DELAYED, SENDMAIL_DELAYED, EXIM_WARNING],
                         ids=["postfix", "sendmail", "exim"])
def test_delays_never_count(raw: bytes) -> None:
    report = read_report(parse_mail(raw), "", DOMAIN)
    assert report is not None
    assert report.counted == ()
    assert all(r.action == "delayed" for r in report.recipients)
    assert "delayed" in report.verdict()


def test_a_policy_refusal_of_our_mail_does_not_count_against_the_address() -> None:
    report = read_report(parse_mail(GMAIL_POLICY), "", DOMAIN)
    assert report is not None and report.counted == ()
    assert report.recipients[0].status == "5.7.26"
    assert "refusal of our mail" in report.verdict()


def test_a_failure_with_a_temporary_status_does_not_count() -> None:
    """Postfix gives up after its queue lifetime with Action: failed and a 4.x.x."""
    raw = POSTFIX.replace(b"Status: 5.1.1", b"Status: 4.4.1").replace(
        b"smtp; 550 5.1.1", b"smtp; 421 4.4.1")
    report = read_report(parse_mail(raw), "", DOMAIN)
    assert report is not None and report.counted == ()


def test_an_auto_reply_is_no_report() -> None:
    assert read_report(parse_mail(OUT_OF_OFFICE), "", DOMAIN) is None


def test_a_person_writing_about_failures_is_no_report() -> None:
    raw = _crlf("From: Fred <fred@players.test>\nTo: abalone@pbm.example.org\n"
                "Subject: Mail delivery failed\n\nMy move could not be delivered, "
                "550 5.1.1 it said.\n")
    assert read_report(parse_mail(raw), "fred@players.test", DOMAIN) is None


def test_a_huge_report_is_read_in_bounded_time() -> None:
    """The size limit's worth of recipients and text costs a bounded read."""
    blocks = "".join(f"Final-Recipient: rfc822; p{n}@players.test\nAction: failed\n"
                     f"Status: 5.1.1\n\n" for n in range(4000))
    raw = _dsn("huge", "MAILER-DAEMON@mx.site.test", "Undelivered Mail Returned to Sender",
               "x " * 50000, blocks)
    assert len(raw) > 200_000
    started = time.perf_counter()
    report = read_report(parse_mail(raw), "", DOMAIN)
    assert time.perf_counter() - started < 1.0
    assert report is not None and len(report.recipients) <= 50


def test_bounce_addresses_are_unique_and_read_back() -> None:
    first, second = bounce_address(OURS), bounce_address(OURS)
    assert first != second
    token = bounce_token(first.upper(), OURS)
    assert token is not None and canonical_bounce_address(token, OURS) == first
    for other in (OURS, "abalone+101.k3x9q7mf2a@pbm.example.org",
                  "abalone+bounce.short@pbm.example.org",
                  first.replace("pbm.example.org", "elsewhere.test")):
        assert bounce_token(other, OURS) is None
