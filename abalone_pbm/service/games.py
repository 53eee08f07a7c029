"""A stored game as the service layer reads it: its options, its board, its seats and moves.

Nothing here writes: the options are translated both ways (the words of a challenge,
the JSON stored with the game), the board is built from the stored position, seats
and moves are looked up.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field
from datetime import timedelta

from sqlalchemy import bindparam, select
from sqlalchemy.orm import object_session

from ..db.models import Game, MoveRecord, Seat, User
from ..robots import MAX_BUDGET
from ..rules import Board, Rules, get_layout, starting_position
from ..rules.variants import check_variant, pick_variant, variant_names
from .context import CommandError

#: The longest -nagtime, -forfeittime or -totaltime, in days.
MAX_DAYS = 365
#: The longest -think, in seconds (the server's ROBOT_BUDGET may cap it lower).
MAX_THINK = int(MAX_BUDGET)

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
    #: Seconds the computer players of this game think per move (None: their level's).
    think: int | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> GameOptions:
        data = json.loads(text or "{}")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def forfeit_due(self, waiting: timedelta) -> bool:
        """The forfeit edge, one rule for the clock and a tournament's stalled rounds:
        the player to move has waited this game's forfeit time."""
        return waiting >= timedelta(days=self.forfeittime)

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
        if self.think:
            out.append(f"computer players think {self.think} s a move")
        return out


def start_position_for(options: GameOptions, players: int) -> str:
    options.rules(players)  # validates players/teams/target before anything is stored
    if options.variant:
        check_variant(options.variant, options.layout, players, options.teams)
    return starting_position(get_layout(options.layout, players), options.variant)


def parse_options(raw: dict[str, str | bool], players: int) -> GameOptions:
    """Turn the `-name[=value]` options of a challenge into GameOptions, or explain."""
    values: dict[str, object] = {}
    extra: dict[str, str] = {}
    variants_chosen: list[str] = []
    for name, value in raw.items():
        key = name.lower().lstrip("-")
        if key == "bowl":
            values["layout"] = "bowl"
        elif key == "layout":
            if not isinstance(value, str) or not value:
                raise CommandError("-layout needs a name, e.g. -layout=belgian-daisy")
            try:
                layout = get_layout(value, players)
            except ValueError as error:
                raise CommandError(str(error)) from None
            values["layout"] = layout.name
        elif key == "teams":
            values["teams"] = True
        elif key == "ko":
            values["ko"] = True
        elif key == "think":
            values["think"] = _think_seconds(value)
        elif key in ("target", "movelimit", "nagtime", "forfeittime", "totaltime"):
            values[key] = _positive_number(key, value)
        elif key in variant_names():
            if value is not True:
                raise CommandError(f"-{key} takes no value")
            try:
                values["variant"] = pick_variant([*variants_chosen, key])
            except ValueError as error:
                raise CommandError(str(error)) from None
            variants_chosen.append(key)
        else:
            known = "-bowl, -layout=NAME, -teams, -ko, -target=N, -movelimit=N, " \
                    "-nagtime=D, -forfeittime=D, -totaltime=D, -think=S, " \
                    + ", ".join(f"-{name}" for name in variant_names())
            raise CommandError(f"Unknown challenge option -{key}; the options are {known}")
    options = GameOptions(**values, extra=extra)  # type: ignore[arg-type]
    if options.nagtime >= options.forfeittime:
        raise CommandError("-nagtime must be shorter than -forfeittime")
    try:
        start_position_for(options, players)
    except ValueError as error:
        raise CommandError(str(error)) from None
    return options


def _think_seconds(value: str | bool) -> int:
    if not isinstance(value, str) or not value.isdigit() or int(value) < 1:
        raise CommandError("-think needs a whole number of seconds, e.g. -think=20")
    seconds = int(value)
    if seconds > MAX_THINK:
        raise CommandError(
            f"-think is the seconds a computer player thinks per move, at most {MAX_THINK}"
        )
    return seconds


def _positive_number(key: str, value: str | bool) -> int:
    if not isinstance(value, str) or not value.isdigit() or int(value) < 1:
        raise CommandError(f"-{key} needs a positive whole number, e.g. -{key}=10")
    number = int(value)
    if key in ("nagtime", "forfeittime", "totaltime") and number > MAX_DAYS:
        raise CommandError(f"-{key} is in days and at most {MAX_DAYS}")
    return number


def options_mapping(options: GameOptions) -> dict[str, str | bool]:
    """The options as the challenge command spells them (names without the dash)."""
    out: dict[str, str | bool] = {}
    if options.layout == "bowl":
        out["bowl"] = True
    elif options.layout != "standard":
        out["layout"] = options.layout
    if options.teams:
        out["teams"] = True
    if options.ko:
        out["ko"] = True
    if options.target != 6:
        out["target"] = str(options.target)
    if options.movelimit:
        out["movelimit"] = str(options.movelimit)
    if options.variant:
        out[options.variant] = True
    if options.nagtime != 7:
        out["nagtime"] = str(options.nagtime)
    if options.forfeittime != 21:
        out["forfeittime"] = str(options.forfeittime)
    if options.totaltime:
        out["totaltime"] = str(options.totaltime)
    if options.think:
        out["think"] = str(options.think)
    return out


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


def recent_moves(game: Game, count: int | None) -> list[MoveRecord]:
    """The last ``count`` moves of a game in order (all of them when None), read with a
    query of their own so that a long game costs no more than a short one."""
    session = object_session(game)
    assert session is not None
    if count is None:
        return list(session.scalars(_ALL_MOVES, {"game_id": game.id}))
    latest = list(session.scalars(_LAST_MOVES, {"game_id": game.id, "count": count}))
    return latest[::-1]


_ALL_MOVES = (select(MoveRecord).where(MoveRecord.game_id == bindparam("game_id"))
              .order_by(MoveRecord.ply))
_LAST_MOVES = (select(MoveRecord).where(MoveRecord.game_id == bindparam("game_id"))
               .order_by(MoveRecord.ply.desc()).limit(bindparam("count")))


def winners_of(game: Game) -> tuple[int, ...]:
    if not game.winners:
        return ()
    return tuple(int(s) for s in game.winners.split(","))
