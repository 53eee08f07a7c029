"""Replies act only for their owner (DESIGN §2.6): a token reply applies only when the
envelope sender is one of the player's confirmed addresses, whatever the headers say."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ..e2e.conftest import LiveServer
from ..e2e.scripted import scripted_game
from .conftest import body_of, mails_to, new_game, scalar, settle, signup, unique


def test_headers_naming_the_player_do_not_make_a_reply_theirs(
    server: LiveServer, engine: Engine
) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "pw-f", fred_address)
    signup(server, wilma, "pw-w", wilma_address)
    board, fred_reply, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    move = scripted_game()[0]
    forged = EmailForge(server)
    forged.send("mallory@evil.test", fred_reply, move,
                {"From": fred_address, "Reply-To": fred_address, "Sender": fred_address})
    settle(server)
    assert scalar(engine, "SELECT ply FROM games WHERE number = :b", b=board) == 0
    assert not [m for m in mails_to(server, wilma_address) if f"Board {board} {wilma}" in str(m["Subject"])]
    # The error goes to the envelope sender, not to the player named in the headers.
    assert not [m for m in mails_to(server, fred_address) if "Error" in str(m["Subject"])]
    # The player from their own address moves as always.
    server.send(fred_address, f"Re: Abalone Board {board}", f"{move}\n", to=fred_reply)
    server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} {wilma}$")


def test_an_unconfirmed_address_cannot_reply_for_the_player(server: LiveServer) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    pending = f"{fred}@unconfirmed.test"
    server.send(fred_address, f"signup {fred} pw-f {fred_address} {pending}")
    server.mailbox.wait_for(fred_address, rf"^Abalone signup {fred}")
    signup(server, wilma, "pw-w", wilma_address)
    board, fred_reply, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    server.send(pending, f"Re: Abalone Board {board}", f"{scripted_game()[0]}\n", to=fred_reply)
    error = server.mailbox.wait_for(pending, rf"^Abalone Board {board} Error$")
    assert "confirmed" in body_of(error)


class EmailForge:
    """Sends a mail whose headers say one thing and whose envelope another."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server

    def send(self, envelope_from: str, to: str, body: str, headers: dict[str, str]) -> None:
        from email.message import EmailMessage

        message = EmailMessage()
        for name, value in headers.items():
            message[name] = value
        message["To"] = to
        message["Subject"] = "Re: Abalone Board"
        message["Message-ID"] = f"<{unique('forged')}@evil.test>"
        message.set_content(body + "\n")
        self.server.send_raw(envelope_from, to, message.as_bytes())
