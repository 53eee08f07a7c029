"""The rating list of ``standings``, ``ratings`` and ``history`` (``player_table.txt``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .templating import render_body


@dataclass(frozen=True)
class PlayerLine:
    """One row of the rating list."""

    userid: str
    rating: float
    games: int
    wins: int
    draws: int
    losses: int
    provisional: bool
    robot: bool = False


def player_table(
    subject: str, title: str, players: Sequence[PlayerLine], *, note: str = ""
) -> tuple[str, str]:
    """``standings`` / ``ratings``: rank, userid, rating, games, W/D/L, marks."""
    body = render_body("player_table.txt", title=title, rows=_table_rows(players), note=note)
    return subject, body


def _table_rows(players: Sequence[PlayerLine]) -> list[str]:
    """The header and one row per player, in columns (empty without players)."""
    if not players:
        return []
    width = max(12, *(len(p.userid) for p in players))
    rows = [
        f"  {'Rank':>4}  {'Player'.ljust(width)}  {'Rating':>6}  {'Games':>5}"
        f"  {'W':>4}  {'D':>4}  {'L':>4}"
    ]
    for rank, p in enumerate(players, start=1):
        # Short marks keep a row within 72 columns; the legend under the table says them.
        marks = []
        if p.provisional:
            marks.append("P")
        if p.robot:
            marks.append("C")
        rows.append(
            f"  {rank:>4}  {p.userid.ljust(width)}  {round(p.rating):>6}  {p.games:>5}"
            f"  {p.wins:>4}  {p.draws:>4}  {p.losses:>4}  {' '.join(marks)}".rstrip()
        )
    return rows
