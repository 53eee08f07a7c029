"""Users, games and seats; datetimes come back as aware UTC on both backends."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm.exc import StaleDataError

from abalone_pbm.db import repository
from abalone_pbm.db.models import Game, MoveRecord, Seat, User
from abalone_pbm.db.session import Database

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
START = "11111/111111/..111../......../........./......../..222../222222/22222 1 0,0"


def add_users(database: Database, *names: str) -> None:
    with database.write() as session:
        for name in names:
            repository.add_user(session, name, "hash", [f"{name.lower()}@example.org"], NOW)


def new_game(session, players: list[User], number: int | None = None) -> Game:  # type: ignore[no-untyped-def]
    number = number or repository.next_board_number(session)
    game = Game(number=number, layout="standard", players=len(players), options="{}",
                start_position=START, position=START, status="active",
                created_at=NOW, updated_at=NOW, turn_started_at=NOW)
    for seat, user in enumerate(players, start=1):
        game.seats.append(Seat(seat=seat, user=user, reply_token=f"tok{number}x{seat}"))
    session.add(game)
    session.flush()
    return game


def test_users_are_found_in_any_case(database: Database) -> None:
    with database.write() as session:
        user = repository.add_user(session, "Fred", "hash",
                                   ["Fred@Example.ORG", "fred@example.org", "f2@example.org"], NOW)
        assert user.userid == "fred"
        assert [a.address for a in user.addresses] == ["fred@example.org", "f2@example.org"]
        assert user.rating == 1600.0 and user.accepts_challenges and not user.disabled
    with database.read() as session:
        found = repository.get_user(session, "FRED")
        assert found is not None and found.userid == "fred"
        assert repository.get_user(session, "barney") is None
        assert [u.userid for u in repository.find_user_by_address(session, "FRED@example.org")] \
            == ["fred"]
        assert repository.find_user_by_address(session, "nobody@example.org") == []


def test_one_address_may_belong_to_several_users(database: Database) -> None:
    with database.write() as session:
        repository.add_user(session, "fred", "h", ["family@example.org"], NOW)
        repository.add_user(session, "wilma", "h", ["family@example.org"], NOW)
    with database.read() as session:
        users = repository.find_user_by_address(session, "family@example.org")
        assert [u.userid for u in users] == ["fred", "wilma"]


def test_a_taken_userid_is_refused_and_the_transaction_goes_on(database: Database) -> None:
    add_users(database, "fred")
    with database.write() as session:
        with pytest.raises(ValueError):
            repository.add_user(session, "FRED", "h", ["x@example.org"], NOW)
        repository.add_user(session, "wilma", "h", ["wilma@example.org"], NOW)
    with database.read() as session:
        assert repository.get_user(session, "wilma") is not None


def test_board_numbers_start_at_101(database: Database) -> None:
    add_users(database, "fred", "wilma")
    with database.write() as session:
        assert repository.next_board_number(session) == 101
        fred, wilma = repository.get_user(session, "fred"), repository.get_user(session, "wilma")
        assert fred and wilma
        assert new_game(session, [fred, wilma]).number == 101
        assert repository.next_board_number(session) == 102
        assert new_game(session, [wilma, fred]).number == 102
    with database.write() as session:
        assert repository.next_board_number(session) == 103


def test_games_seats_and_tokens(database: Database) -> None:
    add_users(database, "fred", "wilma", "barney")
    with database.write() as session:
        fred, wilma, barney = (repository.get_user(session, n) for n in ("fred", "wilma", "barney"))
        assert fred and wilma and barney
        new_game(session, [fred, wilma])
        second = new_game(session, [barney, fred])
        second.status = "finished"
    with database.read() as session:
        game = repository.get_game(session, 101)
        assert game is not None and [s.user.userid for s in game.seats] == ["fred", "wilma"]
        assert repository.get_game(session, 999) is None
        seat = repository.seat_by_token(session, "tok102x2")
        assert seat is not None and seat.game.number == 102 and seat.user.userid == "fred"
        assert repository.seat_by_token(session, "nope") is None
        fred = repository.get_user(session, "fred")
        assert fred is not None
        assert [g.number for g in repository.games_of_user(session, fred)] == [101, 102]
        assert [g.number for g in repository.games_of_user(session, fred, "active")] == [101]
        assert [g.number for g in repository.games_of_user(session, fred, ["finished"])] \
            == [102]
    with database.write() as session:
        locked = repository.get_game(session, 101, for_update=True)
        assert locked is not None and locked.number == 101


def test_the_version_column_refuses_a_stale_write(database: Database) -> None:
    add_users(database, "fred", "wilma")
    with database.write() as session:
        fred, wilma = repository.get_user(session, "fred"), repository.get_user(session, "wilma")
        assert fred and wilma
        new_game(session, [fred, wilma])
    with database.read() as session:
        stale = repository.get_game(session, 101)
        assert stale is not None and stale.version == 1
    with database.write() as session:
        game = repository.get_game(session, 101, for_update=True)
        assert game is not None
        game.ply = 1
    assert stale.version == 1
    with pytest.raises(StaleDataError):
        with database.write() as session:
            merged = session.merge(stale, load=False)
            merged.ply = 5


def test_datetimes_come_back_as_aware_utc(database: Database) -> None:
    add_users(database, "fred", "wilma")
    berlin = timezone(timedelta(hours=1))
    with database.write() as session:
        if database.is_postgresql:
            # A server in another zone must not matter.
            session.execute(text("SET LOCAL TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE"))
        fred, wilma = repository.get_user(session, "fred"), repository.get_user(session, "wilma")
        assert fred and wilma
        game = new_game(session, [fred, wilma])
        game.last_nag_at = datetime(2026, 1, 1, 13, 0, tzinfo=berlin)  # 12:00 UTC
        game.finished_at = datetime(2026, 1, 1, 12, 30)  # naive: taken as UTC
        game.moves.append(MoveRecord(ply=1, seat=1, text="c3-c5,d4", created_at=NOW))
    with database.read() as session:
        if database.is_postgresql:
            session.execute(text("SET LOCAL TIME ZONE INTERVAL '-03:00' HOUR TO MINUTE"))
        loaded = repository.get_game(session, 101)
        assert loaded is not None
        for moment in (loaded.created_at, loaded.last_nag_at, loaded.finished_at,
                       loaded.moves[0].created_at):
            assert moment is not None and moment.utcoffset() == timedelta(0)
        assert loaded.last_nag_at == NOW
        assert loaded.finished_at == NOW + timedelta(minutes=30)
        # Comparisons in SQL see the same moments, whatever zone they are given in.
        count = select(func.count()).select_from(Game)
        assert session.scalar(count.where(Game.last_nag_at == NOW.astimezone(berlin))) == 1
        assert session.scalar(count.where(Game.finished_at > NOW)) == 1
        assert session.scalar(count.where(Game.finished_at > NOW + timedelta(hours=1))) == 0
