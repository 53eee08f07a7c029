"""Knockout with players who left: they go no further, whatever their match's score."""

from __future__ import annotations

from abalone_pbm.tournaments import Result
from abalone_pbm.tournaments.knockout import Match, match_state, meeting


def _r(first: str, second: str, score: float) -> Result:
    return Result(1, first, second, score)


def test_a_leaver_loses_a_level_match_without_a_decider() -> None:
    match = Match(1, 1, "hi", "lo")
    level = [_r("hi", "lo", 1.0), _r("lo", "hi", 1.0)]
    assert match_state(match, 2, level, 0).decider is not None
    assert match_state(match, 2, level, 0, frozenset({"hi"})).winner == "lo"
    assert match_state(match, 2, level, 0, frozenset({"lo"})).decider is None
    assert match_state(match, 2, level, 0, frozenset({"lo"})).winner == "hi"


def test_a_leaver_loses_a_match_they_lead() -> None:
    match = Match(1, 1, "hi", "lo")
    won_by_hi = [_r("hi", "lo", 1.0), _r("lo", "hi", 0.0)]
    assert match_state(match, 2, won_by_hi, 0, frozenset({"hi"})).winner == "lo"
    # Still running: nothing decided yet, leaver or not.
    assert match_state(match, 2, won_by_hi[:1], 1, frozenset({"hi"})).winner is None


def test_both_gone_the_score_decides_and_the_next_opponent_has_a_bye() -> None:
    match = Match(1, 1, "hi", "lo")
    won_by_lo = [_r("hi", "lo", 0.0), _r("lo", "hi", 1.0)]
    assert match_state(match, 2, won_by_lo, 0, frozenset({"hi", "lo"})).winner == "lo"
    seeds = {"a": 1, "b": 2, "c": 3, "d": 4}
    gone = frozenset({"a", "c"})
    paired = [meeting("a", "d", 2, 1, seeds, gone), meeting("b", "c", 2, 2, seeds, gone)]
    assert [(m.higher, m.lower) for m in paired] == [("d", None), ("b", None)]
    met = meeting("a", "d", 2, 1, seeds)
    assert (met.higher, met.lower) == ("a", "d")
