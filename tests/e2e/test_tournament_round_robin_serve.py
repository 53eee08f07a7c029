"""A 6-player double round robin played through a running ``abalone-pbm serve`` (a real
SMTP client and relay sink): sign-up and join by mail, ``abalone-pbm tournament create``
and ``start``, every game by reply to its board mail (a move, then a resignation; one
drawn by proposal and acceptance), a withdrawal by mail after the start, a player who
never moves forfeited by serve's own clock moved a week on, the standings mailed after
every round and at the end, checked against tie-breaks worked out by hand."""

from __future__ import annotations

import pytest

from .conftest import LiveServer
from . import tournament_mail as tm

# The mail path is the same on both databases; one is enough for a run this long.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

PLAYERS = ["ada", "ben", "cat", "dev", "eve", "fay"]
RATINGS = {"ada": 1700.0, "ben": 1650.0, "cat": 1600.0, "dev": 1600.0, "eve": 1560.0,
           "fay": 1500.0}

# The schedule (seeds by rating, then userid: ada ben cat dev eve fay; the circle
# method, the second cycle with the colours swapped), first to move first:
SCHEDULE: dict[int, set[tuple[str, str]]] = {
    1: {("ada", "fay"), ("ben", "eve"), ("cat", "dev")},
    2: {("eve", "ada"), ("fay", "dev"), ("ben", "cat")},
    3: {("ada", "dev"), ("eve", "cat"), ("fay", "ben")},
    4: {("cat", "ada"), ("dev", "ben"), ("eve", "fay")},
    5: {("ada", "ben"), ("cat", "fay"), ("dev", "eve")},
    6: {("fay", "ada"), ("eve", "ben"), ("dev", "cat")},
    7: {("ada", "eve"), ("dev", "fay"), ("cat", "ben")},
    8: {("dev", "ada"), ("cat", "eve"), ("ben", "fay")},
    9: {("ada", "cat"), ("ben", "dev"), ("fay", "eve")},
    10: {("ben", "ada"), ("fay", "cat"), ("eve", "dev")},
}
# Who loses each game among ada-eve that is played out (None: drawn).  fay's games:
# ada beats her in round 1, she moves in round 2 against dev and then withdraws
# (that game a played loss, her other eight no-shows); cat never moves against ben
# in round 7 and is forfeited by the clock (a no-show).
LOSERS: dict[tuple[str, str], str | None] = {
    ("ben", "eve"): "eve", ("cat", "dev"): "cat",
    ("eve", "ada"): "ada", ("ben", "cat"): "ben",
    ("ada", "dev"): "dev", ("eve", "cat"): "cat",
    ("cat", "ada"): "cat", ("dev", "ben"): "ben",
    ("ada", "ben"): "ada", ("dev", "eve"): None,
    ("eve", "ben"): "eve", ("dev", "cat"): "dev",
    ("ada", "eve"): "eve",
    ("dev", "ada"): "ada", ("cat", "eve"): "eve",
    ("ada", "cat"): "ada", ("ben", "dev"): "ben",
    ("ben", "ada"): "ben", ("eve", "dev"): "eve",
    ("ada", "fay"): "fay",
}
TIMED_OUT = ("cat", "ben")

TIE_LINE = "Ties are broken by Sonneborn-Berger"


def _play_round(server: LiveServer, boards: dict[int, tm.TournamentBoard], number: int,
                skip: set[tuple[str, str]]) -> None:
    """Decide every game of round ``number`` by reply, but those in ``skip``."""
    games = {b.number: b for b in boards.values()
             if b.round == number and b.pairing() not in skip}
    losses: dict[int, str] = {}
    for board in games.values():
        loser = LOSERS[board.pairing()]
        if loser is None:
            assert "draw" in tm.draw_game(server, board).lower()
        else:
            losses[board.number] = loser
    tm.decide_games(server, losses, boards)


def test_a_double_round_robin_of_six_through_serve(live_server: LiveServer) -> None:
    server = live_server
    assert tm.open_tournament(server, "rr", "roundrobin", PLAYERS, RATINGS).startswith(
        "tournament rr started: 30 games")

    # Ten new boards each: every pairing twice, once from each side.
    boards = tm.take_new_boards(server, PLAYERS, 10)
    assert {b.tournament for b in boards.values()} == {"rr"}
    by_round: dict[int, set[tuple[str, str]]] = {}
    for board in boards.values():
        by_round.setdefault(board.round, set()).add(board.pairing())
    assert by_round == SCHEDULE
    for userid in PLAYERS:
        tm.wait_mail(server, userid, r"^Abalone tournament rr has started$")
    board_of = {b.pairing(): b for b in boards.values()}

    # Round 1, all three games played out.
    _play_round(server, boards, 1, set())
    table, text = tm.standings_of(server, "rr", "fay", "after round 1", PLAYERS)
    # ada, ben and dev 1 point each, SB 0 (their beaten opponents have 0), never met
    # (H2H 0), no marbles: the rating at the start orders them (1700, 1650, 1600);
    # cat, eve, fay 0 points, also by rating (1600, 1560, 1500).
    assert [row[:7] for row in table] == [
        ["1", "ada", "1", "0", "0", "+0", "1700"],
        ["2", "ben", "1", "0", "0", "+0", "1650"],
        ["3", "dev", "1", "0", "0", "+0", "1600"],
        ["4", "cat", "0", "0", "0", "+0", "1600"],
        ["5", "eve", "0", "0", "0", "+0", "1560"],
        ["6", "fay", "0", "0", "0", "+0", "1500"],
    ]
    assert TIE_LINE in tm.flat(text)

    # Round 2: two games played out; fay moves against dev, then withdraws by mail:
    # that game is resigned for her (a played loss, she moved) and her eight games of
    # rounds 3-10 too, each a no-show (the opponent's point, unrated).
    _play_round(server, boards, 2, {("fay", "dev")})
    fay_dev = board_of[("fay", "dev")]
    tm.reply(server, fay_dev, "fay", tm.opening_move())
    for userid in ("fay", "dev"):
        tm.wait_mail(server, userid, rf"^Abalone Board {fay_dev.number} dev$")
    said = tm.withdraw(server, "rr", "fay")
    assert "Your games still running in it are resigned" in tm.flat(said), said
    for board in boards.values():
        if "fay" in board.players and board.pairing() != ("ada", "fay"):
            over = tm.wait_game_over(server, board)
            assert "fay withdrew from tournament rr" in tm.flat(over), over[:500]
    table, text = tm.standings_of(server, "rr", "ada", "after round 2", PLAYERS)
    # Every result so far: rounds 1 and 2 and fay's eight no-shows (each of the
    # others gets two points from fay in all).  Points: ada 1+1 (fay r1, r6) = 2;
    # ben e 1 + fay r3, r8 = 3; cat b 1 + fay r5, r10 = 3; dev c 1 + fay r2, r7 = 3;
    # eve a 1 + fay r4, r9 = 3; fay 0.
    # SB: ben = eve 3 = 3; cat = ben 3 = 3; dev = cat 3 (+ fay 0) = 3; eve = ada 2;
    # ada = fay 0 + 0 = 0.  ben, cat, dev tie on 3 and SB 3: H2H among them cat 1 (beat
    # ben), dev 1 (beat cat), ben 0 (ben and dev have not met); cat and dev again
    # level (no marbles, both 1600 at the start): the userid.
    assert [row[:7] for row in table] == [
        ["1", "cat", "3", "3", "1", "+0", "1600"],
        ["2", "dev", "3", "3", "1", "+0", "1600"],
        ["3", "ben", "3", "3", "0", "+0", "1650"],
        ["4", "eve", "3", "2", "0", "+0", "1560"],
        ["5", "ada", "2", "0", "0", "+0", "1700"],
        ["6", "fay", "0", "0", "0", "+0", "1500"],
    ]
    assert table[5][-1] == "(withdrawn)"
    # The standings go to the entrants still in: fay left.
    assert not tm.mails_about(server, "fay", "standings after round 2")

    # Rounds 3 to 10 by reply, round by round, all but cat's game against ben (and
    # fay's, over).
    gone = {b.pairing() for b in boards.values() if "fay" in b.players}
    for number in range(3, 11):
        _play_round(server, boards, number, gone | {TIMED_OUT})
    for number in range(3, 7):
        tm.standings_of(server, "rr", "eve", f"after round {number}", PLAYERS)

    # A week on (serve restarted with its clock 8 days ahead): cat, to move since the
    # start, is forfeited; the last game ends and the tournament with it.
    tm.move_clock(server, "8d")
    forfeit = tm.wait_game_over(server, board_of[TIMED_OUT])
    assert "cat did not move for 8 days and forfeited" in tm.flat(forfeit), forfeit[:600]
    table, text = tm.final_standings(server, "rr", PLAYERS[:5], PLAYERS)["dev"]
    # By hand (a ada, b ben, c cat, d dev, e eve; everyone 2 points from fay, fay 0):
    #   ada beat d c e b, lost to e b d c: 4 + 2 = 6
    #   ben beat e a e c(no-show), lost to c d d a: 4 + 2 = 6
    #   cat beat b d e a, lost to d e a b(no-show): 4 + 2 = 6
    #   dev beat c b a b e, drew e, lost to a c: 5½ + 2 = 7½
    #   eve beat a c, drew d, lost to b b a c d: 2½ + 2 = 4½
    # SB (each game: the score times the opponent's final points; fay's 0 adds 0):
    #   dev = c 6 + b 6 + a 6 + b 6 + e 4½ + ½ e 4½ = 30¾
    #   ada = d 7½ + c 6 + e 4½ + b 6 = 24;  cat = b 6 + d 7½ + e 4½ + a 6 = 24
    #   ben = e 4½ + a 6 + e 4½ + c 6 = 21;  eve = a 6 + c 6 + ½ d 7½ = 15¾
    # ada and cat tie on 6 and SB 24; between them one win each (H2H 1 and 1), no
    # marbles pushed off: ada's rating at the start (1700 > 1600) puts her first.
    # ben, also 6, is below them on SB.
    assert table == [
        ["1", "dev", "7½", "30.75", "0", "+0", "1600", "10", "7", "1", "2"],
        ["2", "ada", "6", "24", "1", "+0", "1700", "10", "6", "0", "4"],
        ["3", "cat", "6", "24", "1", "+0", "1600", "10", "6", "0", "4"],
        ["4", "ben", "6", "21", "0", "+0", "1650", "10", "6", "0", "4"],
        ["5", "eve", "4½", "15.75", "0", "+0", "1560", "10", "4", "1", "5"],
        ["6", "fay", "0", "0", "0", "+0", "1500", "10", "0", "0", "10", "(withdrawn)"],
    ]
    assert TIE_LINE in tm.flat(text) and "The tournament is finished." in text

    # The admin's view: fay's no-shows and cat's forfeit marked, the rest played.
    shown = tm.admin(server, "tournament", "show", "rr")
    assert shown.count("(no-show)") == 9, shown
    assert f"board {board_of[TIMED_OUT].number}: cat - ben  0-1 (no-show)" in shown
    assert f"board {fay_dev.number}: fay - dev  0-1\n" in shown
