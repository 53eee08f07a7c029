"""A processed mail's stored copy (InboxMail.raw) keeps no password in clear, and keeps
everything else a replay or an admin needs: headers, structure, valid MIME."""

from __future__ import annotations

import base64
import email
import email.policy
from email.message import EmailMessage

from sqlalchemy import select

from abalone_pbm.db.models import InboxMail
from abalone_pbm.mail.stored_copy import dropped_copy, masked_raw

from .harness import Harness

M = "********"


def _stored(harness: Harness) -> list[InboxMail]:
    with harness.database.read() as session:
        rows = list(session.scalars(select(InboxMail).order_by(InboxMail.id)))
        session.expunge_all()
        return rows


def _texts(raw: bytes) -> tuple[str, list[str]]:
    """The Subject and every text part of ``raw``, decoded (the bytes must parse)."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    # (A part written anew has the line ends of MIME's canonical form, CRLF.)
    texts = [str(part.get_content()).replace("\r\n", "\n") for part in message.walk()
             if part.get_content_maintype() == "text"]
    return str(message["Subject"]), texts


def test_a_signup_is_stored_masked_with_its_headers(harness: Harness) -> None:
    harness.mail("fred@example.org", "signup fred Sesame77x", "",
                 message_id="<signup-1@players.test>")
    [row] = _stored(harness)
    raw = bytes(row.raw)
    assert b"Sesame77x" not in raw
    subject, texts = _texts(raw)
    assert subject == f"signup fred {M}"
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert message["Message-ID"] == "<signup-1@players.test>"
    assert message["From"] == "fred@example.org"
    assert row.status == "done" and row.dedup_key  # redelivery is told by the key


def test_a_mail_without_a_password_is_kept_byte_for_byte(harness: Harness) -> None:
    harness.signup("fred", "Sesame77x")
    message = EmailMessage()
    message["From"] = "fred@example.org"
    message["To"] = harness.settings.address
    message["Subject"] = "abalone games fred"
    message["Message-ID"] = "<games-1@players.test>"
    message.set_content("Which boards do I play?  Nice server, by the way.\n")
    raw = message.as_bytes()
    harness.deliver("fred@example.org", harness.settings.address, raw)
    assert bytes(_stored(harness)[-1].raw) == raw


def test_every_text_part_and_encoding_is_masked_and_valid_mime(harness: Harness) -> None:
    message = EmailMessage()
    message["From"] = "wilma@example.org"
    message["To"] = harness.settings.address
    message["Subject"] = "signup wilma Pebbles2024 wilma@example.org"
    message["Thread-Topic"] = "signup wilma Pebbles2024 wilma@example.org"
    message.set_content("Hello!\nchange password wilma Pebbles2024 Bamm9Bamm\n"
                        "Grüße, Wilma\n", cte="base64")
    message.add_alternative("<p>change password wilma Pebbles2024 Bamm9Bamm</p>"
                            "<p>Grüße</p>", subtype="html", cte="quoted-printable")
    message.add_attachment(b"\x89PNG not text", maintype="image", subtype="png",
                           filename="board.png")
    harness.deliver("wilma@example.org", harness.settings.address, message.as_bytes())
    raw = bytes(_stored(harness)[-1].raw)
    for secret in ("Pebbles2024", "Bamm9Bamm"):
        assert secret.encode() not in raw
        assert base64.b64encode(secret.encode())[:8] not in raw
    subject, texts = _texts(raw)
    assert subject == f"signup wilma {M} wilma@example.org"
    assert texts[0] == f"Hello!\nchange password wilma {M} {M}\nGrüße, Wilma\n"
    assert texts[1].startswith(f"<p>change password wilma {M} {M}</p><p>Grüße</p>")
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert parsed["Thread-Topic"] == f"signup wilma {M} wilma@example.org"
    [attachment] = list(parsed.iter_attachments())
    assert attachment.get_content() == b"\x89PNG not text"


def test_a_misspelt_command_and_a_quoted_one_are_masked(harness: Harness) -> None:
    harness.signup("fred", "Sesame77x")
    harness.mail("fred@example.org", "signof fred Sesame77x",
                 "and again below:\n> abalone move 101 fred Sesame77x c3-c5\n")
    raw = bytes(_stored(harness)[-1].raw)
    assert b"Sesame77x" not in raw
    subject, [body] = _texts(raw)
    assert subject == f"signof fred {M}"
    assert body == f"and again below:\n> abalone move 101 fred {M} c3-c5\n"


def test_masked_raw_keeps_bytes_it_cannot_read() -> None:
    raw = b"From: a@example.org\r\nSubject: hello\r\n\r\nc3-c5\r\n"
    assert masked_raw(raw, ()) == raw
    assert masked_raw(raw, {"hello"}) == b"From: a@example.org\r\nSubject: " + M.encode() \
        + b"\r\n\r\nc3-c5\r\n"


def test_a_dropped_mail_keeps_its_headers_with_the_subject_masked_and_no_body(tmp_path):
    """A mail dropped unanswered (here a list's mail, never answered) is never
    replayed: the inbox keeps its headers, the Subject masked, and not its body."""
    from sqlalchemy import select

    from abalone_pbm.db.models import InboxMail
    from abalone_pbm.mail import intake
    from tests.service.harness import make_harness

    harness = make_harness(f"sqlite:///{tmp_path / 'drop.db'}", tmp_path)
    try:
        raw = (b"From: fred@example.org\r\nTo: abalone@localhost\r\n"
               b"Subject: signup fred Secret99x\r\n"
               b"Precedence: bulk\r\nMessage-ID: <list.1@example.org>\r\n\r\n"
               b"signup fred Secret99x\r\n")
        with harness.database.write() as session:
            intake.store_inbox(session, raw, "fred@example.org", ["abalone@localhost"],
                               harness.clock.now())
        assert harness.worker.run_once()
        with harness.database.read() as session:
            mail = session.scalars(select(InboxMail)).one()
            stored = bytes(mail.raw)
            assert mail.status == "dropped"
        assert b"Secret99x" not in stored
        assert b"Subject: signup fred ********" in stored
        assert stored.endswith(b"Message-ID: <list.1@example.org>\r\n\r\n")
    finally:
        harness.database.dispose()


def test_a_subject_folded_over_lines_is_masked_as_the_one_line_it_is() -> None:
    """A command folded over three lines of the Subject (RFC 5322 folding: a line end
    before a blank) reads as one line in every mail program, and so to the masking
    rule: masked in a processed mail's copy and in a dropped mail's."""
    for fold in (b"\r\n ", b"\r\n\t", b"\n "):
        raw = (b"From: betty@example.org\r\nTo: abalone@localhost\r\nSubject: help"
               + fold + b"betty" + fold + b"Pw5zQx9676\r\n\r\nhello\r\n")
        for copy in (masked_raw(raw, ()), dropped_copy(raw)):
            assert b"Pw5zQx9676" not in copy
            shown = email.message_from_bytes(copy, policy=email.policy.default)
            assert str(shown["Subject"]).split() == ["help", "betty", M]


def test_an_encoded_word_its_charset_garbles_is_masked_as_its_bytes_stand() -> None:
    """A Subject whose charset decodes its encoded word to other letters (UTF-8 bytes
    declared EBCDIC) shows the command to a person reading the row's bytes: masked
    there, in a processed mail's copy and in a dropped mail's."""
    subject = (b"=?ebcdic-cp-us?Q?add=E3=80=80barney=E3=80=80Pw4zQx1757"
               b"=E3=80=80betty@example.org?=")
    raw = (b"From: barney@example.org\r\nTo: abalone@localhost\r\nSubject: " + subject
           + b"\r\nContent-Type: multipart/report; boundary=\"r\"\r\n\r\n")
    for copy in (masked_raw(raw, ()), dropped_copy(raw)):
        assert b"Pw4zQx1757" not in copy
        assert subject.replace(b"Pw4zQx1757", M.encode()) in copy


def test_a_multipart_the_library_cannot_take_apart_is_masked_in_its_bytes() -> None:
    # A delimiter of bytes that are no ASCII: the library finds no part, the server
    # reads the Subject's command only, and a person opening the row reads the body.
    raw = (b"From: betty@example.org\r\nTo: abalone@localhost\r\nSubject: list\r\n"
           b'Content-Type: multipart/alternative; boundary="\xff\xfe"\r\n\r\n'
           b"--\xff\xfe\r\nContent-Type: text/plain\r\n\r\nsignup betty Pw10zQx9379 \r\n"
           b"--\xff\xfe\r\nContent-Type: text/html\r\n\r\n"
           b"<p>signoff dino Pw11zQx7325</p>\r\n--\xff\xfe--\r\n")
    masked = masked_raw(raw, ())
    assert b"Pw10zQx9379" not in masked and b"Pw11zQx7325" not in masked
    assert masked.replace(M.encode(), b"Pw10zQx9379", 1).replace(
        M.encode(), b"Pw11zQx7325", 1) == raw  # (nothing else changed)


def test_a_subject_another_reader_decodes_is_masked_as_it_shows() -> None:
    # An encoded word cut by a stray carriage return: our reading leaves it encoded,
    # the standard library's modern reading (a mail program's) decodes it.
    encoded = "".join(f"={byte:02X}" for byte in "signup fred Pw3zQx3775".encode("cp037"))
    raw = (f"From: fred@example.org\r\nTo: abalone@localhost\r\n"
           f"Subject: =?ebcdic-cp-us?Q?{encoded}\r%?=\r\n\r\nhello\r\n").encode()
    masked = masked_raw(raw, ())
    lenient = email.message_from_bytes(masked, policy=email.policy.default)
    assert "Pw3zQx3775" not in str(lenient["Subject"])
    assert str(lenient["Subject"]).startswith(f"signup fred {M}")
    assert encoded.encode() not in masked


def test_a_password_in_an_encoded_word_is_masked_when_the_bytes_are_kept() -> None:
    # The library cannot write this mail again (its delimiter), so the bytes are kept:
    # the Subject's encoded word hides the password from a byte search.
    words = base64.b64encode(b"signup\tbarney\tPw0zQx0000\teve@example.org").decode()
    raw = (f"From: barney@example.org\r\nSubject: =?us-ascii?B?{words}?=\r\n"
           f"X-Note: kept\r\n"
           f'Content-Type: multipart/alternative; boundary="\xff\xfe"\r\n\r\n'
           f"--\xff\xfe\r\nContent-Type: text/plain\r\n\r\nhello\r\n--\xff\xfe--\r\n"
           ).encode("utf-8", "surrogateescape").replace("\xff\xfe".encode(), b"\xff\xfe")
    masked = masked_raw(raw, ())
    message = email.message_from_bytes(masked, policy=email.policy.default)
    assert str(message["Subject"]).split() == ["signup", "barney", M, "eve@example.org"]
    assert message["X-Note"] == "kept"
    assert masked.split(b"X-Note", 1)[1] == raw.split(b"X-Note", 1)[1]


def test_a_part_of_a_broken_type_is_masked_where_its_bytes_are_readable() -> None:
    # No text part for the library (a type with no subtype), but a person opening the
    # row reads the body; in base64 an attachment shows no word and is kept.
    raw = (b"From: fred@example.org\r\nSubject: list\r\nContent-Type: Mq\xef/\r\n\r\n"
           b"change\xc2\xa0address\xc2\xa0betty\xc2\xa0Pw5zQx9676\xc2\xa0<>\r\n")
    masked = masked_raw(raw, ())
    assert masked == raw.replace(b"Pw5zQx9676", M.encode())
    qp = (b"From: fred@example.org\r\nSubject: list\r\nContent-Type: application/x-notes\r\n"
          b"Content-Transfer-Encoding: quoted-printable\r\n\r\nsignup=20fred Pw3zQx3775=\r\n\r\n")
    assert masked_raw(qp, ()) == qp.replace(b"Pw3zQx3775", M.encode())
    attached = (b"From: fred@example.org\r\nSubject: list\r\nContent-Type: application/pdf\r\n"
                b"Content-Transfer-Encoding: base64\r\n\r\n"
                + base64.b64encode(b"signup fred Pw3zQx3775") + b"\r\n")
    assert masked_raw(attached, ()) == attached
