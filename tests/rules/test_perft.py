"""Perft: the official move-sequence counts (depth <= 3 here; depth 4 is benchmarks/perft.py)."""

from __future__ import annotations

import pytest
from rules_helpers import naive_moves, naive_successors, parse_position

from abalone_pbm.rules import Board, Rules, divide, perft


@pytest.mark.parametrize(
    ("layout", "depth", "count"),
    [
        ("standard", 1, 44),
        ("standard", 2, 1_936),
        ("standard", 3, 98_912),
        ("belgian-daisy", 1, 52),
        ("belgian-daisy", 2, 2_692),
        ("belgian-daisy", 3, 149_322),
    ],
)
def test_official_perft(layout: str, depth: int, count: int) -> None:
    board = Board.from_layout(layout)
    start = board.position()
    assert perft(board, depth) == count
    assert board.position() == start and board.ply == 0


def test_perft_depth_zero_is_one() -> None:
    assert perft(Board(), 0) == 1


def test_divide_sums_to_perft() -> None:
    board = Board.from_layout("belgian-daisy")
    counts = divide(board, 2)
    assert len(counts) == 52
    assert sum(counts.values()) == 2_692
    assert set(counts) == {str(m) for m in board.generate_legal_moves()}
    assert board.position() == Board.from_layout("belgian-daisy").position()


def test_perft_through_generated_moves_matches_counting() -> None:
    # perft's last ply counts with bit tricks; the same count by generating every move:
    board = Board.from_layout("standard")
    total = 0
    for move in list(board.generate_legal_moves()):
        board.push(move)
        total += len(list(board.generate_legal_moves()))
        board.pop()
    assert total == 1_936


@pytest.mark.parametrize(
    ("layout", "players", "teams"),
    [("standard", 3, False), ("bowl", 4, True), ("standard", 6, False)],
)
def test_perft_two_against_the_reference(layout: str, players: int, teams: bool) -> None:
    board = Board.from_layout(layout, Rules(players=players, teams=teams))
    expected = 0
    for after in naive_successors(board.position(), teams).values():
        marbles, turn, ejected = parse_position(after)
        expected += len(naive_moves(marbles, turn, len(ejected), teams))
    assert perft(board, 2) == expected
