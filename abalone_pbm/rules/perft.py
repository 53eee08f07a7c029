"""Perft: the number of move sequences of a given length, the move generator's checksum."""

from __future__ import annotations

from .board import Board


def perft(board: Board, depth: int) -> int:
    """Count the move sequences of ``depth`` plies from ``board`` (left unchanged)."""
    if depth <= 0:
        return 1
    if depth == 1:
        return board.count_legal_moves()
    total = 0
    push, pop = board.push, board.pop
    if depth == 2:
        # Most of the work: the children's moves are counted, not generated.
        count = board.count_legal_moves
        for move in list(board.generate_legal_moves()):
            push(move)
            total += count()
            pop()
        return total
    for move in list(board.generate_legal_moves()):
        push(move)
        total += perft(board, depth - 1)
        pop()
    return total


def divide(board: Board, depth: int) -> dict[str, int]:
    """Perft split by first move, for finding where two generators disagree."""
    counts: dict[str, int] = {}
    for move in list(board.generate_legal_moves()):
        board.push(move)
        counts[str(move)] = perft(board, depth - 1)
        board.pop()
    return counts
