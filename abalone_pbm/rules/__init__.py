"""The Abalone rules core: pure Python, standard library only.

Nothing here imports the rest of the package, so it can be used (and is fast
enough to be searched) on its own::

    >>> from abalone_pbm.rules import Board
    >>> board = Board.from_layout("standard")
    >>> len(board.legal_moves)
    44
    >>> move = board.push_text("c3-c5,d4")
    >>> str(move)
    'c3-c5,d4'
"""

from .board import (
    Board,
    LegalMoves,
    Outcome,
    PositionError,
    Rules,
    VariantBoard,
    starting_position,
)
from .geometry import CELL_BY_NAME, CELL_NAMES, CELLS, cell_name
from .layouts import Layout, get_layout, layout_names
from .moves import GameOverError, IllegalMoveError, InvalidMoveError, Move, MoveError
from .perft import divide, perft
from .variants import VARIANTS, Variant, check_variant, get_variant, pick_variant, variant_names

STANDARD_START = "11111/111111/..111../......../........./......../..222../222222/22222 1 0,0"

__all__ = [
    "Board",
    "CELLS",
    "CELL_BY_NAME",
    "CELL_NAMES",
    "GameOverError",
    "IllegalMoveError",
    "InvalidMoveError",
    "Layout",
    "LegalMoves",
    "Move",
    "MoveError",
    "Outcome",
    "PositionError",
    "Rules",
    "STANDARD_START",
    "VARIANTS",
    "Variant",
    "VariantBoard",
    "cell_name",
    "check_variant",
    "divide",
    "get_layout",
    "get_variant",
    "layout_names",
    "perft",
    "pick_variant",
    "starting_position",
    "variant_names",
]
