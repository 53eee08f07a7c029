"""The worker names the boards whose turn a mail may have handed to a computer player,
so that ``serve`` wakes its robots for those boards only (and not after every mail)."""

from __future__ import annotations

from abalone_pbm.db.models import ROBOT_TURNS, Game
from abalone_pbm.service.robots import ensure_robot_users, next_robot_turn

from .harness import Harness


def _named_by(harness: Harness, sender: str, subject: str, body: str = "") -> set[int]:
    """The boards the worker names for one mail (the robots do not play meanwhile)."""
    named: set[int] = set()

    def robots(boards: set[int] | None = None) -> int:
        named.update(boards or ())
        return 0

    harness.robots = robots
    harness.mail(sender, subject, body)
    return named


def test_a_move_that_hands_the_turn_to_a_robot_names_its_board(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.signup("wilma", "pw")
    robot = harness.robots
    # Fred moves first against pebble: the new game waits for fred, no robot is named.
    assert _named_by(harness, "fred@example.org", "abalone challenge fred pebble") == set()
    assert _named_by(harness, "fred@example.org", "abalone challenge fred wilma") == set()
    # Fred's move hands board 101 to pebble: named; a move in the human game: nothing.
    assert _named_by(harness, "fred@example.org", "abalone move 101 fred pw c3-c5,d4") == {101}
    assert _named_by(harness, "fred@example.org", "abalone move 102 fred pw c3-c5,d4") == set()
    assert _named_by(harness, "wilma@example.org", "abalone move 102 wilma pw g7-g5,f6") \
        == set()
    # A mail that changes nothing names nothing; nor does a failed command.
    assert _named_by(harness, "fred@example.org", "abalone show 101") == set()
    assert _named_by(harness, "fred@example.org", "abalone move 101 fred pw c3-c5,d4") == set()
    # Looking only at the named board finds pebble's turn, and pebble plays it.
    with harness.database.read() as session:
        turn = next_robot_turn(session, only={101})
        assert turn is not None and turn.robot == "pebble"
        assert next_robot_turn(session, only={102}) is None
    assert robot({101}) == 1
    with harness.database.read() as session:
        assert next_robot_turn(session) is None


def test_a_new_game_where_a_robot_moves_first_names_its_board(harness: Harness) -> None:
    harness.signup("fred", "pw")
    assert _named_by(harness, "fred@example.org", "abalone challenge pebble fred") == {101}


def test_the_flag_is_conservative_when_the_seats_are_not_loaded(harness: Harness) -> None:
    """A game changed without its seats read: the robots are woken for it all the same
    (they read the board and find no robot to move)."""
    harness.signup("fred", "pw")
    harness.signup("wilma", "pw")
    harness.mail("fred@example.org", "abalone challenge fred wilma")
    with harness.database.write() as session:
        ensure_robot_users(session, harness.clock)
        game = session.query(Game).filter_by(number=101).one()
        game.position = game.position  # the same seat to move, but a change all the same
        game.to_move = 2
        session.flush()
        assert session.info.get(ROBOT_TURNS) == {101}
