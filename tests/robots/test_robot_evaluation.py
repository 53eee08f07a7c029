"""The evaluation's bitboard terms against slow, obvious references."""

from __future__ import annotations

import random

from robots_helpers import cells, make_position

from abalone_pbm.robots.base import occupied_mask, push_kind
from abalone_pbm.robots.evaluation import (
    EDGE,
    RING,
    WIN,
    Evaluator,
    centre_sum,
    cohesion,
    hex_distance,
    threatened,
)
from abalone_pbm.rules import CELL_BY_NAME, CELLS, Board, Rules
from abalone_pbm.rules.geometry import OFFSETS, iter_bits


def test_rings_partition_the_board() -> None:
    assert [bin(r).count("1") for r in RING] == [1, 6, 12, 18, 24]
    assert hex_distance(CELL_BY_NAME["e5"]) == 0
    assert hex_distance(CELL_BY_NAME["a1"]) == 4
    assert hex_distance(CELL_BY_NAME["c5"]) == 2
    assert hex_distance(CELL_BY_NAME["i9"]) == 4
    assert hex_distance(CELL_BY_NAME["d5"]) == 1
    assert hex_distance(CELL_BY_NAME["d6"]) == 2
    assert hex_distance(CELL_BY_NAME["b1"]) == 4  # the ends of row B are on the edge


def test_centre_and_cohesion_match_cell_loops() -> None:
    board = Board()
    bits = board.marbles(1)
    assert centre_sum(bits) == sum(hex_distance(c) for c in iter_bits(bits))
    pairs = sum(
        1
        for a in iter_bits(bits)
        for o in OFFSETS[:3]
        if (bits >> (a + o)) & 1
    )
    assert cohesion(bits) == pairs
    # Row A and b1, b6 on the edge; b2-b5 at three; c3-c5 at two.
    assert centre_sum(bits) == 7 * 4 + 4 * 3 + 3 * 2


def _ejectable(board: Board) -> int:
    """Marbles the player to move can push off, by playing every move."""
    mover = board.turn
    occupied = occupied_mask(board)
    out = 0
    before = board.ejected(mover)
    for move in list(board.generate_legal_moves()):
        board.push(move)
        pushed_off = board.ejected(mover) > before
        board.pop()
        assert (push_kind(occupied, move) == 2) == pushed_off
        if pushed_off:
            o = OFFSETS[move.direction]
            front = max(iter_bits(move.cells)) if o > 0 else min(iter_bits(move.cells))
            t = front + o
            while (occupied >> (t + o)) & 1:
                t += o
            out |= 1 << t
    return out


def test_threats_are_exact_in_random_two_player_games() -> None:
    rng = random.Random(11)
    for layout in ("standard", "belgian-daisy", "german-daisy"):
        board = Board.from_layout(layout)
        for _ in range(120):
            moves = list(board.generate_legal_moves())
            if not moves:
                break
            me, op = board.turn, 3 - board.turn
            assert threatened(
                board.marbles(me), board.marbles(op), board.marbles(op) & EDGE
            ) == _ejectable(board)
            occupied = occupied_mask(board)
            pushes = [m for m in moves if push_kind(occupied, m)]
            board.push(rng.choice(pushes) if pushes and rng.random() < 0.6 else rng.choice(moves))


def test_evaluation_is_symmetric_and_prefers_material() -> None:
    board = Board()
    # The start is symmetric and nothing is threatened: even for both sides.
    assert Evaluator(board, 0).evaluate(board) == Evaluator(board, 1).evaluate(board) == 0
    ahead = Board(Board().position().replace(" 0,0", " 1,0"))
    assert Evaluator(ahead, 0).evaluate(ahead) > Evaluator(board, 0).evaluate(board) + 500
    won = Board(Board().position().replace(" 0,0", " 6,0"))
    assert Evaluator(won, 0).value(won) == WIN
    assert Evaluator(won, 1).value(won) == -WIN


def test_threat_counts_against_the_side_not_to_move() -> None:
    # o on e1 with x on e2, e3: x to move threatens to push e1 off.
    position = make_position({**cells("e1 c3 c4", 1), **cells("e2 e3 g5", 2)}, turn=2)
    board = Board(position)
    quiet = Board(position.replace(" 2 ", " 1 "))
    assert Evaluator(board, 0).evaluate(board) < Evaluator(quiet, 0).evaluate(quiet) - 400


def test_multi_player_evaluation_runs_and_sees_wins() -> None:
    for players, teams in ((3, False), (4, True), (6, False), (6, True)):
        rules = Rules(players=players, teams=teams)
        board = Board.from_layout("standard", rules)
        for side in range(rules.sides):
            assert isinstance(Evaluator(board, side).evaluate(board), int)
        counts = ["0"] * players
        counts[0] = "6"
        won = Board(board.position().rsplit(" ", 1)[0] + " " + ",".join(counts), rules)
        assert Evaluator(won, 0).value(won) == WIN
        assert Evaluator(won, rules.side_of(2)).value(won) == (
            WIN if rules.side_of(2) == 0 else -WIN
        )


def test_every_cell_is_in_one_ring() -> None:
    union = 0
    for ring in RING:
        assert union & ring == 0
        union |= ring
    assert union == sum(1 << c for c in CELLS)


def test_fast_leaves_agree_with_push_and_pop() -> None:
    """The two-player frontier shortcut gives exactly the values of push/evaluate/pop."""
    from abalone_pbm.robots import AlphaBeta, SearchInfo

    rng = random.Random(3)
    checked = 0
    for layout in ("standard", "belgian-daisy"):
        board = Board(Board.from_layout(layout).position().replace(" 0,0", " 5,5"))
        for ply in range(70):
            moves = list(board.generate_legal_moves())
            if not moves:
                break
            if ply % 7 == 3:
                results = []
                for fast in (False, True):
                    search = AlphaBeta(board.copy())
                    search.fast_leaves = fast
                    info = SearchInfo()
                    move = search.run(moves, 2, random.Random(ply), info)
                    results.append((str(move), info.value, info.nodes))
                assert results[0] == results[1]
                checked += 1
            occupied = occupied_mask(board)
            quiet = [m for m in moves if push_kind(occupied, m) < 2]
            pushes = [m for m in quiet if push_kind(occupied, m)]
            board.push(rng.choice(pushes) if pushes and rng.random() < 0.6 else rng.choice(quiet))
    assert checked >= 10
