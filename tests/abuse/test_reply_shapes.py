"""Replies from real mail programs through a real ``serve`` (DESIGN 2.8): a player
answers the board mail they received in a dozen client shapes; each must play exactly
the move they wrote and show the opponent exactly their comment."""

from __future__ import annotations

import email.policy
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import parseaddr

import pytest
from sqlalchemy.engine import Engine

from ..e2e.conftest import LiveServer
from ..e2e.scripted import scripted_game
from .conftest import body_of, mails_to, new_game, scalar, signup, unique

MOVE = scripted_game()[0]


def _quoted(board_mail: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in board_mail.splitlines())


def _plain(text: str) -> Callable[[str, str], EmailMessage]:
    def build(board_mail: str, reply_address: str) -> EmailMessage:
        message = EmailMessage()
        message.set_content(text.format(move=MOVE, board=board_mail, quoted=_quoted(board_mail),
                                        addr=reply_address))
        return message
    return build


def _html_only(board_mail: str, reply_address: str) -> EmailMessage:
    message = EmailMessage()
    message.set_content(
        f"<div dir=\"ltr\">{MOVE}<div>Your turn, html</div></div><br><div class=\"gmail_quote\">"
        f"On Fri, Nov 27, 2026 at 12:19 PM Abalone &lt;{reply_address}&gt; wrote:<br>"
        f"<blockquote class=\"gmail_quote\"><pre>{board_mail}</pre></blockquote></div>",
        subtype="html")
    return message


def _text_part_lacks_new_text(board_mail: str, reply_address: str) -> EmailMessage:
    message = EmailMessage()
    message.set_content(f"On Fri, Nov 27, 2026 at 12:19 PM Abalone <{reply_address}> wrote:\n"
                        + _quoted(board_mail) + "\n")
    message.add_alternative(
        f"<p>{MOVE}</p><p>only in html</p><blockquote><pre>{board_mail}</pre></blockquote>",
        subtype="html")
    return message


def _latin1(board_mail: str, reply_address: str) -> EmailMessage:
    message = EmailMessage()
    message.set_content(f"{MOVE}\nSchöner Zug, Grüße\n\nAm 27.11.2026 um 12:19 schrieb Abalone:\n"
                        + _quoted(board_mail) + "\n", charset="iso-8859-1")
    return message


def _flowed(board_mail: str, reply_address: str) -> EmailMessage:
    message = EmailMessage()
    message.set_content(f"{MOVE}\nThis comment was wrapped by \nthe mail program\n\n"
                        f"On 27/11/2026 12:19, Abalone wrote:\n" + _quoted(board_mail) + "\n")
    message.set_param("format", "flowed")
    return message


SHAPES: list[tuple[str, Callable[[str, str], EmailMessage], str, str]] = [
    ("gmail", _plain("{move}\nYour turn!\n\nOn Fri, Nov 27, 2026 at 12:19 PM Abalone <\n{addr}> wrote:\n\n{quoted}\n"),
     "", "Your turn!"),
    ("gmail-de-name-first", _plain("{move}\nDu bist dran.\n\nAbalone <{addr}> schrieb am Fr., 27.\nNov. 2026, 12:19:\n\n{quoted}\n"),
     "", "Du bist dran."),
    ("outlook-nl", _plain("{move}\nJij bent\n\nVan: Abalone <{addr}>\nVerzonden: vrijdag 27 november 2026 12:19\nAan: fred\nOnderwerp: Abalone Board\n\n{board}\n"),
     "", "Jij bent"),
    ("outlook-es", _plain("{move}\nTe toca\n\n-----Mensaje original-----\nDe: Abalone <{addr}>\nEnviado el: viernes\nPara: fred\nAsunto: Abalone Board\n\n{board}\n"),
     "", "Te toca"),
    ("outlook-banner", _plain("[AMD Official Use Only - General]\n\n{move}\nbanner above\n\nFrom: Abalone <{addr}>\nSent: Friday\nTo: fred\nSubject: Abalone Board\n\n{board}\n"),
     "", "banner above"),
    ("outlook-android", _plain("{move}\n\nGesendet von Outlook für Android<https://aka.ms/AAb9ysg>\n________________________________\nFrom: Abalone <{addr}>\nSent: Friday\n\n{board}\n"),
     "", ""),
    ("zoho", _plain("{move}\nzoho comment\n\n---- On Fri, 27 Nov 2026 12:19:01 +0100 Abalone <{addr}> wrote ----\n\n{board}\n"),
     "", "zoho comment"),
    ("yahoo-android", _plain("{move}\n\nSent from Yahoo Mail on Android\n \n  On Fri, Nov 27, 2026 at 12:19, Abalone<{addr}> wrote:   {board}\n"),
     "", ""),
    ("ipad-norwegian", _plain("{move}\nDin tur\n\nSendt fra min iPad\n\nDen 27. nov. 2026 kl. 12:19 skrev Abalone <{addr}>:\n\n{board}\n"),
     "", "Din tur"),
    ("k9", _plain("{move}\n\nDiese Nachricht wurde von meinem Android-Gerät mit K-9 Mail gesendet.\n\nAm 27. November 2026 12:19:01 MEZ schrieb Abalone <{addr}>:\n{quoted}\n"),
     "", ""),
    ("subject-only", _plain(""), "{move}", ""),
    ("html-only", _html_only, "", "Your turn, html"),
    ("text-part-lacks-new-text", _text_part_lacks_new_text, "", "only in html"),
    ("latin-1", _latin1, "", "Schöner Zug, Grüße"),
    ("flowed", _flowed, "", "This comment was wrapped by the mail program"),
]


@pytest.mark.parametrize("name, build, subject_move, comment", SHAPES, ids=[s[0] for s in SHAPES])
def test_a_client_shape_plays_the_move_and_shows_the_comment(
    server: LiveServer, engine: Engine, name: str,
    build: Callable[[str, str], EmailMessage], subject_move: str, comment: str,
) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "pw-f", fred_address)
    signup(server, wilma, "pw-w", wilma_address)
    board, fred_reply, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    received = next(m for m in mails_to(server, fred_address)
                    if str(m["Subject"]) == f"New Abalone Board {board} {fred}")
    reply_address = parseaddr(fred_reply)[1]
    message = build(body_of(received), reply_address)
    message["From"] = fred_address
    message["To"] = fred_reply
    subject = f"Re: New Abalone Board {board} {fred}"
    message["Subject"] = f"{subject_move.format(move=MOVE)} {subject}".strip()
    message["Message-ID"] = f"<{unique('shape')}@players.test>"
    # CRLF line ends, as SMTP wants them.
    server.send_raw(fred_address, reply_address, message.as_bytes(policy=email.policy.SMTP))
    after = server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} {wilma}")
    assert scalar(engine, "SELECT ply FROM games WHERE number = :b", b=board) == 1
    text = body_of(after).replace("\r\n", "\n")
    assert f"1. {MOVE}" in text
    if comment:
        assert str(after["Subject"]).endswith("**")
        shown = text.split(f"{fred} writes:\n", 1)[1].split("\n*****", 1)[0]
        assert shown == comment
    else:
        assert "writes:" not in text and not str(after["Subject"]).endswith("**")
