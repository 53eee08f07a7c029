"""Draw offers and undo requests: propose, undo, accept, reject (by command or by
replying to a board mail).

The proposer counts as accepting; every player still in the game (not resigned) must
accept; one reject cancels (the proposer's reject withdraws it).  Computer players
reject at once.  An undo also cancels every queued and submitted move (they were meant
for another position).
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import protocol, render
from ...db.models import Game, Seat, User
from ...rules import Board, Outcome
from ..context import CommandError, MailContext
from ..games import GameOptions, load_board, recent_moves, seat_number
from ..mails import board_mails
from ..queries import (
    authenticate_for,
    load_game,
    player_seat,
    proposal_votes,
    require_active,
)
from ..turns import after_move, end_game


def _comment(ctx: MailContext) -> str:
    return protocol.extract_comment(ctx.body).strip()


def move_action(ctx: MailContext, c: protocol.MoveAction) -> None:
    game = load_game(ctx, c.board)
    user = authenticate_for(ctx, game, c.userid, c.password)
    vote(ctx, game, user, c.action, _comment(ctx))


def vote(ctx: MailContext, game: Game, user: User, action: str, comment: str = "") -> None:
    """propose (a draw), undo (take back the last move), accept or reject.

    A player whose resignation waits for their turn is still in the game and votes."""
    require_active(game)
    seat = player_seat(game, user)
    if seat.resigned:
        raise CommandError("You have resigned from this game", board=game.number)
    if action in ("propose", "undo"):
        _propose(ctx, game, seat, "draw" if action == "propose" else "undo", comment)
    elif action == "accept":
        _accept(ctx, game, seat, comment)
    elif action == "reject":
        _reject(ctx, game, seat, comment)
    else:  # pragma: no cover - the parser only gives the four words
        raise CommandError(f"Unknown action {action}", board=game.number)


def _what(kind: str | None) -> str:
    return "draw offer" if kind == "draw" else "undo request"


def _voters(game: Game) -> list[Seat]:
    return [s for s in game.seats if not s.resigned]


def _clear_proposal(game: Game) -> None:
    game.proposal, game.proposal_seat, game.proposal_votes = None, None, ""


def _proposer(game: Game) -> str:
    try:
        return seat_number(game, game.proposal_seat or 0).user.userid
    except LookupError:
        return "?"


def _board_mails(ctx: MailContext, game: Game, user: User, comment: str,
                 notices: Sequence[str]) -> None:
    board_mails(ctx, game, load_board(game), mover=user, comment=comment, notices=notices)


def _propose(ctx: MailContext, game: Game, seat: Seat, kind: str, comment: str) -> None:
    if game.proposal:
        raise CommandError(
            f"{_proposer(game)}'s {_what(game.proposal)} is still waiting for answers; "
            "accept or reject it first",
            board=game.number,
        )
    if kind == "undo" and game.ply == 0:
        raise CommandError("There is no move to take back yet", board=game.number)
    user = seat.user
    game.updated_at = ctx.now
    robots = [s.user.userid for s in _voters(game) if s.user.robot and s is not seat]
    if robots:
        asked = "offered a draw" if kind == "draw" else "asked to take back the last move"
        notice = (f"{user.userid} {asked}; {render.and_list(robots)} "
                  f"(computer {'player' if len(robots) == 1 else 'players'}) rejected it.")
        _board_mails(ctx, game, user, comment, [notice])
        return
    game.proposal, game.proposal_seat, game.proposal_votes = kind, seat.seat, str(seat.seat)
    _board_mails(ctx, game, user, comment, [])


def _accept(ctx: MailContext, game: Game, seat: Seat, comment: str) -> None:
    if not game.proposal:
        raise CommandError(
            f"There is no draw offer or undo request to accept on board {game.number}.  "
            "(To accept challenges to new games, send \"abalone accept <userid> "
            "<password>\" without a board number.)",
            board=game.number,
        )
    user = seat.user
    votes = proposal_votes(game)
    if seat.seat == game.proposal_seat:
        raise CommandError(
            f"The {_what(game.proposal)} is your own; the other players must accept it",
            board=game.number,
        )
    if seat.seat in votes:
        raise CommandError(f"You have accepted the {_what(game.proposal)} already",
                           board=game.number)
    votes.add(seat.seat)
    game.proposal_votes = ",".join(str(s) for s in sorted(votes))
    game.updated_at = ctx.now
    if not {s.seat for s in _voters(game)} <= votes:
        _board_mails(ctx, game, user, comment,
                     [f"{user.userid} accepts {_proposer(game)}'s {_what(game.proposal)}."])
        return
    kind = game.proposal
    _clear_proposal(game)
    if kind == "draw":
        end_game(ctx, game, load_board(game), Outcome((), "draw agreed"), mover=user,
                 comment=comment, notices=["All players agreed to a draw."])
        return
    last = recent_moves(game, 1)[0]
    mover = seat_number(game, last.seat).user.userid
    cancelled = undo_last_move(ctx, game)
    notices = [f"Move #{last.ply} ({mover}: {last.text}) was taken back; all players agreed."]
    if cancelled:
        notices.append("Queued and submitted moves were cancelled.")
    after_move(ctx, game, load_board(game), mover=user, comment=comment, notices=notices)


def _reject(ctx: MailContext, game: Game, seat: Seat, comment: str) -> None:
    if not game.proposal:
        raise CommandError(
            f"There is no draw offer or undo request to reject on board {game.number}.  "
            "(To refuse challenges to new games, send \"abalone reject <userid> "
            "<password>\" without a board number.)",
            board=game.number,
        )
    user = seat.user
    what, proposer = _what(game.proposal), _proposer(game)
    if seat.seat == game.proposal_seat:
        notice = f"{user.userid} withdrew their {what}."
    else:
        notice = f"{user.userid} rejected {proposer}'s {what}."
    _clear_proposal(game)
    game.updated_at = ctx.now
    _board_mails(ctx, game, user, comment, [notice])


def undo_last_move(ctx: MailContext, game: Game) -> bool:
    """Take back the last move: the position is recomputed from the start by replaying
    every move but the last; the turn goes back to the player who made it.  Returns
    whether queued or submitted moves were cancelled."""
    options = GameOptions.from_json(game.options)
    rules = options.rules(game.players)
    records = recent_moves(game, None)
    last = records[-1]
    board = Board(game.start_position, rules)
    for record in records[:-1]:
        if board.turn != record.seat:  # someone resigned in between
            board = Board(_with_turn(board.position(), record.seat), rules, ply=board.ply)
        board.push(board.parse_move(record.text))
    ctx.session.delete(last)
    ctx.session.flush()  # the ply number is free again before a later move takes it
    game.position = _with_turn(board.position(), last.seat)
    game.ply = last.ply - 1
    game.turn_started_at = ctx.now
    game.last_nag_at = None
    game.updated_at = ctx.now
    cancelled = False
    for seat in game.seats:
        if seat.queued_move or seat.submitted_move:
            cancelled = True
        seat.queued_move = None
        seat.submitted_move = None
    return cancelled


def _with_turn(position: str, seat: int) -> str:
    rows, _turn, ejected = position.split(" ")
    return f"{rows} {seat} {ejected}"
