"""``abalone analyze``: the strongest robot's verdict on a position, and its best line.

Only for finished games and for games with a computer player: in a running game
between people an analysis would be outside help for one of them, so it is refused.
The search runs for a short, fixed time (:data:`ANALYSIS_SECONDS`, never more than
the server's robot budget) inside the mail's handling.
"""

from __future__ import annotations

from dataclasses import replace

from ... import protocol
from ...render.analysis import AnalysedMove, AnalysisView, analysis_mail
from ...robots.analysis import analyse
from ..context import CommandError, MailContext, Outgoing
from ..games import board_at, load_board
from ..limits import check_analysis_allowed
from ..views import game_view
from ..queries import load_game

#: Seconds the robot searches for one analysis.
ANALYSIS_SECONDS = 2.0


def analyze(ctx: MailContext, c: protocol.Analyze) -> None:
    number = c.board
    game = load_game(ctx, number, for_update=False)
    if game.status == "active" and not any(seat.user.robot for seat in game.seats):
        raise CommandError(
            f"Board {number} is a game between people that is still running: it can be "
            "analysed once it is over (or play a computer player to analyse as you go)",
            board=number,
        )
    if c.ply is not None and not 0 <= c.ply <= game.ply:
        raise CommandError(
            f"Board {number} has {game.ply} moves; analyze {number}#0 to #{game.ply}",
            board=number,
        )
    shown = game.ply if c.ply is None else c.ply
    # A finished game is analysed on the marbles as they stood (a resignation ends the
    # game but is no position).
    running = game.status == "active" and shown == game.ply
    board = load_board(game) if running else board_at(game, shown)
    if board.is_game_over():
        earlier = f"; analyze {number}#{shown - 1} for the position before the last move" \
            if shown > 0 else ""
        raise CommandError(
            f"The game is over after move #{shown}: there is nothing left to analyse"
            + earlier,
            board=number,
        )
    check_analysis_allowed(ctx)
    found = analyse(board, min(ANALYSIS_SECONDS, ctx.settings.robot_budget),
                    seed=number * 1000 + shown)
    view = replace(game_view(ctx, game, ply=shown), result=None, vote=None, comment=None)
    analysis = AnalysisView(
        shown_ply=shown,
        value=found.value,
        forced=found.forced,
        depth=found.depth,
        seconds=found.seconds,
        line=tuple(AnalysedMove(m.ply, m.seat, m.move, m.effect) for m in found.line),
    )
    subject, body = analysis_mail(view, board, analysis)
    ctx.send(Outgoing(ctx.sender, subject, body))
