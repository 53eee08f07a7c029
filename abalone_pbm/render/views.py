"""The plain data the service layer prepares for the mails: a :class:`GameView` of one
game (with its comment, pending vote, result and rating changes), and whose turn it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..rules import Board
from .text import shown_text

#: Rounds (rows of the move table) shown while a game is running.
RECENT_ROUNDS = 5


@dataclass(frozen=True)
class Comment:
    """A player's comment shown between rows of asterisks under "<userid> writes:".

    Its text is made fit to show the other players when the comment is made
    (``text.shown_text``: no bidirectional controls, no line wider than the mail), so
    the text part and the HTML part, which both show it, show the same words."""

    userid: str
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", shown_text(self.text))


@dataclass(frozen=True)
class Vote:
    """A pending draw offer or undo request: every player must ``accept``."""

    kind: str  # "draw" or "undo"
    proposer: str
    waiting: tuple[str, ...] = ()  # userids who have not answered yet


@dataclass(frozen=True)
class Result:
    """How a game ended: the winners' userids (empty for a draw) and why
    (``"pushed off 6 marbles"``, ``"wilma resigned"``, ``"wilma forfeited"``)."""

    winners: tuple[str, ...]
    reason: str = ""
    #: Stopped by an administrator or by withdrawals: no winner, not rated.
    aborted: bool = False

    @property
    def draw(self) -> bool:
        return not self.winners


@dataclass(frozen=True)
class RatingChange:
    userid: str
    before: float
    after: float
    provisional: bool = False

    @property
    def delta(self) -> int:
        return round(self.after) - round(self.before)


@dataclass(frozen=True)
class Unreachable:
    """A player whose mail bounces (none of their addresses is mailed any more), as
    the other players' and observers' board mails tell it (DESIGN §2.8): since when,
    and when the usual timeout ends the game (None: not their turn, or on vacation)."""

    userid: str
    since: str
    forfeit_by: str | None = None


@dataclass(frozen=True)
class GameView:
    """What the mails show about one game, prepared by the service layer.

    ``players``: userids by seat, seat 1 first.  ``moves``: ``(ply, seat, text)`` for
    every move played so far (plies from 1; only the last :data:`RECENT_ROUNDS` rounds
    are printed while the game runs, all of them at the end).  ``options``: the
    challenge options as :class:`abalone_pbm.protocol.commands.Challenge` holds them (names
    without dash; ``True`` or the value).  ``notices``: extra sentences shown first
    (``"wilma resigned."``); ``withdrawn``: userids who withdrew in the first round;
    ``resigned``: userids who resigned but whose marbles stay.  ``result`` and
    ``ratings`` are set when the game is over.  ``ply``: when the mail shows an earlier
    position (``show 101#5``), the move number shown, else None.  ``unreachable``: the
    players whose mail bounces.
    """

    number: int
    players: tuple[str, ...]
    moves: tuple[tuple[int, int, str], ...] = ()
    options: Mapping[str, str | bool] = field(default_factory=dict)
    observers: tuple[str, ...] = ()
    comment: Comment | None = None
    vote: Vote | None = None
    notices: tuple[str, ...] = ()
    withdrawn: tuple[str, ...] = ()
    resigned: tuple[str, ...] = ()
    result: Result | None = None
    ratings: tuple[RatingChange, ...] = ()
    ply: int | None = None
    challenger: str | None = None
    unreachable: tuple[Unreachable, ...] = ()


def to_move(game: GameView, board: Board) -> str | None:
    """The userid whose turn it is, or None when the game is over."""
    if game.result is not None or board.is_game_over():
        return None
    if 1 <= board.turn <= len(game.players):
        return game.players[board.turn - 1]
    return None


def is_over(game: GameView, board: Board) -> bool:
    return game.result is not None or board.is_game_over()
