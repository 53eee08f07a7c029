"""Helpers for the robot tests: positions from cell lists, and an exact referee."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from abalone_pbm.rules import CELL_BY_NAME, CELL_NAMES, CELLS, Board

ROW_LENGTHS = (5, 6, 7, 8, 9, 8, 7, 6, 5)


def make_position(
    marbles: Mapping[str, int], turn: int = 1, ejected: Iterable[int] = (0, 0)
) -> str:
    """A position text from ``{cell name: player}``; every other cell empty."""
    owner = {k.lower(): v for k, v in marbles.items()}
    flat = [str(owner.pop(CELL_NAMES[c], ".")) for c in CELLS]
    assert not owner, f"not cells: {owner}"
    rows, start = [], 0
    for length in ROW_LENGTHS:
        rows.append("".join(flat[start : start + length]))
        start += length
    return f"{'/'.join(rows)} {turn} {','.join(str(n) for n in ejected)}"


def cells(names: str, player: int) -> dict[str, int]:
    return {name: player for name in names.split()}


def mask(names: str) -> int:
    """The bitboard of the cells named."""
    return sum(1 << CELL_BY_NAME[n] for n in names.split())


# Positions with five marbles pushed off by the side to move (o) and a forced sixth in
# 1, 2 or 3 of its moves (and no sooner: checked by the solver in the test).
FORCED = [
    (1, "d6 e7 f8 g8 i5", "b6 g9 i8"),
    (1, "b3 b4 c3 e2 e3 e6 f6", "e1 e9 f5"),
    (2, "a2 d8 e1 e2 f2 f7 g8 h7 i8", "b4 b5 i9"),
    (2, "a3 b1 b6 d1 d3 e6 f7 g7", "f5 g3 g8 g9"),
    (2, "c6 c7 d7 e6 f6 h7", "b1 b6 d8"),
    (3, "b1 d2 d3 f3 f5 f9 h4 i5", "a5 d4 e1 e5"),
    (3, "a1 b2 c3 d1 e2 g5 h5 h9", "b1 d5 e1"),
    (3, "a4 b5 c1 c4 d6 h4 h5 i5 i7", "a5 d3 e3"),
    (3, "b2 e6 f3 f9 h7 h8 h9 i9", "a3 b1 i8"),
]


def next_player_can_win(board: Board) -> bool:
    """Brute force: does some move of the player to move win the game at once?"""
    mover_side = board.rules.side_of(board.turn)
    if board.outcome() is not None:
        return False
    for move in list(board.generate_legal_moves()):
        board.push(move)
        outcome = board.outcome()
        board.pop()
        if outcome and not outcome.draw and board.rules.side_of(outcome.winners[0]) == mover_side:
            return True
    return False


def snapshot(board: Board) -> tuple[object, ...]:
    return (board.position(), board.ply, board.zobrist_hash(), list(board.move_stack))
