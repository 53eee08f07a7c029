"""The position text (DESIGN.md 3.2), the board's state, push/pop and the hash."""

from __future__ import annotations

import pytest
from rules_helpers import CELLS, STANDARD_START, make_position, parse_position

from abalone_pbm.rules import (
    CELL_BY_NAME,
    CELL_NAMES,
    STANDARD_START as CORE_STANDARD_START,
    Board,
    PositionError,
    Rules,
    cell_name,
    get_layout,
    starting_position,
)
from abalone_pbm.rules import CELLS as CORE_CELLS


def test_standard_start_constant() -> None:
    assert CORE_STANDARD_START == STANDARD_START
    assert Board().position() == STANDARD_START
    assert str(Board()) == STANDARD_START
    assert repr(Board()) == f"Board({STANDARD_START!r})"


def test_cell_names_follow_pbmserv() -> None:
    assert [cell_name(c) for c in CORE_CELLS] == CELLS
    assert set(CELL_BY_NAME) == set(CELLS) and len(CELL_NAMES) == 61
    for name in CELLS:
        assert CELL_NAMES[CELL_BY_NAME[name]] == name


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("layout", ["standard", "bowl"])
def test_starting_position_text(players: int, layout: str) -> None:
    text = starting_position(get_layout(layout, players))
    rows, turn, ejected = text.split()
    assert rows == "/".join(get_layout(layout, players).rows)
    assert turn == "1" and ejected == ",".join(["0"] * players)
    board = Board(text)
    assert board.players == players and board.rules == Rules(players=players)
    assert board.position() == text


def test_reading_a_position() -> None:
    text = make_position({"a1": 3, "e5": 1, "i9": 2, "f2": 3}, 2, (1, 0, 4))
    board = Board(text)
    assert board.position() == text
    assert board.turn == 2 and board.players == 3
    assert board.owner(CELL_BY_NAME["a1"]) == 3
    assert board.owner(CELL_BY_NAME["e5"]) == 1
    assert board.owner(CELL_BY_NAME["e6"]) is None
    assert board.marbles(3) == (1 << CELL_BY_NAME["a1"]) | (1 << CELL_BY_NAME["f2"])
    assert board.marble_count(3) == 2
    assert board.ejected(3) == 4 and board.ejected_counts == (1, 0, 4)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "a position is"),
        ("11111/111111 1 0,0", "9 rows"),
        (STANDARD_START.replace("11111/", "1111/", 1), "row A has 5 cells, not 4"),
        (STANDARD_START.replace("/22222 ", "/222222 "), "row I has 5 cells, not 6"),
        (STANDARD_START.replace(" 1 0,0", " 3 0,0"), "player to move must be 1 to 2"),
        (STANDARD_START.replace(" 1 0,0", " x 0,0"), "player to move"),
        (STANDARD_START.replace(" 1 0,0", " 0 0,0"), "player to move"),
        (STANDARD_START.replace(" 1 0,0", " 1 0"), "2 to 6 can play"),
        (STANDARD_START.replace(" 1 0,0", " 1 0,0,0,0,0,0,0"), "2 to 6 can play"),
        (STANDARD_START.replace(" 1 0,0", " 1 0,a"), "bad ejected counts"),
        (STANDARD_START.replace(" 1 0,0", " 1 0,-1"), "cannot be negative"),
        (STANDARD_START.replace(" 1 0,0", " 1 0,0 extra"), "a position is"),
        (STANDARD_START.replace("11111/", "11131/", 1), "a4 holds '3'"),
        (STANDARD_START.replace("11111/", "1111x/", 1), "a5 holds 'x'"),
    ],
)
def test_bad_positions_say_why(text: str, words: str) -> None:
    with pytest.raises(PositionError, match=words):
        Board(text)


def test_position_error_is_a_value_error() -> None:
    assert issubclass(PositionError, ValueError)


def test_default_board_per_player_count() -> None:
    assert Board(rules=Rules(players=4)).position() == starting_position(get_layout("standard", 4))


# ------------------------------------------------------------ push and pop
def test_push_pop_restores_everything() -> None:
    board = Board(make_position({"e5": 1, "e6": 1, "e7": 1, "e8": 2, "e9": 2, "a1": 2}, 1, (2, 3)))
    before = (board.position(), board.zobrist_hash(), board.turn, board.ejected_counts)
    move = board.push_text("e5-e7,e8")
    assert board.ply == 1 and board.peek() == move and board.move_stack == [move]
    assert board.ejected(1) == 3
    assert board.pop() == move
    assert (board.position(), board.zobrist_hash(), board.turn, board.ejected_counts) == before
    assert board.ply == 0 and board.peek() is None


def test_copy_is_independent() -> None:
    board = Board()
    board.push_text("c5,d5")
    clone = board.copy()
    clone.push_text("g5,f5")
    assert board.position() != clone.position()
    assert board.ply == 1 and clone.ply == 2
    clone.pop()
    clone.pop()
    assert clone.position() == STANDARD_START
    assert board.position() != STANDARD_START


def test_zobrist_hash_depends_on_the_player_to_move() -> None:
    a = Board(STANDARD_START)
    b = Board(STANDARD_START.replace(" 1 0,0", " 2 0,0"))
    assert a.zobrist_hash() != b.zobrist_hash()


def test_zobrist_after_pushes_matches_recomputation() -> None:
    board = Board(make_position({"e5": 1, "e6": 1, "e7": 1, "e8": 2, "e9": 2, "a1": 2}, 1, (0, 0)))
    board.push_text("e5-e7,e8")
    assert board.zobrist_hash() == Board(board.position()).zobrist_hash()


def test_parse_position_helper_round_trip() -> None:
    # The tests' own reader agrees with the core's writer.
    marbles, turn, ejected = parse_position(STANDARD_START)
    assert make_position(marbles, turn, ejected) == STANDARD_START
    assert len(marbles) == 28


def test_a_copy_is_independent_of_its_original() -> None:
    from abalone_pbm.rules import Board

    board = Board.from_layout("standard")
    board.push_text("c3-c5,d4")
    after_one = board.position()
    clone = board.copy()
    clone.pop()
    clone.push_text("a1-c3,d4")
    clone.pop()
    assert board.position() == after_one
    board.pop()
    assert board.position() == Board.from_layout("standard").position()
