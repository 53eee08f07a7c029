"""Pushes (sumito): the seed's three pushes and its ejection, and every push rule."""

from __future__ import annotations

import pytest
from rules_helpers import (
    DELTAS,
    Delta,
    make_position,
    move_key,
    naive_successors,
    parse_position,
    row_e,
    step,
)

from abalone_pbm.rules import Board, IllegalMoveError


def legal_keys(board: Board) -> set[tuple[frozenset[str], Delta]]:
    return {move_key(m) for m in board.generate_legal_moves()}


def line_key(cells: str, delta: Delta) -> tuple[frozenset[str], Delta]:
    return frozenset(cells.split()), delta


def must_step(cell: str, delta: Delta) -> str:
    target = step(cell, delta)
    assert target is not None
    return target


def row_board(row: str) -> Board:
    """Player 1 to move; row E as drawn, plus a far-away marble of player 2 on a1."""
    marbles = {f"e{i + 1}": int(ch) for i, ch in enumerate(row) if ch != "."}
    return Board(make_position({"a1": 2} | marbles))


def after(position: str, text: str) -> str:
    board = Board(position)
    board.push_text(text)
    return board.position()


# ------------------------------------------------------- the seed's pushes
# The seed draws each push on row E with x (player 2) pushing o (player 1) to the right.
@pytest.mark.parametrize(
    ("name", "before", "text", "result"),
    [
        ("two push one", "....221..", "e5-e6,e7", ".....221."),
        ("three push one", "...2221..", "e4-e6,e7", "....2221."),
        ("three push two", "...22211.", "e4-e6,e7", "....22211"),
    ],
)
def test_seed_pushes(name: str, before: str, text: str, result: str) -> None:
    assert after(row_e(before, turn=2), text) == row_e(result, turn=1)


def test_seed_ejection_one_oh_piece_is_removed() -> None:
    board = Board(row_e("....22211", turn=2))
    move = board.push_text("e5-e7,e8")
    assert str(move) == "e5-e7,e8"
    assert board.position() == row_e(".....2221", turn=1, ejected=(0, 1))
    assert board.ejected(2) == 1 and board.ejected(1) == 0
    assert board.marble_count(1) == 1 and board.lost(1) == 1


# ------------------------------------------------------- which pushes exist
RIGHT: Delta = (0, 1)


@pytest.mark.parametrize(
    ("row", "line", "legal"),
    [
        # 2 > 1, 3 > 1, 3 > 2 push; into an empty cell or over the edge.
        ("...112...", "e4 e5", True),
        ("..1112...", "e3 e4 e5", True),
        ("..11122..", "e3 e4 e5", True),
        ("......112", "e7 e8", True),
        (".....1112", "e6 e7 e8", True),
        ("....11122", "e5 e6 e7", True),
        # Equal or greater numbers block.
        ("...11222.", "e4 e5", False),
        ("...1122..", "e4 e5", False),
        ("...111222", "e4 e5 e6", False),
        (".111222..", "e2 e3 e4", False),
        # A single marble never pushes.
        ("....12...", "e5", False),
        # Sandwich: one of the mover's marbles behind the pushed ones.
        ("...1121..", "e4 e5", False),
        ("..11121..", "e3 e4 e5", False),
        ("..111221.", "e3 e4 e5", False),
        # A gap makes two lines, neither long enough.
        ("..1.112..", "e3 e4 e5", False),
        ("..1.112..", "e5 e6", True),  # ... the two in front alone still push one
        # Own marbles beyond three never count.
        (".1111222.", "e3 e4 e5", False),
        (".1111222.", "e2 e3 e4", False),
        (".111122..", "e3 e4 e5", True),  # the front three push two
        ("11111....", "e1 e2 e3", False),  # no four-marble moves at all
    ],
)
def test_push_rules(row: str, line: str, legal: bool) -> None:
    board = row_board(row)
    assert not board.is_game_over()
    keys = legal_keys(board)
    assert (line_key(line, RIGHT) in keys) is legal
    # The notation reader agrees with the generator.
    cells = line.split()
    if len(cells) > 1:
        text = f"{cells[0]}-{cells[-1]},{must_step(cells[-1], RIGHT)}"
    else:
        text = f"{cells[0]},{must_step(cells[0], RIGHT)}"
    if legal:
        assert board.parse_move(text) in board.legal_moves
    else:
        with pytest.raises(IllegalMoveError):
            board.parse_move(text)


def test_four_in_a_row_moves_only_three_at_a_time() -> None:
    board = row_board("11111...2")
    keys = legal_keys(board)
    assert line_key("e1 e2 e3 e4", RIGHT) not in keys
    assert line_key("e3 e4 e5", RIGHT) in keys
    assert line_key("e2 e3 e4", RIGHT) not in keys  # blocked by its own front marble


def test_side_steps_never_push() -> None:
    # d4-d5 with player 2 on c4 (above d4): the up-right side-step would push; it is illegal.
    position = make_position({"d4": 1, "d5": 1, "c4": 2, "i9": 2})
    board = Board(position)
    up_right: Delta = (-1, 0)
    assert line_key("d4 d5", up_right) not in legal_keys(board)
    with pytest.raises(IllegalMoveError, match="side-step cannot push"):
        board.parse_move("d4-d5,c4")
    # The same side-step with c4 empty is fine.
    free = Board(make_position({"d4": 1, "d5": 1, "i9": 2}))
    assert line_key("d4 d5", up_right) in legal_keys(free)


def test_side_step_needs_every_target_empty() -> None:
    position = make_position({"e3": 1, "e4": 1, "e5": 1, "d5": 2, "i9": 2})
    board = Board(position)
    up_right: Delta = (-1, 0)
    assert line_key("e3 e4 e5", up_right) not in legal_keys(board)
    assert line_key("e3 e4", up_right) in legal_keys(board)


# ----------------------------------------------------- ejection off each edge
# The middle cell of each of the six edges and the two directions that leave the board there.
EDGES = {
    "top": ("a3", [(-1, -1), (-1, 0)]),
    "upper right": ("c7", [(0, 1), (-1, 0)]),
    "lower right": ("g9", [(0, 1), (1, 1)]),
    "bottom": ("i7", [(1, 1), (1, 0)]),
    "lower left": ("g3", [(0, -1), (1, 0)]),
    "upper left": ("c1", [(0, -1), (-1, -1)]),
}
CASES = [
    (edge, cell, delta, own, pushed)
    for edge, (cell, deltas) in EDGES.items()
    for delta in deltas
    for own, pushed in ((2, 1), (3, 1), (3, 2))
]


def _back(cell: str, delta: Delta, n: int) -> str:
    for _ in range(n):
        cell = must_step(cell, (-delta[0], -delta[1]))
    return cell


@pytest.mark.parametrize(("edge", "cell", "delta", "own", "pushed"), CASES)
def test_ejection_off_every_edge(
    edge: str, cell: str, delta: Delta, own: int, pushed: int
) -> None:
    assert step(cell, delta) is None  # the edge really is there
    enemies = [_back(cell, delta, k) for k in range(pushed)]
    line = [_back(cell, delta, pushed + k) for k in range(own)]
    for mover, victim in ((1, 2), (2, 1)):
        marbles = {c: mover for c in line} | {c: victim for c in enemies}
        marbles["e5" if "e5" not in marbles else "a1"] = victim  # the victim keeps a marble
        ejected = [3, 4]
        position = make_position(marbles, mover, ejected)
        board = Board(position)
        rear, front = line[-1], line[0]
        text = f"{rear}-{front},{must_step(front, delta)}"
        move = board.push_text(text)
        assert str(move) == text
        expected = dict(marbles)
        for c in [*line, *enemies]:
            del expected[c]
        for c in line:
            expected[must_step(c, delta)] = mover
        for c in enemies[1:]:
            expected[must_step(c, delta)] = victim
        credited = list(ejected)
        credited[mover - 1] += 1
        assert board.position() == make_position(expected, victim, credited), edge
        assert board.ejected(mover) == ejected[mover - 1] + 1
        assert board.ejected(victim) == ejected[victim - 1]
        board.pop()
        assert board.position() == position


@pytest.mark.parametrize("delta", DELTAS)
def test_pushes_in_every_direction_match_the_reference(delta: Delta) -> None:
    # Three of player 1 behind one and two of player 2 along a line through the centre.
    cells = [_back("e5", delta, k) for k in (4, 3, 2, 1)] + ["e5"]
    nxt = must_step("e5", delta)
    marbles = {cells[0]: 1, cells[1]: 1, cells[2]: 1, cells[3]: 2, cells[4]: 2}
    position = make_position(marbles)
    board = Board(position)
    successors = {move_key(m): m for m in board.generate_legal_moves()}
    key = (frozenset(cells[:3]), delta)
    assert key in successors
    board.push(successors[key])
    reference = naive_successors(position)[key]
    assert board.position() == reference
    moved, _, _ = parse_position(reference)
    assert moved[nxt] == 2 and moved["e5"] == 2 and moved[cells[3]] == 1
    assert cells[0] not in moved
