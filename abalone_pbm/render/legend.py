"""What the special marbles of a variant mean, in words, for under the board."""

from __future__ import annotations

import textwrap
from typing import Mapping

from ..rules import Board
from ..rules.variants import HALVES, pick_variant
from .marks import NEUTRAL_MARK, marble_marks, treasure_marks
from .text import and_list


def game_variant(board: Board, options: Mapping[str, object] | None = None) -> str | None:
    """The variant of a game: the board's rules, else the challenge options (``{"princess":
    True}``); None for none (or an unclear mix of options)."""
    if board.rules.variant is not None:
        return board.rules.variant
    try:
        return pick_variant(key for key, value in (options or {}).items() if value)
    except ValueError:
        return None


def board_legend(
    board: Board, *, marks: str | None = None, options: Mapping[str, object] | None = None
) -> list[str]:
    """What the special marbles of a variant on the board mean, wrapped, for under the
    board (empty without a variant)::

        * = the princess (neutral): anyone may push it like an opponent marble;
            whoever pushes it off the board wins.
    """
    variant = game_variant(board, options)
    symbols = marks or marble_marks(board.players)
    entries = []
    if variant == "pillar":
        entries.append(
            f"{NEUTRAL_MARK} = the pillar: it never moves; nothing can move onto it, "
            "push it or be pushed onto it."
        )
    elif variant == "princess":
        entries.append(
            f"{NEUTRAL_MARK} = the princess (neutral): anyone may push it like an opponent "
            "marble; whoever pushes it off the board wins."
        )
    elif variant == "soccer":
        own = ", ".join(HALVES[1][:-1]) + " and " + HALVES[1][-1]
        other = ", ".join(HALVES[2][:-1]) + " and " + HALVES[2][-1]
        entries.append(
            f"{NEUTRAL_MARK} = the ball (neutral): anyone may push it like an opponent "
            "marble.  Push it off an edge of your opponent's half to win; off an edge of "
            "your own half and you lose."
        )
        entries.append(
            f"{symbols[0]} defends the {own} edges, {symbols[1]} the {other} edges.  "
            "Off e1 or e9 along row E is a goal for the pusher."
        )
    elif variant == "thief":
        treasures = treasure_marks(symbols)[: board.players]
        names = and_list(list(treasures))
        owners = and_list(list(symbols[: board.players]))
        entries.append(
            f"{names} = the treasures of {owners}: they move like the others, but "
            "whoever pushes off an opponent's treasure wins."
        )
    return [
        line
        for entry in entries
        for line in textwrap.wrap(
            entry, 72, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
        )
    ]
