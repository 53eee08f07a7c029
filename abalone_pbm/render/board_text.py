"""The board as a text diagram, drawn like the pbmserv help (seed 001) from the
``board.txt`` template."""

from __future__ import annotations

from ..rules import Board
from ..rules.geometry import CELLS, ROW_OF
from .marks import EMPTY_MARK, NEUTRAL_MARK, marble_marks, treasure_marks
from .templating import render_template


def render_board(board: Board, *, marks: str | None = None) -> str:
    """The board as the pbmserv help draws it, with its coordinates (no final newline).

    ``marks`` are the symbols of seats 1..n in order (default :func:`marble_marks`:
    ``o`` for player 1 and ``x`` for player 2, digits ``1``-``6`` with more players);
    neutral marbles of the variants (pillar, princess, ball) are ``*``, treasures
    (thief) :func:`treasure_marks`, empty cells ``.``::

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
            I- x x x x x
    """
    symbols = marks or marble_marks(board.players)
    if len(symbols) < board.players:
        raise ValueError(f"{board.players} players need {board.players} marks, not {symbols!r}")
    treasures = treasure_marks(symbols)
    rows: list[list[str]] = [[] for _ in range(9)]
    for cell in CELLS:
        owner = board.owner(cell)
        if owner is None:
            mark = EMPTY_MARK
        elif owner == 0:
            mark = NEUTRAL_MARK
        elif board.is_treasure(cell):
            mark = treasures[owner - 1]
        else:
            mark = symbols[owner - 1]
        rows[ROW_OF[cell]].append(mark)
    return render_template("board.txt", rows=[" ".join(r) for r in rows]).rstrip("\n")
