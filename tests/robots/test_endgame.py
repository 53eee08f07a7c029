"""The endgame terms of the two-player evaluation (abalone_pbm.robots.endgame): what
they add, that the search plays with them, and plans they must keep: a leader trades
down, a side behind does not, and a leader keeps its marbles out of the other side's
pushes."""

from __future__ import annotations

import random

import pytest
from robots_helpers import cells, make_position

from abalone_pbm.robots import duel, endgame, features, make_engine
from abalone_pbm.robots.features import evaluation as fitted_evaluation
from abalone_pbm.robots.features import pushable, threatened_marbles
from abalone_pbm.rules import Board, Rules


def _positions(count: int, seed: int) -> list[tuple[int, int]]:
    """(side to move's marbles, the other side's) from random games on both layouts."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        board = Board.from_layout(("standard", "belgian-daisy")[i % 2], Rules(players=2))
        for _ in range(rng.randrange(10, 60)):
            board.push(rng.choice(list(board.generate_legal_moves())))
            if board.outcome() is not None:
                break
        out.append((board.marbles(board.turn), board.marbles(3 - board.turn)))
    return out


def test_the_search_evaluates_with_the_endgame_terms() -> None:
    assert duel.evaluation is endgame.evaluation


@pytest.mark.parametrize("score", [(0, 0), (1, 0), (3, 1), (5, 2), (2, 4)])
def test_the_terms_are_the_same_for_both_sides(score: tuple[int, int]) -> None:
    """What one side gains the other loses (negamax needs it), and the fitted value is
    kept: the terms are only added to it."""
    mine, theirs = score
    for me, op in _positions(30, seed=sum(score)):
        terms = endgame.endgame_terms(me, op, mine, theirs)
        assert terms == -endgame.endgame_terms(op, me, theirs, mine)
        value, threats, danger = endgame.evaluation(me, op, mine, theirs)
        fitted = fitted_evaluation(me, op, mine, theirs)
        assert (value - terms, threats, danger) == fitted
        ahead, behind = max(0, mine - theirs), max(0, theirs - mine)
        expected = endgame.CONTACT_PUSHES * (
            pushable(me, op).bit_count() - pushable(op, me).bit_count()
        ) - endgame.LEAD_CENTRE * (
            ahead * endgame.centre_excess(me) - behind * endgame.centre_excess(op))
        assert terms == expected


def test_centre_excess_counts_steps_from_e5_beyond_two() -> None:
    board = Board(make_position(cells("e5 e6 d4 c3 a1 i9 e1", 1)), Rules(players=2))
    # e5 -2, e6 and d4 -1 each, c3 0, a1, i9 and e1 +2 each
    assert endgame.centre_excess(board.marbles(1)) == 2


# o (to move) can push e9 off with e7-e8; x's b2-c3 line pushes o's a1 off unless it
# moves.  Ejecting is a one-for-one trade; saving a1 lets x save e9 in turn.
TRADE_OURS = "e7 e8 a1 d4 d5 e5 f5 f6"
TRADE_THEIRS = "e9 c3 b2 g4 h4 h5 g3 i5"


@pytest.mark.parametrize(("score", "trades"), [((4, 0), True), ((3, 1), True),
                                               ((0, 3), False), ((1, 4), False)])
def test_a_leader_trades_and_a_side_behind_does_not(score: tuple[int, int],
                                                     trades: bool) -> None:
    board = Board(make_position({**cells(TRADE_OURS, 1), **cells(TRADE_THEIRS, 2)}, 1, score),
                  Rules(players=2))
    robot = make_engine("boulder")
    # From depth 3: at depth 2 the line stops right after the recapture, where at 3-1
    # trading and saving differ by less than one pushable marble.
    for depth in (3, 4, 5):
        move = robot.choose_move(board, 60.0, rng_seed=3, max_depth=depth)
        board.push(move)
        ejected = board.ejected(1) > score[0]
        # Not trading: no marble of ours is left for x to push off next move.
        safe = not threatened_marbles(board.marbles(2), board.marbles(1))
        board.pop()
        assert (ejected, safe) == (trades, not trades), (score, depth, str(move))


# The same trade with o kept off the centre (its other marbles on the rim, x's in the
# middle), as against a defender that holds e5: a side's first marble pushed off must
# not make the other side's distance from e5 cost it more than the trade gains.
OFF_CENTRE_OURS = "e7 e8 a1 i5 i6 i7 a4 a5"
OFF_CENTRE_THEIRS = "e9 c3 b2 d4 d5 e5 f5 e4"


@pytest.mark.parametrize(("score", "trades"), [((1, 0), True), ((2, 0), True),
                                               ((2, 1), True), ((3, 1), True),
                                               ((0, 1), False), ((0, 3), False)])
def test_a_leader_off_the_centre_trades_too(score: tuple[int, int], trades: bool) -> None:
    board = Board(make_position({**cells(OFF_CENTRE_OURS, 1), **cells(OFF_CENTRE_THEIRS, 2)},
                                1, score), Rules(players=2))
    for depth in (3, 4, 5):
        # A robot new to the game at each depth: no table of an earlier search.
        move = make_engine("boulder").choose_move(board, 60.0, rng_seed=3, max_depth=depth)
        board.push(move)
        ejected = board.ejected(1) > score[0]
        board.pop()
        assert ejected == trades, (score, depth, str(move))


@pytest.mark.parametrize("score", [(0, 0), (1, 0), (3, 1), (4, 4), (1, 4)])
def test_a_one_for_one_trade_changes_only_the_terms_of_the_marbles_off(
        score: tuple[int, int]) -> None:
    """The pressure, push and lead centre terms scale with the lead, so a marble more off
    for each side, the marbles standing where they stand, changes the search's value by
    the material, progress and finishing terms alone."""
    mine, theirs = score
    for me, op in _positions(20, seed=mine + 7 * theirs):
        before = endgame.evaluation(me, op, mine, theirs)[0]
        after = endgame.evaluation(me, op, mine + 1, theirs + 1)[0]
        progress = features.PROGRESS * ((mine + 1) ** 2 - mine ** 2
                                        - (theirs + 1) ** 2 + theirs ** 2)
        finish = (features.finish_term(mine + 1, theirs + 1)
                  - features.finish_term(mine, theirs))
        assert after - before == progress + finish


def test_weights_set_to_nothing_give_the_fitted_evaluation_again() -> None:
    weights = (endgame.CONTACT_PUSHES, endgame.LEAD_CENTRE)
    positions = _positions(10, seed=9)
    for me, op in positions:
        endgame.evaluation(me, op, 3, 1)  # cached with the weights in use
    try:
        endgame.set_endgame(0, 0)
        for me, op in positions:
            assert endgame.evaluation(me, op, 3, 1) == fitted_evaluation(me, op, 3, 1)
    finally:
        endgame.set_endgame(*weights)
    for me, op in positions:
        assert endgame.endgame_terms(me, op, 3, 1) == -endgame.endgame_terms(op, me, 1, 3)
