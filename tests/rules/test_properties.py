"""Properties over many positions: the generators against each other and a reference,
the notation round trip, the position text, marble accounting, push/pop and the hash."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rules_helpers import (
    CELLS,
    DELTAS,
    board_successors,
    naive_successors,
    parse_position,
    played_boards,
    played_games,
    random_positions,
    step,
)

from abalone_pbm.rules import Board, IllegalMoveError, Move, Rules
from abalone_pbm.rules.geometry import OFFSETS

SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _board(position: str, teams: bool = False) -> Board:
    players = len(position.split()[2].split(","))
    return Board(position, Rules(players=players, teams=teams))


# ------------------------------------------------------- generator agreement
@SETTINGS
@given(random_positions())
def test_fast_and_general_generators_agree(position: str) -> None:
    board = _board(position)
    for seat in range(1, board.players + 1):
        if not board.marbles(seat):
            continue
        fast = board._generate_fast(seat)
        general = board._generate_general(seat)
        assert len(fast) == len(set(fast)), "the fast generator repeats a move"
        assert len(general) == len(set(general)), "the general generator repeats a move"
        assert set(fast) == set(general)


@SETTINGS
@given(random_positions())
def test_count_equals_generated(position: str) -> None:
    board = _board(position)
    assert board.count_legal_moves() == len(list(board.generate_legal_moves()))
    assert len(board.legal_moves) == board.count_legal_moves()


@settings(max_examples=60, deadline=None)
@given(random_positions())
def test_moves_and_results_match_the_reference(position: str) -> None:
    """Every legal move and the exact position after it, against the cell-walking reference."""
    board = _board(position)
    if board.is_game_over():
        return
    assert board_successors(board) == naive_successors(position)


@settings(max_examples=60, deadline=None)
@given(random_positions(players=4) | random_positions(players=6))
def test_team_moves_and_results_match_the_reference(position: str) -> None:
    board = _board(position, teams=True)
    if board.is_game_over():
        return
    assert board_successors(board) == naive_successors(position, teams=True)
    assert board.count_legal_moves() == len(list(board.generate_legal_moves()))


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_generators_agree_along_whole_games(players: int) -> None:
    rng = random.Random(players)
    for layout in ("standard", "bowl"):
        for _ in range(3):
            board = Board.from_layout(layout, Rules(players=players))
            for _ in range(200):
                seat = board.turn
                fast = board._generate_fast(seat)
                assert set(fast) == set(board._generate_general(seat))
                assert board.count_legal_moves() == len(list(board.generate_legal_moves()))
                moves = list(board.generate_legal_moves())
                # The player to move can always move, unless the game is over.
                assert moves or board.is_game_over()
                if not moves:
                    break
                assert board.marble_count(board.turn) > 0
                # Prefer pushes so that games get to ejections and seats run out.
                pushes = [m for m in moves if _is_push(board, m)]
                board.push(rng.choice(pushes if pushes and rng.random() < 0.7 else moves))


def _is_push(board: Board, move: Move) -> bool:
    """An in-line move whose front marble runs into an opponent's."""
    if not move.is_inline:
        return False
    offset = OFFSETS[move.direction]
    front = max(move.marbles) if offset > 0 else min(move.marbles)
    return board.owner(front + offset) is not None


# ----------------------------------------------------------------- notation
@SETTINGS
@given(played_boards())
def test_canonical_text_parses_back(board: Board) -> None:
    for move in list(board.generate_legal_moves()):
        text = str(move)
        assert board.parse_move(text) == move
        assert board.parse_move(text.upper()) == move
        assert board.parse_move(text.replace(",", " , ").replace("-", " - ")) == move


def _candidate_texts(start: str) -> list[str]:
    """Every text of the two forms whose first cell is ``start``."""
    out = []
    for d in DELTAS:
        target = step(start, d)
        if target:
            out.append(f"{start},{target}")
    for axis in DELTAS:
        line = [start]
        for _ in range(2):
            nxt = step(line[-1], axis)
            if nxt is None:
                break
            line.append(nxt)
            for end in (line[0], line[-1]):
                for d in DELTAS:
                    target = step(end, d)
                    if target:
                        out.append(f"{line[0]}-{line[-1]},{target}")
    return out


@settings(max_examples=25, deadline=None)
@given(random_positions(), st.booleans())
def test_reader_accepts_exactly_the_legal_moves(position: str, teams: bool) -> None:
    players = len(position.split()[2].split(","))
    teams = teams and players in (4, 6)
    board = _board(position, teams)
    if board.is_game_over():
        return
    marbles, turn, _ = parse_position(position)
    side = board.rules.side_of(turn)
    mine = [c for c in CELLS if c in marbles and board.rules.side_of(marbles[c]) == side]
    accepted = set()
    for cell in mine:
        for text in _candidate_texts(cell):
            try:
                accepted.add(board.parse_move(text))
            except IllegalMoveError:
                pass
    assert accepted == set(board.generate_legal_moves())
    assert board.position() == position


# ------------------------------------------------------------ the position
@SETTINGS
@given(played_boards(max_plies=120))
def test_position_text_round_trips(board: Board) -> None:
    text = board.position()
    again = Board(text, board.rules)
    assert again.position() == text
    assert again.zobrist_hash() == board.zobrist_hash()
    assert set(again.generate_legal_moves()) == set(board.generate_legal_moves())


@SETTINGS
@given(played_games(max_plies=150))
def test_marbles_are_accounted_for(game: tuple[str, Board]) -> None:
    start, board = game
    players = range(1, board.players + 1)
    at_start = Board(start, board.rules)
    total = sum(at_start.marble_count(p) for p in players)
    on_board = sum(board.marble_count(p) for p in players)
    assert on_board + sum(board.ejected_counts) == total
    assert sum(board.lost(p) for p in players) == sum(board.ejected_counts)
    for p in players:
        assert board.lost(p) == at_start.marble_count(p) - board.marble_count(p) >= 0


@SETTINGS
@given(played_boards(max_plies=40), st.randoms(use_true_random=False))
def test_push_pop_restores_position_and_hash(board: Board, rnd: random.Random) -> None:
    text, key, ply = board.position(), board.zobrist_hash(), board.ply
    moves = list(board.generate_legal_moves())
    pushed = 0
    for _ in range(8):
        if not moves:
            break
        board.push(rnd.choice(moves))
        pushed += 1
        # The incremental hash equals one computed from scratch.
        assert board.zobrist_hash() == Board(board.position(), board.rules).zobrist_hash()
        moves = list(board.generate_legal_moves())
    for _ in range(pushed):
        board.pop()
    assert (board.position(), board.zobrist_hash(), board.ply) == (text, key, ply)


@pytest.mark.parametrize("seed", range(4))
def test_push_pop_round_trip_through_a_whole_game(seed: int) -> None:
    rng = random.Random(seed)
    board = Board.from_layout("belgian-daisy")
    seen = [(board.position(), board.zobrist_hash())]
    for _ in range(300):
        moves = list(board.generate_legal_moves())
        if not moves:
            break
        board.push(rng.choice(moves))
        seen.append((board.position(), board.zobrist_hash()))
    while board.ply:
        assert (board.position(), board.zobrist_hash()) == seen.pop()
        board.pop()
    assert seen == [(board.position(), board.zobrist_hash())]
