"""The core term of the two-player evaluation (abalone_pbm.robots.endgame.CORE): own
marbles on e5 and its six neighbours count at every score, so boulder contests the
centre before the defender's group settles there; weight 0 gives the evaluation
without it back."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from abalone_pbm.robots import endgame, make_engine
from abalone_pbm.robots.features import evaluation_with
from abalone_pbm.rules import CELL_BY_NAME, Board, Rules

#: A weight the positions below tell apart from 0 (the default may be either).
TRIED_WEIGHT = 150


@contextmanager
def core_weight(weight: int) -> Iterator[None]:
    saved = endgame.CORE
    endgame.set_endgame(endgame.CONTACT_PUSHES, endgame.LEAD_CENTRE, weight)
    try:
        yield
    finally:
        endgame.set_endgame(endgame.CONTACT_PUSHES, endgame.LEAD_CENTRE, saved)


def _positions(count: int, seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        board = Board.from_layout(("standard", "belgian-daisy")[i % 2], Rules(players=2))
        for _ in range(rng.randrange(6, 50)):
            board.push(rng.choice(list(board.generate_legal_moves())))
            if board.outcome() is not None:
                break
        out.append((board.marbles(board.turn), board.marbles(3 - board.turn)))
    return out


def test_core_cells_are_e5_and_its_ring() -> None:
    names = {"e5", "e6", "f6", "f5", "e4", "d4", "d5"}
    assert endgame.CORE_CELLS == sum(1 << CELL_BY_NAME[name] for name in names)


@pytest.mark.parametrize("weight", [0, TRIED_WEIGHT])
def test_the_core_term_is_its_definition_and_weight_0_is_the_old_evaluation(
        weight: int) -> None:
    with core_weight(weight):
        for index, (me, op) in enumerate(_positions(40, seed=weight)):
            mine, theirs = index % 4, index % 3
            old = evaluation_with(me, op, mine, theirs, endgame.CONTACT_PUSHES,
                                  endgame.LEAD_CENTRE)
            held = (me & endgame.CORE_CELLS).bit_count() - (op & endgame.CORE_CELLS).bit_count()
            expected = (old[0] + weight * held, old[1], old[2])
            # Twice: the second answer comes from the cache.
            assert endgame.evaluation(me, op, mine, theirs) == expected
            assert endgame.evaluation(me, op, mine, theirs) == expected
            assert endgame.core_term(me, op) == -endgame.core_term(op, me) == weight * held
            terms = endgame.endgame_terms(me, op, mine, theirs)
            assert terms == -endgame.endgame_terms(op, me, theirs, mine)
            assert terms == expected[0] - evaluation_with(me, op, mine, theirs, 0, 0)[0]


# Middle-game positions of boulder against Cotix (from an external_match.py --trace),
# no marble off yet, where Cotix was taking the centre: without the term boulder's move
# leaves its own core count as it was; with it boulder pushes its way into the core.
CONTESTED = [
    "...../..111./.11111./..112.../...11122./.22212../..222../.222../2.... 1 0,0",
    "...1./..1.1./.11.11./..111.../...111.../.21222../.22222./22222./..... 2 0,0",
]


def _core_after_move(position: str, weight: int) -> tuple[int, int]:
    """(Own marbles gained on the core, the other side's marbles left there) after the
    move boulder chooses at depth 2 with the core term at ``weight``."""
    board = Board(position, Rules(players=2, movelimit=150))
    seat = board.turn
    before = (board.marbles(seat) & endgame.CORE_CELLS).bit_count()
    with core_weight(weight):
        # A depth cap, not the clock, bounds the search: the test does not depend on speed.
        board.push(make_engine("boulder").choose_move(board, 60.0, rng_seed=1, max_depth=2))
    return ((board.marbles(seat) & endgame.CORE_CELLS).bit_count() - before,
            (board.marbles(3 - seat) & endgame.CORE_CELLS).bit_count())


@pytest.mark.parametrize("position", CONTESTED)
def test_with_the_core_term_boulder_takes_a_core_cell_from_the_other_side(
        position: str) -> None:
    gained_without, theirs_without = _core_after_move(position, 0)
    gained_with, theirs_with = _core_after_move(position, TRIED_WEIGHT)
    assert gained_without == 0
    assert gained_with == 1 and theirs_with == theirs_without - 1
