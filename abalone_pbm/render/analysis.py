"""The analysis mail (``abalone analyze``): the computer's verdict on a position and
the line it expects, in words, above the diagram (``analysis.txt``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..rules import Board
from .game_context import game_context
from .templating import render_body
from .views import GameView

#: Below this many thousandths of a marble either way the position is called even.
EVEN = 150


@dataclass(frozen=True)
class AnalysedMove:
    """One move of the expected line: its number, the seat playing it, the move and
    what it does ("pushes", "pushes a marble off" or "")."""

    ply: int
    seat: int
    move: str
    effect: str


@dataclass(frozen=True)
class AnalysisView:
    """What the search found, from the point of view of the player to move."""

    shown_ply: int
    #: Thousandths of a marble for the player (or team) to move; None: not searched.
    value: int | None
    #: Moves to a forced result: > 0 the player to move wins, < 0 loses.
    forced: int | None
    depth: int
    seconds: float
    line: Sequence[AnalysedMove]


def _name(game: GameView, seat: int, marks: str) -> str:
    userid = game.players[seat - 1] if seat <= len(game.players) else f"player {seat}"
    return f"{userid} ({marks[seat - 1]})"


def verdict(game: GameView, board: Board, analysis: AnalysisView, marks: str) -> str:
    """Who stands better and by how much, in one sentence."""
    mover = _name(game, board.turn, marks)
    side = mover if not board.rules.teams else f"{mover} and partner"
    if analysis.forced is not None and analysis.forced > 0:
        return (f"{side} can force a win: the computer sees it within "
                f"{analysis.forced} moves.")
    if analysis.forced is not None and analysis.forced < 0:
        return (f"{side} cannot avoid losing: the computer sees the loss within "
                f"{-analysis.forced} moves, whatever is played.")
    if analysis.value is None:
        return f"{mover} has only one sensible move."
    marbles = abs(analysis.value) / 1000
    if abs(analysis.value) < EVEN:
        return f"The position is about even ({analysis.value / 1000:+.1f} marbles for {side})."
    if analysis.value > 0:
        who = side
    elif board.players == 2:
        who = _name(game, 3 - board.turn, marks)
    else:
        who = f"the others against {side}"
    return (f"Advantage {who}: worth about {marbles:.1f} "
            f"{'marble' if 0.95 <= marbles < 1.05 else 'marbles'} pushed off.")


def line_in_words(game: GameView, line: Sequence[AnalysedMove], marks: str) -> list[str]:
    out = []
    for step in line:
        words = f"{step.ply}. {_name(game, step.seat, marks)} plays {step.move}"
        if step.effect:
            words += f", {step.effect.replace('pushes', 'pushing')}"
        out.append(words)
    return out


def analysis_mail(game: GameView, board: Board, analysis: AnalysisView) -> tuple[str, str]:
    """``Abalone Board 101 analysis``: the verdict, the best line, the diagram."""
    context = game_context(game, board, recipient=None, marks=None)
    marks = "".join(p["mark"] for p in context["players"])
    body = render_body(
        "analysis.txt",
        title=(f"Analysis of Abalone board {game.number}, position after move "
               f"#{analysis.shown_ply}"),
        verdict=verdict(game, board, analysis, marks),
        line=line_in_words(game, analysis.line, marks),
        depth=analysis.depth,
        seconds=f"{analysis.seconds:.1f}",
        **context,
    )
    return f"Abalone Board {game.number} analysis", body
