"""After an outage the backlog is taken in order: a real `serve` whose worker is held
while the players of four games keep moving (their mails accepted and stored), then
killed with kill -9 together with its worker, and started again. Its new worker
finds every move of every game waiting and applies each board's moves in the order
they were accepted: none is answered "It is not your move" or "received as move #n".
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from email.message import EmailMessage

from sqlalchemy import select

from abalone_pbm.db.models import Game, InboxMail, MoveRecord
from abalone_pbm.db.session import Database

from .conftest import LiveServer, Mailbox, _wait_listening
from .scripted import scripted_game
from .test_worker_process import _wait, _worker_of

#: (player 1, player 2) of boards 101, 102, 103, 104: ann plays two of them, so one
#: sender's mails about two boards wait together too.
GAMES = (("ann", "bob"), ("cid", "dee"), ("ann", "eve"), ("fay", "gus"))
PLIES = 4


def _address(userid: str) -> str:
    return f"{userid}@example.org"


def _password(userid: str) -> str:
    return f"{userid}-Secret9"


def _start_games(server: LiveServer) -> dict[tuple[str, int], str]:
    """Every player signed up and the four games challenged; each player's reply
    address per board."""
    players = sorted({userid for game in GAMES for userid in game})
    for userid in players:
        server.send(_address(userid), f"signup {userid} {_password(userid)}")
    for userid in players:
        server.mailbox.wait_for(_address(userid), rf"^Abalone signup {userid}")
    reply_to: dict[tuple[str, int], str] = {}
    for board, (first, second) in enumerate(GAMES, start=101):
        server.send(_address(first), f"abalone challenge {first} {second}")
        for userid in (first, second):
            new = server.mailbox.wait_for(_address(userid), rf"^New Abalone Board {board} ")
            reply_to[userid, board] = str(new["Reply-To"])
    return reply_to


def _send_move(server: LiveServer, board: int, ply: int, move: str,
               reply_to: dict[tuple[str, int], str]) -> EmailMessage:
    """Player 1 by command (with the password), player 2 by reply (the token): the
    two ways a mail names its board without its body being read."""
    first, second = GAMES[board - 101]
    if ply % 2 == 1:
        return server.send(_address(first),
                           f"abalone move {board} {first} {_password(first)} {move}#{ply}",
                           f"move {ply}")
    return server.send(_address(second), f"Re: Abalone Board {board} {second}",
                       f"{move}#{ply}\nmove {ply}\n", to=reply_to[second, board])


def _waiting(database: Database) -> list[InboxMail]:
    with database.read() as session:
        rows = list(session.scalars(select(InboxMail).where(InboxMail.status == "new")
                                    .order_by(InboxMail.id)))
        session.expunge_all()
        return rows


def test_a_backlog_after_kill_9_is_applied_in_order(live_server: LiveServer) -> None:
    server = live_server
    database = Database(server.env["ABALONE_PBM_DATABASE_URL"])
    restarted: subprocess.Popen[str] | None = None
    held: int | None = None
    try:
        reply_to = _start_games(server)
        moves = scripted_game()[:PLIES]
        worker = _worker_of(server.process.pid)
        os.kill(worker, signal.SIGSTOP)  # the outage begins: mail is stored, not processed
        held = worker
        sent: dict[tuple[int, int], str] = {}  # (board, ply) -> Message-ID
        for ply, move in enumerate(moves, start=1):
            # Each ply of the four boards at once; the next ply once they are accepted.
            def send(board: int) -> None:
                sent[board, ply] = str(_send_move(server, board, ply, move,
                                                  reply_to)["Message-ID"])
            threads = [threading.Thread(target=send, args=(board,))
                       for board in range(101, 101 + len(GAMES))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert len(sent) == PLIES * len(GAMES)
        os.kill(server.process.pid, signal.SIGKILL)
        os.kill(worker, signal.SIGKILL)
        server.process.wait(timeout=20)

        backlog = _waiting(database)
        assert len(backlog) == len(sent)  # every move waits: none was processed
        # Each mail's board was known when it was stored (reply address or Subject).
        board_of = {message_id: board for (board, _ply), message_id in sent.items()}
        assert {row.id: row.board for row in backlog} == {
            row.id: board_of[row.message_id or ""] for row in backlog}

        host, port = server.env["ABALONE_PBM_LISTEN"].rsplit(":", 1)
        restarted = subprocess.Popen([sys.executable, "-m", "abalone_pbm", "serve"],
                                     cwd=server.workdir, env=server.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     text=True)
        _wait_listening(host, int(port), restarted, timeout=30)
        assert _wait(lambda: not _waiting(database), timeout=120)

        with database.read() as session:
            for board in range(101, 101 + len(GAMES)):
                game = session.scalars(select(Game).where(Game.number == board)).one()
                applied = list(session.scalars(
                    select(MoveRecord).where(MoveRecord.game_id == game.id)
                    .order_by(MoveRecord.ply)))
                assert [(m.ply, m.text, m.source_message_id) for m in applied] == [
                    (ply, move, sent[board, ply])
                    for ply, move in enumerate(moves, start=1)], board
        # The last board mail of each game reached its players; no move was refused.
        mailbox: Mailbox = server.mailbox
        for board, (first, second) in enumerate(GAMES, start=101):
            for userid in (first, second):
                mailbox.wait_for(_address(userid), rf"^Abalone Board {board} {first} \*\*$",
                                 timeout=60)
        with mailbox.sink.lock:
            subjects = [str(message["Subject"]) for _from, _to, message in mailbox.sink.messages]
        # A refused move is answered "Abalone Board <n> Error" ("It is not your move",
        # "Move ... received as move #n").
        refused = [subject for subject in subjects
                   if re.search(r"\berror\b", subject, re.IGNORECASE)]
        assert refused == []
    finally:
        if restarted is not None:
            restarted.terminate()
            try:
                restarted.wait(timeout=20)
            except subprocess.TimeoutExpired:
                restarted.kill()
                restarted.wait()
        if held is not None:
            try:  # a held worker cannot end with its server by itself
                os.kill(held, signal.SIGKILL)
            except ProcessLookupError:
                pass
        database.dispose()
