"""The board picture end to end: a real `abalone-pbm serve`, players' mails over SMTP,
the board mails collected at the relay, their HTML part rendered by headless Chromium
and read back cell by cell against the game's position."""

from __future__ import annotations

from abalone_pbm.rules import Board

from browser import expected_cells, find_boards, read_board, screenshot
from e2e.scripted import scripted_game

from .conftest import LiveServer

FRED, WILMA = "fred@example.org", "wilma@example.org"


def _html(message) -> str:  # type: ignore[no-untyped-def]
    part = message.get_body(("html",))
    assert part is not None, "a board mail carries an HTML part"
    return str(part.get_content())


def _cells_shown(html: str) -> dict[str, int | None]:
    image = screenshot(html)
    boards = find_boards(image)
    assert len(boards) == 1
    return read_board(image, boards[0])


def test_board_mails_over_smtp_show_the_position(live_server: LiveServer) -> None:
    server = live_server
    mailbox = server.mailbox
    server.send(FRED, "signup fred pw-fred")
    server.send(WILMA, "signup wilma pw-wilma")
    mailbox.wait_for(FRED, r"^Abalone signup fred")
    mailbox.wait_for(WILMA, r"^Abalone signup wilma")
    server.send(FRED, "abalone challenge fred wilma", "Good luck!")
    new_fred = mailbox.wait_for(FRED, r"^New Abalone Board 101 fred \*\*$")
    assert str(new_fred["From"]).startswith('"Abalone" <') or \
        str(new_fred["From"]).startswith("Abalone <")
    board = Board.from_layout("standard")
    assert _cells_shown(_html(new_fred)) == expected_cells(board)
    reply_to = {"fred": str(new_fred["Reply-To"]),
                "wilma": str(mailbox.wait_for(WILMA, r"^New Abalone Board 101")["Reply-To"])}
    moves = scripted_game()[:21]  # the 21st pushes a marble off the board
    for ply, text in enumerate(moves, start=1):
        mover, address = ("fred", FRED) if ply % 2 else ("wilma", WILMA)
        server.send(address, f"Re: Abalone Board 101 {mover}", f"{text}\n",
                    to=reply_to[mover])
        board.push(board.parse_move(text))
        to_move = "wilma" if ply % 2 else "fred"
        for who in (FRED, WILMA):
            mail = mailbox.wait_for(who, rf"^Abalone Board 101 {to_move}$")
        if ply in (1, 20, 21):
            assert _cells_shown(_html(mail)) == expected_cells(board)
    assert board.ejected(1) == 1
    assert "1 marble pushed off the board" in _html(mail)
