"""What the mails show of a game: the render layer's :class:`render.GameView` built from
a game and its users, the marks of the last move, and the HTML page of a board mail.

Reads only; shared by the mail builders (``mails``), the handlers, reminders and the
digest.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .. import render
from ..db.models import Game, Seat, User
from ..render import html_pages
from ..render.board_html import MoveMarks, move_marks
from ..render.views import is_over
from ..rules import Board, MoveError
from .bounces import unreachable_players
from .context import MailContext
from .games import GameOptions, options_mapping, recent_moves, winners_of
from .queries import observers_of, proposal_votes
from .tournament_games import game_notice as tournament_notice

__all__ = ["board_page", "game_view", "last_move_marks", "page_kind", "when"]


def when(moment: datetime) -> str:
    """A moment as the server's mails write it."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def game_view(
    ctx: MailContext,
    game: Game,
    *,
    comment_by: User | None = None,
    comment: str = "",
    notices: Sequence[str] = (),
    ratings: Sequence[tuple[Seat, float, float]] = (),
    ply: int | None = None,
    watchers: Sequence[tuple[User, bool]] | None = None,
) -> render.GameView:
    """What the mails show of ``game``; ``watchers``: its ``observers_of`` when the
    caller has them already (a board mail reads them once for the view and the mails)."""
    if watchers is None:
        watchers = observers_of(ctx, game)
    players = tuple(seat.user.userid for seat in game.seats)
    if game.status == "active" and ply is None:
        # A running game's mails show only the last rounds.
        records = recent_moves(game, game.players * (render.RECENT_ROUNDS + 1))
    else:
        records = recent_moves(game, None)[:ply]
    moves = tuple((m.ply, m.seat, m.text + ("*" if m.automatic else "")) for m in records)
    vote = None
    if game.proposal and game.status == "active":
        voted = proposal_votes(game)
        waiting = tuple(
            s.user.userid for s in game.seats if not s.resigned and s.seat not in voted
        )
        proposer = next(
            (s.user.userid for s in game.seats if s.seat == game.proposal_seat), "?"
        )
        vote = render.Vote(game.proposal, proposer, waiting)
    result = None
    if game.status != "active" and ply is None:
        winners = winners_of(game)
        result = render.Result(
            tuple(s.user.userid for s in game.seats if s.seat in winners),
            game.result_reason or "",
            aborted=game.status == "aborted",
        )
    return render.GameView(
        number=game.number,
        players=players,
        moves=moves,
        options=options_mapping(GameOptions.from_json(game.options)),
        observers=tuple(u.userid for u, only in watchers if not only),
        # Masked when shown too: a comment of an older version was stored unmasked; the
        # mail's own passwords hidden before the lines are broken (render.Comment).
        comment=(render.Comment(comment_by.userid, ctx.masked(comment))
                 if comment_by and comment else None),
        vote=vote,
        notices=(*tournament_notice(game), *notices),
        withdrawn=_withdrawn(game),
        resigned=tuple(s.user.userid for s in game.seats if s.resigned),
        result=result,
        ratings=tuple(
            render.RatingChange(seat.user.userid, before, after, seat.user.rated_games <= 20)
            for seat, before, after in ratings
        ),
        ply=ply,
        challenger=game.challenger,
        unreachable=tuple(
            render.Unreachable(p.userid, when(p.since),
                               when(p.forfeit_at) if p.forfeit_at else None)
            for p in unreachable_players(ctx.session, game)) if ply is None else (),
    )


def last_move_marks(game: Game | None, board: Board) -> MoveMarks | None:
    """What the last move did, for marking it in the picture: from the board's own
    history when it was replayed, else from the position stored before the last move
    (checked against the position now, so a stale one marks nothing)."""
    if board.move_stack:
        before = board.copy()
        move = before.pop()
        return move_marks(before, move)
    if game is None or not game.previous_position or game.ply == 0:
        return None
    last = recent_moves(game, 1)
    if not last or last[0].ply != game.ply:
        return None
    try:
        before = Board(game.previous_position, board.rules)
        move = before.parse_move(last[0].text)
        marks = move_marks(before, move)
        before.push(move)
    except (MoveError, ValueError):
        return None
    if before.position().split()[0] != game.position.split()[0]:
        return None
    return marks


def page_kind(make: object, view: render.GameView, board: Board) -> str:
    """The HTML page that goes with a text mail function of :mod:`render`."""
    if make is render.new_game_mail:
        return "new_game"
    if make is render.game_over_mail or (is_over(view, board) and view.ply is None):
        return "game_over"
    return "board"


def board_page(
    kind: str,
    subject: str,
    view: render.GameView,
    board: Board,
    *,
    recipient: str | None,
    game: Game | None,
    **extra: Any,
) -> str:
    """The HTML part of a mail that shows a board (DESIGN §2.7)."""
    marks = None
    if view.ply is None or board.move_stack:
        marks = render.shared(("last_move_marks", id(game), id(board)),
                              lambda: last_move_marks(game, board))
    return html_pages.game_page(
        kind, subject, view, board, recipient=recipient, marks=marks, **extra
    )


def _withdrawn(game: Game) -> tuple[str, ...]:
    """Who withdrew, told while the restarted game is in its first round."""
    if not game.withdrawn or game.status != "active" or game.ply >= game.players:
        return ()
    return tuple(game.withdrawn.split(","))
