"""The end of the game: target, move limit, resignation, blocked players and ko."""

from __future__ import annotations

import pytest
from rules_helpers import STANDARD_START, make_position, row_e

from abalone_pbm.rules import Board, GameOverError, IllegalMoveError, Outcome, Rules


def test_six_wins_two_players() -> None:
    board = Board(row_e("....11122", ejected=(5, 0)))
    assert board.outcome() is None and not board.is_game_over()
    board.push_text("e5-e7,e8")
    assert board.outcome() == Outcome((1,), "pushed off 6 marbles")
    assert board.position() == row_e(".....1112", turn=2, ejected=(6, 0))


@pytest.mark.parametrize("target", [1, 3, 7])
def test_target_changes_six(target: int) -> None:
    rules = Rules(target=target)
    board = Board(row_e("....11122", ejected=(target - 1, 0)), rules)
    assert board.outcome() is None
    board.push_text("e5-e7,e8")
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1,)
    assert str(target) in outcome.reason
    # ... and with one marble fewer it is not over.
    short = Board(row_e("....11122", ejected=(max(target - 2, 0), 0)), rules)
    short.push_text("e5-e7,e8")
    assert (short.outcome() is None) is (target > 1)


def test_bad_rules() -> None:
    with pytest.raises(ValueError, match="2 to 6 players"):
        Rules(players=1)
    with pytest.raises(ValueError, match="2 to 6 players"):
        Rules(players=7)
    with pytest.raises(ValueError, match="at least one marble"):
        Rules(target=0)
    with pytest.raises(ValueError, match="at least one move"):
        Rules(movelimit=0)


def test_rules_must_match_the_position() -> None:
    from abalone_pbm.rules import PositionError

    with pytest.raises(PositionError, match="3 players"):
        Board(make_position({"e5": 1}, 1, (0, 0, 0)), Rules(players=2))


# ---------------------------------------------------------------- move limit
def test_movelimit_more_ejections_wins() -> None:
    rules = Rules(movelimit=2)
    marbles = {"e5": 1, "e6": 1, "e7": 1, "e8": 2, "e9": 2, "b1": 2}
    board = Board(make_position(marbles, 1, (0, 0)), rules)
    board.push_text("e5-e7,e8")
    assert board.outcome() is None  # one ply of two
    board.push(next(iter(board.generate_legal_moves())))
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1,)
    assert "move limit of 2" in outcome.reason


def test_movelimit_equal_is_a_draw() -> None:
    board = Board(rules=Rules(movelimit=3))
    for text in ("c5,d5", "g5,f5", "d5,e5"):
        assert board.outcome() is None
        board.push_text(text)
    outcome = board.outcome()
    assert outcome is not None and outcome.draw and outcome.winners == ()
    assert "equal" in outcome.reason
    assert list(board.generate_legal_moves()) == []
    with pytest.raises(GameOverError):
        board.parse_move("g6,f6")


def test_movelimit_with_equal_nonzero_scores_is_a_draw() -> None:
    board = Board(STANDARD_START.replace(" 0,0", " 2,2"), Rules(movelimit=1))
    board.push_text("c5,d5")
    outcome = board.outcome()
    assert outcome is not None and outcome.draw


# ------------------------------------------------------------------- resign
def test_resign_two_players() -> None:
    board = Board()
    board.resign(1)
    assert not board.is_active(1) and board.is_active(2)
    assert board.turn == 2
    assert board.outcome() == Outcome((2,), "the last one able to play")
    assert "11111" in board.position()  # the marbles stay on the board


def test_resign_three_players_leaves_the_last_one_standing() -> None:
    board = Board.from_layout("standard", Rules(players=3))
    board.resign(2)
    assert board.outcome() is None
    board.push(next(iter(board.generate_legal_moves())))
    assert board.turn == 3  # seat 2 has left the turn order
    assert board.marble_count(2) == 11
    board.resign(3)
    assert board.turn == 1
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1,)


def test_resign_in_teams_leaves_the_other_team() -> None:
    board = Board.from_layout("standard", Rules(players=4, teams=True))
    board.resign(2)
    assert board.outcome() is None  # seat 4 still plays for that team
    board.resign(4)
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1, 3)


def test_reinstate() -> None:
    board = Board.from_layout("standard", Rules(players=3))
    board.resign(3)
    board.reinstate(3)
    assert board.is_active(3)
    board.push(next(iter(board.generate_legal_moves())))
    board.push(next(iter(board.generate_legal_moves())))
    assert board.turn == 3


# ------------------------------------------------------------ blocked sides
def test_a_side_that_cannot_move_loses() -> None:
    # Player 2's only marble is walled into the a1 corner: player 1 is the last able to play.
    board = Board(make_position({"a1": 2, "a2": 1, "b1": 1, "b2": 1}, 1, (0, 0)))
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1,)


def test_no_marbles_left_loses() -> None:
    board = Board(make_position({"e5": 1}, 1, (0, 0)))
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1,)


# ----------------------------------------------------------------------- ko
def _shuffle(board: Board) -> None:
    for text in ("c5,d5", "g5,f5", "d5,c5", "f5,g5"):
        board.push_text(text)


def test_ko_forbids_recreating_own_position() -> None:
    board = Board(rules=Rules(ko=True))
    _shuffle(board)
    assert board.position() == STANDARD_START
    # c5,d5 would recreate the position that arose after player 1's own first move.
    with pytest.raises(IllegalMoveError, match="ko rule"):
        board.parse_move("c5,d5")
    legal = [str(m) for m in board.generate_legal_moves()]
    assert "c5,d5" not in legal
    assert len(legal) == 43 == board.count_legal_moves() == len(board.legal_moves)
    assert board.position() == STANDARD_START  # checking ko changed nothing
    board.push_text("c4,d4")  # anything else is fine


def test_ko_three_players() -> None:
    board = Board.from_layout("standard", Rules(players=3, ko=True))
    start = board.position()
    for text in ("b1,c1", "d8,d7", "d1,d2", "c1,b1", "d7,d8", "d2,d1"):
        board.push_text(text)
    assert board.position() == start
    with pytest.raises(IllegalMoveError, match="ko rule"):
        board.parse_move("b1,c1")
    board.parse_move("b2,c2")
    board.push_text("b6,c6")
    # Player 2 is not barred from d8,d7: the position it would make is new.
    board.parse_move("d8,d7")


def test_without_ko_repetition_is_allowed() -> None:
    board = Board()
    _shuffle(board)
    board.push_text("c5,d5")
    assert board.position().startswith("11111/111111/..11.../....1...")


def test_ko_history_is_taken_back_with_pop() -> None:
    board = Board(rules=Rules(ko=True))
    _shuffle(board)
    for _ in range(4):
        board.pop()
    assert board.position() == STANDARD_START
    board.parse_move("c5,d5")  # the history that made it a repeat is gone


# A position found by a random ko playout: player 2's single marble on e9 has one move,
# e9,d8, and it would recreate the position player 2 made with c7,d8 earlier.  So player
# 2 has no legal move and, like any player without a legal move (DESIGN 3.4), is skipped.
KO_START = "...../....../......./....1111/........./.2....../......./...1../.1.1. 1 0,0"
KO_MOVES = (
    "d5-d6,c4 f3,e2 i6,h6 e2,d2 h7,g7 d2,c2 d8,e9 c2,b1 c4,d5 b1,c2 d7,e7 c2,d2 c5,c6 "
    "d2,e3 c6,c7 e3,d2 e9,e8 d2,c2 e8,f9 c2,b2 h6,i6 b2,c3 d5,d4 c3,b3 c7,d7 b3,a2 d4,d5 "
    "a2,a3 i6,h6 a3,a2 h6,h5 a2,a3 g7,h7 a3,a4 h7,h6 a4,b5 h5,g5 b5,a5 e7,e6 a5,b6 d7,e8 "
    "b6,c7 d5,c4 c7,d8 g5-h6,g4 d8,e9 g4-h5,g5"
).split()


def _ko_board() -> Board:
    board = Board(KO_START, Rules(ko=True))
    for text in KO_MOVES:
        board.push_text(text)
    return board


def test_ko_can_forbid_a_players_only_move() -> None:
    board = _ko_board()
    # Player 2's only move, e9,d8, would repeat its own earlier position: it is skipped.
    assert board.marble_count(2) == 1
    assert [str(m) for m in board._generate(2)] == ["e9,d8"]
    assert board.turn == 1
    assert board._has_legal_move(1) and not board._has_legal_move(2)


def test_ko_never_leaves_the_player_to_move_without_a_move() -> None:
    board = _ko_board()
    # The invariant every other rule keeps: the player to move can move, or it is over.
    assert board.outcome() is not None or any(True for _ in board.generate_legal_moves())
