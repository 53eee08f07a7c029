"""The stored copy reads an HTML part as the words its markup shows: a reply quoting a
board mail's markup costs the rule a few hundred characters, and every password typed
in the HTML part is still masked, whatever markup stands around or inside it."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

import pytest

from abalone_pbm.mail.stored_copy import masked_raw
from abalone_pbm.protocol.masking import markup_words

from .harness import Harness

M = "********"


def _mail(text: str | None, html: str, subject: str = "Re: Abalone Board 101 fred") -> bytes:
    message = EmailMessage()
    message["From"] = "fred@example.org"
    message["To"] = "abalone@localhost"
    message["Subject"] = subject
    message["Message-ID"] = "<markup-1@players.test>"
    if text is None:
        message.set_content(html, subtype="html", cte="quoted-printable")
    else:
        message.set_content(text, cte="quoted-printable")
        message.add_alternative(html, subtype="html", cte="quoted-printable")
    return message.as_bytes()


def _html_of(raw: bytes) -> str:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    part = message.get_body(("html",))
    assert part is not None
    return str(part.get_content())


def test_markup_words_are_the_lines_a_mail_program_shows() -> None:
    words = markup_words('<div dir="ltr">sign<b>up</b><o:p></o:p> fred</div>'
                         "<style>p { x }</style><!-- note -->&nbsp;pw<br>c3-c5")
    assert [line.split() for line in words.split("\n") if line.strip()] == [
        ["sign", "up", "fred"], ["note", "pw"], ["c3-c5"]]


@pytest.mark.parametrize("html", [
    "<div>signup fred Secret99x</div>",  # (the move's line and this one: one of markup)
    "<p>signup <b>fred</b> <span style='color:red'>Secret99x</span></p>",
    "<div>signup fred Secret99x<o:p></o:p></div>",  # (a tag the rule's own reading keeps)
    "<table><tr><td>change password fred Old7Pw Secret99x</td></tr></table>",
    "<div>signup fred</div><div>Secret99x</div>",  # a command cut over lines
])
def test_a_password_typed_in_the_html_part_only_is_masked(html: str) -> None:
    raw = _mail("My move is below.\n", "<div>c3-c5,d4</div>" + html)
    stored = masked_raw(raw, ())
    assert b"Secret99x" not in stored
    assert M in _html_of(stored)


def test_a_password_of_the_text_part_is_hidden_in_the_markup_too() -> None:
    raw = _mail("signup fred Secret99x\n",
                '<div dir="ltr">signup fred <a href="#">Secret99x</a></div>'
                '<blockquote>' + "<p>a long quoted board</p>\n" * 200 + "</blockquote>")
    stored = masked_raw(raw, ())
    assert b"Secret99x" not in stored
    assert _html_of(stored).startswith(f'<div dir="ltr">signup fred <a href="#">{M}</a></div>')


def test_a_reply_quoting_a_board_in_markup_is_kept_byte_for_byte(harness: Harness) -> None:
    harness.signup("fred", "Sesame77x")
    harness.signup("wilma", "Pebbles77x")
    board = harness.challenge("fred", "wilma")["fred"]
    assert board.html is not None and board.reply_to is not None
    raw = _mail(f"c3-c5,d4\n\nOn Friday Abalone wrote:\n\n"
                + "".join(f"> {line}\n" for line in board.body.splitlines()),
                '<div dir="ltr">c3-c5,d4</div><blockquote class="gmail_quote">'
                + board.html + "</blockquote>",
                subject=f"Re: {board.subject}")
    assert masked_raw(raw, ()) == raw
    sent = harness.deliver("fred@example.org", board.reply_to, raw)
    assert any("Board" in mail.subject for mail in sent)
    from sqlalchemy import select

    from abalone_pbm.db.models import InboxMail

    with harness.database.read() as session:
        stored = session.scalars(select(InboxMail).order_by(InboxMail.id.desc())).first()
        assert stored is not None and stored.status == "done"
        assert bytes(stored.raw) == raw
