"""The variants on the board diagram and in the mails: the special marbles' symbols
(``*`` for the pillar, the princess and the ball; capitals or A-F for treasures), the
legend under the board, and ``help variants``."""

from __future__ import annotations

import pytest

from abalone_pbm import render
from abalone_pbm.render import (
    GameView,
    board_legend,
    board_mail,
    game_over_mail,
    help_mail,
    nag_mail,
    new_game_mail,
    render_board,
    treasure_marks,
)
from abalone_pbm.rules import Board, Rules

PLAYERS = ("fred", "wilma", "barney", "betty", "dino", "pebbles")

CENTRE_ROW = "E- . . . . * . . . ."

THIEF_TWO = """\
        1 2 3 4 5
        / / / / / 6
    A- o o O o o / 7
   B- o o o o o o / 8
  C- . . o o o . . / 9
 D- . . . . . . . . /
E- . . . . . . . . .
 F- . . . . . . . .
  G- . . x x x . .
   H- x x x x x x
    I- x x X x x"""

THIEF_THREE = """\
        1 2 3 4 5
        / / / / / 6
    A- 1 1 A 1 1 / 7
   B- 1 1 1 1 1 1 / 8
  C- . . . . . . . / 9
 D- 3 . . . . . . 2 /
E- 3 3 . . . . . 2 2
 F- 3 3 . . . . 2 2
  G- C 3 . . . 2 B
   H- 3 3 . . 2 2
    I- 3 3 . 2 2"""

LEGENDS = {
    "pillar": [
        "* = the pillar: it never moves; nothing can move onto it, push it or be",
        "    pushed onto it.",
    ],
    "princess": [
        "* = the princess (neutral): anyone may push it like an opponent marble;",
        "    whoever pushes it off the board wins.",
    ],
    "soccer": [
        "* = the ball (neutral): anyone may push it like an opponent marble.",
        "    Push it off an edge of your opponent's half to win; off an edge of",
        "    your own half and you lose.",
        "o defends the top, upper-left and upper-right edges, x the bottom,",
        "    lower-left and lower-right edges.  Off e1 or e9 along row E is a",
        "    goal for the pusher.",
    ],
    "thief": [
        "O and X = the treasures of o and x: they move like the others, but",
        "    whoever pushes off an opponent's treasure wins.",
    ],
}


def _game(players: int = 2, **kw: object) -> GameView:
    return GameView(101, PLAYERS[:players], **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ the diagram
@pytest.mark.parametrize("variant", ["pillar", "princess", "soccer"])
def test_neutral_marble_on_e5(variant: str) -> None:
    diagram = render_board(Board(rules=Rules(variant=variant)))
    assert diagram.split("\n")[6] == CENTRE_ROW
    assert diagram.replace("*", ".") == render_board(Board())


def test_treasures_are_capitals_for_two_players() -> None:
    assert render_board(Board(rules=Rules(variant="thief"))) == THIEF_TWO


def test_treasures_are_letters_for_more_players() -> None:
    board = Board.from_layout("standard", Rules(players=3, variant="thief"))
    assert render_board(board) == THIEF_THREE


def test_treasure_marks() -> None:
    assert treasure_marks("ox") == "OX"
    assert treasure_marks("123456") == "ABCDEF"
    assert treasure_marks("@#") == "AB"
    diagram = render_board(Board(rules=Rules(variant="thief")), marks="@#")
    assert "    A- @ @ A @ @ / 7" in diagram.split("\n")
    assert "    I- # # B # #" in diagram.split("\n")


def test_a_treasure_follows_its_marble_on_the_board() -> None:
    board = Board(rules=Rules(variant="thief"))
    board.push_text("a3-c3,d3")  # the treasure moves from a3 to b3
    lines = render_board(board).split("\n")
    assert lines[2] == "    A- o o . o o / 7"
    assert lines[3] == "   B- o o O o o o / 8"


# -------------------------------------------------------------------- the legend
@pytest.mark.parametrize("variant", sorted(LEGENDS))
def test_legend_under_the_board(variant: str) -> None:
    board = Board(rules=Rules(variant=variant))
    assert board_legend(board) == LEGENDS[variant]
    body = board_mail(_game(options={variant: True}), board, recipient="fred")[1]
    assert render_board(board) + "\n\n" + "\n".join(LEGENDS[variant]) + "\n" in body
    assert body.index("    I- ") < body.index(LEGENDS[variant][0]) < body.index("Player")


def test_legend_for_more_players() -> None:
    board = Board.from_layout("standard", Rules(players=3, variant="thief"))
    assert board_legend(board) == [
        "A, B and C = the treasures of 1, 2 and 3: they move like the others, but",
        "    whoever pushes off an opponent's treasure wins.",
    ]
    six = Board.from_layout("standard", Rules(players=6, variant="princess"))
    assert board_legend(six) == LEGENDS["princess"]


def test_legend_from_the_options() -> None:
    # The board's rules say which variant it is; failing that, the challenge options.
    board = Board()
    assert board_legend(board) == []
    assert board_legend(board, options={"princess": True}) == LEGENDS["princess"]
    assert board_legend(board, options={"ko": True, "target": "3"}) == []
    assert board_legend(board, options={"princess": True, "thief": True}) == []
    assert "* =" not in board_mail(_game(), board, recipient="fred")[1]


def test_soccer_legend_uses_the_marks() -> None:
    board = Board(rules=Rules(variant="soccer"))
    legend = board_legend(board, marks="@#")
    assert legend[3].startswith("@ defends the top, upper-left and upper-right edges, # the")


# ---------------------------------------------------------------------- the mails
def test_new_game_mail_shows_the_variant() -> None:
    board = Board(rules=Rules(variant="princess"))
    body = new_game_mail(_game(options={"princess": True}), board, recipient="fred")[1]
    assert "Princess: whoever pushes off the neutral marble on e5 wins" in body
    assert CENTRE_ROW in body and LEGENDS["princess"][0] in body


def test_game_over_mail_after_a_variant_win() -> None:
    board = Board(rules=Rules(variant="princess"))
    moves = []
    for ply, text in enumerate(
        "c3-c4,d3 g7,g8 d3-d4,e3 g8,g7 e3-e4,e5 g7,g8 e4-e5,e6 g8,g7 e5-e6,e7 g7,g8 "
        "e6-e7,e8 g8,g7 e7-e8,e9".split(),
        start=1,
    ):
        moves.append((ply, board.turn, text))
        board.push_text(text)
    subject, body = game_over_mail(_game(moves=tuple(moves), options={"princess": True}), board)
    assert subject == "Abalone Board 101"
    assert "The game is over: fred wins (pushed off the princess)." in body
    # The princess is gone from the board; the legend still says what * was.
    assert "*" not in render_board(board)
    assert LEGENDS["princess"][0] in body
    assert board_mail(_game(moves=tuple(moves)), board)[1] == body


@pytest.mark.parametrize(("variant", "players"), [("thief", 2), ("thief", 6), ("soccer", 2),
                                                  ("pillar", 4), ("princess", 3)])
def test_variant_mails_fit_a_fixed_width_reader(variant: str, players: int) -> None:
    board = Board.from_layout("standard", Rules(players=players, variant=variant))
    game = _game(players, options={variant: True})
    for _, body in (
        board_mail(game, board, recipient="fred"),
        new_game_mail(game, board, recipient="fred"),
        nag_mail(game, board, days=7, forfeit_in=3),
    ):
        assert "\n\n\n" not in body
        assert all(len(line) <= 76 and line == line.rstrip() for line in body.split("\n"))
        assert "\n".join(board_legend(board)) in body


# --------------------------------------------------------------------- the help
OPTIONS = ["-bowl", "-layout=", "-teams", "-ko", "-target=", "-movelimit=", "-pillar",
           "-princess", "-soccer", "-thief", "-nagtime=", "-forfeittime=", "-totaltime="]
LAYOUTS = ["belgian-daisy", "german-daisy", "dutch-daisy", "swiss-daisy", "domination",
           "pyramid", "the-wall", "snakes", "alien-attack"]


def test_help_variants_explains_every_option_with_an_example() -> None:
    subject, body = help_mail(["variants"])
    assert subject == "Abalone help: variants"
    examples = [line.strip() for line in body.split("\n")
                if line.strip().startswith("abalone challenge -")]
    for option in OPTIONS:
        assert f"  {option}" in body, option
        assert any(example.split()[2].startswith(option) for example in examples), option
    for name in LAYOUTS:
        assert name in body
    assert "default 7" in body and "default 21" in body and "no limit" in body
    assert all(len(line) <= 72 for line in body.split("\n"))
    assert help_mail(["options"])[1] == body


def test_help_variant_facts_match_the_rules() -> None:
    body = " ".join(help_mail(["variants"])[1].split())
    assert "(a3 and i7 in the standard two-player game)" in body
    board = Board(rules=Rules(variant="thief"))
    assert board.position().startswith("11a11/") and board.position().split()[0].endswith("22b22")
    assert "Off e1 or e9 straight along row E counts as a goal." in body
    assert "not played on the standard layout for five players" in body
    with pytest.raises(ValueError, match="has a marble there"):
        Board(rules=Rules(players=5, variant="princess"))


def test_describe_options_names_the_variants() -> None:
    for variant, word in (("pillar", "Pillar:"), ("princess", "Princess:"),
                          ("soccer", "Soccer:"), ("thief", "Thief:")):
        assert any(line.startswith(word) for line in render.describe_options({variant: True}))
