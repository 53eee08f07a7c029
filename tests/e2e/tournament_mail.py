"""Playing a tournament by mail through a real ``abalone-pbm serve`` (tests/e2e/conftest.py's
``live_server``): sign-up and join by mail, the admin's ``abalone-pbm tournament`` commands
as subprocesses (they see the server's environment, its clock offset included), the new
board mails read for each game's players and reply addresses, games decided by reply
(a move, then a resignation; each reply written as Gmail writes one: the board mail
quoted below the text in a text and an HTML part, In-Reply-To and References), withdrawals, the clock moved forward by restarting ``serve``
with ``ABALONE_PBM_CLOCK_OFFSET``, and the standings mails read back as tables.

Shared by the tournament tests of this folder; every wait is on a mail, never a sleep.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from sqlalchemy import select

from abalone_pbm.db.models import User
from abalone_pbm.db.session import Database
from abalone_pbm.rules import Board

from .conftest import LiveServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from reply_shapes import Original, reply as client_reply  # noqa: E402

#: Numbers the players' replies' Message-IDs.
_REPLIES = itertools.count(1)

#: Subject of a new board mail: the board and its first player.
_NEW_BOARD = re.compile(r"^New Abalone Board (\d+) (\S+)$")
#: The notice every board mail of a tournament game shows.
_ROUND_NOTICE = re.compile(r"Tournament (\S+), round (\d+):")


def address(userid: str) -> str:
    return f"{userid}@example.org"


def password(userid: str) -> str:
    return f"{userid}-Pw9"


def text_of(message: EmailMessage) -> str:
    """The plain text part of a mail."""
    part = message.get_body(("plain",))
    assert part is not None, message
    return str(part.get_content()).replace("\r\n", "\n")


def flat(text: str) -> str:
    """``text`` with every run of blanks and line breaks one space (a wrapped sentence
    read whole)."""
    return " ".join(text.split())


def admin(server: LiveServer, *args: str, expect_code: int = 0) -> str:
    """Run ``abalone-pbm ARGS`` as the admin does, beside the running serve, with its
    environment (database, clock offset); its standard output (stderr when it fails)."""
    done = subprocess.run([sys.executable, "-m", "abalone_pbm", *args], cwd=server.workdir,
                          env=server.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == expect_code, (args, done.returncode, done.stdout, done.stderr)
    return done.stdout if expect_code == 0 else done.stderr


def wait_mail(server: LiveServer, userid: str, subject_pattern: str,
              timeout: float = 30.0) -> EmailMessage:
    """The next mail to ``userid`` whose Subject matches, not taken before."""
    return server.mailbox.wait_for(address(userid), subject_pattern, timeout)


def signup_all(server: LiveServer, userids: Iterable[str]) -> None:
    """Each signs up by mail (all mails sent first, then each answer awaited)."""
    userids = list(userids)
    for userid in userids:
        server.send(address(userid), f"signup {userid} {password(userid)}")
    for userid in userids:
        server.mailbox.wait_for(address(userid), rf"^Abalone signup {userid}")


def join_all(server: LiveServer, name: str, userids: Iterable[str]) -> None:
    """Each joins tournament ``name`` by mail; the answer must not quote the password."""
    userids = list(userids)
    for userid in userids:
        server.send(address(userid),
                    f"abalone tournament join {name} {userid} {password(userid)}")
    for userid in userids:
        answer = server.mailbox.wait_for(address(userid),
                                         rf"^Abalone tournament {name} join {userid}$")
        body = text_of(answer)
        assert f"you are entered in tournament {name}" in body, body
        assert password(userid) not in body


def set_ratings(server: LiveServer, ratings: dict[str, float]) -> None:
    """Give players these ratings before a tournament starts (the rating at the start
    is the last tie-break and orders seeds and Swiss pairings): a site's history made
    short, written to the database as the players' earlier games would have left it."""
    database = Database(server.env["ABALONE_PBM_DATABASE_URL"])
    try:
        with database.write() as session:
            for userid, rating in ratings.items():
                session.scalars(select(User).where(User.userid == userid)).one().rating = rating
    finally:
        database.dispose()


def open_tournament(server: LiveServer, name: str, tournament_format: str,
                    players: Sequence[str], ratings: dict[str, float], *options: str,
                    also_signed_up: Sequence[str] = ()) -> str:
    """Run a tournament up to its start: ``players`` (and ``also_signed_up``, who do
    not join this one) sign up by mail with these ``ratings``, the admin creates
    tournament ``name`` of ``tournament_format`` (with ``options``, e.g. "--rounds",
    "4"), ``players`` join it by mail and the admin starts it; the start command's
    output."""
    signup_all(server, [*players, *also_signed_up])
    set_ratings(server, ratings)
    created = admin(server, "tournament", "create", name, "--format", tournament_format,
                    *options)
    assert created.startswith(f"tournament {name} created ({tournament_format})"), created
    join_all(server, name, players)
    return admin(server, "tournament", "start", name)


def withdraw(server: LiveServer, name: str, userid: str) -> str:
    """``userid`` leaves tournament ``name`` by mail; the answer's text."""
    server.send(address(userid),
                f"abalone tournament withdraw {name} {userid} {password(userid)}")
    answer = server.mailbox.wait_for(address(userid),
                                     rf"^Abalone tournament {name} withdraw {userid}$")
    return text_of(answer)


def move_clock(server: LiveServer, offset: str) -> None:
    """Stop serve and start it again as if it were ``offset`` later than the real time
    (e.g. "8d"); its clock ticks at once on start (forfeits, pairings, standings)."""
    server.restart(ABALONE_PBM_CLOCK_OFFSET=offset)


# ------------------------------------------------------------------------- boards
@dataclass
class TournamentBoard:
    """A tournament game as its new board mails told its players."""

    number: int
    tournament: str
    round: int
    first: str
    #: Each player's reply address (the Reply-To of their own copy).
    reply_to: dict[str, str] = field(default_factory=dict)
    #: Each player's copy of the new board mail, which their replies quote.
    originals: dict[str, Original] = field(default_factory=dict)

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(self.reply_to)

    @property
    def second(self) -> str:
        return next(p for p in self.reply_to if p != self.first)

    def pairing(self) -> tuple[str, str]:
        """(first to move, second)."""
        return self.first, self.second


def take_new_boards(server: LiveServer, userids: Iterable[str], each: int,
                    timeout: float = 30.0) -> dict[int, TournamentBoard]:
    """The next ``each`` new board mails to every one of ``userids``, grouped by board;
    every board must be a tournament board with both its players among ``userids``."""
    boards: dict[int, TournamentBoard] = {}
    for userid in userids:
        for _ in range(each):
            mail = server.mailbox.wait_for(address(userid), _NEW_BOARD.pattern, timeout)
            subject = _NEW_BOARD.match(str(mail["Subject"]))
            assert subject is not None
            notice = _ROUND_NOTICE.search(text_of(mail))
            assert notice is not None, text_of(mail)[:400]
            number = int(subject.group(1))
            board = boards.setdefault(number, TournamentBoard(
                number, notice.group(1).rstrip(","), int(notice.group(2)), subject.group(2)))
            assert (board.first, board.round) == (subject.group(2), int(notice.group(2)))
            board.reply_to[userid] = str(mail["Reply-To"])
            board.originals[userid] = Original.parse(mail.as_bytes())
    for board in boards.values():
        assert len(board.reply_to) == 2 and board.first in board.reply_to, board
    return boards


def reply(server: LiveServer, board: TournamentBoard, userid: str, text: str) -> None:
    """``userid`` answers their board mail of ``board`` with ``text`` on the first line,
    as Gmail writes a reply (the board mail quoted below it, a text and an HTML part)."""
    raw = client_reply("gmail", sender=address(userid), sender_name=userid.capitalize(),
                       to=board.reply_to[userid], subject=f"Re: Abalone Board {board.number}",
                       message_id=f"<reply.{next(_REPLIES)}.{userid}@players.test>",
                       move=text, original=board.originals[userid])
    server.send_raw(address(userid), board.reply_to[userid], raw)


def opening_move(layout: str = "standard") -> str:
    """A legal first move of ``layout`` (the first the rules list)."""
    return opening_moves(1, layout)[0]


def opening_moves(count: int, layout: str = "standard") -> list[str]:
    """The first ``count`` moves of a game of ``layout`` in which each side plays the
    first legal move the rules list."""
    board = Board.from_layout(layout)
    out = []
    for _ in range(count):
        move = next(board.generate_legal_moves())
        board.push(move)
        out.append(str(move))
    return out


def wait_game_over(server: LiveServer, board: TournamentBoard) -> str:
    """The last board mail of a finished game (each player gets one), as its first
    player got it."""
    texts = {userid: text_of(server.mailbox.wait_for(
        address(userid), rf"^Abalone Board {board.number}( \*\*)?$")) for userid in board.players}
    return texts[board.first]


def decide_games(server: LiveServer, losers: dict[int, str],
                 boards: dict[int, TournamentBoard], layout: str = "standard") -> None:
    """Play each board of ``losers`` to a played loss of its named player, all boards
    side by side (so serve works while the test waits): a loser who moves first
    resigns at once (a first-move resignation is a played, rated loss); otherwise
    the first player moves and the loser resigns on their turn."""
    move = opening_move(layout)
    moved = []
    for number, loser in losers.items():
        board = boards[number]
        assert loser in board.players, (number, loser, board)
        if loser == board.first:
            reply(server, board, loser, "resign")
        else:
            reply(server, board, board.first, move)
            moved.append(board)
    for board in moved:
        for userid in board.players:
            server.mailbox.wait_for(address(userid),
                                    rf"^Abalone Board {board.number} {board.second}$")
        reply(server, board, board.second, "resign")
    for number in losers:
        text = wait_game_over(server, boards[number])
        assert f"{losers[number]} resigned" in text, text[:600]


def draw_game(server: LiveServer, board: TournamentBoard) -> str:
    """The first player proposes a draw by reply, the second accepts: a drawn, rated
    game; the text of its last board mail."""
    reply(server, board, board.first, "propose")
    for userid in board.players:
        wait_mail(server, userid, rf"^Abalone Board {board.number} {board.first}( \*\*)?$")
    reply(server, board, board.second, "accept")
    return wait_game_over(server, board)


# ---------------------------------------------------------------------- standings
def wait_standings(server: LiveServer, name: str, userid: str, when: str,
                   timeout: float = 30.0) -> EmailMessage:
    """The standings mail of tournament ``name`` headed ``when`` ("after round 2",
    "final") to ``userid``."""
    return server.mailbox.wait_for(
        address(userid), rf"^Abalone tournament {name} standings {re.escape(when)}$", timeout)


def standings_tables(text: str) -> list[list[list[str]]]:
    """Every standings table of a mail's text (a championship has one a division): for
    each, a list of words a player, in order (the lines under a header up to the
    first blank line)."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] | None = None
    for line in text.splitlines():
        if " Pts " in line and "Player" in line:
            rows = []
            tables.append(rows)
        elif rows is not None:
            if not line.strip():
                rows = None
            else:
                rows.append(line.split())
    assert tables, text
    return tables


def standings_table(text: str) -> list[list[str]]:
    """The (first) standings table of a mail's text."""
    return standings_tables(text)[0]


def mails_about(server: LiveServer, userid: str, *phrases: str) -> list[EmailMessage]:
    """Every mail to ``userid`` so far whose Subject holds one of ``phrases`` (to show
    that one who left got none)."""
    return [m for m in server.mailbox.all_to(address(userid))
            if any(phrase in str(m["Subject"]) for phrase in phrases)]


def final_standings(server: LiveServer, name: str, readers: Iterable[str],
                    players: Sequence[str]) -> dict[str, tuple[list[list[str]], str]]:
    """Each reader's final standings of tournament ``name`` (table, text), every table
    listing exactly ``players`` and all the same."""
    finals = {userid: standings_of(server, name, userid, "final", players)
              for userid in readers}
    tables = [table for table, _ in finals.values()]
    assert all(table == tables[0] for table in tables), finals
    return finals


def standings_of(server: LiveServer, name: str, userid: str, when: str,
                 players: Sequence[str] | None = None) -> tuple[list[list[str]], str]:
    """The table of a standings mail (and the mail's text); with ``players``, the
    table must list exactly them."""
    text = text_of(wait_standings(server, name, userid, when))
    table = standings_table(text)
    if players is not None:
        assert sorted(row[1] for row in table) == sorted(players), table
    return table, text
