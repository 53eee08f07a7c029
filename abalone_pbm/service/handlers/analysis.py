"""``abalone analyze``: the strongest robot's verdict on a position, and its best line.

Only for finished games and for games with a computer player: in a running game
between people an analysis would be outside help for one of them, so it is refused.

The worker only checks the request and queues it (``analysis_requests``, in the mail's
transaction): the search (:data:`ANALYSIS_SECONDS`, never more than the server's robot
budget) runs in a robot lane outside any transaction (``service.robots``), one at a
time for each sender, and its answer is written in a short transaction of its own.  So
a burst of analyses holds nobody's mail.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import replace

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ... import protocol
from ...clock import Clock
from ...config import Settings
from ...db import repository
from ...db.models import ROBOT_TURNS, AnalysisRequest, Game
from ...db.session import Database
from ...render.analysis import AnalysedMove, AnalysisView, analysis_mail
from ...robots.analysis import analyse
from ...rules import Board
from .. import rates
from ..context import CommandError, MailContext, Outgoing
from ..games import board_at, load_board
from ..limits import check_analysis_allowed
from ..queries import load_game
from ..views import game_view

log = logging.getLogger(__name__)

#: Seconds the robot searches for one analysis.
ANALYSIS_SECONDS = 2.0
#: The most references of the request kept for the answer's References header.
KEPT_REFERENCES = 10
#: The longest Message-ID kept for In-Reply-To (the column's width).
MESSAGE_ID_LENGTH = 255


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
    if position_of(game, shown).is_game_over():
        earlier = f"; analyze {number}#{shown - 1} for the position before the last move" \
            if shown > 0 else ""
        raise CommandError(
            f"The game is over after move #{shown}: there is nothing left to analyse"
            + earlier,
            board=number,
        )
    check_analysis_allowed(ctx)
    message_id = ctx.message_id if ctx.message_id and \
        len(ctx.message_id) <= MESSAGE_ID_LENGTH else None
    references = [r for r in ctx.references if len(r) <= MESSAGE_ID_LENGTH]
    ctx.session.add(AnalysisRequest(
        board=number, ply=shown, recipient=ctx.sender[: rates.SUBJECT_LENGTH],
        queue=rates.normalise_address(ctx.envelope_sender or ctx.sender),
        message_id=message_id, references=" ".join(references[-KEPT_REFERENCES:]),
        created_at=ctx.now,
    ))
    # serve wakes its robot lanes for the boards a commit names: this one has work.
    ctx.session.info.setdefault(ROBOT_TURNS, set()).add(number)


def position_of(game: Game, shown: int) -> Board:
    """The position after move ``shown``: a finished game on the marbles as they stood
    (a resignation ends the game but is no position)."""
    running = game.status == "active" and shown == game.ply
    return load_board(game) if running else board_at(game, shown)


# --------------------------------------------------------------- in a robot lane
#: The most senders whose turn is weighed at once (the oldest waiting first).
SENDERS_WEIGHED = 64


def next_analysis(session: Session, busy_queues: Collection[str],
                  last_served: Mapping[str, float] | None = None) -> tuple[int, str] | None:
    """The request to search next and its sender's queue: each sender's oldest, of
    the sender served longest ago (``last_served``: a queue's last turn, any clock;
    never served: first), then the oldest; none of a sender already being served.  So
    senders take turns, whatever one of them queued."""
    table = AnalysisRequest.__table__
    rank = func.row_number().over(partition_by=table.c.queue, order_by=table.c.id)
    ranked = select(table.c.id, table.c.queue, rank.label("rank")).subquery()
    query = (select(ranked.c.id, ranked.c.queue).where(ranked.c.rank == 1)
             .order_by(ranked.c.id).limit(SENDERS_WEIGHED))
    if busy_queues:
        query = query.where(ranked.c.queue.not_in(sorted(busy_queues)))
    heads = [(int(row[0]), str(row[1])) for row in session.execute(query)]
    if not heads:
        return None
    served = last_served or {}
    return min(heads, key=lambda head: (served.get(head[1], float("-inf")), head[0]))


def answer_analysis(database: Database, settings: Settings, clock: Clock,
                    request_id: int) -> bool:
    """Search the position of one queued request (outside any transaction) and mail
    the analysis; False when the request was answered or dropped meanwhile."""
    with database.read() as session:
        request = session.get(AnalysisRequest, request_id)
        if request is None:
            return False
        number, shown = request.board, request.ply
        game = repository.get_game(session, number)
        board = position_of(game, shown) if game is not None and shown <= game.ply else None
    if board is None or board.is_game_over():
        # The board went away (an admin's abort of a game with no moves): nothing to say.
        with database.write() as session:
            session.execute(delete(AnalysisRequest).where(AnalysisRequest.id == request_id))
        return False
    found = analyse(board, min(ANALYSIS_SECONDS, settings.robot_budget),
                    seed=number * 1000 + shown)
    with database.write() as session:
        # Locked: two serve processes on one PostgreSQL may both have searched this
        # request; the second finds it answered (deleted) once the first commits.
        request = session.get(AnalysisRequest, request_id, with_for_update=True)
        game = repository.get_game(session, number)
        if request is None or game is None:
            return False
        ctx = MailContext(
            session=session, settings=settings, now=clock.now(), sender=request.recipient,
            message_id=request.message_id, references=request.references.split(),
            envelope_sender=request.queue,
        )
        session.delete(request)
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
        ctx.flush()
    return True


def drop_analysis(database: Database, request_id: int) -> None:
    """Forget a request whose search failed (logged), so that it is not tried forever."""
    with database.write() as session:
        session.execute(delete(AnalysisRequest).where(AnalysisRequest.id == request_id))
