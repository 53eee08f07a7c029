"""The board picture of the HTML mails: geometry, colours, the last move's marks, and
what a real browser shows (headless Chromium, read back cell by cell)."""

from __future__ import annotations

import re

import pytest

from abalone_pbm.render import board_html
from abalone_pbm.render.board_html import board_table, cell_centre, move_marks
from abalone_pbm.rules import CELL_BY_NAME, Board, Rules
from abalone_pbm.rules.geometry import CELLS

from browser import expected_cells, find_boards, read_board, screenshot


def _names(*cells: int) -> set[str]:
    from abalone_pbm.rules import cell_name

    return {cell_name(c) for c in cells}


def test_cell_centres_form_the_hexagon():
    e5 = cell_centre(CELL_BY_NAME["e5"])
    e1 = cell_centre(CELL_BY_NAME["e1"])
    e9 = cell_centre(CELL_BY_NAME["e9"])
    a1 = cell_centre(CELL_BY_NAME["a1"])
    i9 = cell_centre(CELL_BY_NAME["i9"])
    step = 2 * board_html.HALF
    assert e9[0] - e1[0] == 8 * step and e5[0] - e1[0] == 4 * step
    # Row A starts half a cell right of row B, and two cells right of row E.
    assert a1[0] - e1[0] == 2 * step and i9[0] - e5[0] == 2 * step
    assert i9[1] - a1[1] == 8 * board_html.ROW_HEIGHT
    centres = {cell_centre(c) for c in CELLS}
    assert len(centres) == 61
    for x, y in centres:
        assert 0 < x < board_html.TABLE_WIDTH and 0 < y < board_html.TABLE_HEIGHT


def test_an_inline_push_marks_the_line_the_pushed_marble_and_the_empty_cell():
    board = Board("...../....../......./......../..1112.../......../......./....../..... 1 0,0")
    marks = move_marks(board, board.parse_move("e3-e5,e6"))
    assert _names(*marks.moved) == {"e4", "e5", "e6"}
    assert _names(*marks.vacated) == {"e3"}
    assert _names(*marks.pushed) == {"e7"} and marks.pushed_off == 0


def test_a_push_off_the_edge_is_counted():
    board = Board("...../....../..11122/......../........./......../......./....../..... 1 0,0")
    before = board.copy()
    move = board.parse_move("c3-c5,c6")
    marks = move_marks(before, move)
    assert _names(*marks.moved) == {"c4", "c5", "c6"}
    assert _names(*marks.vacated) == {"c3"}
    assert _names(*marks.pushed) == {"c7"} and marks.pushed_off == 1
    board.push(move)
    assert board.ejected(1) == 1 and board.owner(CELL_BY_NAME["c7"]) == 2


def test_a_side_step_vacates_every_cell_and_pushes_nothing():
    board = Board.from_layout("standard")
    move = board.parse_move("c3-c5,d4")
    marks = move_marks(board, move)
    assert _names(*marks.moved) == {"d4", "d5", "d6"}
    assert _names(*marks.vacated) == {"c3", "c4", "c5"}
    assert not marks.pushed and marks.pushed_off == 0


def test_the_table_is_static_html_with_alternative_text():
    board = Board.from_layout("standard", Rules(players=3))
    html = board_table(board, names=["fred", "wilma", "barney"])
    assert "<script" not in html.lower() and "http" not in html and "url(" not in html
    assert re.search(r'aria-label="Abalone board\. black \(fred\): a1 ', html)
    assert "white (wilma)" in html and "blue (barney)" in html
    assert html.count('title="e5 empty"') == 1
    assert len(html) < 30_000
    # Every marble keeps its seat's colour; no two seats share one.
    assert len(set(board_html.SEAT_COLOURS)) == 6


def test_the_last_move_never_changes_a_marbles_colour():
    board = Board.from_layout("standard")
    move = board.parse_move("c3-c5,d4")
    marks = move_marks(board, move)
    board.push(move)
    plain = board_table(board, names=["fred", "wilma"])
    marked = board_table(board, marks=marks, names=["fred", "wilma"])
    fills = re.compile(r'title="(\w\d) [^"]*" style="[^"]*background-color:(#[0-9a-f]{6})')
    assert fills.findall(plain) == fills.findall(marked)
    assert board_html.RING_COLOUR in marked and board_html.RING_COLOUR not in plain


POSITIONS = [
    ("standard", Rules(players=2)),
    ("standard", Rules(players=3)),
    ("standard", Rules(players=6)),
    ("belgian-daisy", Rules(players=2)),
    ("standard", Rules(players=2, variant="princess")),
]


@pytest.mark.parametrize("layout,rules", POSITIONS, ids=lambda p: str(p))
def test_chromium_shows_every_cell_in_its_colour(layout: str, rules: Rules) -> None:
    board = Board.from_layout(layout, rules)
    before = board.copy()
    move = next(iter(board.legal_moves))
    board.push(move)
    marks = move_marks(before, move)
    names = [f"player{s}" for s in range(1, rules.players + 1)]
    page = (
        '<!DOCTYPE html><html><body style="margin:0;background:#fff">'
        "<p>above</p>" + board_table(board, marks=marks, names=names) + "</body></html>"
    )
    image = screenshot(page, width=500, height=500)
    boards = find_boards(image)
    assert len(boards) == 1
    assert read_board(image, boards[0]) == expected_cells(board)


# ----------------------------------------------------- one page for all recipients
def test_a_page_rendered_once_for_all_recipients_is_each_ones_own_page():
    """Inside ``same_board`` the page is rendered once and each recipient's reply
    instructions put in: byte for byte the page rendered for that recipient alone."""
    from abalone_pbm.render import GameView, same_board
    from abalone_pbm.render.html_pages import game_page, page, page_context

    def played(board: Board, plies: int) -> tuple[Board, tuple[tuple[int, int, str], ...]]:
        moves = []
        for ply in range(1, plies + 1):
            move = next(iter(board.generate_legal_moves()))
            moves.append((ply, board.turn, str(move)))
            board.push(move)
        return board, tuple(moves)

    games = [(GameView(101, ("fred", "wilma"), moves, challenger="wilma"), board)
             for board, moves in [played(Board(), 3)]]
    games += [(GameView(102, ("fred", "wilma", "barney"), moves), board)
              for board, moves in [played(Board.from_layout("standard", Rules(players=3)), 4)]]
    recipients = ("fred", "wilma", "barney", None)
    for view, players_board in games:
        for kind in ("board", "new_game", "game_over"):  # the kinds sent without extras
            alone = {}
            for recipient in recipients:
                context = page_context(view, players_board, recipient=recipient,
                                       all_moves=True if kind == "game_over" else None)
                alone[recipient] = page(kind, "Abalone Board 101 fred", context)
            with same_board():
                together = {recipient: game_page(kind, "Abalone Board 101 fred", view,
                                                 players_board, recipient=recipient)
                            for recipient in recipients}
            assert together == alone, (kind, view.number)
            if kind == "board":
                assert len(set(alone.values())) >= 3  # the mover, a player, an onlooker


def test_no_page_template_uses_the_recipient_but_through_its_reply_text():
    """What rendering a page once for all its recipients rests on (``game_page``)."""
    from abalone_pbm.render.html_pages import environment
    from jinja2 import meta

    env = environment()
    for name in env.list_templates(extensions=["html"]):
        source = env.loader.get_source(env, name)[0]
        used = meta.find_undeclared_variables(env.parse(source))
        assert not used & {"recipient", "role"}, name
