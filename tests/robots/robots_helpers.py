"""Helpers for the robot tests: positions from cell lists, and an exact referee."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from abalone_pbm.rules import CELL_NAMES, CELLS, Board

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
