"""A knockout of eight played through a running `abalone-pbm serve`, a real SMTP client
and a real relay sink: sign-up and join by mail, the admin's commands as subprocesses,
mini-matches of two games with the colours swapped, a decider when level (started as
soon as its match's games end), a second decider after one the director drew, the
bracket moving on match by match while a slow game holds up only its own branch, a
withdrawal in a level match, a no-show forfeited by the clock moved eight days forward,
the standings mails after each round and the final table checked against a hand count."""

from __future__ import annotations

import pytest

from abalone_pbm.rules import Board

from . import tournament_mail as tm
from .conftest import LiveServer

# One backend: a tournament through `serve` is long, and the backends differ in no step of it.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])

PLAYERS = ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"]
#: Seeds by rating: k1 the first seed, k8 the last.
RATINGS = {userid: 1900.0 - 25 * index for index, userid in enumerate(PLAYERS)}


def _by_pairing(boards: dict[int, tm.TournamentBoard]) -> dict[tuple[str, str], tm.TournamentBoard]:
    """The boards keyed by (first to move, second); a match's games differ in who is first."""
    keyed = {board.pairing(): board for board in boards.values()}
    assert len(keyed) == len(boards), boards
    return keyed


def _numbered(keyed: dict[tuple[str, str], tm.TournamentBoard]) -> dict[int, tm.TournamentBoard]:
    return {board.number: board for board in keyed.values()}


def _line(plies: int) -> list[str]:
    """The first ``plies`` moves of a game in which each side plays the first legal move
    the rules list (the first is :func:`tournament_mail.opening_move`)."""
    board = Board.from_layout("standard")
    moves = []
    for _ in range(plies):
        move = next(board.generate_legal_moves())
        moves.append(str(move))
        board.push(move)
    return moves


def _move_each_then_resign(server: LiveServer, board: tm.TournamentBoard, loser: str) -> None:
    """A move each (the board's first player's, then the other's), then ``loser``
    resigns: a longer game than :func:`tournament_mail.decide_games` plays."""
    first, second = board.pairing()
    line = _line(3)
    for ply, (mover, waiting) in enumerate([(first, second), (second, first)]):
        tm.reply(server, board, mover, line[ply])
        server.mailbox.wait_for(tm.address(waiting), rf"^Abalone Board {board.number} {waiting}$")
    if loser == second:  # resigning is done on one's own turn
        tm.reply(server, board, first, line[2])
        server.mailbox.wait_for(tm.address(second), rf"^Abalone Board {board.number} {second}$")
    tm.reply(server, board, loser, "resign")
    assert f"{loser} resigned" in tm.wait_game_over(server, board)


def _won_by(server: LiveServer, board: tm.TournamentBoard, winner: str) -> None:
    loser = board.second if winner == board.first else board.first
    tm.decide_games(server, {board.number: loser}, {board.number: board})


def test_a_knockout_of_eight_through_serve(live_server: LiveServer) -> None:
    server = live_server
    assert tm.open_tournament(server, "ko", "knockout", PLAYERS, RATINGS).startswith(
        "tournament ko started: 8 games")

    # The bracket 1-8, 4-5, 2-7, 3-6; in each match the higher seed moves first in
    # game 1, the lower in game 2.
    first = _by_pairing(tm.take_new_boards(server, PLAYERS, each=2))
    assert sorted(first) == sorted([
        ("k1", "k8"), ("k8", "k1"), ("k4", "k5"), ("k5", "k4"),
        ("k2", "k7"), ("k7", "k2"), ("k3", "k6"), ("k6", "k3")])
    assert {board.round for board in first.values()} == {1}
    tm.decide_games(server, {
        first["k1", "k8"].number: "k8", first["k8", "k1"].number: "k1",   # 1-1: level
        first["k4", "k5"].number: "k4", first["k5", "k4"].number: "k4",   # k5 through 2-0
        first["k2", "k7"].number: "k7",                                   # k7 never moves
        first["k3", "k6"].number: "k6", first["k6", "k3"].number: "k6",   # k3 through 2-0
    }, _numbered(first))

    # k1-k8 level: its decider starts at once (k7's open game is in another branch),
    # k8, the lower seed, moving first.  k1 wins it.
    decider = tm.take_new_boards(server, ["k1", "k8"], each=1)
    (board,) = decider.values()
    assert (board.pairing(), board.round) == (("k8", "k1"), 1)
    _move_each_then_resign(server, board, "k8")

    # Matches 1 and 2 decided: k1 meets k5 while k2-k7 is still being played.
    second = _by_pairing(tm.take_new_boards(server, ["k1", "k5"], each=2))
    assert sorted(second) == [("k1", "k5"), ("k5", "k1")]
    assert {board.round for board in second.values()} == {2}
    _won_by(server, second["k1", "k5"], "k1")
    # Game 2: a move each, then k1 withdraws; the game is resigned for him, the match
    # is level, but one who left goes no further: k5 through without a decider.
    level = second["k5", "k1"]
    tm.reply(server, level, "k5", tm.opening_move())
    server.mailbox.wait_for(tm.address("k1"), rf"^Abalone Board {level.number} k1$")
    tm.reply(server, level, "k1", _line(2)[1])
    server.mailbox.wait_for(tm.address("k5"), rf"^Abalone Board {level.number} k5$")
    answer = tm.withdraw(server, "ko", "k1")
    assert "you have left tournament ko" in answer and "resigned" in answer, answer
    assert "k1 withdrew from tournament ko" in tm.wait_game_over(server, level)

    # k7 never moved: eight days on (the forfeit time is seven) the clock forfeits him,
    # a no-show; k2 through 2-0, round 1 over (its standings mailed) and k2 meets k3.
    tm.move_clock(server, "8d")
    forfeited = tm.wait_game_over(server, first["k7", "k2"])
    assert "k7 did not move for 8 days and forfeited" in forfeited, forfeited
    # Round reached, points, H2H: k1 and k5 have 3 each in round 2 and 1 each in their
    # games against each other (1-1), so the rating puts k1 (1900) before k5 (1800);
    # k2 and k3 have 2 each and have not met yet: k2 (1875) before k3 (1850).
    after_one, _ = tm.standings_of(server, "ko", "k2", "after round 1", PLAYERS)
    assert [row[1:5] for row in after_one[:4]] == [
        ["k1", "3", "2", "1"], ["k5", "3", "2", "1"], ["k2", "2", "2", "0"],
        ["k3", "2", "2", "0"]]
    third = _by_pairing(tm.take_new_boards(server, ["k2", "k3"], each=2))
    assert sorted(third) == [("k2", "k3"), ("k3", "k2")]
    _won_by(server, third["k2", "k3"], "k2")
    _won_by(server, third["k3", "k2"], "k3")
    # Level: a decider, k3 (the lower seed) first; the director draws it after k3's
    # move, so a second decider follows the other way round, which k3 wins.
    (drawn,) = tm.take_new_boards(server, ["k2", "k3"], each=1).values()
    assert drawn.pairing() == ("k3", "k2")
    tm.reply(server, drawn, "k3", tm.opening_move())
    server.mailbox.wait_for(tm.address("k2"), rf"^Abalone Board {drawn.number} k2$")
    tm.admin(server, "tournament", "adjudicate", "ko", str(drawn.number), "draw")
    assert "tournament director" in tm.wait_game_over(server, drawn)
    (again,) = tm.take_new_boards(server, ["k2", "k3"], each=1).values()
    assert again.pairing() == ("k2", "k3")
    _won_by(server, again, "k3")

    # The final, k3 the higher seed: k3 wins both.
    final = _by_pairing(tm.take_new_boards(server, ["k3", "k5"], each=2))
    assert sorted(final) == [("k3", "k5"), ("k5", "k3")]
    assert {board.round for board in final.values()} == {3}
    tm.standings_of(server, "ko", "k5", "after round 2", PLAYERS)
    tm.decide_games(server, {final["k3", "k5"].number: "k5", final["k5", "k3"].number: "k5"},
                    _numbered(final))

    # By hand.  Places go by the round reached (the champion one past the final), then
    # points; every game ended by resignation, forfeit or the director before a marble
    # was pushed off (+/- 0), and no two players tied on round and points ever met
    # (H2H 0), so the rating at the start decides the rest.
    #   k3: k6 1, 1; k2 0, 1, ½ (drawn decider), 1; k5 1, 1        = 6½ in 8 (6 1 1), round 4
    #   k5: k4 1, 1; k1 0, 1 (k1's resignation on withdrawing); k3 0, 0 = 3 in 6, round 3
    #   k2: k7 1, 1 (no-show); k3 1, 0, ½, 0                       = 3½ in 6 (3 1 2), round 2
    #   k1: k8 1, 0, 1 (decider); k5 1, 0                          = 3 in 5, round 2, withdrawn
    #   k8: k1 0, 1, 0                                             = 1 in 3, round 1
    #   k4, k6, k7: 0 in 2, round 1: by rating 1825, 1775, 1750.
    expected = [
        ["1", "k3", "6½", "4", "0", "+0", "1850", "8", "6", "1", "1"],
        ["2", "k5", "3", "3", "0", "+0", "1800", "6", "3", "0", "3"],
        ["3", "k2", "3½", "2", "0", "+0", "1875", "6", "3", "1", "2"],
        ["4", "k1", "3", "2", "0", "+0", "1900", "5", "3", "0", "2", "(withdrawn)"],
        ["5", "k8", "1", "1", "0", "+0", "1725", "3", "1", "0", "2"],
        ["6", "k4", "0", "1", "0", "+0", "1825", "2", "0", "0", "2"],
        ["7", "k6", "0", "1", "0", "+0", "1775", "2", "0", "0", "2"],
        ["8", "k7", "0", "1", "0", "+0", "1750", "2", "0", "0", "2"],
    ]
    # Who left (k1) gets no more standings.
    finals = tm.final_standings(server, "ko", [u for u in PLAYERS if u != "k1"], PLAYERS)
    for userid, (table, text) in finals.items():
        assert table == expected, (userid, table)
        assert "Places go by the round reached" in text
    assert not tm.mails_about(server, "k1", "standings final")
    listing = tm.admin(server, "tournament", "list")
    assert any(line.split()[:3] == ["ko", "knockout", "finished"]
               for line in listing.splitlines()), listing
