"""Playing tournament games by mail in the in-process harness: moves, resignations and
whole games decided the way a test wants, and the admin's steps as the CLI takes them."""

from __future__ import annotations

from sqlalchemy import select

from abalone_pbm.db import repository
from abalone_pbm.db.models import User
from abalone_pbm.service import tournaments
from abalone_pbm.service.context import MailContext
from abalone_pbm.service.games import load_board

from .harness import Harness, Sent


def first_legal_move(harness: Harness, number: int) -> str:
    with harness.database.read() as session:
        game = repository.get_game(session, number)
        assert game is not None
        return str(next(load_board(game).generate_legal_moves()))


def move(harness: Harness, number: int, userid: str) -> list[Sent]:
    text = first_legal_move(harness, number)
    return harness.mail(f"{userid}@example.org",
                        f"abalone move {number} {userid} {userid}-pw {text}")


def resign(harness: Harness, number: int, userid: str) -> list[Sent]:
    return harness.mail(f"{userid}@example.org", f"abalone resign {number} {userid} {userid}-pw")


def play(harness: Harness, number: int, first: str, second: str, loser: str) -> list[Sent]:
    """Both players move, then ``loser`` resigns on their turn: a game played, rated."""
    assert loser in (first, second)
    move(harness, number, first)
    move(harness, number, second)
    if loser == second:
        move(harness, number, first)
    sent = resign(harness, number, loser)
    assert any(s.subject.startswith(f"Abalone Board {number}") for s in sent), \
        [(s.subject, s.body[:200]) for s in sent]
    return sent


def set_ratings(harness: Harness, ratings: dict[str, float]) -> None:
    with harness.database.write() as session:
        for userid, rating in ratings.items():
            session.scalars(select(User).where(User.userid == userid)).one().rating = rating


def create(harness: Harness, plan: tournaments.Plan) -> None:
    with harness.database.write() as session:
        tournaments.create(session, plan, harness.clock.now())


def join_all(harness: Harness, name: str, userids: list[str]) -> None:
    for userid in userids:
        sent = harness.mail(f"{userid}@example.org",
                            f"abalone tournament join {name} {userid} {userid}-pw")
        assert [s.subject for s in sent] == [f"Abalone tournament {name} join {userid}"], \
            [(s.subject, s.body[:300]) for s in sent]


def start(harness: Harness, name: str) -> list[Sent]:
    with harness.database.write() as session:
        ctx = MailContext(session=session, settings=harness.settings, now=harness.clock.now(),
                          sender=harness.settings.address)
        tournaments.start(ctx, tournaments.require(session, name))
        ctx.flush()
    return harness.take_outbox()


def adjudicate(harness: Harness, name: str, board: int, verdict: str) -> list[Sent]:
    with harness.database.write() as session:
        ctx = MailContext(session=session, settings=harness.settings, now=harness.clock.now(),
                          sender=harness.settings.address)
        tournaments.adjudicate(ctx, tournaments.require(session, name), board, verdict)
        ctx.flush()
    return harness.take_outbox()


Row = tuple[int, int | None, str, str | None, str, float | None]


def rows(harness: Harness, name: str) -> list[Row]:
    """(round, board, first, second, kind, score of first) of every game and bye."""
    with harness.database.read() as session:
        t = tournaments.require(session, name)
        return [(r.round, r.board, r.first.userid, r.second.userid if r.second else None,
                 r.kind, r.score_first) for r in tournaments.games_of(session, t)]


def open_games(harness: Harness, name: str) -> list[Row]:
    return [r for r in rows(harness, name) if r[5] is None]


def table_of(mail: Sent, players: int, heading: str = "Pts") -> list[list[str]]:
    """The standings table of a mail, a list of words a player."""
    lines = mail.body.split(heading, 1)[1].splitlines()[1:players + 1]
    return [line.split() for line in lines]


def status(harness: Harness, name: str) -> tuple[str, int]:
    with harness.database.read() as session:
        t = tournaments.require(session, name)
        return t.status, t.current_round

