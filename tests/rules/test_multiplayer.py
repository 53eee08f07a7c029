"""Three to six players: mixed pushes, turn order, free-for-all and team play."""

from __future__ import annotations

import pytest
from rules_helpers import Delta, make_position, move_key, naive_successors

from abalone_pbm.rules import Board, IllegalMoveError, Rules

RIGHT: Delta = (0, 1)


def row(cells: str, extra: dict[str, int] | None = None) -> dict[str, int]:
    """Row E as drawn (nine characters) plus any other marbles."""
    assert len(cells) == 9
    marbles = {f"e{i + 1}": int(ch) for i, ch in enumerate(cells) if ch != "."}
    return (extra or {}) | marbles


# Far-away marbles so that nobody runs out of marbles or moves by accident.
SPARE3 = {"a1": 2, "i9": 3}
SPARE4 = {"a1": 2, "a5": 3, "i9": 4}


# ------------------------------------------------------------ free-for-all
def test_three_push_one_of_each_of_two_opponents() -> None:
    position = make_position(row("..11123..", SPARE3), 1, (0, 0, 0))
    board = Board(position)
    move = board.push_text("e3-e5,e6")
    assert board.position() == make_position(row("...11123.", SPARE3), 2, (0, 0, 0))
    assert (frozenset({"e3", "e4", "e5"}), RIGHT) == move_key(move)


def test_mixed_colours_ejection_is_credited_to_the_mover() -> None:
    position = make_position(row("....11123", SPARE3), 1, (0, 2, 1))
    board = Board(position)
    board.push_text("e5-e7,e8")
    assert board.position() == make_position(row(".....1112", SPARE3), 2, (1, 2, 1))
    assert board.ejected(1) == 1
    assert board.lost(3) == 1 and board.lost(2) == 0


@pytest.mark.parametrize(
    ("cells", "text", "why"),
    [
        ("..111232.", "e3-e5,e6", "three cannot push three"),
        ("...1123..", "e4-e5,e6", "two cannot push two"),
        ("..111231.", "e3-e5,e6", "blocked by your own marble on e8"),
        ("...11231.", "e4-e5,e6", "two cannot push two"),
    ],
)
def test_mixed_colours_count_together(cells: str, text: str, why: str) -> None:
    board = Board(make_position(row(cells, SPARE3), 1, (0, 0, 0)))
    with pytest.raises(IllegalMoveError, match=why):
        board.parse_move(text)


def test_mixed_pushes_agree_with_the_reference() -> None:
    position = make_position(row(".1112.3..", {"d5": 2, "f5": 3, "a1": 2}), 1, (0, 0, 0))
    board = Board(position)
    successors = naive_successors(position)
    assert {move_key(m) for m in board.generate_legal_moves()} == set(successors)


def test_turns_go_round_six_seats() -> None:
    board = Board.from_layout("standard", Rules(players=6))
    seen = [board.turn]
    for _ in range(6):
        board.push(next(iter(board.generate_legal_moves())))
        seen.append(board.turn)
    assert seen == [1, 2, 3, 4, 5, 6, 1]


def test_turn_skips_a_seat_without_marbles() -> None:
    position = make_position(row("..11.....", {"i9": 3}), 1, (0, 0, 0))
    board = Board(position)
    board.push_text("e3-e4,e5")
    assert board.turn == 3
    assert board.position().split()[1] == "3"


def test_turn_skips_seats_without_marbles_four_players() -> None:
    board = Board(make_position({"e5": 1, "i9": 4}, 1, (0, 0, 0, 0)))
    board.push_text("e5,e6")
    assert board.turn == 4
    board.push_text("i9,i8")
    assert board.turn == 1


def test_turn_skips_the_player_who_lost_the_last_marble() -> None:
    position = make_position(row(".....1112", {"i9": 3, "a1": 1}), 1, (0, 0, 0))
    board = Board(position)
    board.push_text("e6-e8,e9")
    assert board.marble_count(2) == 0
    assert board.position() == make_position(row("......111", {"i9": 3, "a1": 1}), 3, (1, 0, 0))


def test_turn_skips_a_seat_that_cannot_move() -> None:
    # Player 2's only marble sits in the a1 corner, walled in by player 1.
    marbles = {"a1": 2, "a2": 1, "b1": 1, "b2": 1, "e5": 1, "i9": 3}
    board = Board(make_position(marbles, 1, (0, 0, 0)))
    board.push_text("e5,e6")
    assert board.turn == 3
    assert board.outcome() is None


def test_free_for_all_win_with_any_colours() -> None:
    marbles = {"e6": 1, "e7": 1, "e8": 1, "e9": 2, "a3": 1, "a4": 1, "a5": 3, "i5": 2, "i9": 3}
    board = Board(make_position(marbles, 1, (4, 0, 0)))
    board.push_text("e6-e8,e9")  # player 2's marble off: five
    assert board.outcome() is None
    board.push_text("i5,i6")
    board.push_text("i9,h9")
    assert board.outcome() is None
    board.push_text("a3-a4,a5")  # player 3's marble off: six
    outcome = board.outcome()
    assert outcome is not None
    assert outcome.winners == (1,) and not outcome.draw
    assert "6" in outcome.reason
    assert board.is_game_over()
    # The player to move is still the next seat with marbles, even though the game is over.
    assert board.turn == 2
    assert board.position().endswith(" 2 6,0,0")


def test_five_is_not_enough() -> None:
    board = Board(make_position(row("....11123", SPARE3), 1, (4, 0, 0)))
    board.push_text("e5-e7,e8")
    assert board.ejected(1) == 5 and board.outcome() is None


# ------------------------------------------------------------------- teams
TEAMS4 = Rules(players=4, teams=True)


def team_board(
    cells: str, extra: dict[str, int] | None = None, ejected: tuple[int, ...] = (0,) * 4
) -> Board:
    marbles = row(cells, SPARE4 | (extra or {}))
    return Board(make_position(marbles, 1, ejected), TEAMS4)


def test_partners_sit_opposite() -> None:
    assert [TEAMS4.side_of(s) for s in (1, 2, 3, 4)] == [0, 1, 0, 1]
    assert TEAMS4.seats_of_side(0) == (1, 3) and TEAMS4.seats_of_side(1) == (2, 4)
    six = Rules(players=6, teams=True)
    assert [six.seats_of_side(k) for k in range(3)] == [(1, 4), (2, 5), (3, 6)]
    assert six.sides == 3 and TEAMS4.sides == 2 and Rules(players=4).sides == 4
    with pytest.raises(ValueError):
        Rules(players=3, teams=True)
    with pytest.raises(ValueError):
        Rules(players=5, teams=True)


@pytest.mark.parametrize(
    ("cells", "text", "result", "ejected"),
    [
        ("..132....", "e3-e4,e5", "...132...", 0),  # own + partner push one
        ("..1332...", "e3-e5,e6", "...1332..", 0),  # own + two partners push one
        ("..11322..", "e3-e5,e6", "...11322.", 0),  # three (one a partner) push two
        ("..13324..", "e3-e5,e6", "...13324.", 0),  # ... two of different opponents
        ("......132", "e7-e8,e9", ".......13", 1),  # own + partner eject one
    ],
)
def test_partner_marbles_help_push(cells: str, text: str, result: str, ejected: int) -> None:
    board = team_board(cells)
    board.push_text(text)
    assert board.position() == make_position(row(result, SPARE4), 2, (ejected, 0, 0, 0))


def test_two_opponents_of_one_team_count_together() -> None:
    board = team_board("..1324...")
    with pytest.raises(IllegalMoveError, match="two cannot push two"):
        board.parse_move("e3-e4,e5")


def test_line_with_partner_must_start_with_own_marble() -> None:
    board = team_board("..312....")
    with pytest.raises(IllegalMoveError, match="e3 holds your partner's marble, not one of yours"):
        board.parse_move("e3-e4,e5")
    keys = {move_key(m) for m in board.generate_legal_moves()}
    assert (frozenset({"e3", "e4"}), RIGHT) not in keys


def test_line_with_partner_has_at_most_three() -> None:
    board = team_board(".11332...")
    keys = {move_key(m) for m in board.generate_legal_moves()}
    assert (frozenset({"e3", "e4", "e5"}), RIGHT) in keys  # the front three push one
    assert (frozenset({"e2", "e3", "e4"}), RIGHT) not in keys
    with pytest.raises(IllegalMoveError, match="at most three"):
        board.parse_move("e2,e3")
    with pytest.raises(IllegalMoveError, match="e5 is occupied by your partner's marble"):
        board.parse_move("e2-e4,e5")


def test_partner_marbles_are_never_pushed() -> None:
    board = team_board("..113....")
    with pytest.raises(IllegalMoveError, match="e5 is occupied by your partner's marble"):
        board.parse_move("e3-e4,e5")
    board = team_board("..11123..")
    with pytest.raises(IllegalMoveError, match="blocked by your partner's marble on e7"):
        board.parse_move("e3-e5,e6")
    keys = {move_key(m) for m in board.generate_legal_moves()}
    assert (frozenset({"e3", "e4", "e5"}), RIGHT) not in keys


def test_partner_marbles_cannot_move_without_a_push() -> None:
    board = team_board("..13.....")
    with pytest.raises(IllegalMoveError, match="only move with yours in a push"):
        board.parse_move("e3-e4,e5")
    with pytest.raises(IllegalMoveError, match="e4 holds your partner's marble"):
        board.parse_move("e4,e5")
    with pytest.raises(IllegalMoveError, match="e4 holds your partner's marble"):
        board.parse_move("e3-e4,d3")  # a side-step with a partner marble
    keys = {move_key(m) for m in board.generate_legal_moves()}
    assert not any("e4" in cells for cells, _ in keys)


def test_team_moves_agree_with_the_reference() -> None:
    position = make_position(
        row(".1132413.", {"d4": 3, "d5": 2, "f5": 1, "f6": 4, "a1": 2, "i9": 4}), 1, (0, 0, 0, 0)
    )
    board = Board(position, TEAMS4)
    assert {move_key(m) for m in board.generate_legal_moves()} == set(
        naive_successors(position, teams=True)
    )
    assert board.count_legal_moves() == len(list(board.generate_legal_moves()))


def test_team_win_on_combined_ejections() -> None:
    # Seats 1 and 3 have pushed off 3 + 2; seat 2 alone has 4 (not a win in teams).
    board = team_board("....11124", ejected=(3, 4, 2, 0))
    assert board.outcome() is None
    board.push_text("e5-e7,e8")
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1, 3)
    assert board.side_score(0) == 6 and board.side_score(1) == 4


def test_team_win_six_players() -> None:
    rules = Rules(players=6, teams=True)
    marbles = row("....44425", {"a1": 2, "a2": 3, "a3": 1, "i5": 6})
    board = Board(make_position(marbles, 4, (1, 0, 0, 4, 0, 0)), rules)
    board.push_text("e5-e7,e8")
    outcome = board.outcome()
    assert outcome is not None and outcome.winners == (1, 4)


def test_free_for_all_four_players_no_team_win() -> None:
    board = Board(make_position(row("....11124", SPARE4), 1, (3, 4, 2, 0)))
    board.push_text("e5-e7,e8")
    assert board.outcome() is None  # 4 each at most: nobody has six alone
