"""benchmarks/finish_probe.py --analyse: the other side's moves read back from a trace of
ours, and the figures printed per game."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.scripts import load_script

from abalone_pbm.robots.base import occupied_mask, push_kind
from abalone_pbm.rules import Board, Rules

fp = load_script("benchmarks/finish_probe.py")


def _trace(plies: int, seed: int) -> tuple[list[dict[str, object]], list[int]]:
    """A trace of seat 1's moves in a random game (as external_match writes it) and the
    kind of each move of seat 2's."""
    rng = random.Random(seed)
    board = Board.from_layout("belgian-daisy", Rules(players=2))
    entries: list[dict[str, object]] = []
    kinds: list[int] = []
    while board.ply < plies and board.outcome() is None:
        moves = list(board.generate_legal_moves())
        occupied = occupied_mask(board)
        # Pushes first, so that the game has some.
        pushing = [m for m in moves if push_kind(occupied, m)]
        move = rng.choice(pushing if pushing and rng.random() < 0.6 else moves)
        if board.turn == 1:
            entries.append({"game": 0, "ply": board.ply, "position": board.position(),
                            "seat": 1, "mine": board.ejected(1), "theirs": board.ejected(2),
                            "move": str(move)})
        else:
            kinds.append(push_kind(occupied, move))
        board.push(move)
    return entries, kinds


def test_the_other_sides_moves_are_read_back_with_their_kind() -> None:
    entries, kinds = _trace(80, seed=5)
    found = [fp.replies(a, b) for a, b in zip(entries, entries[1:])]
    assert found == kinds[: len(found)]
    assert any(found) and not all(found)


def test_contact_figures_per_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries, kinds = _trace(80, seed=5)
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    fp.print_contact(path, from_ply=0)
    out = capsys.readouterr().out
    counted = kinds[: len(entries) - 1]
    share = sum(k > 0 for k in counted) / len(counted)
    assert f"pushes {share:.0%}" in out
    assert "game 1: to ply" in out and "all games:" in out
    # Ours and theirs on e5 and its ring, averaged over our moves (the same figure per
    # game and over all games here: one game).
    boards = [Board(str(e["position"]), Rules(players=2)) for e in entries]
    ours = sum((b.marbles(b.turn) & fp.CORE_CELLS).bit_count() for b in boards) / len(boards)
    theirs = sum((b.marbles(3 - b.turn) & fp.CORE_CELLS).bit_count()
                 for b in boards) / len(boards)
    assert f"core {ours:.1f} / {theirs:.1f}" in out
    assert f"core {ours:.2f} / {theirs:.2f}" in out
    assert fp.CORE_CELLS.bit_count() == 7
