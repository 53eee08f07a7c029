"""A knockout of four played through a running `abalone-pbm serve`, a real SMTP client
and a real relay sink: signup and join by mail, the admin's `abalone-pbm tournament`
commands, every game by reply to its board mail, a first-move resignation, a no-show
forfeited by `abalone-pbm tick` on a clock moved eight days forward (then `serve` started
again on that clock sends what the tick queued), the final and the standings mail."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from abalone_pbm.rules import Board

from .conftest import LiveServer

# One backend: a tournament through `serve` is long, and the backends differ in no step of it.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])

PLAYERS = ["ann", "bob", "cyd", "dan"]


def _at(userid: str) -> str:
    return f"{userid}@example.org"


def _admin(server: LiveServer, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "abalone_pbm", *args], cwd=server.workdir,
                          env=server.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _text(message) -> str:  # type: ignore[no-untyped-def]
    return str(message.get_body(("plain",)).get_content())


def _new_board(server: LiveServer, userid: str) -> tuple[int, str]:
    """The number and reply address of the next new board mail to ``userid``."""
    mail = server.mailbox.wait_for(_at(userid), r"^New Abalone Board \d+ ")
    number = int(re.search(r"Board (\d+)", str(mail["Subject"])).group(1))  # type: ignore[union-attr]
    assert "Tournament cup, round" in _text(mail)
    return number, str(mail["Reply-To"])


def _reply(server: LiveServer, userid: str, number: int, address: str, text: str) -> None:
    server.send(_at(userid), f"Re: Abalone Board {number}", f"{text}\n", to=address)


def test_a_knockout_of_four_through_serve(live_server: LiveServer) -> None:
    server = live_server
    for userid in PLAYERS:
        server.send(_at(userid), f"signup {userid} {userid}-Pw9")
        server.mailbox.wait_for(_at(userid), rf"^Abalone signup {userid}")
    out = _admin(server, "tournament", "create", "cup", "--format", "knockout", "--games", "1")
    assert out.startswith("tournament cup created (knockout)")
    for userid in PLAYERS:
        server.send(_at(userid), f"abalone tournament join cup {userid} {userid}-Pw9")
        answer = server.mailbox.wait_for(_at(userid), rf"^Abalone tournament cup join {userid}")
        assert f"{userid}-Pw9" not in _text(answer)
    assert _admin(server, "tournament", "start", "cup").startswith(
        "tournament cup started: 2 games")

    # Equal ratings: seeds by userid; ann meets dan, bob meets cyd, the higher seed first.
    boards = {u: _new_board(server, u) for u in PLAYERS}
    assert boards["ann"][0] == boards["dan"][0] and boards["bob"][0] == boards["cyd"][0]
    first_board, _ = boards["ann"]
    # ann moves, dan resigns at once: a played loss, not a withdrawal.
    _reply(server, "ann", first_board, boards["ann"][1],
           str(next(Board.from_layout("standard").generate_legal_moves())))
    for userid in ("ann", "dan"):
        server.mailbox.wait_for(_at(userid), rf"^Abalone Board {first_board} dan$")
    _reply(server, "dan", first_board, boards["dan"][1], "resign")
    over = server.mailbox.wait_for(_at("ann"), rf"^Abalone Board {first_board}( \*\*)?$")
    assert "dan resigned" in _text(over)

    # bob never moves: eight days go by (the forfeit time is seven), the clock forfeits
    # him (a no-show) and the final starts.  `abalone-pbm tick` on the moved clock does
    # it; the mail it queued is dated eight days on, so only a `serve` on the same clock
    # sends it.
    server.env["ABALONE_PBM_CLOCK_OFFSET"] = "8d"
    ticked = _admin(server, "tick")
    assert "1 forfeit" in ticked, ticked
    server.restart(ABALONE_PBM_CLOCK_OFFSET="8d")
    assert "forfeited" in _text(server.mailbox.wait_for(
        _at("cyd"), rf"^Abalone Board {boards['bob'][0]}( \*\*)?$")).lower()
    final = {u: _new_board(server, u) for u in ("ann", "cyd")}
    number = final["ann"][0]
    assert final["cyd"][0] == number
    board = Board.from_layout("standard")
    for userid, following in (("ann", "cyd"), ("cyd", "ann")):
        move = next(board.generate_legal_moves())
        _reply(server, userid, number, final[userid][1], str(move))
        board.push(move)
        for reader in ("ann", "cyd"):
            server.mailbox.wait_for(_at(reader), rf"^Abalone Board {number} {following}$")
    _reply(server, "ann", number, final["ann"][1], "resign")

    standings = {u: server.mailbox.wait_for(_at(u), r"^Abalone tournament cup standings final")
                 for u in PLAYERS}
    table = _text(standings["bob"]).split("Pts", 1)[1].splitlines()[1:5]
    # cyd champion (round 3: one past the final), ann finalist (round 2); bob and dan
    # out in round 1 with no points, equal ratings, no marbles: the userid decides.
    assert [line.split()[:4] for line in table] == [
        ["1", "cyd", "2", "3"], ["2", "ann", "1", "2"], ["3", "bob", "0", "1"],
        ["4", "dan", "0", "1"]]
    assert standings["bob"]["List-Unsubscribe"] is not None
    listing = _admin(server, "tournament", "list")
    assert listing.splitlines()[1].split()[:3] == ["cup", "knockout", "finished"]
