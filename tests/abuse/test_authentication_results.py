"""With ABALONE_PBM_REPLY_REQUIRES_AUTHENTICATION on, a token reply needs the site MTA's
Authentication-Results (its authserv-id, here the mail domain "localhost") to show a
DMARC, DKIM or SPF pass; headers of anybody else are not trusted."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ..e2e.conftest import LiveServer
from ..e2e.scripted import scripted_game
from .conftest import body_of, new_game, scalar, signup, unique

SERVER_SETTINGS = {"REPLY_REQUIRES_AUTHENTICATION": "on"}


def test_token_replies_need_a_pass_from_our_mta(server: LiveServer, engine: Engine) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "pw-f", fred_address)
    signup(server, wilma, "pw-w", wilma_address)
    board, fred_reply, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    move = scripted_game()[0]
    refused = [
        {},
        {"Authentication-Results": "localhost; dmarc=fail header.from=players.test; spf=fail"},
        {"Authentication-Results": "mx.evil.test; dmarc=pass header.from=players.test"},
    ]
    for headers in refused:
        server.send(fred_address, f"Re: Abalone Board {board}", f"{move}\n", to=fred_reply,
                    headers=headers)
        error = server.mailbox.wait_for(fred_address, rf"^Abalone Board {board} Error$")
        assert "Authentication-Results" in body_of(error)
    assert scalar(engine, "SELECT ply FROM games WHERE number = :b", b=board) == 0
    server.send(fred_address, f"Re: Abalone Board {board}", f"{move}\n", to=fred_reply,
                headers={"Authentication-Results":
                         "localhost; spf=pass smtp.mailfrom=players.test; dkim=none"})
    server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} {wilma}$")
    # Moves with the password are not affected.
    second = scripted_game()[1]
    server.send(wilma_address, f"abalone move {board} {wilma} pw-w {second}")
    server.mailbox.wait_for(fred_address, rf"^Abalone Board {board} {fred}$")
