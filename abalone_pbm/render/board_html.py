"""The board as a picture for the HTML part of board mails (DESIGN §2.7).

Pure functions: a rules :class:`~abalone_pbm.rules.Board` (and, optionally, what the
last move did) in, an HTML fragment out.  The picture is a table with inline CSS only --
the drawing technique that survives webmail, desktop and phone clients alike: no
script, no image, no remote resource, no ``<style>`` block it depends on.

Geometry.  The table has :data:`COLUMNS` columns of :data:`HALF` pixels; a cell takes
two of them, so a row of the hexagon can start half a cell further left or right than
the one above.  Cell (row r, diagonal d) sits at half-column ``2*d - r`` (e5, the
centre, at 6), relative to :data:`FIRST_X`.  Every row is :data:`ROW_HEIGHT` pixels
high; row ``-1`` carries the diagonal numbers 1-5.  :func:`cell_centre` gives a cell's
centre in pixels from the top-left corner of the board table, so a test can look at
a screenshot and read each cell's colour.

Colours.  One colour per seat, the same in every mail of a game, picked for
colour-blind readers: black and white for seats 1 and 2 (the classic set, told apart
by lightness alone), then blue, orange, bluish green and reddish purple of the
Okabe-Ito palette.  The board keeps its own colours in dark mode (a picture).  The last
move never changes a marble's colour: its cells get a light background and the moved
marbles a solid ring, pushed marbles a dashed ring, the cells left empty a dotted one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from html import escape
from typing import Final, Sequence

from ..rules import Board, Move
from ..rules.geometry import BOARD_MASK, CELLS, DIAGONAL_OF, OFFSETS, ROW_OF, ROWS, cell_name

#: Width of one half-column, height of one row, size of a marble (pixels).
HALF: Final = 14
ROW_HEIGHT: Final = 25
MARBLE: Final = 24
RING: Final = 3
#: Half-column of the leftmost table column (the row letter of row E).
FIRST_X: Final = -4
COLUMNS: Final = 22
#: Space around the table's content (pixels); part of the table's own box.
PADDING: Final = 8
TABLE_WIDTH: Final = COLUMNS * HALF + 2 * PADDING
TABLE_HEIGHT: Final = 10 * ROW_HEIGHT + 2 * PADDING

BOARD_COLOUR: Final = "#8b6f4e"
HOLE_COLOUR: Final = "#6b5238"
LABEL_COLOUR: Final = "#f4ead8"
MOVE_BACKGROUND: Final = "#d9c49a"
OUTLINE: Final = "#1f1f1f"
#: Vermillion: apart from black and white marbles by lightness, and from the board.
RING_COLOUR: Final = "#d55e00"
#: Seats 1-6.
SEAT_COLOURS: Final = ("#000000", "#ffffff", "#0072b2", "#e69f00", "#009e73", "#cc79a7")
SEAT_COLOUR_NAMES: Final = ("black", "white", "blue", "orange", "green", "purple")
#: The neutral marble of the pillar, princess and soccer variants.
NEUTRAL_COLOUR: Final = "#f0e442"
NEUTRAL_COLOUR_NAME: Final = "yellow"
#: The ring of a treasure (thief): the marble keeps its seat's colour.
TREASURE_RING: Final = "#f0e442"


@dataclass(frozen=True)
class MoveMarks:
    """What the last move did, as cells: where the moving line went (``moved``), the
    cells it left empty (``vacated``), where pushed marbles now stand (``pushed``) and
    how many were pushed off the board (``pushed_off``)."""

    moved: frozenset[int] = frozenset()
    vacated: frozenset[int] = frozenset()
    pushed: frozenset[int] = frozenset()
    pushed_off: int = 0


def move_marks(before: Board, move: Move) -> MoveMarks:
    """The cells ``move`` touches when played on ``before`` (which is left unchanged)."""
    offset = OFFSETS[move.direction]
    line = move.marbles
    moved = frozenset(cell + offset for cell in line)
    pushed: set[int] = set()
    pushed_off = 0
    if move.is_inline:
        front = max(line) if offset > 0 else min(line)
        cell = front + offset
        while BOARD_MASK >> cell & 1 and before.owner(cell) is not None:
            target = cell + offset
            if BOARD_MASK >> target & 1:
                pushed.add(target)
            else:
                pushed_off += 1
            cell = target
    vacated = frozenset(line) - moved - pushed
    return MoveMarks(moved, vacated, frozenset(pushed), pushed_off)


def x_of(cell: int) -> int:
    """The half-column of a cell (e5 = 6, e1 = -2, e9 = 14)."""
    return 2 * DIAGONAL_OF[cell] - ROW_OF[cell]


def cell_centre(cell: int) -> tuple[float, float]:
    """Centre of a cell in pixels from the top-left corner of the board table."""
    left = PADDING + (x_of(cell) - FIRST_X) * HALF
    top = PADDING + (ROW_OF[cell] + 1) * ROW_HEIGHT
    return left + HALF, top + ROW_HEIGHT / 2


def seat_colour(seat: int) -> str:
    """The colour of a seat's marbles (0: a neutral marble)."""
    return NEUTRAL_COLOUR if seat == 0 else SEAT_COLOURS[seat - 1]


def colour_name(seat: int) -> str:
    return NEUTRAL_COLOUR_NAME if seat == 0 else SEAT_COLOUR_NAMES[seat - 1]


def _disc(fill: str, ring: str, style: str, title: str) -> str:
    inner = MARBLE - 2 * RING
    return (
        f'<div title="{title}" style="width:{inner}px;height:{inner}px;margin:0 auto;'
        f"border:{RING}px {style} {ring};border-radius:{MARBLE // 2}px;"
        f'background-color:{fill};font-size:1px;line-height:1px">&nbsp;</div>'
    )


def _td(span: int, content: str = "", background: str = "", label: bool = False) -> str:
    style = f"width:{span * HALF}px;height:{ROW_HEIGHT}px;padding:0;text-align:center"
    if background:
        style += f";background-color:{background}"
    if label:
        style += (
            f";color:{LABEL_COLOUR};font:bold 12px Arial,Helvetica,sans-serif;"
            "vertical-align:middle"
        )
    return f'<td colspan="{span}" style="{style}">{content}</td>'


def _row(items: list[tuple[int, int, str]]) -> str:
    """One table row from ``(half-column, span, td-html)`` items, gaps filled."""
    out = []
    x = FIRST_X
    for start, span, html in sorted(items):
        if start > x:
            out.append(f'<td colspan="{start - x}" style="padding:0"></td>')
        out.append(html)
        x = start + span
    end = FIRST_X + COLUMNS
    if end > x:
        out.append(f'<td colspan="{end - x}" style="padding:0"></td>')
    # One cell a line: mail lines stay far below 998 characters, so the page goes as 7bit.
    return f'<tr style="height:{ROW_HEIGHT}px">\n' + "\n".join(out) + "\n</tr>"


def _cell_html(board: Board, cell: int, owner: int | None, marks: MoveMarks | None,
               names: Sequence[str]) -> str:
    name = cell_name(cell)
    background = ""
    ring, style = OUTLINE, "solid"
    if marks is not None:
        if cell in marks.moved or cell in marks.vacated:
            background = MOVE_BACKGROUND
        if cell in marks.moved:
            ring = RING_COLOUR
        elif cell in marks.pushed:
            ring, style, background = RING_COLOUR, "dashed", MOVE_BACKGROUND
        elif cell in marks.vacated:
            ring, style = RING_COLOUR, "dotted"
    if owner is None:
        return _cell_td(HOLE_COLOUR, ring if marks and cell in marks.vacated else HOLE_COLOUR,
                        style, f"{name} empty", background)
    who = names[owner - 1] if owner and owner <= len(names) else colour_name(owner)
    if owner == 0:
        who = "neutral marble"
    if board.is_treasure(cell) and ring == OUTLINE:
        ring, style = TREASURE_RING, "double"
    return _cell_td(seat_colour(owner), ring, style, f"{name} {escape(who)}", background)


@lru_cache(maxsize=4096)
def _cell_td(fill: str, ring: str, style: str, title: str, background: str) -> str:
    """One cell of the picture (kept: a board mail draws 61 of them, and most look
    the same in the next mail)."""
    return _td(2, _disc(fill, ring, style, title), background)


def describe(board: Board, names: Sequence[str],
             owners: dict[int, int | None] | None = None) -> str:
    """The position in words, for the picture's alternative text."""
    if owners is None:
        owners = {cell: board.owner(cell) for cell in CELLS}
    parts = []
    for seat in range(0 if board.variant is not None else 1, board.players + 1):
        cells = [cell_name(c) for c in CELLS if owners[c] == seat]
        if not cells:
            continue
        who = "neutral" if seat == 0 else (names[seat - 1] if seat <= len(names) else "")
        parts.append(f"{colour_name(seat)} ({who}): {' '.join(cells)}".replace(" ()", ""))
    return "Abalone board. " + "; ".join(parts) + "."


def board_table(
    board: Board, *, marks: MoveMarks | None = None, names: Sequence[str] = ()
) -> str:
    """The board as an HTML table (see the module's notes on geometry and colours).

    ``names``: the userids by seat, for each marble's tooltip and the alternative text.
    """
    rows: list[str] = []
    top: list[tuple[int, int, str]] = [
        (2 * d + 1, 2, _td(2, str(d), label=True)) for d in range(1, 6)
    ]
    rows.append(_row(top))
    cells_by_row: list[list[int]] = [[] for _ in range(9)]
    for cell in CELLS:
        cells_by_row[ROW_OF[cell]].append(cell)
    owners = {cell: board.owner(cell) for cell in CELLS}
    for r, cells in enumerate(cells_by_row):
        items = [(x_of(c), 2, _cell_html(board, c, owners[c], marks, names)) for c in cells]
        first = x_of(cells[0])
        items.append((first - 2, 2, _td(2, ROWS[r].upper(), label=True)))
        if r <= 3:
            # The diagonal that starts up-right of this row's last cell (pbmserv's "/ 6").
            last = cells[-1]
            items.append((x_of(last) + 1, 2, _td(2, str(DIAGONAL_OF[last] + 1), label=True)))
        rows.append(_row(items))
    columns = "\n".join(f'<col width="{HALF}" style="width:{HALF}px">' for _ in range(COLUMNS))
    label = escape(describe(board, names, owners))
    return (
        f'<table role="img" aria-label="{label}" title="{label}" cellpadding="0" '
        f'cellspacing="0" border="0" width="{TABLE_WIDTH}" bgcolor="{BOARD_COLOUR}" '
        f'style="width:{TABLE_WIDTH}px;table-layout:fixed;border-collapse:separate;'
        f"border-spacing:0;background-color:{BOARD_COLOUR};padding:{PADDING}px;"
        f'border-radius:12px;margin:0">\n<colgroup>{columns}</colgroup>\n'
        + "\n".join(rows)
        + "\n</table>"
    )


__all__ = [
    "BOARD_COLOUR",
    "HOLE_COLOUR",
    "MoveMarks",
    "NEUTRAL_COLOUR",
    "SEAT_COLOURS",
    "TABLE_HEIGHT",
    "TABLE_WIDTH",
    "board_table",
    "cell_centre",
    "colour_name",
    "describe",
    "move_marks",
    "seat_colour",
]
