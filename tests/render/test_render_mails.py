"""Rendering: the board exactly as the pbmserv help draws it (seed 001), and the mails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from abalone_pbm import protocol, render
from abalone_pbm.render import (
    Comment,
    GameView,
    RatingChange,
    Result,
    Vote,
    board_mail,
    board_subject,
    error_mail,
    game_over_mail,
    help_mail,
    move_table,
    nag_mail,
    new_game_mail,
    render_board,
    signup_mail,
    syntax_error_mail,
    text_mail,
)
from abalone_pbm.rules import Board, Rules
from abalone_pbm.rules.geometry import CENTRE

SEED = Path("/work/shared/seeds/001_4394a753a684cabf.txt")

# Copied from the seed's "Example: c5,d5" diagram (the left board): the standard start.
STANDARD = """\
        1 2 3 4 5
        / / / / / 6
    A- o o o o o / 7
   B- o o o o o o / 8
  C- . . o o o . . / 9
 D- . . . . . . . . /
E- . . . . . . . . .
 F- . . . . . . . .
  G- . . x x x . .
   H- x x x x x x
    I- x x x x x"""

# The right-hand boards of the seed's examples, after the move.
AFTER_C5_D5 = """\
        1 2 3 4 5
        / / / / / 6
    A- o o o o o / 7
   B- o o o o o o / 8
  C- . . o o . . . / 9
 D- . . . . o . . . /
E- . . . . . . . . .
 F- . . . . . . . .
  G- . . x x x . .
   H- x x x x x x
    I- x x x x x"""

AFTER_A1_C3_D4 = """\
        1 2 3 4 5
        / / / / / 6
    A- . o o o o / 7
   B- o o o o o o / 8
  C- . . o o o . . / 9
 D- . . . o . . . . /
E- . . . . . . . . .
 F- . . . . . . . .
  G- . . x x x . .
   H- x x x x x x
    I- x x x x x"""

AFTER_C3_C5_D4 = """\
        1 2 3 4 5
        / / / / / 6
    A- o o o o o / 7
   B- o o o o o o / 8
  C- . . . . . . . / 9
 D- . . . o o o . . /
E- . . . . . . . . .
 F- . . . . . . . .
  G- . . x x x . .
   H- x x x x x x
    I- x x x x x"""

BEFORE_E7_F8 = "11111/111111/..1..../......../......1../......1./..222.2/22222./22222 1 0,0"
AFTER_E7_F8 = """\
        1 2 3 4 5
        / / / / / 6
    A- o o o o o / 7
   B- o o o o o o / 8
  C- . . o . . . . / 9
 D- . . . . . . . . /
E- . . . . . . . . .
 F- . . . . . . o .
  G- . . x x x . o
   H- x x x x x .
    I- x x x x x"""

# The seed's standard boards for three and six players, with coordinates.
THREE = """\
        1 2 3 4 5
        / / / / / 6
    A- 1 1 1 1 1 / 7
   B- 1 1 1 1 1 1 / 8
  C- . . . . . . . / 9
 D- 3 . . . . . . 2 /
E- 3 3 . . . . . 2 2
 F- 3 3 . . . . 2 2
  G- 3 3 . . . 2 2
   H- 3 3 . . 2 2
    I- 3 3 . 2 2"""

SIX = """\
        1 2 3 4 5
        / / / / / 6
    A- . 1 1 1 . / 7
   B- 6 . 1 1 . 2 / 8
  C- 6 6 . 1 . 2 2 / 9
 D- 6 6 6 . . 2 2 2 /
E- . . . . . . . . .
 F- 5 5 5 . . 3 3 3
  G- 5 5 . 4 . 3 3
   H- 5 . 4 4 . 3
    I- . 4 4 4 ."""


def lines_equal(actual: str, expected: str) -> None:
    assert actual.split("\n") == expected.split("\n")


# ------------------------------------------------------------------------ board
def test_standard_start_is_drawn_exactly_like_the_seed() -> None:
    lines_equal(render_board(Board()), STANDARD)


@pytest.mark.skipif(not SEED.exists(), reason="the seed documents are not on this machine")
def test_standard_start_matches_the_seed_file_itself() -> None:
    text = SEED.read_text()
    start = text.index("Example: c5,d5")
    block = text[start:].split("\n")[1:12]
    left = [re.match(r"^(\s*\S.*?)(?:\s{4,}|$)", line).group(1) for line in block]  # type: ignore[union-attr]
    assert render_board(Board()).split("\n") == left


@pytest.mark.parametrize(
    "move, expected",
    [("c5,d5", AFTER_C5_D5), ("a1-c3,d4", AFTER_A1_C3_D4), ("a1-c3,b2", AFTER_A1_C3_D4),
     ("c3-c5,d4", AFTER_C3_C5_D4), ("c3-c5,d6", AFTER_C3_C5_D4)],
)
def test_the_seed_examples_after_the_move(move: str, expected: str) -> None:
    board = Board()
    board.push_text(move)
    lines_equal(render_board(board), expected)


def test_the_seed_push_example() -> None:
    board = Board(BEFORE_E7_F8)
    board.push_text("e7-f8,f8")
    lines_equal(render_board(board), AFTER_E7_F8)
    assert board.ejected(1) == 1


def test_three_and_six_players_use_digits() -> None:
    lines_equal(render_board(Board.from_layout("standard", Rules(players=3))), THREE)
    lines_equal(render_board(Board.from_layout("standard", Rules(players=6))), SIX)
    for players in (3, 4, 5, 6):
        diagram = render_board(Board.from_layout("bowl", Rules(players=players)))
        cells = [
            re.sub(r"/.*$", "", line.split("- ", 1)[1]).split()
            for line in diagram.split("\n")[2:]
        ]
        marks = {mark for row in cells for mark in row}
        assert marks == {"."} | {str(s) for s in range(1, players + 1)}


def test_marks_can_be_chosen() -> None:
    diagram = render_board(Board(), marks="@#")
    assert "    A- @ @ @ @ @ / 7" in diagram.split("\n")
    with pytest.raises(ValueError):
        render_board(Board.from_layout("standard", Rules(players=3)), marks="ox")


class _NeutralCentre(Board):
    """A board with a neutral marble on e5, as the variants will have."""

    def owner(self, cell: int) -> int | None:
        return 0 if cell == CENTRE else super().owner(cell)


def test_neutral_marbles_are_stars() -> None:
    diagram = render_board(_NeutralCentre())
    assert diagram.split("\n")[6] == "E- . . . . * . . . ."


def test_the_board_is_a_template() -> None:
    dirs = render.template_dirs()
    assert dirs and (dirs[-1] / "board.txt").is_file()
    assert "{{ rows[0] }}" in (dirs[-1] / "board.txt").read_text()


# -------------------------------------------------------------------- subjects
def _game(**kw: object) -> GameView:
    return GameView(101, ("fred", "wilma"), **kw)  # type: ignore[arg-type]


def test_board_subject_with_and_without_comment() -> None:
    board = Board()
    assert board_subject(_game(), board) == "Abalone Board 101 fred"
    assert board_subject(_game(comment=Comment("wilma", "hi")), board) == "Abalone Board 101 fred **"
    assert board_subject(_game(comment=Comment("wilma", "  \n")), board) == "Abalone Board 101 fred"
    board.push_text("c3-c5,d4")
    assert board_mail(_game(), board)[0] == "Abalone Board 101 wilma"


def test_game_over_subject_has_an_empty_userid_part() -> None:
    board = Board()
    over = _game(result=Result(("fred",), "wilma resigned"))
    assert board_subject(over, board) == "Abalone Board 101"
    assert game_over_mail(over, board)[0] == "Abalone Board 101"
    with_comment = _game(result=Result(("fred",), "wilma resigned"), comment=Comment("wilma", "gg"))
    assert board_mail(with_comment, board)[0] == "Abalone Board 101 **"


def test_new_game_subject() -> None:
    board = Board()
    subject, body = new_game_mail(_game(challenger="barney"), board, recipient="fred")
    assert subject == "New Abalone Board 101 fred"
    assert "challenged by barney" in body
    assert "1. fred" in body and "plays o, moves first" in body
    assert "2. wilma" in body and "plays x" in body
    assert STANDARD in body
    assert "abalone move 101 fred <password> <move>" in body


# -------------------------------------------------------------------- the mail
def _played(count: int, players: int = 2) -> tuple[Board, tuple[tuple[int, int, str], ...]]:
    board = Board.from_layout("standard", Rules(players=players))
    moves = []
    for ply in range(1, count + 1):
        seat = board.turn
        move = sorted(board.legal_moves, key=str)[ply % 3]
        board.push(move)
        moves.append((ply, seat, str(move)))
    return board, tuple(moves)


def test_board_mail_body_order() -> None:
    board, moves = _played(4)
    game = _game(
        moves=moves,
        observers=("barney",),
        comment=Comment("wilma", "Your move, Fred!"),
        vote=Vote("draw", "wilma", ("fred",)),
        notices=("betty withdrew.",),
    )
    subject, body = board_mail(game, board, recipient="fred")
    assert subject == "Abalone Board 101 fred **"
    order = [
        "Summary of Abalone Board 101",
        "betty withdrew.",
        "wilma proposes a draw.  Waiting for fred to accept or reject.",
        "It is fred's turn (o); the next move is move #5.",
        "  fred (o)",
        "        1 2 3 4 5",
        "Player     pushed off",
        "Observers: barney",
        render.RULE + "\nwilma writes:\nYour move, Fred!\n" + render.RULE,
        "How to move",
        "abalone move 101 fred <password> <move>",
    ]
    positions = [body.index(part) for part in order]
    assert positions == sorted(positions)
    assert body.startswith("Summary of Abalone Board 101\n")
    assert render_board(board) in body


def test_reply_instructions_depend_on_the_recipient() -> None:
    board, moves = _played(2)
    game = _game(moves=moves, observers=("barney",), vote=Vote("undo", "fred", ("wilma",)))
    mover = board_mail(game, board, recipient="fred")[1]
    other = board_mail(game, board, recipient="wilma")[1]
    observer = board_mail(game, board, recipient="barney")[1]
    stranger = board_mail(game, board)[1]
    assert "Reply to this mail with your move on the first line" in mover
    assert "#3" in mover
    assert "It is not your move" in other and "abalone queue 101 wilma" in other
    assert "fred is waiting for your answer: reply with accept or reject." in other
    assert "abalone unsubscribe 101 barney <password>" in observer
    assert 'abalone show 101' in stranger


def test_moves_in_columns_one_per_player() -> None:
    lines = move_table(("fred", "wilma"), [(1, 1, "c3-c5,d4"), (2, 2, "g5-g7,f5"), (3, 1, "c5,d5")])
    assert lines == [
        "  fred (o)     wilma (x)",
        "  1. c3-c5,d4  2. g5-g7,f5",
        "  3. c5,d5",
    ]


def test_move_columns_for_three_players_with_a_skipped_seat() -> None:
    moves = [(1, 1, "a1,b1"), (2, 2, "a2,b2"), (3, 3, "a3,b3"), (4, 1, "a4,b4"), (5, 3, "a5,b5")]
    lines = move_table(("ann", "bob", "cy"), moves)
    assert lines[0] == "  ann (1)   bob (2)   cy (3)"
    assert lines[1] == "  1. a1,b1  2. a2,b2  3. a3,b3"
    assert lines[2] == "  4. a4,b4            5. a5,b5"


def test_only_the_last_rounds_while_playing_all_at_the_end() -> None:
    board, moves = _played(30)
    running = board_mail(_game(moves=moves), board)[1]
    assert "(20 earlier moves not shown)" in running
    assert "21. " in running and " 1. " not in running
    over = game_over_mail(_game(moves=moves, result=Result(("wilma",), "fred forfeited")), board)[1]
    assert "earlier moves" not in over
    assert " 1. " in over and "30. " in over


def test_six_players_fit_in_76_columns() -> None:
    board, moves = _played(40, players=6)
    players = ("alexandra", "bartholomew", "cornelius", "dorothea", "evangeline", "frederick")
    lines = move_table(players, moves)
    assert all(len(line) <= 76 for line in lines)
    assert lines[0].split() == [p[:10] for p in players]
    body = board_mail(GameView(101, players, moves), board)[1]
    assert all(len(line) <= 76 for line in body.split("\n"))


def test_game_over_mail_says_who_won_and_the_ratings() -> None:
    board, moves = _played(6)
    game = _game(
        moves=moves,
        result=Result(("fred",), "pushed off 6 marbles"),
        ratings=(RatingChange("fred", 1600, 1616.4), RatingChange("wilma", 1600, 1583.6, True)),
    )
    subject, body = game_over_mail(game, board, recipient="wilma")
    assert subject == "Abalone Board 101"
    assert "The game is over: fred wins (pushed off 6 marbles)." in body
    assert re.search(r"fred +1600 -> 1616  \(\+16\)", body)
    assert re.search(r"wilma +1600 -> 1584  \(-16\)  provisional", body)
    assert "How to move" not in body and "It is" not in body
    draw = game_over_mail(_game(result=Result((), "move limit reached")), board)[1]
    assert "it is a draw (move limit reached)" in draw


def test_game_over_from_the_rules_outcome() -> None:
    board = Board("11111/111111/..111../......../........./......../..222../222222/22222 1 6,0")
    subject, body = board_mail(_game(), board)
    assert subject == "Abalone Board 101"
    assert "fred wins (pushed off 6 marbles)" in body


def test_error_mail_before_a_board_is_involved() -> None:
    subject_line = "Re: abalone move 101 fred Secret"
    try:
        protocol.parse_command(subject_line, "")
    except protocol.CommandSyntaxError as error:
        subject, body = syntax_error_mail(error, original_subject=subject_line, original_body="hi")
    assert subject == "Abalone error"
    assert body.split("\n")[:2] == [
        'Too few words: "abalone move" needs a move',
        'Syntax is "abalone move <board> <userid> <password> <move>"',
    ]
    assert "> Subject: Re: abalone move 101 fred ********" in body
    assert "Secret" not in body
    assert body.rstrip().endswith("> hi")


def test_error_mail_with_the_unchanged_board() -> None:
    board = Board()
    subject, body = error_mail(
        "It is not your move",
        original_subject="abalone move 101 wilma Pw c3-c5,d4",
        game=_game(comment=Comment("fred", "old comment")),
        board=board,
        recipient="wilma",
    )
    assert subject == "Abalone Board 101 Error"
    assert body.startswith("It is not your move\n")
    assert STANDARD in body
    assert "old comment" not in body
    assert body.index(STANDARD) < body.index("> Subject: abalone move 101 wilma ********")
    assert "Pw" not in body


def test_error_mail_accepts_a_bare_usage() -> None:
    body = error_mail("x", syntax="signup <userid> <password>", original_subject="signup")[1]
    assert 'Syntax is "signup <userid> <password>"' in body


def test_help_is_generated_from_the_registry() -> None:
    subject, body = help_mail()
    assert subject == "Abalone help"
    for spec in protocol.COMMANDS.values():
        assert spec.syntax in " ".join(body.split())
    subject, body = help_mail(["move"])
    assert subject == "Abalone help: move"
    assert body.startswith(protocol.COMMANDS["abalone move"].syntax + "\n")
    assert "(also: abalone board, abalone mvoe)" in body
    assert help_mail(["change", "password"])[0] == "Abalone help: change password"
    assert help_mail(["abalone", "challenge"])[0] == "Abalone help: challenge"
    subject, body = help_mail(["nonsense"])
    assert 'There is no help on "nonsense".' in body


def test_abalone_help_has_rules_notation_and_game_commands() -> None:
    body = help_mail(game=True)[1]
    assert "The rules" in body and "Writing moves" in body
    assert STANDARD in body
    for spec in protocol.game_commands():
        assert spec.syntax in " ".join(body.split())


def test_help_topics() -> None:
    layouts = help_mail(["layouts"])[1]
    assert THREE in layouts and SIX in layouts and "belgian-daisy" in layouts
    assert "-pillar" in help_mail(["variants"])[1]
    robots = help_mail(["robots"], robots=[("aba", "Paul Colley's program")])[1]
    assert "aba" in robots and "Paul Colley's program" in robots
    assert "no computer players" in help_mail(["robots"])[1]
    assert "-- " in help_mail(["reply"])[1]


def test_signup_nag_and_text_mails() -> None:
    subject, body = signup_mail("fred", ["fred@example.org"], server_address="abalone@pbm.example")
    assert subject == "Abalone signup fred"
    assert "fred@example.org" in body and "abalone@pbm.example" in body
    board = Board()
    subject, body = nag_mail(_game(), board, days=7, forfeit_in=14)
    assert subject == "Nag: Abalone Board 101 fred"
    assert "7 days" in body and "14 days" in body
    assert "Reply to this mail with your move" in body
    subject, body = text_mail(
        "Abalone vacation fred", "Vacation is on.", original_subject="vacation fred Pw on"
    )
    assert body == "Vacation is on.\n\nYour mail was:\n\n> Subject: vacation fred ******** on\n"


def test_mails_are_tidy_and_fit_a_fixed_width_reader() -> None:
    board, moves = _played(12)
    game = _game(moves=moves, comment=Comment("fred", "hello"), observers=("barney",))
    mails = [
        board_mail(game, board, recipient="fred"),
        board_mail(game, board, recipient="wilma"),
        new_game_mail(_game(), Board(), recipient="fred"),
        game_over_mail(_game(result=Result(("fred",), "x")), board),
        nag_mail(game, board, days=7, forfeit_in=0),
        help_mail(),
        help_mail(game=True),
        help_mail(["layouts", "variants", "reply", "notation"]),
        signup_mail("fred", ["fred@example.org"]),
        error_mail("Bad", original_subject="x", game=game, board=board),
    ]
    for subject, body in mails:
        assert body.endswith("\n") and not body.endswith("\n\n")
        assert "\n\n\n" not in body
        for line in body.split("\n"):
            assert line == line.rstrip()
            assert len(line) <= 76, line


def test_describe_options() -> None:
    lines = render.describe_options({"bowl": True, "teams": True, "target": "5", "nagtime": "3"}, 4)
    assert lines[0] == "Layout: bowl"
    assert "Target: 5 marbles to push off" in lines
    assert any("3 days" in line for line in lines)
    assert render.describe_options({})[0] == "Layout: standard"
