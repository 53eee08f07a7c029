"""The pure tournament core, against examples worked out by hand."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from abalone_pbm.tournaments import Result, standings
from abalone_pbm.tournaments.championship import divisions, moves_of, next_edition
from abalone_pbm.tournaments.knockout import (
    Match, bracket_order, first_round, match_games, match_state, meeting,
)
from abalone_pbm.tournaments.round_robin import circle_rounds, round_robin
from abalone_pbm.tournaments.standings import half, table_lines
from abalone_pbm.tournaments.swiss import PairingImpossible, SwissPlayer, pair_round

SIX = ["a", "b", "c", "d", "e", "f"]


# ------------------------------------------------------------------ round robin
def test_double_round_robin_of_six_meets_every_pairing_once_from_each_side() -> None:
    games = round_robin(SIX, cycles=2)
    assert len(games) == 30
    assert sorted({g.round for g in games}) == list(range(1, 11))
    sides = Counter((g.first, g.second) for g in games)
    for a, b in combinations(SIX, 2):
        assert sides[(a, b)] == 1 and sides[(b, a)] == 1
    for number in range(1, 11):
        playing = [p for g in games if g.round == number for p in (g.first, g.second)
                   if p is not None]
        assert sorted(playing) == SIX  # everyone once a round


@pytest.mark.parametrize("count", [3, 4, 5, 6, 7, 8, 10])
def test_one_cycle_balances_colours_within_one(count: int) -> None:
    players = [f"p{i}" for i in range(count)]
    rounds = circle_rounds(players)
    firsts = Counter(first for pairs in rounds for first, _ in pairs)
    seconds = Counter(second for pairs in rounds for _, second in pairs)
    for p in players:
        assert abs(firsts[p] - seconds[p]) <= 1
        assert firsts[p] + seconds[p] == count - 1
    # An odd count: one rests each round, and nobody rests twice.
    if count % 2:
        resting = [next(p for p in players if all(p not in pair for pair in pairs))
                   for pairs in rounds]
        assert sorted(resting) == sorted(players)


def test_first_round_of_circle_method_by_hand() -> None:
    # Line a b c d: a-d and b-c; parity rule: a(0)+d(3) odd -> a first; b(1)+c(2) odd -> b.
    assert circle_rounds(["a", "b", "c", "d"])[0] == [("a", "d"), ("b", "c")]


# ------------------------------------------------------------------ standings
def _r(first: str, second: str, score: float, m1: int, m2: int, rnd: int = 1) -> Result:
    return Result(rnd, first, second, score, m1, m2)


def test_sonneborn_berger_tie_then_head_to_head_tie_then_marbles() -> None:
    # Worked by hand: a, b, c all score 2; SB a = b(2) + d(0) = 2, b = d(0) + c(2) = 2,
    # c = d(0) + a(2) = 2; head-to-head among them 1 each; marble difference
    # a +4-3+5 = +6, b -4+1+2 = -1, c +6+3-2 = +7: c, a, b, then d.
    results = [
        _r("a", "b", 1, 6, 2), _r("c", "d", 1, 6, 0), _r("a", "c", 0, 3, 6),
        _r("b", "d", 1, 6, 5), _r("a", "d", 1, 6, 1), _r("b", "c", 1, 6, 4),
    ]
    ratings = {"a": 1600.0, "b": 1600.0, "c": 1600.0, "d": 1600.0}
    table = standings(ratings, results, "sb")
    assert [s.userid for s in table] == ["c", "a", "b", "d"]
    assert [s.points for s in table] == [2, 2, 2, 0]
    assert [s.tie_break for s in table] == [2, 2, 2, 0]
    assert [s.head_to_head for s in table] == [1, 1, 1, 0]
    assert [s.marble_difference for s in table] == [7, 6, -1, -12]


def test_sonneborn_berger_comes_before_head_to_head() -> None:
    # a 1½, b 2½, c 1, d 1; c beat d but d beat a (1½): SB d 1½ > c 1 (beat d).
    results = [
        _r("a", "b", 0.5, 0, 0), _r("a", "c", 1, 6, 0), _r("a", "d", 0, 0, 6),
        _r("b", "c", 1, 6, 0), _r("b", "d", 1, 6, 0), _r("c", "d", 1, 6, 0),
    ]
    table = standings(dict.fromkeys("abcd", 1600.0), results, "sb")
    assert [s.userid for s in table] == ["b", "a", "d", "c"]
    assert table[2].tie_break == 1.5 and table[3].tie_break == 1.0
    # c won the game between them, but head-to-head only splits players still tied.
    assert table[3].head_to_head == 0.0


def test_buchholz_and_bye_and_rating_last() -> None:
    # Round 1: a-b 1-0, c bye.  Round 2: c-a 0.5, b bye.  Points a 1½, c 1½, b 1.
    # Buchholz, a bye counting the player's own points (a dummy opponent):
    # a = b(1) + c(1½) = 2½; c = own 1½ (bye) + a(1½) = 3; b = a(1½) + own 1 (bye) = 2½.
    results = [
        _r("a", "b", 1, 6, 3, 1), Result(1, "c", None, 1.0, kind="bye"),
        _r("c", "a", 0.5, 2, 2, 2), Result(2, "b", None, 1.0, kind="bye"),
    ]
    table = standings({"a": 1500.0, "b": 1700.0, "c": 1600.0}, results, "buchholz")
    assert [(s.userid, s.points, s.tie_break) for s in table] == [
        ("c", 1.5, 3.0), ("a", 1.5, 2.5), ("b", 1.0, 2.5)]
    # Everything equal but the rating: the higher rating first.
    even = standings({"x": 1500.0, "y": 1700.0}, [], "buchholz")
    assert [s.userid for s in even] == ["y", "x"]


def test_buchholz_counts_a_no_show_as_a_game_against_oneself() -> None:
    # Round 1: a beats b on the board, c's opponent d never moves (c wins, a no-show).
    # Round 2: a beats c on the board, b beats d on the board.  Points: a 2, c 1, b 1,
    # d 0.  Buchholz: a = b 1 + c 1 = 2; c = own 1 (the no-show: d was never met)
    # + a 2 = 3; b = a 2 + d 0 = 2; d = own 0 (the no-show) + b 1 = 1.  Were the
    # no-show counted as met, c would have 2 (d 0 + a 2) and d 2 (c 1 + b 1).
    results = [
        _r("a", "b", 1, 0, 0), Result(1, "c", "d", 1.0, kind="noshow"),
        _r("a", "c", 1, 0, 0, 2), _r("b", "d", 1, 0, 0, 2),
    ]
    table = standings({u: 1600.0 for u in "abcd"}, results, "buchholz")
    assert [(s.userid, s.points, s.tie_break) for s in table] == [
        ("a", 2.0, 2.0), ("c", 1.0, 3.0), ("b", 1.0, 2.0), ("d", 0.0, 1.0)]
    # A no-show still scores: the point is the opponent's, and it is no board game.
    assert [(s.userid, s.played, s.wins) for s in table if s.userid in "cd"] == [
        ("c", 2, 1), ("d", 2, 0)]
    # Sonneborn-Berger is unchanged: c's no-show win counts d's points (0).
    sb = {s.userid: s.tie_break for s in standings({u: 1600.0 for u in "abcd"}, results, "sb")}
    assert sb == {"a": 2.0, "c": 0.0, "b": 0.0, "d": 0.0}


def test_table_shows_every_column() -> None:
    table = standings({"a": 1600.0, "b": 1610.0}, [_r("a", "b", 0.5, 3, 1)], "sb")
    lines = table_lines(table, "sb")
    assert lines[0].split() == ["#", "Player", "Pts", "SB", "H2H", "+/-", "Rating",
                                "G", "W", "D", "L"]
    assert lines[1].split() == ["1", "a", "½", "0.25", "½", "+2", "1600", "1", "0", "1", "0"]
    assert half(2.5) == "2½" and half(3.0) == "3" and half(0.0) == "0"


# ------------------------------------------------------------------ swiss
def _players(count: int) -> list[SwissPlayer]:
    return [SwissPlayer(f"p{i}", 0.0, 2000.0 - i) for i in range(1, count + 1)]


def test_swiss_first_round_of_nine_top_half_meets_bottom_half_and_bye_to_the_last() -> None:
    pairs = pair_round(_players(9), 1)
    played = [(p.first, p.second) for p in pairs if p.second]
    # Board 1: the higher seed moves first, board 2 the lower, and so on.
    assert played == [("p1", "p5"), ("p6", "p2"), ("p3", "p7"), ("p8", "p4")]
    assert [(p.first, p.second) for p in pairs if p.second is None] == [("p9", None)]


def test_swiss_no_repeat_score_groups_colours_and_second_bye() -> None:
    # After round 1 (p1, p3 won; p2, p4 lost): winners meet, losers meet, no repeats.
    players = [
        SwissPlayer("p1", 1, 2000, frozenset({"p2"}), 1, 0, True),
        SwissPlayer("p2", 0, 1990, frozenset({"p1"}), 0, 1, False),
        SwissPlayer("p3", 1, 1980, frozenset({"p4"}), 0, 1, False),
        SwissPlayer("p4", 0, 1970, frozenset({"p3"}), 1, 0, True),
    ]
    pairs = pair_round(players, 2)
    # p1 moved first last time, p3 second: p3 moves first now.
    assert [(p.first, p.second) for p in pairs] == [("p3", "p1"), ("p2", "p4")]


def test_swiss_backtracks_rather_than_repeat() -> None:
    # p1 has met p2, p3 has met p4 and p2 has met p4: greedy p1-p3 would leave p2-p4.
    players = [
        SwissPlayer("p1", 2, 2000, frozenset({"p2"})),
        SwissPlayer("p2", 2, 1990, frozenset({"p1", "p4"})),
        SwissPlayer("p3", 1, 1980, frozenset({"p4"})),
        SwissPlayer("p4", 1, 1970, frozenset({"p3", "p2"})),
    ]
    pairs = {frozenset((p.first, p.second)) for p in pair_round(players, 3)}
    assert pairs == {frozenset({"p1", "p4"}), frozenset({"p2", "p3"})}


def test_swiss_bye_goes_to_someone_without_one_and_impossible_is_said() -> None:
    players = [SwissPlayer("p1", 1, 2000), SwissPlayer("p2", 1, 1900),
               SwissPlayer("p3", 1, 1800, byes=1)]
    bye = [p.first for p in pair_round(players, 2) if p.second is None]
    assert bye == ["p2"]
    stuck = [SwissPlayer("p1", 0, 2000, frozenset({"p2"})),
             SwissPlayer("p2", 0, 1900, frozenset({"p1"}))]
    with pytest.raises(PairingImpossible):
        pair_round(stuck, 2)


# ------------------------------------------------------------------ knockout
def test_bracket_of_eight_and_byes_for_the_best_seeds() -> None:
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    seeded = [f"s{i}" for i in range(1, 7)]
    matches = first_round(seeded)
    assert [(m.higher, m.lower) for m in matches] == [
        ("s1", None), ("s4", "s5"), ("s2", None), ("s3", "s6")]
    seeds = {u: i for i, u in enumerate(seeded, start=1)}
    second = [meeting("s1", "s5", 2, 1, seeds), meeting("s2", "s3", 2, 2, seeds)]
    assert [(m.higher, m.lower) for m in second] == [("s1", "s5"), ("s2", "s3")]


def test_mini_match_decider_and_marbles() -> None:
    match = Match(1, 1, "hi", "lo")
    games = match_games(match, 2)
    assert [(g.first, g.second) for g in games] == [("hi", "lo"), ("lo", "hi")]
    won = [_r("hi", "lo", 1, 6, 2), _r("lo", "hi", 0.5, 1, 1)]
    assert match_state(match, 2, won, 0).winner == "hi"
    assert match_state(match, 2, won[:1], 1).winner is None
    level = [_r("hi", "lo", 1, 6, 2), _r("lo", "hi", 1, 6, 5)]
    decider = match_state(match, 2, level, 0).decider
    assert decider is not None and (decider.first, decider.second) == ("lo", "hi")
    drawn = [*level, _r("lo", "hi", 0.5, 0, 0)]
    second = match_state(match, 2, drawn, 0).decider
    assert second is not None and (second.first, second.second) == ("hi", "lo")
    # Two deciders drawn: marble difference (hi +4 -1 = +3) decides.
    assert match_state(match, 2, [*drawn, _r("hi", "lo", 0.5, 0, 0)], 0).winner == "hi"


# ------------------------------------------------------------------ championship
def test_divisions_of_about_ten() -> None:
    # The lower division one larger: a field that grows keeps the relegated down.
    assert [len(d) for d in divisions([str(i) for i in range(25)])] == [12, 13]
    assert [len(d) for d in divisions([str(i) for i in range(9)], 4)] == [4, 5]
    assert [len(d) for d in divisions([str(i) for i in range(30)])] == [10, 10, 10]
    assert [len(d) for d in divisions([str(i) for i in range(8)], 4)] == [4, 4]
    assert divisions(["a", "b", "c"], 4) == [["a", "b", "c"]]


def test_promotion_relegation_leavers_and_newcomers_by_hand() -> None:
    last = [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]]
    assert moves_of(last) == {"a1": 0, "a2": 0, "a3": 1, "a4": 1,
                              "b1": 0, "b2": 0, "b3": 1, "b4": 1}
    # Division 1: stayed a1 a2, came up b1 b2; division 2: came down a3 a4, stayed b3 b4.
    assert next_edition(last, set(), [], 4) == [["a1", "a2", "b1", "b2"],
                                                ["a3", "a4", "b3", "b4"]]
    # a2 leaves, n1 joins at the bottom: the cut moves up by one.
    assert next_edition(last, {"a2"}, ["n1"], 4) == [["a1", "b1", "b2", "a3"],
                                                     ["a4", "b3", "b4", "n1"]]
