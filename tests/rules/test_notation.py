"""Move notation: the seed's worked examples, every spelling, and errors that say why."""

from __future__ import annotations

import random

import pytest
from rules_helpers import (
    CELLS,
    DELTAS,
    STANDARD_START,
    make_position,
    move_key,
    parse_position,
    random_playout,
    row_e,
    step,
)

from abalone_pbm.rules import (
    CELL_BY_NAME,
    Board,
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    MoveError,
    Rules,
)

# The position drawn in the seed for ``e7-f8,f8``: o (player 1) to move, x is player 2.
SEED_E7_F8 = "11111/111111/..1..../......../......1../......1./..222.2/22222./22222 1 0,0"


def cell(name: str) -> int:
    return CELL_BY_NAME[name]


def play(text: str, position: str = STANDARD_START, rules: Rules | None = None) -> str:
    board = Board(position, rules)
    board.push_text(text)
    return board.position()


# ------------------------------------------------------------ seed examples
def test_seed_c5_d5() -> None:
    assert play("c5,d5") == (
        "11111/111111/..11.../....1.../........./......../..222../222222/22222 2 0,0"
    )


@pytest.mark.parametrize("text", ["a1-c3,b2", "a1-c3,d4"])
def test_seed_a1_c3(text: str) -> None:
    assert play(text) == (
        ".1111/111111/..111../...1..../........./......../..222../222222/22222 2 0,0"
    )


@pytest.mark.parametrize("text", ["c3-c5,d4", "c3-c5,d6"])
def test_seed_c3_c5_side_step(text: str) -> None:
    assert play(text) == (
        "11111/111111/......./...111../........./......../..222../222222/22222 2 0,0"
    )


def test_seed_e7_f8_position_is_the_drawn_one() -> None:
    board = Board(SEED_E7_F8)
    assert board.marble_count(1) == 14 and board.marble_count(2) == 14
    assert board.owner(cell("e7")) == 1 and board.owner(cell("f8")) == 1
    assert board.owner(cell("g9")) == 2 and board.owner(cell("h9")) is None


@pytest.mark.parametrize("text", ["e7-f8,f8", "e7-f8,g9"])
def test_seed_e7_f8_ejects_g9(text: str) -> None:
    board = Board(SEED_E7_F8)
    move = board.push_text(text)
    assert str(move) == "e7-f8,g9"
    assert board.position() == (
        "11111/111111/..1..../......../........./......1./..222.1/22222./22222 2 1,0"
    )
    assert board.ejected(1) == 1 and board.ejected(2) == 0
    assert board.marble_count(2) == 13 and board.lost(2) == 1


def test_seed_equivalent_spellings_are_one_move() -> None:
    board = Board()
    assert board.parse_move("a1-c3,b2") == board.parse_move("a1-c3,d4")
    assert board.parse_move("c3-c5,d4") == board.parse_move("c3-c5,d6")
    seed = Board(SEED_E7_F8)
    assert seed.parse_move("e7-f8,f8") == seed.parse_move("e7-f8,g9")


# ------------------------------------------------------------ reading text
@pytest.mark.parametrize(
    "text",
    ["C5,D5", "c5, d5", " c5 ,d5 ", "C 5 , D 5", "c5,\td5"],
)
def test_case_and_blanks_do_not_matter(text: str) -> None:
    assert Board().parse_move(text) == Board().parse_move("c5,d5")


@pytest.mark.parametrize("text", ["A1 - C3 , B2", "a1-C3,d4", "  a1-c3 ,d4"])
def test_line_case_and_blanks(text: str) -> None:
    assert str(Board().parse_move(text)) == "a1-c3,d4"


def test_trailing_marble_notation_moves_the_whole_line() -> None:
    # c3,c4: c4 holds one of the mover's marbles, so the line c3-c5 moves right.
    board = Board()
    move = board.parse_move("c3,c4")
    assert move == board.parse_move("c3-c5,c6")
    assert move.size == 3 and move.is_inline


def _spellings(line: list[str], delta: tuple[int, int], marbles: dict[str, int]) -> set[str]:
    """Every text that, by DESIGN 3.1, names moving ``line`` one step by ``delta``."""
    out = set()
    if len(line) == 1:
        target = step(line[0], delta)
        assert target is not None
        out.add(f"{line[0]},{target}")
        return out
    ends = (line[0], line[-1])
    for a, b in (ends, ends[::-1]):
        for c in CELLS:
            direction = None
            for d in DELTAS:
                if step(a, d) == c:
                    direction = d
            if direction is None:
                for d in DELTAS:
                    if step(b, d) == c:
                        direction = d
            if direction == delta:
                out.add(f"{a}-{b},{c}")
    # The trailing-marble form: rear,next names the run of own marbles from the rear.
    axis_forward = step(line[0], delta) == line[1]
    axis_back = step(line[-1], delta) == line[-2]
    if axis_forward or axis_back:
        rear, second = (line[0], line[1]) if axis_forward else (line[-1], line[-2])
        front = line[-1] if axis_forward else line[0]
        beyond = step(front, delta)
        if beyond is None or marbles.get(beyond) != marbles[rear]:
            out.add(f"{rear},{second}")
    return out


@pytest.mark.parametrize("seed", range(6))
def test_every_spelling_of_every_legal_move_parses_to_it(seed: int) -> None:
    rng = random.Random(seed)
    players = 2 + seed % 3
    board = Board.from_layout("standard", Rules(players=players))
    random_playout(board, 10 + 7 * seed, rng)
    marbles, _, _ = parse_position(board.position())
    checked = 0
    for move in list(board.generate_legal_moves()):
        cells, delta = move_key(move)
        line = sorted(cells, key=CELLS.index)
        for text in _spellings(line, delta, marbles):
            assert board.parse_move(text) == move, text
            checked += 1
    assert checked > 50


def test_canonical_spelling_rules() -> None:
    board = Board()
    # A single marble: from,to.
    assert str(board.parse_move("c5,d5")) == "c5,d5"
    # In-line: rear-front,target where the front marble goes.
    assert str(board.parse_move("c3,c4")) == "c3-c5,c6"
    assert str(board.parse_move("c5-c3,c2")) == "c5-c3,c2"
    assert str(board.parse_move("a1-c3,b2")) == "a1-c3,d4"
    # Side-step: first-last in reading order, target of the first.
    assert str(board.parse_move("c5-c3,d6")) == "c3-c5,d4"
    assert str(board.parse_move("b2-b1,c2")) == "b1-b2,c1"


# ------------------------------------------------------------ errors say why
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("foo", ["is not a move", "c5,d5"]),
        ("", ["is not a move"]),
        ("c5-d5", ["is not a move"]),
        ("c5,d5,e5", ["is not a move"]),
        ("j1,j2", ["j1 is not a cell of the board"]),
        ("a6,a5", ["a6 is not a cell of the board"]),
        ("a1,a0", ["a0 is not a cell of the board"]),
        ("f1,f2", ["f1 is not a cell of the board"]),
        ("c3-c5,c10", ["c10 is not a cell of the board"]),
    ],
)
def test_unreadable_text_is_invalid(text: str, words: list[str]) -> None:
    board = Board()
    with pytest.raises(InvalidMoveError) as info:
        board.parse_move(text)
    assert not isinstance(info.value, IllegalMoveError)
    for word in words:
        assert word in str(info.value)
    assert board.position() == STANDARD_START


# Positions for the illegal-move table; player 1 always moves.
LINE_3V3 = row_e("...111222")
LINE_2V2 = row_e("...1122..")
LINE_1V1 = row_e("....12...")
SANDWICH = row_e("..11121..")
SANDWICH_2 = row_e("..111221.")
FOUR_V_3 = row_e(".1111222.")
GAP = row_e("..1.112..")
EDGE_PAIR = make_position({"b5": 1, "b6": 1, "i5": 2})
SIDE = make_position({"d4": 1, "d5": 1, "c4": 2, "e1": 2})
OWN_AHEAD = make_position({"d3": 1, "d4": 1, "d5": 1, "e1": 2})
THREE_PLAYERS = make_position({"e4": 1, "e5": 1, "e6": 2, "e7": 3, "e8": 2, "a1": 3}, 1, (0, 0, 0))


@pytest.mark.parametrize(
    ("position", "text", "words"),
    [
        (STANDARD_START, "e5,e6", ["e5 is empty"]),
        (STANDARD_START, "g5,f5", ["g5 holds your opponent's marble", "not one of yours"]),
        (STANDARD_START, "c3-c4,c5", ["c5 is occupied by your own marble"]),
        (STANDARD_START, "a1-a2,b1", ["b1 is occupied by your own marble"]),
        (STANDARD_START, "c5,e5", ["c5 and e5 are not next to each other"]),
        (STANDARD_START, "c3-d5,e5", ["c3 and d5 do not form a straight line"]),
        (STANDARD_START, "a1-a4,b1", ["do not form a straight line of two or three"]),
        (STANDARD_START, "c3-c5,e5", ["e5 is not next to c3 or c5"]),
        (STANDARD_START, "a3-a5,a4", ["a5 would leave the board"]),
        (STANDARD_START, "b1,a1", ["a1 would leave the board"]),
        (EDGE_PAIR, "b5-b6,a5", ["b6 would leave the board"]),
        (STANDARD_START, "b1,b2", ["b1,b2 would move 6 marbles (b1-b6)", "at most three"]),
        (OWN_AHEAD, "d3-d4,d5", ["d5 is occupied by your own marble"]),
        (LINE_3V3, "e4-e6,e7", ["three cannot push three"]),
        (LINE_2V2, "e4-e5,e6", ["two cannot push two"]),
        (LINE_1V1, "e5,e6", ["e6 is occupied by your opponent's marble", "one marble cannot push"]),
        (SANDWICH, "e3-e5,e6", ["the push is blocked by your own marble on e7"]),
        (SANDWICH_2, "e3-e5,e6", ["the push is blocked by your own marble on e8"]),
        (FOUR_V_3, "e3-e5,e6", ["three cannot push three"]),
        (FOUR_V_3, "e2,e3", ["at most three move at once"]),
        (GAP, "e3-e5,e6", ["e4 is empty"]),
        (SIDE, "d4-d5,c4", ["c4 is occupied by your opponent's marble", "a side-step cannot push"]),
        (THREE_PLAYERS, "e6,e7", ["e6 holds player 2's marble"]),
        (THREE_PLAYERS, "e4-e5,e6", ["two cannot push three"]),
    ],
)
def test_illegal_moves_explain_why(position: str, text: str, words: list[str]) -> None:
    board = Board(position)
    key = board.zobrist_hash()
    with pytest.raises(IllegalMoveError) as info:
        board.parse_move(text)
    for word in words:
        assert word in str(info.value), (str(info.value), word)
    # An illegal move never changes the board.
    assert board.position() == position
    assert board.zobrist_hash() == key
    assert board.ply == 0
    with pytest.raises(IllegalMoveError):
        board.push_text(text)
    assert board.position() == position


def test_errors_are_move_errors_and_value_errors() -> None:
    assert issubclass(InvalidMoveError, MoveError)
    assert issubclass(IllegalMoveError, MoveError)
    assert issubclass(MoveError, ValueError)
    assert issubclass(GameOverError, IllegalMoveError)


def test_no_move_after_the_game_has_ended() -> None:
    board = Board(row_e("....11122", ejected=(5, 0)))
    board.push_text("e5-e7,e8")
    assert board.outcome() is not None
    with pytest.raises(GameOverError, match="the game has ended"):
        board.parse_move("e6-e8,e9")
    assert list(board.generate_legal_moves()) == []
    assert len(board.legal_moves) == 0


def test_move_value_object() -> None:
    board = Board()
    move = board.parse_move("c3-c5,d4")
    assert move == Move(move.cells, move.direction)
    assert hash(move) == hash(Move(move.cells, move.direction))
    assert move != board.parse_move("c3-c5,c6")
    assert repr(move) == "Move(c3-c5,d4)"
    assert move.text() == "c3-c5,d4"
    assert not move.is_inline and move.size == 3
    assert [cell("c3"), cell("c4"), cell("c5")] == move.marbles
    assert move in board.legal_moves
    assert "c3-c5,d4" not in board.legal_moves  # only Move objects are members
