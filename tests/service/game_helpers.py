"""Shared set-ups of the game-command tests (tests/service/test_game_*.py)."""

from __future__ import annotations


from sqlalchemy import select

from abalone_pbm.db import repository
from abalone_pbm.db.models import Game

from .harness import Harness, Sent

#: Legal openings of a standard two-player game: fred (o) and wilma (x) in turn.
FRED = ["c3-c5,d4", "b2-b4,c3", "a1-a3,b2"]
WILMA = ["g7-g5,f6", "h7-h5,g6", "i6,h5"]
#: The first six moves of a standard three-player game (seats 1, 2, 3, 1, 2, 3).
THREE = ["a4-b4,c4", "h9-g8,f7", "h4-g4,f4", "c4,d4", "f7,e6", "d1,c1"]


def two_players(h: Harness) -> dict[str, Sent]:
    """fred (pw1) and wilma (pw2), board 101 with fred to move; the new-board mails."""
    h.signup("fred", "pw1")
    h.signup("wilma", "pw2")
    return h.challenge("fred", "wilma")


def three_players(h: Harness) -> dict[str, Sent]:
    """fred, wilma, barney (pw1, pw2, pw3) on board 101, in that order."""
    h.signup("fred", "pw1")
    h.signup("wilma", "pw2")
    h.signup("barney", "pw3")
    return h.challenge("fred", "wilma", "barney")


def move(h: Harness, userid: str, password: str, text: str, board: int = 101) -> list[Sent]:
    return h.mail(f"{userid}@example.org", f"abalone move {board} {userid} {password} {text}")


def first_round(h: Harness) -> None:
    """fred and wilma each move once on board 101."""
    assert subjects(move(h, "fred", "pw1", FRED[0])) == {"Abalone Board 101 wilma"}
    assert subjects(move(h, "wilma", "pw2", WILMA[0])) == {"Abalone Board 101 fred"}


def subjects(sent: list[Sent]) -> set[str]:
    return {s.subject for s in sent}


def to(sent: list[Sent], address: str) -> list[Sent]:
    return [s for s in sent if s.to == address]


def only(sent: list[Sent], address: str) -> Sent:
    mails = to(sent, address)
    assert len(mails) == 1, [(s.to, s.subject) for s in sent]
    return mails[0]


def game(h: Harness, number: int = 101) -> Game:
    """The game as stored now (seats, moves and users loaded)."""
    with h.database.read() as session:
        found = repository.get_game(session, number)
        assert found is not None
        for seat in found.seats:
            _ = seat.user.userid
        _ = list(found.moves)
        return found


def games(h: Harness) -> list[Game]:
    with h.database.read() as session:
        return list(session.scalars(select(Game).order_by(Game.number)))


def text(mail: Sent) -> str:
    """The body with every run of blanks and line ends made one blank (wrapped prose
    and board rows can then be matched as they read)."""
    return " ".join(mail.body.split())


def expect_errors(h: Harness, cases: list[tuple[str, ...]]) -> None:
    """Send each ``(sender, subject, expected error[, body])``: the one answer must be an
    error mail (to the sender) that says so.  Errors change nothing, so one set-up
    serves every case."""
    for sender, subject, error, *body in cases:
        sent = h.mail(sender, subject, body[0] if body else "")
        assert len(sent) == 1, (subject, [(s.to, s.subject) for s in sent])
        assert sent[0].to == sender and "rror" in sent[0].subject, (subject, sent[0].subject)
        assert error in text(sent[0]), (subject, error, text(sent[0])[:400])
