"""A short, deterministic two-player game that ends with six marbles pushed off.

Player 1 plays greedily for ejections; player 2 walks its marbles into trouble.
Computed with the rules core, so the mail tests drive a real game to its end.
"""

from __future__ import annotations

from abalone_pbm.rules import Board, Rules
from abalone_pbm.rules.geometry import CENTRE, ROW_OF, DIAGONAL_OF


def _distance_to_centre(cell: int) -> int:
    dr = ROW_OF[cell] - ROW_OF[CENTRE]
    dd = DIAGONAL_OF[cell] - DIAGONAL_OF[CENTRE]
    return max(abs(dr), abs(dd), abs(dr - dd))


def _spread(board: Board, seat: int) -> int:
    bits, total = board.marbles(seat), 0
    while bits:
        low = bits & -bits
        total += _distance_to_centre(low.bit_length() - 1)
        bits ^= low
    return total


def _score_for_one(board: Board) -> tuple[int, int]:
    return board.ejected(1), -_spread(board, 1)


def _pushes_available(board: Board) -> int:
    """How many ways the player to move has to push off a marble right now."""
    before = board.ejected(board.turn)
    count = 0
    for move in list(board.generate_legal_moves()):
        board.push(move)
        if board.ejected(3 - board.turn) > before:
            count += 1
        board.pop()
    return count


def scripted_game(max_plies: int = 400, rules: Rules | None = None) -> list[str]:
    board = Board.from_layout("standard", rules)
    moves: list[str] = []
    while board.outcome() is None and len(moves) < max_plies:
        best, best_key = None, None
        for move in sorted(board.generate_legal_moves(), key=str):
            board.push(move)
            if board.turn == 2:  # player 1 just moved
                key = (*_score_for_one(board), 0)
            else:  # player 2 just moved: give player 1 chances, come forward
                key = (_pushes_available(board), _spread(board, 2), 0)
            board.pop()
            if best_key is None or key > best_key:
                best, best_key = move, key
        assert best is not None
        board.push(best)
        moves.append(str(best))
    return moves
