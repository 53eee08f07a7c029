"""Robots that finish their games: the shortest forced win, threats against the last
marble searched past the horizon, and a leader that presses.

An exact full-width solver (:func:`wins_within`) over :func:`bitmoves.children` is the
referee: it knows nothing of the search, its pruning or its evaluation.
"""

from __future__ import annotations

import random

import pytest
from robots_helpers import FORCED, cells, make_position, mask

from abalone_pbm.robots import make_engine
from abalone_pbm.robots.bitmoves import EJECT, QUIET, children
from abalone_pbm.robots.duel import INFINITY, WIN_THRESHOLD, DuelSearch, DuelTables
from abalone_pbm.robots.features import evaluation, pushable, threatened_marbles
from abalone_pbm.rules import CELLS, Board, Rules

TARGET = 6


def wins_within(me: int, op: int, mine: int, theirs: int, moves: int) -> bool:
    """Whether the side to move (``me``) forces its ``TARGET``-th ejection within
    ``moves`` moves of its own, whatever the other side plays."""
    if moves <= 0:
        return False
    kids = children(me, op)
    if mine + 1 >= TARGET and any(kind == EJECT for kind, *_ in kids):
        return True
    if moves == 1:
        return False
    for kind, _diff, nme, nop in kids:
        gained = mine + (kind == EJECT)
        if every_reply_loses(nop, nme, theirs, gained, moves - 1):
            return True
    return False


def every_reply_loses(me: int, op: int, mine: int, theirs: int, moves: int) -> bool:
    """Whether every move of the side to move leaves the other side (with ``theirs``
    pushed off) a forced win within ``moves`` of its moves."""
    for kind, _diff, nme, nop in children(me, op):
        gained = mine + (kind == EJECT)
        if gained >= TARGET or not wins_within(nop, nme, theirs, gained, moves):
            return False
    return True


def shortest_win(me: int, op: int, mine: int, theirs: int, most: int) -> int | None:
    for moves in range(1, most + 1):
        if wins_within(me, op, mine, theirs, moves):
            return moves
    return None


@pytest.mark.parametrize(("moves", "ours", "theirs"), FORCED)
def test_plays_the_shortest_forced_finish(moves: int, ours: str, theirs: str) -> None:
    me, op = mask(ours), mask(theirs)
    assert shortest_win(me, op, 5, 0, moves) == moves
    board = Board(make_position({**cells(ours, 1), **cells(theirs, 2)}, 1, (5, 0)),
                  Rules(players=2))
    robot = make_engine("boulder")
    # A depth cap, not the clock, bounds the search: the test does not depend on speed.
    move = robot.choose_move(board, 60.0, rng_seed=3, max_depth=2 * moves - 1)
    board.push(move)
    if moves == 1:
        outcome = board.outcome()
        assert outcome is not None and outcome.winners == (1,)
    else:
        # Still a forced win, one move sooner: the robot neither dawdled nor let go.
        assert every_reply_loses(board.marbles(2), board.marbles(1), 0, 5, moves - 1)


# Positions from a match against Cotix (benchmarks/external_match.py --trace, 0.3 s a
# move): the side to move had pushed off five and a sixth was forced in three moves,
# which the search at depth 3 did not see (it needed depth 4 before threats were
# searched at the horizon).
MISSED = [
    "...../....../..1111./..122.../..2222.1./.112211./.11..../.2.1../..... 1 5,1",
    "...../.222../.21.2../...11.2./...1112../...112../..222../..221./..... 2 1,5",
]


@pytest.mark.parametrize("position", MISSED)
def test_a_finish_past_the_horizon_is_seen_at_depth_two(position: str) -> None:
    board = Board(position, Rules(players=2))
    seat = board.turn
    me, op = board.marbles(seat), board.marbles(3 - seat)
    mine, theirs = board.ejected(seat), board.ejected(3 - seat)
    assert shortest_win(me, op, mine, theirs, 3) == 3
    robot = make_engine("boulder")
    robot.choose_move(board, 60.0, rng_seed=1, max_depth=2)
    info = robot.last_info
    assert info is not None and info.value is not None and info.value > WIN_THRESHOLD


def _threatened_positions(count: int, seed: int) -> list[tuple[int, int]]:
    """Small random positions, the side to move (``me``) threatened by the other side,
    which has pushed off five: (me, op)."""
    rng = random.Random(seed)
    found: list[tuple[int, int]] = []
    while len(found) < count:
        chosen = rng.sample(CELLS, rng.randint(8, 12))
        split = rng.randint(4, 6)
        me = sum(1 << c for c in chosen[:split])
        op = sum(1 << c for c in chosen[split:])
        if threatened_marbles(op, me) and not threatened_marbles(me, op):
            found.append((me, op))
    return found


def test_quiescence_does_not_stand_pat_against_a_threat_on_the_last_marble() -> None:
    lost = parried = 0
    for me, op in _threatened_positions(60, seed=5):
        search = DuelSearch(DuelTables(), TARGET, None, None)
        value = search.quiesce(me, op, 0, 5, -10 * 10**6, 10 * 10**6, 1, 0)
        if every_reply_loses(me, op, 0, 5, 1):
            # No reply parries: a loss, whatever the evaluation says.
            assert value < -WIN_THRESHOLD
            lost += 1
        elif value < -WIN_THRESHOLD:
            # A loss found past a parry is a real one: forced within two moves.
            assert every_reply_loses(me, op, 0, 5, 2)
        else:
            parried += 1
    assert lost and parried  # both kinds were met


def _radial_push() -> tuple[tuple[int, int], tuple[int, int]]:
    """o's two marbles e5 e6 push x's e7 to e8, away from the centre, far from any edge
    threat: (o, x) before and after."""
    before = (mask("e5 e6"), mask("e7"))
    after = (mask("e6 e7"), mask("e8"))
    return before, after


def test_a_leader_gains_by_pushing_a_marble_towards_the_edge() -> None:
    (me, op), (me_after, op_after) = _radial_push()
    gains = []
    for pushed_off in (0, 2, 5):
        before = evaluation(me, op, pushed_off, 0)[0]
        after = evaluation(me_after, op_after, pushed_off, 0)[0]
        gains.append(after - before)
    # With nothing pushed off the centre term makes the push cost (the pushing line
    # moves out as far as the marble pushed, and it is longer); the more a side has
    # pushed off, the more driving the other side's marbles out is worth to it.
    assert gains[0] < 0
    assert gains[0] < gains[1] < gains[2]
    assert gains[2] > 0


def test_pushable_marbles_are_those_the_move_generator_pushes() -> None:
    rng = random.Random(11)
    for _ in range(400):
        chosen = rng.sample(CELLS, rng.randint(6, 30))
        split = rng.randint(2, len(chosen) - 2)
        me = sum(1 << c for c in chosen[:split])
        op = sum(1 << c for c in chosen[split:])
        first_pushed = 0
        for kind, _diff, nme, _nop in children(me, op):
            if kind != QUIET:  # a push: the front marble steps onto the first one pushed
                first_pushed |= nme & ~me & op
        assert pushable(me, op) == first_pushed


# The forced finishes in two moves of ours: three plies, the sixth marble off on the third.
FORCED_IN_TWO = [(ours, theirs) for moves, ours, theirs in FORCED if moves == 2]


@pytest.mark.parametrize(("ours", "theirs"), FORCED_IN_TWO)
def test_no_win_is_seen_past_the_move_limit(ours: str, theirs: str) -> None:
    """With two plies to the move limit the forced sixth (on the third ply) never comes,
    at any depth, whether the full-width search or the quiescence reaches it; with three
    it does."""
    me, op = mask(ours), mask(theirs)
    assert shortest_win(me, op, 5, 0, 2) == 2
    for depth in (1, 2, 3):
        for plies_left, wins in ((2, False), (3, True), (None, True)):
            search = DuelSearch(DuelTables(), TARGET, plies_left, None)
            search.pruning = search.reductions = search.futility = False
            value, _ = search.root(me, op, 5, 0, children(me, op), depth, -INFINITY, INFINITY)
            if not wins:
                assert value < WIN_THRESHOLD, (depth, plies_left)
            elif depth == 3:  # full width to the third ply: the win is certain
                assert value > WIN_THRESHOLD, (depth, plies_left)


def test_quiescence_ends_at_the_move_limit() -> None:
    """At the limit the quiescence scores the marbles pushed off, whatever threats stand
    on the board; a ply before it the side to move makes the game's last move, so a
    threat against its last marble is none."""
    lost = 0
    for me, op in _threatened_positions(40, seed=7):
        for ply in (3, 6):
            search = DuelSearch(DuelTables(), TARGET, ply, None)
            for mine, theirs in ((0, 5), (2, 1), (1, 1)):
                at_limit = search.quiesce(me, op, mine, theirs, -INFINITY, INFINITY, ply, 0)
                assert at_limit == search._limit_value(mine, theirs, ply)
            last_move = search.quiesce(me, op, 0, 5, -INFINITY, INFINITY, ply - 1, 0)
            assert -WIN_THRESHOLD < last_move < WIN_THRESHOLD
            # Without the limit the threat is searched (a loss whenever none parries).
            free = DuelSearch(DuelTables(), TARGET, None, None)
            if every_reply_loses(me, op, 0, 5, 1):
                assert free.quiesce(me, op, 0, 5, -INFINITY, INFINITY, ply - 1, 0) < -WIN_THRESHOLD
                lost += 1
    assert lost  # positions where the threat wins without the limit were met
