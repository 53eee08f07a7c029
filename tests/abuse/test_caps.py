"""The daily cap (here 20 answers a day) counts answers to a person's own mails, per
address as normalised (case, `+tag`), and never board mails caused by other players."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ..e2e.conftest import LiveServer
from ..e2e.scripted import scripted_game
from .conftest import mails_to, new_game, scalar, settle, signup, unique

SERVER_SETTINGS = {"DAILY_REPLY_CAP": 20}


def test_tags_and_case_do_not_dodge_the_cap(server: LiveServer) -> None:
    victim = unique("victim")
    variants = [f"{victim}+{n}@victims.test" for n in range(15)]
    variants += [f"{victim.upper()}+x{n}@VICTIMS.test" for n in range(15)]
    for address in variants:
        server.send(address, "help")
    settle(server)
    delivered = sum(len(mails_to(server, a.lower())) for a in variants)
    assert delivered == 20


def test_a_fast_game_between_two_players_gets_every_answer(
    server: LiveServer, engine: Engine
) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    addresses = {fred: f"{fred}@players.test", wilma: f"{wilma}@players.test"}
    signup(server, fred, "pw-f", addresses[fred])
    signup(server, wilma, "pw-w", addresses[wilma])
    board, fred_reply, wilma_reply = new_game(server, (fred, addresses[fred]), (wilma, addresses[wilma]))
    replies = {fred: fred_reply, wilma: wilma_reply}
    players = (fred, wilma)
    plies = 30  # 32 board mails reach each player: more than the cap of 20
    for ply, move in enumerate(scripted_game()[:plies], start=1):
        mover, other = players[(ply - 1) % 2], players[ply % 2]
        server.send(addresses[mover], f"Re: Abalone Board {board}", f"{move}#{ply}\n",
                    to=replies[mover])
        for name in players:
            server.mailbox.wait_for(addresses[name], rf"^Abalone Board {board} {other}$")
    assert scalar(engine, "SELECT ply FROM games WHERE number = :b", b=board) == plies
    settle(server)
    for name in players:
        boards = [m for m in mails_to(server, addresses[name])
                  if str(m["Subject"]).startswith(f"Abalone Board {board} ")]
        assert len(boards) == plies
