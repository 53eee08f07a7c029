"""How a game goes on after a change: a move is recorded, the turn passes, what the
next players left waiting is carried out, the game ends and is rated, and the board
mails go out.

Shared by the commands that change a position (move, queue, confirm, resign, an
accepted undo or draw), the clock (forfeits, unanswered draws, total time) and the
computer players.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import cast

from sqlalchemy import Table, insert
from sqlalchemy.orm import object_session

from .. import render
from ..db import repository
from ..db.column_checks import check_values
from ..db.models import Game, MoveRecord, Seat, User
from ..render import answer_mail
from ..rules import Board, MoveError, Outcome
from . import mails, tournament_games
from .context import MailContext
from .games import GameOptions, seat_number, winners_of
from .ratings import rate_game


#: Told of every game that ends, in the transaction that ends it, after its last
#: mails: the tournaments record the result and go on (``service.tournaments`` adds
#: itself; it sits above the game's life, which must not import it).
#: A tournament game's hook is handed what its end found (``tournament_games.Ending``:
#: its row and whether it was a no-show), so it is not looked up twice.
GAME_ENDED: list[Callable[[MailContext, Game, tournament_games.Ending | None], None]] = []

#: Length of ``MoveRecord.source_message_id``.
_MESSAGE_ID_COLUMN = 255

_MOVES = cast(Table, MoveRecord.__table__)  # (a declarative class's table is a Table)
_INSERT_MOVE = insert(_MOVES)


def record_move(
    game: Game,
    board: Board,
    seat: int,
    move_text: str,
    now: datetime,
    *,
    source_message_id: str | None,
    automatic: bool = False,
    comment: str | None = None,
) -> None:
    """Write a move that has just been pushed on ``board`` into the game."""
    if source_message_id is not None and len(source_message_id) > _MESSAGE_ID_COLUMN:
        # Only a trace of where the move came from: a legal but very long Message-ID
        # is kept shortened rather than refused.
        source_message_id = source_message_id[: _MESSAGE_ID_COLUMN - 1] + "…"
    values = {
        "game_id": game.id,
        "ply": game.ply + 1,
        "seat": seat,
        "text": move_text,
        "created_at": now,
        "source_message_id": source_message_id,
        "automatic": automatic,
        "comment": comment,
    }
    # Written at once by one INSERT, not through game.moves (appending to the
    # relationship would load every earlier move, and a move must cost the same at
    # ply 3 and at ply 300) nor as a new object (the unit of work's flush of it costs
    # several times the INSERT); read back like any other move (games.recent_moves).
    session = object_session(game)
    assert session is not None, "record_move needs a game loaded in a session"
    check_values(_MOVES, values)  # as the ORM checks what it writes (db.column_checks)
    session.execute(_INSERT_MOVE, values)
    repository.write_game(session, game, {
        "ply": game.ply + 1,
        # The position before this move, to mark the move in the board picture.
        "previous_position": game.position,
        "position": board.position(),
        "updated_at": now,
        "turn_started_at": now,
        "last_nag_at": None,
        # A normal move clears a pending draw or undo proposal.
        "proposal": None,
        "proposal_seat": None,
        "proposal_votes": "",
    })


def after_move(
    ctx: MailContext,
    game: Game,
    board: Board,
    *,
    mover: User,
    comment: str,
    notices: Sequence[str] = (),
    resigned: Sequence[str] = (),
) -> None:
    """After a move (or a resignation on one's turn): carry out what waits for the
    players whose turn comes (a resignation sent out of turn, a queued move), finish
    the game if it is over, and mail everyone the new board.  ``resigned`` names who
    resigned just now, for the reason of a game that ends for want of players."""
    notices = list(notices)
    resigned = list(resigned)
    if board.outcome() is None:
        turn_comes(ctx, game, board, notices, resigned)
    outcome = board.outcome()
    if outcome is None:
        mails.board_mails(ctx, game, board, mover=mover, comment=comment, notices=notices)
        return
    if resigned and short_of_players(board):
        outcome = Outcome(outcome.winners, f"{render.and_list(resigned)} resigned")
    end_game(ctx, game, board, outcome, mover=mover, comment=comment, notices=notices)


def short_of_players(board: Board) -> bool:
    """Whether the game is over for want of players (not by the target or move limit)."""
    rules = board.rules
    best = max(board.side_score(side) for side in range(rules.sides))
    limit_reached = rules.movelimit is not None and board.ply >= rules.movelimit
    return best < rules.target and not limit_reached


def turn_comes(
    ctx: MailContext, game: Game, board: Board, notices: list[str], resigned: list[str]
) -> None:
    """Carry out, for each player whose turn comes, what they left waiting: a
    resignation sent out of turn (applied, and the turn goes on), else a queued move
    (played, marked automatic; an illegal one is dropped and the player told why)."""
    while board.outcome() is None:
        seat = seat_number(game, board.turn)
        userid = seat.user.userid
        if seat.resign_pending:
            resign_seat(ctx, game, board, seat)
            notices.append(f"{userid} resigned.")
            resigned.append(userid)
            continue
        if seat.queued_move and _play_queued(ctx, game, board, seat, notices):
            continue
        break


def _play_queued(
    ctx: MailContext, game: Game, board: Board, seat: Seat, notices: list[str]
) -> bool:
    """Play the seat's queued move; False (and the player told why) when it cannot be."""
    stored = seat.queued_move or ""
    seat.queued_move = None
    text, _, number = stored.partition("#")
    ply = game.ply + 1
    problem = None
    if number and int(number) != ply:
        problem = f"it was queued as move #{number}, but the next move is #{ply}"
    else:
        try:
            move = board.parse_move(text)
        except MoveError as error:
            problem = str(error)
    if problem is not None:
        _queued_move_dropped(ctx, game, seat, stored, problem)
        return False
    board.push(move)
    record_move(game, board, seat.seat, str(move), ctx.now, source_message_id=None,
                automatic=True)
    notices.append(
        f"{seat.user.userid}'s queued move {move} was played as move #{ply} (marked *)."
    )
    return True


def _queued_move_dropped(
    ctx: MailContext, game: Game, seat: Seat, text: str, problem: str
) -> None:
    subject, body = answer_mail(
        f"Abalone Board {game.number} queued move not played",
        f"Your queued move {text} on board {game.number} was not played: {problem}.\n\n"
        f"It has been dropped, and it is your move now; the board follows in a "
        f"separate mail.",
    )
    ctx.send_to_users([seat.user], subject, body)


def resign_seat(ctx: MailContext, game: Game, board: Board, seat: Seat) -> None:
    """Take the seat out of the turn order (its marbles stay) and save the position."""
    seat.resigned = True
    seat.resign_pending = False
    seat.queued_move = None
    seat.submitted_move = None
    turn_before = board.turn
    board.resign(seat.seat)
    game.position = board.position()
    game.updated_at = ctx.now
    if board.turn != turn_before:
        game.turn_started_at = ctx.now
        game.last_nag_at = None
    if game.proposal is not None:
        game.proposal, game.proposal_seat, game.proposal_votes = None, None, ""


def end_game(
    ctx: MailContext,
    game: Game,
    board: Board,
    outcome: Outcome,
    *,
    mover: User,
    comment: str,
    notices: Sequence[str],
) -> None:
    """The game is over: store the result, rate it, mail everyone the last board."""
    game.status = "finished"
    game.winners = ",".join(str(s) for s in outcome.winners)
    game.result_reason = outcome.reason
    game.finished_at = ctx.now
    game.updated_at = ctx.now
    game.proposal, game.proposal_seat, game.proposal_votes = None, None, ""
    # A tournament game the admin decided, or one player never moved in, is not rated.
    ending = tournament_games.ending_of(ctx.session, game)
    changes = _rate(game) if ending is None or ending.rated else []
    mails.game_over_mails(ctx, game, board, changes, mover=mover, comment=comment,
                          notices=notices)
    for hook in GAME_ENDED:
        hook(ctx, game, ending)


def _rate(game: Game) -> list[tuple[Seat, float, float]]:
    """Rate a finished game; returns (seat, before, after) for each rated seat."""
    rules = GameOptions.from_json(game.options).rules(game.players)
    humans = list(game.seats)
    ratings = {s.seat: (s.user.rating, s.user.rated_games) for s in humans}
    sides = {s.seat: rules.side_of(s.seat) for s in humans}
    winners = winners_of(game)
    out = []
    for change in rate_game(ratings, sides, winners):
        seat = next(s for s in humans if s.seat == change.seat)
        seat.rating_before, seat.rating_after = change.before, change.after
        user = seat.user
        user.rating = change.after
        user.rated_games += 1
        if not winners:
            user.draws += 1
        elif seat.seat in winners:
            user.wins += 1
        else:
            user.losses += 1
        out.append((seat, change.before, change.after))
    return out
