"""What a board's tournament says about the board itself: its name and round (the
line every board mail shows), and whether its result is rated.

Read by the game's own life (``turns``: rating at the end; ``views``: the board
mail's notice), so it knows only the board and its tournament row; running the
tournament (pairing, rounds, standings) is ``service.tournaments``, which hears of
each ended game through ``turns.GAME_ENDED``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from ..db.models import Game, MoveRecord, TournamentGame
from .games import GameOptions, winners_of

#: The keys of a tournament game's options (``GameOptions.extra``).
TOURNAMENT_KEY = "tournament"
ROUND_KEY = "round"


def tournament_of_game(game: Game) -> str | None:
    return GameOptions.from_json(game.options).extra.get(TOURNAMENT_KEY)


def game_notice(game: Game) -> tuple[str, ...]:
    """The line every board mail of a tournament game shows first."""
    extra = GameOptions.from_json(game.options).extra
    name = extra.get(TOURNAMENT_KEY)
    if not name:
        return ()
    return (f"Tournament {name}, round {extra.get(ROUND_KEY, '?')}: "
            f'"abalone tournament standings {name}" shows the table.',)


def row_of(session: Session, game: Game) -> TournamentGame | None:
    """The tournament row of a board (None: not a tournament game)."""
    if tournament_of_game(game) is None:
        return None
    return session.scalar(select(TournamentGame).where(TournamentGame.board == game.number))


def _never_moved(session: Session, game: Game, seat: int) -> bool:
    return not session.scalar(select(exists().where(
        MoveRecord.game_id == game.id, MoveRecord.seat == seat)))


@dataclass(frozen=True)
class Ending:
    """A finished tournament game as its end finds it, looked up once (``turns.end_game``
    rates by it and hands it to the tournaments through ``turns.GAME_ENDED``)."""

    row: TournamentGame
    #: The loser never moved and did not resign by their own mail (see :func:`no_show`).
    no_show: bool

    @property
    def rated(self) -> bool:
        """The admin's verdict and a no-show are left out of the ratings: a rating
        should not move for a game that was not played out."""
        return self.row.kind != "adjudicated" and not self.no_show


def ending_of(session: Session, game: Game) -> Ending | None:
    """The tournament side of a game that has just ended (None: not a tournament
    game).  An adjudicated game is the admin's: never a no-show."""
    row = row_of(session, game)
    if row is None:
        return None
    return Ending(row, row.kind != "adjudicated" and no_show(session, game))


def no_show(session: Session, game: Game) -> bool:
    """The loser never moved and did not resign by their own mail either (a forfeit,
    or leaving the tournament): a resignation on the first move is a played loss,
    rated, as pbmserv has it, so that resigning early dodges no rating."""
    winners = winners_of(game)
    if len(winners) != 1:
        return False
    loser = 2 if winners[0] == 1 else 1
    if not _never_moved(session, game, loser):
        return False
    userid = next((s.user.userid for s in game.seats if s.seat == loser), None)
    # turns.after_move gives a game ended by a resignation this reason.
    return game.result_reason != f"{userid} resigned"
