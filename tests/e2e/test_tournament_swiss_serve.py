"""A 9-player Swiss of 4 rounds played through a running ``abalone-pbm serve`` (a real
SMTP client and relay sink): sign-up and join by mail, ``abalone-pbm tournament create``
and ``start``, a bye each round while nine play, every game by reply to its board mail
(a move, then a resignation; one drawn by proposal and acceptance), a player who never
moves forfeited by serve's own clock moved a week on (which ends the round and pairs
the next), a withdrawal by mail in the middle of a game, every round's pairing (no
repeat, colours balanced) and the standings after each round and at the end checked
against scores and Buchholz worked out by hand."""

from __future__ import annotations

from collections import defaultdict

import pytest

from .conftest import LiveServer
from . import tournament_mail as tm

# The mail path is the same on both databases; one is enough for a run this long.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

# Ranked by rating at the start (1900 down by 25): ann first, ivy last.
PLAYERS = ["ann", "bea", "col", "dan", "eli", "fin", "gus", "hal", "ivy"]
RATINGS = {userid: 1900.0 - 25 * index for index, userid in enumerate(PLAYERS)}

# Each round as the pairer must pair it (first to move, second), and its bye; worked
# out by hand from the rules in tournaments/swiss.py, the scores before each round in
# the comments.
ROUNDS: dict[int, tuple[set[tuple[str, str]], str | None]] = {
    # By rating the top half meets the bottom half, colours alternating by board; the
    # last ranked, ivy, has the bye.
    1: ({("ann", "eli"), ("fin", "bea"), ("col", "gus"), ("hal", "dan")}, "ivy"),
    # 1: ann bea col dan ivy; 0: eli fin gus hal.  Bye: the lowest without one, hal.
    # ann meets bea, not col: both ann and col moved first in round 1 (colours come
    # before the Dutch partner); ivy floats down to eli.
    2: ({("bea", "ann"), ("dan", "col"), ("eli", "ivy"), ("gus", "fin")}, "hal"),
    # eli never moves: ivy wins by forfeit.  2: ann col ivy; 1: bea dan fin hal;
    # 0: eli gus.  ivy floats down to bea, hal to eli, the bye to gus.
    3: ({("ann", "col"), ("ivy", "bea"), ("fin", "dan"), ("eli", "hal")}, "gus"),
    # ann-col drawn, ivy withdraws during her game with bea.  2½: ann col (met); 2: bea
    # dan; 1: eli fin gus hal.  Eight left: no bye.
    4: ({("dan", "ann"), ("bea", "col"), ("gus", "eli"), ("hal", "fin")}, None),
}
# Every game played out is lost by the lower ranked player, but these.
DRAWN = {("ann", "col")}
TIMED_OUT = ("eli", "ivy")
WITHDRAWS = ("ivy", "bea")

TIE_LINE = "Ties are broken by Buchholz"


def _loser(pairing: tuple[str, str]) -> str:
    return max(pairing, key=PLAYERS.index)


def _round_boards(server: LiveServer, number: int, playing: list[str]) -> dict[int, tm.TournamentBoard]:
    """The new boards of round ``number`` (one to each of ``playing``), checked against
    ROUNDS."""
    boards = tm.take_new_boards(server, playing, 1)
    pairings, bye = ROUNDS[number]
    assert {b.round for b in boards.values()} == {number}
    assert {b.pairing() for b in boards.values()} == pairings
    assert sorted(set(PLAYERS) - {p for b in boards.values() for p in b.players}
                  - ({"ivy"} if number == 4 else set())) == ([bye] if bye else [])
    return boards


def test_a_swiss_of_nine_through_serve(live_server: LiveServer) -> None:
    server = live_server
    assert tm.open_tournament(server, "sw", "swiss", PLAYERS, RATINGS, "--rounds", "4") \
        .startswith("tournament sw started: 4 games")
    for userid in PLAYERS:
        tm.wait_mail(server, userid, r"^Abalone tournament sw has started$")
    every: dict[int, tm.TournamentBoard] = {}

    # Round 1: every game played out.
    boards = _round_boards(server, 1, [u for u in PLAYERS if u != "ivy"])
    every.update(boards)
    tm.decide_games(server, {n: _loser(b.pairing()) for n, b in boards.items()}, boards)
    table, text = tm.standings_of(server, "sw", "ivy", "after round 1", PLAYERS)
    # ann bea col dan won, ivy had the bye (1 point, no game).  Buchholz: a bye counts
    # as a game against oneself (ivy's own 1); the winners' opponents have 0, the
    # losers' 1.  ann-dan tie on 1 and 0, never met: the rating; so do eli-hal.
    assert [row[:7] for row in table] == [
        ["1", "ivy", "1", "1", "0", "+0", "1700"],
        ["2", "ann", "1", "0", "0", "+0", "1900"],
        ["3", "bea", "1", "0", "0", "+0", "1875"],
        ["4", "col", "1", "0", "0", "+0", "1850"],
        ["5", "dan", "1", "0", "0", "+0", "1825"],
        ["6", "eli", "0", "1", "0", "+0", "1800"],
        ["7", "fin", "0", "1", "0", "+0", "1775"],
        ["8", "gus", "0", "1", "0", "+0", "1750"],
        ["9", "hal", "0", "1", "0", "+0", "1725"],
    ]
    assert TIE_LINE in tm.flat(text)

    # Round 2: paired as soon as round 1's last game ended; eli never moves.
    boards = _round_boards(server, 2, [u for u in PLAYERS if u != "hal"])
    every.update(boards)
    tm.decide_games(server, {n: _loser(b.pairing()) for n, b in boards.items()
                             if b.pairing() != TIMED_OUT}, boards)
    # A week on (serve restarted with its clock 8 days ahead): eli is forfeited, the
    # round is over, its standings go out and round 3 is paired.
    tm.move_clock(server, "8d")
    forfeit = next(b for b in boards.values() if b.pairing() == TIMED_OUT)
    assert "eli did not move for 8 days and forfeited" in tm.flat(
        tm.wait_game_over(server, forfeit))
    table, _ = tm.standings_of(server, "sw", "eli", "after round 2", PLAYERS)
    # Points: ann 2, col 2, ivy 2 (bye, no-show); bea dan fin hal 1; eli gus 0.
    # Buchholz: ivy = own 2 (bye) + own 2 (no-show: eli never met) = 4; ann = eli 0 +
    # bea 1 = 1; col = gus 0 + dan 1 = 1; bea = fin 1 + ann 2 = 3; dan = hal 1 + col 2
    # = 3; hal = dan 1 + own 1 (bye) = 2; fin = bea 1 + gus 0 = 1; gus = col 2 + fin 1
    # = 3; eli = ann 2 + own 0 (no-show) = 2.  ann-col and bea-dan tie, never met:
    # the rating.
    assert [row[:7] for row in table] == [
        ["1", "ivy", "2", "4", "0", "+0", "1700"],
        ["2", "ann", "2", "1", "0", "+0", "1900"],
        ["3", "col", "2", "1", "0", "+0", "1850"],
        ["4", "bea", "1", "3", "0", "+0", "1875"],
        ["5", "dan", "1", "3", "0", "+0", "1825"],
        ["6", "hal", "1", "2", "0", "+0", "1725"],
        ["7", "fin", "1", "1", "0", "+0", "1775"],
        ["8", "gus", "0", "3", "0", "+0", "1750"],
        ["9", "eli", "0", "2", "0", "+0", "1800"],
    ]

    # Round 3: ann and col agree a draw; ivy and bea each move, then ivy withdraws (a
    # played loss, ivy moved), which ends the round: round 4 is paired without her.
    boards = _round_boards(server, 3, [u for u in PLAYERS if u != "gus"])
    every.update(boards)
    by_pairing = {b.pairing(): b for b in boards.values()}
    for pairing in DRAWN:
        assert "draw" in tm.draw_game(server, by_pairing[pairing]).lower()
    tm.decide_games(server, {b.number: _loser(b.pairing()) for b in boards.values()
                             if b.pairing() not in DRAWN | {WITHDRAWS}}, boards)
    left = by_pairing[WITHDRAWS]
    first_move, second_move = tm.opening_moves(2)
    tm.reply(server, left, "ivy", first_move)
    for userid in left.players:
        tm.wait_mail(server, userid, rf"^Abalone Board {left.number} bea$")
    tm.reply(server, left, "bea", second_move)
    for userid in left.players:
        tm.wait_mail(server, userid, rf"^Abalone Board {left.number} ivy$")
    said = tm.withdraw(server, "sw", "ivy")
    assert "Your games still running in it are resigned" in tm.flat(said), said
    assert "ivy withdrew from tournament sw" in tm.flat(tm.wait_game_over(server, left))
    tm.standings_of(server, "sw", "ann", "after round 3", PLAYERS)

    # Round 4, eight players, no bye.
    boards = _round_boards(server, 4, [u for u in PLAYERS if u != "ivy"])
    every.update(boards)
    tm.decide_games(server, {n: _loser(b.pairing()) for n, b in boards.items()}, boards)
    table, text = tm.final_standings(server, "sw", [u for u in PLAYERS if u != "ivy"],
                                     PLAYERS)["gus"]
    # Points: ann W W D W = 3½; bea W L W W = 3; col W W D L = 2½; dan W L W L = 2;
    # eli L L(no-show) W W = 2; fin L W L W = 2; ivy bye W(no-show) L, left = 2;
    # gus L L bye L = 1; hal L bye L L = 1.
    # Buchholz (opponents' final points; a game not played, the byes and the eli-ivy
    # no-show, counts the player's own points, "own"):
    #   ann eli 2 + bea 3 + col 2½ + dan 2 = 9½    bea fin 2 + ann 3½ + ivy 2 + col 2½ = 10
    #   col gus 1 + dan 2 + ann 3½ + bea 3 = 9½    dan hal 1 + col 2½ + fin 2 + ann 3½ = 9
    #   eli ann 3½ + own 2 + hal 1 + gus 1 = 7½   fin bea 3 + gus 1 + dan 2 + hal 1 = 7
    #   ivy own 2 + own 2 + bea 3 = 7              gus col 2½ + fin 2 + own 1 + eli 2 = 7½
    #   hal dan 2 + own 1 + eli 2 + fin 2 = 7
    # ann and col share Buchholz 9½ but not points.  fin and ivy share 2 points and
    # Buchholz 7, never met (H2H 0 each), no marbles pushed off: fin's higher rating
    # at the start puts fin first.  No other tie reaches H2H.
    assert table == [
        ["1", "ann", "3½", "9½", "0", "+0", "1900", "4", "3", "1", "0"],
        ["2", "bea", "3", "10", "0", "+0", "1875", "4", "3", "0", "1"],
        ["3", "col", "2½", "9½", "0", "+0", "1850", "4", "2", "1", "1"],
        ["4", "dan", "2", "9", "0", "+0", "1825", "4", "2", "0", "2"],
        ["5", "eli", "2", "7½", "0", "+0", "1800", "4", "2", "0", "2"],
        ["6", "fin", "2", "7", "0", "+0", "1775", "4", "2", "0", "2"],
        ["7", "ivy", "2", "7", "0", "+0", "1700", "2", "1", "0", "1", "(withdrawn)"],
        ["8", "gus", "1", "7½", "0", "+0", "1750", "3", "0", "0", "3"],
        ["9", "hal", "1", "7", "0", "+0", "1725", "3", "0", "0", "3"],
    ]
    assert TIE_LINE in tm.flat(text) and "The tournament is finished." in text
    # ivy left: no standings mail to her after round 3.
    assert not tm.mails_about(server, "ivy", "standings after round 3", "standings final")

    # No pairing repeated; colours balanced: nobody moved first (or second) more than
    # twice as often as the other, and only in the last round (where FIDE too lets
    # the leaders' colours give way) did anyone get one colour a third time running.
    met = [frozenset(b.players) for b in every.values()]
    assert len(met) == len(set(met)) == 16
    colours: dict[str, list[str]] = defaultdict(list)
    for board in sorted(every.values(), key=lambda b: b.round):
        colours[board.first].append("F")
        colours[board.second].append("S")
    for userid, sides in colours.items():
        assert abs(sides.count("F") - sides.count("S")) <= 2, (userid, sides)
        assert "FFF" not in "".join(sides[:-1]) and "SSS" not in "".join(sides[:-1]), \
            (userid, sides)
    assert colours["col"] == ["F", "S", "S", "S"]  # the one give-way, in round 4
