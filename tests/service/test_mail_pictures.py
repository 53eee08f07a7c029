"""The board as a picture, through the mail path: board mails are multipart/alternative
(the pbmserv text, then an HTML page), and the page, rendered by headless Chromium,
shows every cell of the game's position in its player's colour."""

from __future__ import annotations

import re

import pytest

from abalone_pbm.render.board_html import RING_COLOUR
from abalone_pbm.rules import Board

from browser import expected_cells, find_boards, read_board, screenshot
from e2e.scripted import scripted_game

from .game_helpers import game, only, to, two_players
from .harness import Harness, Sent

FRED_AT, WILMA_AT = "fred@example.org", "wilma@example.org"


def _browser_only_once(h: Harness) -> None:
    # The picture does not depend on the database: one backend is enough for Chromium.
    if not h.settings.database_url.startswith("sqlite"):
        pytest.skip("the board picture is checked in the browser on SQLite only")


def _check_page(mail: Sent) -> str:
    """A board mail's structure: text first, then a static, self-contained HTML page."""
    assert mail.message.get_content_type() == "multipart/alternative"
    parts = [p.get_content_type() for p in mail.message.iter_parts()]
    assert parts == ["text/plain", "text/html"]
    html = mail.html
    assert html is not None
    assert len(mail.message.as_bytes()) < 48_000
    lowered = html.lower()
    assert "<script" not in lowered and "src=" not in lowered and "url(" not in lowered
    assert "http://" not in lowered and "https://" not in lowered
    assert 'role="img" aria-label="Abalone board.' in html
    return html


def _shown(html: str) -> dict[str, int | None]:
    image = screenshot(html)
    boards = find_boards(image)
    assert len(boards) == 1, boards
    return read_board(image, boards[0])


def test_every_board_mail_of_a_game_shows_its_position_in_the_browser(
    harness: Harness,
) -> None:
    _browser_only_once(harness)
    h = harness
    new = two_players(h)
    for mail in new.values():
        html = _check_page(mail)
        assert "challenged by" not in html or "fred" in html
        assert _shown(html) == expected_cells(Board.from_layout("standard"))
    moves = scripted_game()
    reply_to = {"fred": new["fred"].reply_to, "wilma": new["wilma"].reply_to}
    checked_push = False
    for ply, text in enumerate(moves[:22], start=1):
        player, address = ("fred", FRED_AT) if ply % 2 else ("wilma", WILMA_AT)
        # Moving by reply: the move on the first line, to the reply address.
        sent = h.mail(address, f"Re: Abalone Board 101 {player}", f"{text}\n",
                      to=reply_to[player])
        assert {s.to for s in sent} == {FRED_AT, WILMA_AT}, [(s.to, s.subject) for s in sent]
        position = Board(game(h).position)
        html = _check_page(only(sent, FRED_AT))
        assert only(sent, WILMA_AT).html is not None
        assert f"played <b>{text}</b>" in html
        if ply in (1, 2, 21, 22):
            assert _shown(html) == expected_cells(position)
        if ply == 21:  # c3-b2,a1 pushes a marble off the board
            assert "1 marble pushed off the board" in html
            assert f"border:3px solid {RING_COLOUR}" in html
            checked_push = True
    assert checked_push


def test_the_text_part_is_the_pbmserv_text(harness: Harness) -> None:
    h = harness
    new = two_players(h)
    mail = new["fred"]
    text = mail.message.get_body(("plain",)).get_content()
    assert text.startswith("Summary of Abalone Board 101")
    assert "    A- o o o o o / 7" in text
    assert "<" not in text.split("How to move")[0].replace("<password>", "")


def test_an_error_about_a_board_can_be_answered_by_reply(harness: Harness) -> None:
    h = harness
    two_players(h)
    # Out of turn: the error shows the board and comes from wilma's reply address.
    sent = h.mail(WILMA_AT, "abalone move 101 wilma pw2 g7-g5,f6")
    error = only(sent, WILMA_AT)
    assert error.subject == "Abalone Board 101 Error"
    assert error.reply_to and error.reply_to.startswith("abalone+101.")
    assert error.html is not None and "It is not your move" in error.html
    h.mail(FRED_AT, "abalone move 101 fred pw1 c3-c5,d4")
    # Replying to the error mail with a move plays it.
    sent = h.mail(WILMA_AT, "Re: Abalone Board 101 Error", "g7-g5,f6\n\n> old text\n",
                  to=error.reply_to)
    assert {s.subject for s in sent} == {"Abalone Board 101 fred"}
    assert game(h).ply == 2


def test_an_error_to_someone_not_playing_has_no_reply_address(harness: Harness) -> None:
    h = harness
    two_players(h)
    h.signup("barney", "pw3")
    sent = h.mail("barney@example.org", "abalone move 101 barney pw3 c3-c5,d4")
    error = only(sent, "barney@example.org")
    assert error.subject == "Abalone Board 101 Error" and error.reply_to is None
    assert "reply to this mail" not in error.body.lower()


def test_the_daily_digest_lists_the_boards_awaiting_a_move(harness: Harness) -> None:
    h = harness
    two_players(h)
    h.challenge("wilma", "fred")  # board 102: wilma to move
    h.mail(FRED_AT, "abalone challenge fred wilma")  # board 103: fred to move
    assert not [s for s in h.tick() if "digest" in s.subject]  # nobody asked for one
    with h.database.write() as session:
        from abalone_pbm.db import repository

        user = repository.get_user(session, "fred")
        assert user is not None
        user.digest = True
    sent = h.tick()
    digest = only(sent, FRED_AT)
    assert digest.subject == "Abalone digest fred: 2 boards await your move"
    assert digest.message["Auto-Submitted"] == "auto-generated"
    assert "Abalone Board 101" in digest.body and "Abalone Board 103" in digest.body
    assert "Abalone Board 102" not in digest.body
    assert re.search(r"abalone\+101\.\w+@", digest.body)
    assert digest.html is not None and digest.html.count('role="img"') == 2
    # One a day.
    assert not h.tick()
    h.clock.advance(hours=25)
    assert [s.subject for s in to(h.tick(), FRED_AT)] == [digest.subject]


def test_format_text_sends_board_mails_without_the_picture(harness: Harness) -> None:
    h = harness
    two_players(h)
    sent = h.mail(WILMA_AT, "format wilma pw2 text")
    answer = only(sent, WILMA_AT)
    assert answer.subject == "Abalone format" and "text only" in answer.body
    assert "pw2" not in answer.body
    sent = h.mail(FRED_AT, "abalone move 101 fred pw1 c3-c5,d4")
    assert only(sent, WILMA_AT).message.get_content_type() == "text/plain"
    assert only(sent, FRED_AT).message.get_content_type() == "multipart/alternative"
    # The text is the same either way.
    assert only(sent, WILMA_AT).body.split("How to")[0] == only(sent, FRED_AT).body.split(
        "How to")[0]
    shown = h.mail(WILMA_AT, "abalone show 101")
    assert only(shown, WILMA_AT).html is None
    h.mail(WILMA_AT, "format wilma pw2 html")
    shown = h.mail(WILMA_AT, "abalone show 101")
    assert only(shown, WILMA_AT).html is not None
    # Bad input changes nothing and says why.
    sent = h.mail(WILMA_AT, "format wilma pw2 pictures")
    assert "neither" in only(sent, WILMA_AT).body and "pw2" not in only(sent, WILMA_AT).body
    sent = h.mail(WILMA_AT, "format wilma wrong text")
    assert "Invalid password" in only(sent, WILMA_AT).body
    assert only(h.mail(WILMA_AT, "abalone show 101"), WILMA_AT).html is not None


def test_digest_on_and_off_by_mail(harness: Harness) -> None:
    h = harness
    two_players(h)
    answer = only(h.mail(FRED_AT, "digest fred pw1 on"), FRED_AT)
    assert answer.subject == "Abalone digest" and "now on" in answer.body
    sent = to(h.tick(), FRED_AT)
    assert [s.subject for s in sent] == ["Abalone digest fred: 1 board awaits your move"]
    # One board: a reply to the digest goes to that board's reply address.
    assert sent[0].reply_to and sent[0].reply_to.startswith("abalone+101.")
    moved = h.mail(FRED_AT, "Re: Abalone digest", "c3-c5,d4\n", to=sent[0].reply_to)
    assert {s.subject for s in moved} == {"Abalone Board 101 wilma"}
    only(h.mail(FRED_AT, "digest fred pw1 off"), FRED_AT)
    h.clock.advance(hours=49)
    assert not to(h.tick(), FRED_AT)
