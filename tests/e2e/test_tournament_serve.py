"""A knockout of four played through a running `abalone-pbm serve`, a real SMTP client
and a real relay sink: signup and join by mail, the admin's `abalone-pbm tournament`
commands, every game by reply to its board mail, a first-move resignation, a no-show
forfeited by `abalone-pbm tick` on a clock moved eight days forward (then `serve` started
again on that clock sends what the tick queued), the final and the standings mail."""

from __future__ import annotations

import pytest

from .conftest import LiveServer
from . import tournament_mail as tm

# One backend: a tournament through `serve` is long, and the backends differ in no step of it.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])

PLAYERS = ["ann", "bob", "cyd", "dan"]


def test_a_knockout_of_four_through_serve(live_server: LiveServer) -> None:
    server = live_server
    # Equal ratings (none set): seeds by userid.
    started = tm.open_tournament(server, "cup", "knockout", PLAYERS, {}, "--games", "1")
    assert started.startswith("tournament cup started: 2 games")

    # ann meets dan, bob meets cyd, the higher seed first.
    boards = tm.take_new_boards(server, PLAYERS, each=1)
    assert {b.tournament for b in boards.values()} == {"cup"}
    by_players = {frozenset(b.players): b for b in boards.values()}
    assert set(by_players) == {frozenset(("ann", "dan")), frozenset(("bob", "cyd"))}
    # ann moves, dan resigns at once: a played loss, not a withdrawal.
    tm.decide_games(server, {by_players[frozenset(("ann", "dan"))].number: "dan"}, boards)

    # bob never moves: eight days go by (the forfeit time is seven), the clock forfeits
    # him (a no-show) and the final starts.  `abalone-pbm tick` on the moved clock does
    # it; the mail it queued is dated eight days on, so only a `serve` on the same clock
    # sends it.
    server.env["ABALONE_PBM_CLOCK_OFFSET"] = "8d"
    ticked = tm.admin(server, "tick")
    assert "1 forfeit" in ticked, ticked
    server.restart(ABALONE_PBM_CLOCK_OFFSET="8d")
    idle = by_players[frozenset(("bob", "cyd"))]
    assert "forfeited" in tm.text_of(tm.wait_mail(
        server, "cyd", rf"^Abalone Board {idle.number}( \*\*)?$")).lower()
    (final,) = tm.take_new_boards(server, ["ann", "cyd"], each=1).values()
    assert final.first == "ann"
    for userid, move, following in zip(("ann", "cyd"), tm.opening_moves(2), ("cyd", "ann")):
        tm.reply(server, final, userid, move)
        for reader in ("ann", "cyd"):
            tm.wait_mail(server, reader, rf"^Abalone Board {final.number} {following}$")
    tm.reply(server, final, "ann", "resign")

    standings = {u: tm.wait_standings(server, "cup", u, "final") for u in PLAYERS}
    table = tm.standings_table(tm.text_of(standings["bob"]))
    # cyd champion (round 3: one past the final), ann finalist (round 2); bob and dan
    # out in round 1 with no points, equal ratings, no marbles: the userid decides.
    assert [row[:4] for row in table] == [
        ["1", "cyd", "2", "3"], ["2", "ann", "1", "2"], ["3", "bob", "0", "1"],
        ["4", "dan", "0", "1"]]
    assert standings["bob"]["List-Unsubscribe"] is not None
    listing = tm.admin(server, "tournament", "list")
    assert listing.splitlines()[1].split()[:3] == ["cup", "knockout", "finished"]
