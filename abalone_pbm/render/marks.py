"""The symbols of the marbles: by seat, neutral marbles, treasures, empty cells.

Shared by every drawing of the board and by the texts that explain it.
"""

from __future__ import annotations

NEUTRAL_MARK = "*"
EMPTY_MARK = "."


def marble_marks(players: int) -> str:
    """The marble symbols of seats 1..players: ``ox`` for two players, digits otherwise."""
    return "ox" if players == 2 else "123456"[:players]


def treasure_marks(marks: str) -> str:
    """The symbols of the treasures (``-thief``) for the marble ``marks``: a letter mark
    in upper case (``o``/``x`` -> ``O``/``X``), else ``A``-``F`` by seat (digits)."""
    return "".join(m.upper() if m.upper() != m else "ABCDEF"[i] for i, m in enumerate(marks))
