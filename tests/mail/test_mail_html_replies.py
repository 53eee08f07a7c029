"""HTML-only replies through the real mail path (the harness: inbox, worker, service
layer, outbox): the player's move in an HTML part is played, what their mail program
quoted (the board, with its words) is never read as a command, and hostile markup or
MIME at the size limit is answered like any mail, never parked, never stalling."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from abalone_pbm.db.models import Game, InboxMail
from tests.e2e.scripted import scripted_game
from tests.service.harness import Harness, make_harness

LIMIT = 256 * 1024
FRED, WILMA = "fred@example.org", "wilma@example.org"


@pytest.fixture
def harness(migrated_db_url: str, tmp_path: Path) -> Harness:
    made = make_harness(migrated_db_url, tmp_path)
    made.signup("fred", "fred-pw", FRED)
    made.signup("wilma", "wilma-pw", WILMA)
    return made


def _html_reply(reply_to: str, markup: str, subject: str = "Re: Abalone Board") -> bytes:
    head = (
        f"From: Fred <{FRED}>\r\nTo: {reply_to}\r\nSubject: {subject}\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n"
        "Content-Transfer-Encoding: 8bit\r\n\r\n"
    )
    return head.encode() + markup.encode()


def _plies(harness: Harness, board: int) -> int:
    with harness.database.read() as session:
        game = session.scalars(select(Game).where(Game.number == board)).one()
        return int(game.ply)


def _statuses(harness: Harness) -> list[str]:
    with harness.database.read() as session:
        return [mail.status for mail in session.scalars(select(InboxMail))]


def _start(harness: Harness) -> tuple[int, str]:
    mails = harness.challenge("fred", "wilma")
    fred_mail = mails["fred"]
    board = int(fred_mail.subject.split()[3])
    assert fred_mail.reply_to is not None
    return board, fred_mail.reply_to


def test_an_outlook_html_only_reply_moves_and_its_quoted_board_is_not_read(
    harness: Harness,
) -> None:
    board, reply_to = _start(harness)
    move = scripted_game()[0]
    markup = (
        f'<html><body><div class="elementToProof">{move}</div><div>Nice opening</div>'
        '<div id="appendonsend"></div><hr tabindex="-1"><div id="divRplyFwdMsg"><b>From:'
        "</b> abalone<br><b>Sent:</b> Monday</div><div>Summary of Abalone Board "
        f"{board}<br>resign<br>propose</div></body></html>"
    )
    sent = harness.deliver(FRED, reply_to, _html_reply(reply_to, markup))
    assert _plies(harness, board) == 1
    to_wilma = [mail for mail in sent if mail.to == WILMA]
    assert to_wilma and to_wilma[0].subject.startswith(f"Abalone Board {board} wilma")
    assert "Nice opening" in to_wilma[0].body
    comment = to_wilma[0].body.split("*" * 72)[1]
    assert "Nice opening" in comment and "resign" not in comment and "From:" not in comment, comment


HOSTILE = {
    "unclosed tags": "<a " * (LIMIT // 3 - 200),
    "unclosed end tags": "</" * (LIMIT // 2 - 200),
    "bogus markup declarations": "<![" * (LIMIT // 3 - 200),
    "unclosed comment": "<!--" + "resign " * (LIMIT // 7 - 100),
    "deep divs": "<div>" * (LIMIT // 5 - 100),
    "deep blockquotes": "<blockquote>resign " * (LIMIT // 19 - 20),
}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_hostile_html_at_the_size_limit_is_answered_and_changes_nothing(
    harness: Harness, shape: str
) -> None:
    board, reply_to = _start(harness)
    raw = _html_reply(reply_to, HOSTILE[shape])
    assert len(raw) <= LIMIT
    sent = harness.deliver(FRED, reply_to, raw)
    assert _plies(harness, board) == 0  # nothing in it is a move, nor the quoted resign
    assert "failed" not in _statuses(harness)
    assert [mail.to for mail in sent] == [FRED]  # one answer, to the sender
    # The next mail is read as ever.
    markup = f"<div>{scripted_game()[0]}</div>"
    harness.deliver(FRED, reply_to, _html_reply(reply_to, markup))
    assert _plies(harness, board) == 1


def test_mime_nested_2500_deep_is_answered_and_changes_nothing(harness: Harness) -> None:
    board, reply_to = _start(harness)
    opening = "".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n' for i in range(2500)
    )
    raw = (
        f"From: Fred <{FRED}>\r\nTo: {reply_to}\r\nSubject: Re: Abalone Board\r\n"
        f"MIME-Version: 1.0\r\n{opening}Content-Type: text/plain\r\n\r\n{scripted_game()[0]}\r\n"
    ).encode()
    sent = harness.deliver(FRED, reply_to, raw)
    assert "failed" not in _statuses(harness)
    assert _plies(harness, board) == 0  # too deep to be read: not played
    assert [mail.to for mail in sent] == [FRED]
