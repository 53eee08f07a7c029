"""A championship played through a running `abalone-pbm serve`, a real SMTP client and a
real relay sink: two divisions of four by rating, every game by reply to its board mail
(wins, losses and draws agreed by mail), a withdrawal after the start (the remaining
games resigned, and out of the next edition too), a no-show forfeited by the clock moved
eight days forward, the final standings checked against tie-breaks worked out by hand;
then the second edition starting by itself a week after the first ended, with promotion
and relegation, an opt-out honoured, a player entered for that edition only, and the
third edition opened with everyone else re-entered."""

from __future__ import annotations

import pytest

from . import tournament_mail as tm
from .conftest import LiveServer

# One backend: a tournament through `serve` is long, and the backends differ in no step of it.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])

FIRST = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]
NEWCOMERS = ["c9", "ca"]
#: c1 the best rated, ca the least: the first edition's divisions are c1-c4 and c5-c8.
RATINGS = {userid: 1900.0 - 25 * index for index, userid in enumerate(FIRST + NEWCOMERS)}


def _flat(text: str) -> str:
    """A mail's text as one line (answers are wrapped at any blank)."""
    return " ".join(text.split())


def _draw(server: LiveServer, board: tm.TournamentBoard) -> None:
    """The first player moves, the second offers a draw on their turn, the first
    accepts: a game played and drawn."""
    first, second = board.pairing()
    tm.reply(server, board, first, tm.opening_move())
    server.mailbox.wait_for(tm.address(second), rf"^Abalone Board {board.number} {second}$")
    tm.reply(server, board, second, "propose")
    server.mailbox.wait_for(tm.address(first), rf"^Abalone Board {board.number} {second}$")
    tm.reply(server, board, first, "accept")
    assert "agreed to a draw" in tm.wait_game_over(server, board)


def _entrants(text: str) -> dict[str, list[str]]:
    """The entrants of an ``abalone tournament show`` answer: userid -> what follows the
    rating ("division 1", "withdrawn", "this edition only")."""
    lines = text.split("Entrants:", 1)[1].splitlines()[1:]
    out: dict[str, list[str]] = {}
    for line in lines:
        if not line.startswith("  ") or "(" not in line:
            break
        userid, rest = line.strip().split(" ", 1)
        out[userid] = [part.strip() for part in rest.split(",")[1:]]
    return out


def _show(server: LiveServer, name: str, userid: str) -> dict[str, list[str]]:
    server.send(tm.address(userid), f"abalone tournament show {name}")
    return _entrants(tm.text_of(server.mailbox.wait_for(
        tm.address(userid), rf"^Abalone tournament {name}$")))


def test_a_championship_into_its_second_edition_through_serve(live_server: LiveServer) -> None:
    server = live_server
    started = tm.open_tournament(server, "champ", "championship", FIRST, RATINGS, "--games",
                                 "1", "--division-size", "4", also_signed_up=NEWCOMERS)
    assert started.startswith("tournament champ started: 12 games")
    boards = tm.take_new_boards(server, FIRST, each=3)
    game = {frozenset(board.players): board for board in boards.values()}
    assert len(game) == 12
    assert set(game) == {frozenset((a, b)) for group in (FIRST[:4], FIRST[4:])
                         for a in group for b in group if a < b}

    # The second edition is open as soon as the first starts, everyone re-entered; a
    # newcomer joins it, another for that edition only, and c7 opts out of it.
    tm.join_all(server, "champ-2", ["ca"])
    server.send(tm.address("c9"), f"abalone tournament join champ-2 c9 {tm.password('c9')} once")
    assert "this edition only" in _flat(tm.text_of(server.mailbox.wait_for(
        tm.address("c9"), r"^Abalone tournament champ-2 join c9$")))
    assert "not playing any game of it yet" in _flat(tm.withdraw(server, "champ-2", "c7"))

    # Division 1.  c1 beats c4; then c4 withdraws: his games with c2 and c3 are resigned
    # for him (he never moved in them: no-shows, unrated) and he is out of champ-2 too.
    tm.decide_games(server, {game[frozenset(("c1", "c4"))].number: "c4"}, boards)
    assert "still running in it are resigned" in _flat(tm.withdraw(server, "champ", "c4"))
    for other in ("c2", "c3"):
        assert "c4 withdrew from tournament champ" in tm.wait_game_over(
            server, game[frozenset(("c4", other))])
    # A circle among the other three: c1 beats c3, c3 beats c2, c2 beats c1.
    tm.decide_games(server, {game[frozenset(("c1", "c3"))].number: "c3",
                             game[frozenset(("c2", "c3"))].number: "c2",
                             game[frozenset(("c1", "c2"))].number: "c1"}, boards)

    # Division 2.  c5 beats c7, c8 beats c6; c5-c8, c6-c7 and c7-c8 drawn by agreement;
    # c5, to move first against c6, never moves.
    tm.decide_games(server, {game[frozenset(("c5", "c7"))].number: "c7",
                             game[frozenset(("c6", "c8"))].number: "c6"}, boards)
    for pair in (("c5", "c8"), ("c6", "c7"), ("c7", "c8")):
        _draw(server, game[frozenset(pair)])
    idle = game[frozenset(("c5", "c6"))]
    assert idle.first == "c5"
    # Eight days on (the forfeit time is seven): c5 forfeits, the last game is over.
    tm.move_clock(server, "8d")
    assert "c5 did not move for 8 days and forfeited" in tm.wait_game_over(server, idle)

    # By hand (1 a win, ½ a draw; SB: the points of each opponent beaten plus half those
    # of each drawn; every game ended before a marble was pushed off: +/- 0).
    # Division 1: c1, c2, c3 have 2 each (a win in the circle and one against c4).
    #   SB c1 = c3's 2 + c4's 0 = 2; c2 = c1's 2 + 0 = 2; c3 = c2's 2 + 0 = 2.
    #   H2H among the three: 1 each (the circle).  Rating: c1 1900, c2 1875, c3 1850.
    # Division 2: c8 2 (c6 1, c5 ½, c7 ½), c6 1½ (c5 1 by forfeit, c7 ½), c5 1½ (c7 1,
    #   c8 ½), c7 1 (½, ½).
    #   SB c8 = c6's 1½ + ½ c5's 1½ + ½ c7's 1 = 2¾; c6 = c5's 1½ + ½ c7's 1 = 2;
    #   c5 = c7's 1 + ½ c8's 2 = 2; c7 = ½ c6's 1½ + ½ c8's 2 = 1¾.
    #   c6 and c5 tied on points and SB: H2H c6 1 (the forfeit), c5 0, so c6 first
    #   although c5's rating (1800) is higher than c6's (1775).
    expected = [
        [["1", "c1", "2", "2", "1", "+0", "1900", "3", "2", "0", "1"],
         ["2", "c2", "2", "2", "1", "+0", "1875", "3", "2", "0", "1"],
         ["3", "c3", "2", "2", "1", "+0", "1850", "3", "2", "0", "1"],
         ["4", "c4", "0", "0", "0", "+0", "1825", "3", "0", "0", "3", "(withdrawn)"]],
        [["1", "c8", "2", "2.75", "0", "+0", "1725", "3", "1", "2", "0"],
         ["2", "c6", "1½", "2", "1", "+0", "1775", "3", "1", "1", "1"],
         ["3", "c5", "1½", "2", "0", "+0", "1800", "3", "1", "1", "1"],
         ["4", "c7", "1", "1.75", "0", "+0", "1750", "3", "0", "2", "1"]],
    ]
    for userid in FIRST:
        if userid == "c4":
            continue  # who left gets no more standings
        text = tm.text_of(tm.wait_standings(server, "champ", userid, "final"))
        assert tm.standings_tables(text) == expected, (userid, tm.standings_tables(text))
        assert "Division 2:" in text and "Sonneborn-Berger" in text
    assert tm.admin(server, "tournament", "list").count("finished") >= 1

    # The second edition starts by itself a week after the first ended (the clock
    # moved seven more days).  Division 1: c1 and c2 stayed, c8 and c6 came up;
    # division 2: c3 came down (c4 left), c5 stayed (c7 opted out), the newcomers
    # c9 and ca below them.
    tm.move_clock(server, "15d1h")
    entered_two = ["c1", "c2", "c3", "c5", "c6", "c8", "c9", "ca"]
    for userid in entered_two:
        server.mailbox.wait_for(tm.address(userid), r"^Abalone tournament champ-2 has started$")
    assert not [m for userid in ("c4", "c7") for m in tm.mails_about(server, userid,
                                                                     "champ-2 has started")]
    second = tm.take_new_boards(server, entered_two, each=3)
    assert {frozenset(board.players) for board in second.values()} == {
        frozenset((a, b)) for group in (["c1", "c2", "c6", "c8"], ["c3", "c5", "c9", "ca"])
        for a in group for b in group if a < b}
    shown = _show(server, "champ-2", "c1")
    assert shown == {
        "c1": ["division 1"], "c2": ["division 1"], "c6": ["division 1"],
        "c8": ["division 1"], "c3": ["division 2"], "c5": ["division 2"],
        "c9": ["division 2", "this edition only"], "ca": ["division 2"],
        "c4": ["withdrawn"], "c7": ["withdrawn"]}
    # Who left before the start never played in it: the standings leave them out.
    server.send(tm.address("c5"), "abalone tournament standings champ-2")
    tables = tm.standings_tables(tm.text_of(server.mailbox.wait_for(
        tm.address("c5"), r"^Abalone tournament champ-2 standings$")))
    assert [sorted(row[1] for row in table) for table in tables] == [
        ["c1", "c2", "c6", "c8"], ["c3", "c5", "c9", "ca"]]
    # The third edition is open, everyone of the second re-entered but c9 (once).
    assert sorted(_show(server, "champ-3", "c2")) == ["c1", "c2", "c3", "c5", "c6", "c8", "ca"]
