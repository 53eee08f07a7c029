"""Games as the service layer sees them: options, loading the board, playing, finishing."""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import object_session

from ..db.models import Game, MoveRecord, Seat, User
from ..rules import Board, Outcome, Rules, get_layout, starting_position
from ..rules.variants import check_variant

#: Token alphabet for reply addresses: lower-case letters and digits, no look-alikes.
_TOKEN_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
#: 14 characters of a 31-letter alphabet: about 69 bits.
_TOKEN_LENGTH = 14


def new_reply_token() -> str:
    return "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(_TOKEN_LENGTH))


@dataclass(frozen=True)
class GameOptions:
    """The options given on `abalone challenge`, stored with the game as JSON."""

    layout: str = "standard"
    teams: bool = False
    ko: bool = False
    target: int = 6
    movelimit: int | None = None
    variant: str | None = None
    nagtime: int = 7
    forfeittime: int = 21
    totaltime: int | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> GameOptions:
        data = json.loads(text or "{}")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def rules(self, players: int) -> Rules:
        return Rules(
            players=players,
            teams=self.teams,
            target=self.target,
            movelimit=self.movelimit,
            ko=self.ko,
            variant=self.variant,
        )

    def describe(self) -> list[str]:
        """Human-readable list of the options that differ from a plain game."""
        out = []
        if self.layout != "standard":
            out.append(f"layout {self.layout}")
        if self.teams:
            out.append("teams")
        if self.ko:
            out.append("ko rule")
        if self.target != 6:
            out.append(f"first to {self.target} marbles")
        if self.movelimit:
            out.append(f"move limit {self.movelimit}")
        if self.variant:
            out.append(self.variant)
        return out


def start_position_for(options: GameOptions, players: int) -> str:
    options.rules(players)  # validates players/teams/target before anything is stored
    if options.variant:
        check_variant(options.variant, options.layout, players, options.teams)
    return starting_position(get_layout(options.layout, players), options.variant)


def load_board(game: Game) -> Board:
    """The game's board now, with resignations applied.

    Normally built from the stored position, so a move costs the same at any ply;
    under the ko rule the earlier positions matter, so the game is replayed.
    """
    options = GameOptions.from_json(game.options)
    rules = options.rules(game.players)
    if options.ko:
        board = Board(game.start_position, rules)
        for record in recent_moves(game, None):
            board.push(board.parse_move(record.text))
    else:
        board = Board(game.position, rules, ply=game.ply)
    for seat in game.seats:
        if seat.resigned:
            board.resign(seat.seat)
    return board


def board_at(game: Game, ply: int) -> Board:
    """The board after ``ply`` moves (for `show board#n`)."""
    options = GameOptions.from_json(game.options)
    board = Board(game.start_position, options.rules(game.players))
    for record in recent_moves(game, None)[:ply]:
        board.push(board.parse_move(record.text))
    return board


def seat_of(game: Game, user: User) -> Seat | None:
    for seat in game.seats:
        if seat.user_id == user.id:
            return seat
    return None


def seat_number(game: Game, number: int) -> Seat:
    for seat in game.seats:
        if seat.seat == number:
            return seat
    raise LookupError(f"board {game.number} has no seat {number}")


def userid_to_move(game: Game, board: Board) -> str:
    return seat_number(game, board.turn).user.userid


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
) -> MoveRecord:
    """Write a move that has just been pushed on ``board`` into the game."""
    record = MoveRecord(
        game_id=game.id,
        ply=game.ply + 1,
        seat=seat,
        text=move_text,
        created_at=now,
        source_message_id=source_message_id,
        automatic=automatic,
        comment=comment,
    )
    # Added through the session, not game.moves: appending to the relationship would
    # load every earlier move, and a move must cost the same at ply 3 and at ply 300.
    session = object_session(game)
    assert session is not None, "record_move needs a game loaded in a session"
    session.add(record)
    game.ply += 1
    game.position = board.position()
    game.updated_at = now
    game.turn_started_at = now
    game.last_nag_at = None
    # A normal move clears a pending draw or undo proposal.
    game.proposal = None
    game.proposal_seat = None
    game.proposal_votes = ""
    return record


def finish(game: Game, outcome: Outcome, now: datetime) -> None:
    game.status = "finished"
    game.winners = ",".join(str(s) for s in outcome.winners)
    game.result_reason = outcome.reason
    game.finished_at = now
    game.updated_at = now


def recent_moves(game: Game, count: int | None) -> list[MoveRecord]:
    """The last ``count`` moves of a game in order (all of them when None), read with a
    query of their own so that a long game costs no more than a short one."""
    session = object_session(game)
    assert session is not None
    query = select(MoveRecord).where(MoveRecord.game_id == game.id)
    if count is None:
        return list(session.scalars(query.order_by(MoveRecord.ply)))
    latest = list(session.scalars(query.order_by(MoveRecord.ply.desc()).limit(count)))
    return latest[::-1]


def winners_of(game: Game) -> tuple[int, ...]:
    if not game.winners:
        return ()
    return tuple(int(s) for s in game.winners.split(","))
