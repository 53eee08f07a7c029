"""Robot games cannot starve others: who may challenge a computer player and for how
long it thinks, the robots' daily CPU allowance per player, robot lanes that keep
ordinary moves going beside a long think, and analyses searched outside the worker's
transaction, one sender's at a time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from datetime import timedelta
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import func, select

from abalone_pbm.db import repository
from abalone_pbm.db.models import AnalysisRequest, Game, RobotUsage
from abalone_pbm.rules import Board
from abalone_pbm.service import limits, passwords
from abalone_pbm.service import robots as robot_service
from abalone_pbm.service.handlers import analysis as analysis_handlers

from .harness import Harness, make_harness


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))


@pytest.fixture
def timed(migrated_db_url: str, tmp_path: Path) -> Iterator[Harness]:
    """Robots whose own times are short, and a cap that lets -think ask for more."""
    h = make_harness(migrated_db_url, tmp_path, robot_budget=60.0,
                     robot_budgets="boulder:0.3,avalanche:0.3,pebble:0.05,marble:0.05")
    try:
        yield h
    finally:
        h.database.dispose()


def _establish(harness: Harness, userid: str) -> None:
    with harness.database.write() as session:
        user = repository.get_user(session, userid)
        assert user is not None
        user.rated_games = harness.settings.broadcast_min_games
        user.created_at = harness.clock.now() - timedelta(
            days=harness.settings.broadcast_min_age_days + 1)


def _games(harness: Harness) -> int:
    with harness.database.read() as session:
        return int(session.scalar(select(func.count(Game.id))) or 0)


def _ply(harness: Harness, number: int) -> int:
    with harness.database.read() as session:
        game = repository.get_game(session, number)
        assert game is not None
        return game.ply


def _first_move(harness: Harness, number: int) -> str:
    with harness.database.read() as session:
        game = repository.get_game(session, number)
        assert game is not None
        return min(str(m) for m in Board(game.position, ply=game.ply).legal_moves)


# ------------------------------------------------------------------ challenges
def test_robots_only_and_strangers_are_refused_by_mail(harness: Harness) -> None:
    harness.signup("fred", "pw")
    sent = harness.mail("fred@example.org", "abalone challenge boulder avalanche")
    assert len(sent) == 1 and "computer players only" in sent[0].body, sent[0].body
    assert "abalone challenge <your userid> boulder" in sent[0].body
    # No account at the sending address: no robot game, for nobody.
    for subject in ("abalone challenge fred boulder", "abalone challenge -think=60 boulder fred",
                    "abalone challenge pebble marble"):
        sent = harness.mail("stranger@example.net", subject)
        assert [s.subject for s in sent] == ["Abalone error"], sent
    body = harness.mail("stranger@example.net", "abalone challenge fred boulder")[0].body
    assert "needs an account" in body and "confirmed address" in body, body
    assert _games(harness) == 0
    # People may still challenge people, strangers included (pbmserv's rule).
    harness.signup("wilma", "pw")
    harness.challenge("fred", "wilma", by="stranger@example.net")
    # And a player with an account challenges a robot.
    harness.challenge("fred", "boulder")
    assert _games(harness) == 2


def test_an_unconfirmed_address_is_no_account(harness: Harness) -> None:
    harness.signup("barney", "pw")
    # A second address waits for its confirmation.
    sent = harness.mail("barney@example.org", "add barney pw barney@elsewhere.example")
    assert any(s.to == "barney@elsewhere.example" for s in sent), sent
    sent = harness.mail("barney@elsewhere.example", "abalone challenge barney boulder")
    assert "needs an account" in sent[0].body, sent[0].body
    harness.challenge("barney", "boulder", by="barney@example.org")


def test_a_long_think_is_for_established_players_in_their_own_game(timed: Harness) -> None:
    harness = timed
    harness.signup("fred", "pw")
    harness.signup("wilma", "pw")
    # Up to the level's own time is anybody's: 0.3 s here, so -think=1 is long.
    sent = harness.mail("fred@example.org", "abalone challenge -think=1 fred boulder")
    words = " ".join(sent[0].body.split())
    assert "more than boulder's own 0.3 seconds a move, which is for established players" \
        in words, words
    assert "(fred has 0 and is 0 days old)" in words and "leave -think out" in words
    assert _games(harness) == 0
    _establish(harness, "fred")
    # Established, but for someone else's game: no.
    sent = harness.mail("fred@example.org", "abalone challenge -think=1 wilma boulder")
    assert "only for a game you play yourself" in " ".join(sent[0].body.split())
    assert _games(harness) == 0
    mails = harness.challenge("fred", "boulder", options="-think=1")
    assert "Computer players think 1 s a move" in mails["fred"].body
    # The cap decides what is long: a server capped at the level's time lets anybody
    # ask for it.
    capped = make_harness(harness.settings.database_url,
                          Path(harness.settings.maildir).parent / "capped", robot_budget=0.3,
                          robot_budgets="boulder:0.3")
    try:
        assert capped.challenge("wilma", "boulder", options="-think=45")
    finally:
        capped.database.dispose()


# ------------------------------------------------------------------ allowance
def test_past_the_daily_allowance_the_robot_thinks_less(
        migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    harness = make_harness(migrated_db_url, tmp_path, robot_budget=60.0,
                           robot_budgets="boulder:0.3", robot_seconds_per_user_daily=1,
                           robot_budget_past_allowance=0.05)
    budgets: list[float] = []
    real_choose = robot_service.choose

    def spy(turn: robot_service.RobotTurn, budget: float):  # type: ignore[no-untyped-def]
        budgets.append(budget)
        return real_choose(turn, budget)

    monkeypatch.setattr(robot_service, "choose", spy)
    try:
        harness.signup("fred", "pw")
        _establish(harness, "fred")
        harness.challenge("fred", "boulder", options="-think=2")
        harness.mail("fred@example.org", f"abalone move 101 fred pw {_first_move(harness, 101)}")
        with harness.database.read() as session:
            charged = session.scalar(select(func.sum(RobotUsage.seconds))
                                     .where(RobotUsage.userid == "fred"))
        # The search's CPU (less than its 2 s on a busy machine) was charged to fred.
        assert charged is not None and 0.1 < charged < 2.5, charged
        # Fred's other robot games of the day used up the rest of his allowance.
        with harness.database.write() as session:
            limits.record_robot_seconds(session, ["fred"], 1.0, harness.clock.now())
        harness.mail("fred@example.org", f"abalone move 101 fred pw {_first_move(harness, 101)}")
        assert budgets == [2.0, 0.05]
        assert _ply(harness, 101) == 4
        # A day later the allowance is back.
        harness.clock.advance(days=1, minutes=1)
        harness.mail("fred@example.org", f"abalone move 101 fred pw {_first_move(harness, 101)}")
        assert budgets[-1] == 2.0
    finally:
        harness.database.dispose()


# ------------------------------------------------------------------ lanes
class Lanes:
    """``serve``'s robot lanes on the harness's database: the worker names boards to
    them as it names them to ``serve``."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.lanes = harness.robots.lanes(on_done=lambda: None)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.lanes.run, args=(self.stop_event,))

        def hand_over(boards: set[int] | None = None) -> int:
            self.lanes.want(boards)
            return 0

        harness.robots = hand_over  # type: ignore[assignment]

    def __enter__(self) -> Lanes:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop_event.set()
        self.lanes.stop()
        self.thread.join(timeout=30)


def _wait_for_ply(harness: Harness, number: int, ply: int, timeout: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if _ply(harness, number) >= ply:
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"board {number} did not reach move {ply} in {timeout} s")


def test_a_long_think_holds_no_other_game(timed: Harness) -> None:
    harness = timed
    for name in ("fred", "wilma", "betty"):
        harness.signup(name, "pw")
    _establish(harness, "fred")
    _establish(harness, "betty")
    harness.challenge("fred", "avalanche", options="-think=4")   # 101: long thinks
    harness.challenge("betty", "avalanche", options="-think=4")  # 102: long thinks
    harness.challenge("wilma", "boulder")                        # 103: 0.3 s a move
    with Lanes(harness):
        harness.mail("fred@example.org", f"abalone move 101 fred pw {_first_move(harness, 101)}")
        harness.mail("betty@example.org", f"abalone move 102 betty pw {_first_move(harness, 102)}")
        time.sleep(0.3)  # the long lane has taken board 101
        for ply in (2, 4, 6):
            harness.mail("wilma@example.org",
                         f"abalone move 103 wilma pw {_first_move(harness, 103)}")
            answered = _wait_for_ply(harness, 103, ply, timeout=10)
            # Its own 0.3 s and a margin for a busy machine, not the 4 s think.
            assert answered < 2.0, (ply, answered)
        # One long think at a time: board 102 waits for board 101's.
        assert _ply(harness, 101) == 1 or _ply(harness, 102) == 1
        first = _wait_for_ply(harness, 101, 2, timeout=15)
        _wait_for_ply(harness, 102, 2, timeout=15)
        assert first < 5.0


# ------------------------------------------------------------------ analyses
def _finished_game(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.signup("wilma", "pw")
    harness.challenge("fred", "wilma")
    for mover in ("fred", "wilma"):
        harness.mail(f"{mover}@example.org",
                     f"abalone move 101 {mover} pw {_first_move(harness, 101)}")
    harness.mail("fred@example.org", "abalone resign 101 fred pw")


def test_the_worker_queues_analyses_and_searches_none(timed: Harness) -> None:
    harness = timed
    _finished_game(harness)
    harness.robots = lambda boards=None: 0  # type: ignore[assignment]
    started = time.monotonic()
    for ply in range(3):
        assert harness.mail("barney@example.org", f"abalone analyze 101#{ply}") == []
    # Three searches of 2 s each would take 6 s; the worker only queued them.
    assert time.monotonic() - started < 1.5
    with harness.database.read() as session:
        queued = list(session.scalars(select(AnalysisRequest).order_by(AnalysisRequest.id)))
        assert [(r.board, r.ply, r.queue) for r in queued] == \
            [(101, 0, "barney@example.org"), (101, 1, "barney@example.org"),
             (101, 2, "barney@example.org")]
        assert all(r.message_id for r in queued)


def test_a_burst_of_analyses_delays_nobody(
        migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    harness = make_harness(migrated_db_url, tmp_path, robot_budget=0.5)
    # Where each analysis is searched: never in the worker (this test's thread), whose
    # every search would hold up every mail behind it.
    searched_in: list[str] = []
    search = analysis_handlers.analyse

    def recording_search(*args: Any, **kwargs: Any) -> Any:
        searched_in.append(threading.current_thread().name)
        return search(*args, **kwargs)

    monkeypatch.setattr(analysis_handlers, "analyse", recording_search)
    try:
        _finished_game(harness)
        with Lanes(harness):
            harness.robots(None)
            answers: list[str] = []

            def mail(sender: str, subject: str) -> list[str]:
                """Deliver; answers written meanwhile by the lanes are counted."""
                sent = harness.mail(sender, subject)
                answers.extend(s.to for s in sent if s.subject == "Abalone Board 101 analysis")
                return [s.subject for s in sent if s.subject != "Abalone Board 101 analysis"]

            for ply in (0, 1, 2, 1, 0, 2, 1, 0):
                assert mail("barney@example.org", f"abalone analyze 101#{ply}") == []
            # Another sender's analysis is not queued behind the burst: senders take turns.
            answered_before_betty = len(answers)
            mail("betty@example.org", "abalone analyze 101#2")
            for _ in range(3):
                assert mail("wilma@example.org", "abalone show 101") == ["Abalone Board 101"]
            # The shows were answered while the nine searches (0.5 s each) were still
            # under way: searched in the worker, they would have come after all nine.
            assert len(answers) < 9, answers
            deadline = time.monotonic() + 30
            while len(answers) < 9 and time.monotonic() < deadline:
                answers += [s.to for s in harness.take_outbox()
                            if s.subject == "Abalone Board 101 analysis"]
                time.sleep(0.05)
        assert len(searched_in) == 9
        assert threading.main_thread().name not in searched_in, searched_in
        assert sorted(answers) == ["barney@example.org"] * 8 + ["betty@example.org"]
        # betty asked after barney's eight; at most the search under way when she asked
        # (and one just written, not yet read here) came before hers.
        assert answers.index("betty@example.org") <= answered_before_betty + 2, \
            (answered_before_betty, answers)
    finally:
        harness.database.dispose()
