"""A whole game by mail through a running `abalone-pbm serve`, a real SMTP client and
a real relay sink: signup, challenge, moves by reply and by command, redelivery, the
errors, to the end with six marbles pushed off."""

from __future__ import annotations

import re
import time

from abalone_pbm.rules import Board

from .conftest import LiveServer
from .scripted import scripted_game

FRED = "fred@example.org"
WILMA = "wilma@example.org"
PASSWORDS = {"fred": "Choc0late", "wilma": "vanilla-Sky"}


def _body(message) -> str:  # type: ignore[no-untyped-def]
    """The text part (board mails are multipart/alternative with an HTML part)."""
    return message.get_body(("plain",)).get_content()


def _signup_both(server: LiveServer) -> None:
    server.send(FRED, f"signup fred {PASSWORDS['fred']}")
    server.send(WILMA, f"signup wilma {PASSWORDS['wilma']}")
    server.mailbox.wait_for(FRED, r"^Abalone signup fred")
    server.mailbox.wait_for(WILMA, r"^Abalone signup wilma")


def _board_diagram(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\s*[A-I]- ", line)]


def test_a_whole_game_by_mail(live_server: LiveServer) -> None:
    server = live_server
    mailbox = server.mailbox
    _signup_both(server)

    server.send(FRED, "abalone challenge fred wilma")
    new_fred = mailbox.wait_for(FRED, r"^New Abalone Board 101 fred$")
    new_wilma = mailbox.wait_for(WILMA, r"^New Abalone Board 101 fred$")
    reply_to = {"fred": str(new_fred["Reply-To"]), "wilma": str(new_wilma["Reply-To"])}
    assert re.fullmatch(r"abalone\+101\.[a-z0-9]{12,}@localhost", reply_to["fred"])
    assert reply_to["fred"] != reply_to["wilma"]
    assert "A- o o o o o / 7" in _body(new_fred)

    moves = scripted_game()
    board = Board.from_layout("standard")
    players = ("fred", "wilma")
    addresses = {"fred": FRED, "wilma": WILMA}
    for ply, move in enumerate(moves, start=1):
        mover = players[(ply - 1) % 2]
        other = players[ply % 2]
        if ply == 3:
            _check_errors(server, board, mover, other)
        if ply % 4 in (1, 2):
            # By reply: the move on the first line, a comment under it, the old mail quoted.
            sent = server.send(
                addresses[mover],
                f"Re: Abalone Board 101 {mover}",
                f"{move}#{ply}\nmy move number {ply}\n\n> abalone move 101 x y zz\n",
                to=reply_to[mover],
            )
        else:
            sent = server.send(
                addresses[mover],
                f"abalone move 101 {mover} {PASSWORDS[mover]} {move}",
                f"comment {ply}",
            )
        board.push_text(move)
        expected = "" if board.is_game_over() else f" {players[board.turn - 1]}"
        subject = rf"^Abalone Board 101{expected} \*\*$"
        for name in players:
            mail = mailbox.wait_for(addresses[name], subject)
            assert str(mail["Reply-To"]) == reply_to[name]
        if ply == 5:
            _check_redelivery(server, sent, board)

    last_mails = [m for m in mailbox.all_to(FRED) if str(m["Subject"]).startswith("Abalone Board 101 **")]
    assert last_mails, "the game-over mail reached fred"
    text = _body(last_mails[-1])
    assert "fred" in text and re.search(r"won|wins", text)
    assert re.search(r"1600|rating", text, re.IGNORECASE)
    _check_every_mail(server)


def _check_errors(server: LiveServer, board: Board, mover: str, other: str) -> None:
    mailbox = server.mailbox
    addresses = {"fred": FRED, "wilma": WILMA}
    position = board.position()

    server.send(addresses[mover], f"abalone move 101 {mover} not-the-password c5,d5")
    error = mailbox.wait_for(addresses[mover], r"^Abalone Board 101 Error$")
    assert "Invalid password" in _body(error)
    assert "not-the-password" not in error.as_string()
    assert "********" in _body(error)

    server.send(addresses[other], f"abalone move 101 {other} {PASSWORDS[other]} g7,f6")
    error = mailbox.wait_for(addresses[other], r"^Abalone Board 101 Error$")
    assert "It is not your move" in _body(error)
    assert PASSWORDS[other] not in error.as_string()

    # An illegal move: pushing three with three is never allowed; moving onto one's own
    # marble neither.  Find a line move into an own marble on this board.
    server.send(addresses[mover], f"abalone move 101 {mover} {PASSWORDS[mover]} a1-a3,a4")
    error = mailbox.wait_for(addresses[mover], r"^Abalone Board 101 Error$")
    assert "occupied by your own marble" in _body(error) or "Illegal move" in _body(error)
    assert _board_diagram(_body(error)), "the error shows the unchanged board"

    server.send(FRED, "abalone move 1234 fred whatever c5,d5")
    error = mailbox.wait_for(FRED, r"^Abalone error$")
    assert "Abalone board 1234 not found" in _body(error)

    server.send(FRED, "abalone move 101 fred")
    error = mailbox.wait_for(FRED, r"^Abalone error$")
    assert 'Syntax is "abalone move <board> <userid> <password> <move>"' in _body(error)
    assert board.position() == position


def _check_redelivery(server: LiveServer, sent, board: Board) -> None:  # type: ignore[no-untyped-def]
    """The same mail delivered again is processed once: no second move, no new mail."""
    mailbox = server.mailbox
    before = mailbox.count()
    server.send_raw(str(sent["From"]), str(sent["To"]), sent.as_bytes())
    # A show answered after the redelivery proves the redelivery was looked at.
    server.send(FRED, "abalone show 101")
    shown = mailbox.wait_for(FRED, r"^Abalone Board 101 \w+$")
    assert mailbox.count() == before + 1
    assert f"move #{board.ply + 1}" in _body(shown) or str(board.ply) in _body(shown)


def _check_every_mail(server: LiveServer) -> None:
    for envelope_from, rcpts, message in server.mailbox.sink.messages:
        assert len(rcpts) == 1, "one mail per recipient"
        assert message["Message-ID"] and message["Date"]
        assert message["Auto-Submitted"] in ("auto-replied", "auto-generated")
        assert message["X-Loop"]
        text = message.as_string()
        for password in PASSWORDS.values():
            assert password not in text, "a password never appears in a mail"


def test_players_must_reply_from_their_address(live_server: LiveServer) -> None:
    server = live_server
    _signup_both(server)
    server.send(FRED, "abalone challenge fred wilma")
    mail = server.mailbox.wait_for(FRED, r"^New Abalone Board 101 fred$")
    server.send("mallory@evil.test", "Re: board", "c3-c5,d4\n", to=str(mail["Reply-To"]))
    error = server.mailbox.wait_for("mallory@evil.test", r"^Abalone Board 101 Error$")
    assert "registered addresses" in _body(error)
    time.sleep(0.2)
    assert not [m for m in server.mailbox.all_to(WILMA) if "Board 101 wilma" in str(m["Subject"])]
