"""`abalone-pbm tick`, `users`, `games` and `mail parked|replay`, run as an admin would:
subprocesses on an SQLite file prepared through the mail path."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path

import pytest
from service.harness import Harness
from sqlalchemy import select

from abalone_pbm.clock import ManualClock
from abalone_pbm.config import Settings
from abalone_pbm.db import repository
from abalone_pbm.mail import intake
from abalone_pbm.db.models import InboxMail, OutboxMail, Seat, User
from abalone_pbm.db.session import Database
from abalone_pbm.rules import Board

ADDRESS = "abalone@example.org"
#: Long ago, so that the real clock of `abalone-pbm tick` finds the games overdue.
LONG_AGO = datetime(2020, 3, 1, 12, 0, tzinfo=timezone.utc)


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABALONE_PBM_")}
    env.update(ABALONE_PBM_DATABASE_URL=url, ABALONE_PBM_ADDRESS=ADDRESS)
    return env


def run(url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "abalone_pbm", *args],
        capture_output=True, text=True, env=_env(url), cwd=cwd, timeout=120,
    )


def run_all(url: str, cwd: Path, commands: Sequence[Sequence[str]]
            ) -> list[subprocess.CompletedProcess[str]]:
    """Read-only commands side by side (each process pays the start-up once)."""
    processes = [
        subprocess.Popen([sys.executable, "-m", "abalone_pbm", *c], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env(url), cwd=cwd)
        for c in commands
    ]
    results = []
    for command, process in zip(commands, processes):
        out, err = process.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(list(command), process.returncode, out, err))
    return results


@pytest.fixture
def call(sqlite_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
         ):  # type: ignore[no-untyped-def]
    """The same command line in this process (for the many ways a command can fail;
    the subprocess tests show the commands are registered and work end to end)."""
    from abalone_pbm.cli import main

    for name in list(os.environ):
        if name.startswith("ABALONE_PBM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ABALONE_PBM_DATABASE_URL", sqlite_url)
    monkeypatch.setenv("ABALONE_PBM_ADDRESS", ADDRESS)

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        try:
            code = main(list(args))
        except SystemExit as exit:  # argparse
            code = int(exit.code or 0)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)

    return call


@pytest.fixture
def site(sqlite_url: str, tmp_path: Path) -> Iterator[Harness]:
    """fred (two addresses), wilma (on vacation), barney (deleted); board 101 fred-wilma
    active, 102 wilma-barney finished; one parked mail."""
    database = Database(sqlite_url)
    database.ensure_schema()
    settings = Settings(database_url=sqlite_url, address=ADDRESS,
                        maildir=str(tmp_path / "outgoing"))
    h = Harness(database, settings, ManualClock(LONG_AGO))
    for name in ("fred", "wilma", "barney"):
        h.signup(name, f"{name}-pw")
    added = h.mail("fred@example.org", "add fred fred-pw fred@home.example")
    request = next(s for s in added if s.subject.startswith("confirm address "))
    h.mail("fred@home.example", f"Re: {request.subject}")  # the owner confirms it
    h.challenge("fred", "wilma")
    h.challenge("wilma", "barney")
    # A round of moves, then barney resigns on his turn (in the first round, or out of
    # turn, a resignation would mean something else).
    board = Board.from_layout("standard")
    for userid in ("wilma", "barney", "wilma"):
        move = str(next(iter(board.legal_moves)))
        board.push_text(move)
        h.mail(f"{userid}@example.org", f"abalone move 102 {userid} {userid}-pw {move}")
    h.mail("barney@example.org", "abalone resign 102 barney barney-pw")
    h.mail("barney@example.org", "delete barney barney-pw")
    h.mail("wilma@example.org", "vacation wilma wilma-pw on")
    h.take_outbox()
    with database.write() as session:
        raw = (b"From: fred@example.org\r\nTo: abalone@example.org\r\nMessage-ID: <p1@x>\r\n"
               b"Subject: abalone move 101 fred fred-pw c3-c5,d4\r\n\r\n\r\n")
        mail, _ = intake.store_inbox(session, raw, "fred@example.org",
                                         [ADDRESS], h.clock.now())
        assert mail is not None
        repository.mark_inbox(session, mail, "parked", now=h.clock.now(),
                              error="Traceback (most recent call last):\n  ...\n"
                                    "RuntimeError: the database went away\n")
    try:
        yield h
    finally:
        database.dispose()


def _secrets(h: Harness) -> list[str]:
    with h.database.read() as session:
        hashes = [u.password_hash for u in session.scalars(select(User))]
        tokens = [s.reply_token for s in session.scalars(select(Seat))]
    return [x for x in hashes + tokens if x and not x.startswith("!")]


def test_read_only_views(site: Harness, sqlite_url: str, tmp_path: Path) -> None:
    commands = [
        ["users", "list"], ["users", "show", "FRED"], ["games", "list"],
        ["games", "show", "101"], ["mail", "parked"],
    ]
    results = run_all(sqlite_url, tmp_path, commands)
    out = {" ".join(c): r for c, r in zip(commands, results)}
    for name, result in out.items():
        assert result.returncode == 0 and result.stderr == "", (name, result.stderr)
        for secret in _secrets(site):
            assert secret not in result.stdout, name
        assert "argon2" not in result.stdout

    users = out["users list"].stdout.splitlines()
    assert users[0].split() == ["USERID", "RATING", "GAMES", "WON", "LOST", "DRAWN",
                                "ADDRESSES", "STATUS", "SIGNED", "UP"]
    rows = {line.split()[0]: line for line in users[1:]}
    assert set(rows) == {"barney", "fred", "wilma", "pebble", "marble", "boulder", "avalanche"}
    assert "vacation" in rows["wilma"] and "deleted" in rows["barney"]
    assert "robot (pebble)" in rows["pebble"]
    assert rows["wilma"].split()[2:6] == ["1", "1", "0", "0"]  # games, won, lost, drawn
    status_column = users[0].index("STATUS")
    assert all(line[status_column - 2:status_column] == "  " for line in users[1:])
    assert all(line[status_column] != " " for line in users[1:])

    fred = out["users show FRED"].stdout
    assert "userid:" in fred and "fred@example.org, fred@home.example" in fred
    assert "active games:    101 (to move)" in fred

    games = out["games list"].stdout.splitlines()
    assert games[0].split()[:5] == ["BOARD", "STATUS", "PLAYERS", "MOVES", "STATE"]
    assert games[1].split()[:2] == ["101", "active"] and "fred to move" in games[1]
    assert games[2].split()[:2] == ["102", "finished"] and "won by wilma" in games[2]

    board = out["games show 101"].stdout
    assert "status:" in board and "active (fred to move)" in board
    assert "reminder after 7 days, forfeit after 21 days" in board
    assert "A- o o o o o" in board and "I- x x x x x" in board
    assert "moves: none yet" in board

    parked = out["mail parked"].stdout.splitlines()
    assert parked[0].split() == ["ID", "RECEIVED", "FROM", "SUBJECT", "TRIES", "LAST", "ERROR"]
    assert "fred@example.org" in parked[1]
    assert "abalone move 101 fred ******** c3-c5,d4" in parked[1]
    assert "fred-pw" not in out["mail parked"].stdout
    assert parked[1].endswith("RuntimeError: the database went away")


def test_views_in_process(site: Harness, call) -> None:  # type: ignore[no-untyped-def]
    finished = call("games", "list", "--status", "finished").stdout.splitlines()
    assert len(finished) == 2 and finished[1].split()[0] == "102"
    assert call("games", "list", "--status", "aborted").stdout == "no games with status aborted\n"
    board = call("games", "show", "102").stdout
    assert "finished (won by wilma)" in board and "moves: 1. " in board
    assert "1600 -> " in board
    wilma = call("users", "show", "wilma").stdout
    assert "status:          vacation" in wilma and "finished games:  1" in wilma
    for args, message in (
        (("users", "show", "ghost"), "abalone-pbm users show: there is no user ghost"),
        (("games", "show", "999"), "abalone-pbm games show: there is no board 999"),
    ):
        result = call(*args)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr.strip() == message
    bad = call("games", "show", "one")
    assert bad.returncode == 2 and "not a board number" in bad.stderr
    bad = call("games", "list", "--status", "lost")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_disable_and_enable_a_user(site: Harness, sqlite_url: str, tmp_path: Path,
                                   call) -> None:  # type: ignore[no-untyped-def]
    done = run(sqlite_url, tmp_path, "users", "disable", "fred")
    assert done.returncode == 0, done.stderr
    assert "fred is disabled" in done.stdout and "(101)" in done.stdout
    sent = site.mail("fred@example.org", "abalone move 101 fred fred-pw c3-c5,d4")
    assert "no longer active" in sent[0].body
    assert "status:          disabled" in call("users", "show", "fred").stdout
    assert "disabled already" in call("users", "disable", "fred").stdout
    done = call("users", "enable", "fred")
    assert done.returncode == 0 and "fred is enabled again" in done.stdout
    sent = site.mail("fred@example.org", "abalone move 101 fred fred-pw c3-c5,d4")
    assert sent[0].subject == "Abalone Board 101 wilma"
    refused = call("users", "enable", "barney")
    assert refused.returncode == 1 and "deleted by its owner" in refused.stderr
    missing = call("users", "disable", "ghost")
    assert missing.returncode == 1 and "there is no user ghost" in missing.stderr


def test_abort_a_game(site: Harness, sqlite_url: str, tmp_path: Path,
                      call) -> None:  # type: ignore[no-untyped-def]
    site.mail("betty@example.org", "signup betty betty-pw")
    site.mail("betty@example.org", "abalone subscribe 101 betty betty-pw")
    site.take_outbox()
    done = run(sqlite_url, tmp_path, "games", "abort", "101", "--reason", "cheating suspected")
    assert done.returncode == 0, done.stderr
    sent = site.take_outbox()
    players = ["fred@example.org", "fred@home.example", "wilma@example.org"]
    assert sorted(s.to for s in sent) in (players, sorted(players + ["betty@example.org"]))
    assert f"board 101 aborted; {len(sent)} mail(s) queued" in done.stdout
    assert {s.subject for s in sent} == {"Abalone Board 101 aborted"}
    assert "cheating suspected" in sent[0].body and "not rated" in sent[0].body
    assert sent[0].message["Auto-Submitted"] == "auto-generated"
    with site.database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and game.status == "aborted"
    listed = call("games", "list", "--status", "aborted")
    assert listed.stdout.splitlines()[1].split()[:2] == ["101", "aborted"]
    again = call("games", "abort", "101")
    assert again.returncode == 1 and "board 101 is aborted, not active" in again.stderr
    sent = site.mail("fred@example.org", "abalone move 101 fred fred-pw c3-c5,d4")
    assert "The game has ended" in sent[0].body
    missing = call("games", "abort", "999")
    assert missing.returncode == 1 and "there is no board 999" in missing.stderr


def test_replay_a_parked_mail(site: Harness, sqlite_url: str, tmp_path: Path,
                              call) -> None:  # type: ignore[no-untyped-def]
    with site.database.read() as session:
        parked_id = repository.parked_mails(session)[0].id
    done = run(sqlite_url, tmp_path, "mail", "replay", str(parked_id))
    assert done.returncode == 0, done.stderr
    assert f"inbox mail {parked_id} is queued again" in done.stdout
    sent = site.run()  # the worker takes it: the move is played
    assert {s.subject for s in sent} == {"Abalone Board 101 wilma"}
    with site.database.read() as session:
        mail = session.get(InboxMail, parked_id)
        assert mail is not None and mail.status == "done"
    assert call("mail", "parked").stdout == "no parked mail\n"
    again = call("mail", "replay", str(parked_id))
    assert again.returncode == 1 and "processed already" in again.stderr
    assert "--force" in again.stderr
    missing = call("mail", "replay", "999")
    assert missing.returncode == 1 and "there is no inbox mail 999" in missing.stderr


def test_tick_once(site: Harness, sqlite_url: str, tmp_path: Path,
                   call) -> None:  # type: ignore[no-untyped-def]
    # Board 101 waits for fred since 2020: he forfeits.  wilma is on vacation: the game
    # waiting for her is left alone.
    site.mail("wilma@example.org", "vacation wilma wilma-pw off")
    site.mail("fred@example.org", "abalone challenge wilma fred")
    site.mail("wilma@example.org", "vacation wilma wilma-pw on")
    site.take_outbox()
    done = run(sqlite_url, tmp_path, "tick")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "abalone-pbm tick: 0 reminders, 1 forfeit, 0 draws by unanswered proposals, "
        "0 games ended by total time, 0 daily digests (2 active games looked at)\n"
    )
    with site.database.read() as session:
        rows = list(session.scalars(select(OutboxMail).where(OutboxMail.status == "pending")))
        assert sorted(r.recipient for r in rows) == [
            "fred@example.org", "fred@home.example", "wilma@example.org"
        ]
        assert repository.get_game(session, 101).status == "finished"  # type: ignore[union-attr]
        assert repository.get_game(session, 103).status == "active"  # type: ignore[union-attr]
    again = call("tick")
    assert again.stdout == (
        "abalone-pbm tick: 0 reminders, 0 forfeits, 0 draws by unanswered proposals, "
        "0 games ended by total time, 0 daily digests (1 active game looked at)\n"
    )


def test_missing_database(tmp_path: Path, call) -> None:  # type: ignore[no-untyped-def]
    done = call("users", "list")
    assert done.returncode == 1 and "does not exist yet" in done.stderr
    assert not list(tmp_path.glob("*.sqlite3"))
