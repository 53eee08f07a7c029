"""The listener's group commit: mails stored at the same moment share one transaction,
each caller returns only when its mail is committed, and one mail that cannot be stored
fails alone."""

from __future__ import annotations

import threading

import pytest
from mail_helpers import OURS, person_mail
from sqlalchemy import event, select

from abalone_pbm.mail import intake
from abalone_pbm.db.models import InboxMail
from abalone_pbm.mail.intake import GroupStore


def _stored(database) -> dict[str, int]:
    with database.read() as session:
        return {key: mail_id for mail_id, key in
                session.execute(select(InboxMail.id, InboxMail.dedup_key))}


def _commits(database) -> list[int]:
    counted: list[int] = []
    event.listen(database.engine, "commit", lambda _connection: counted.append(1))
    return counted


def _in_threads(store: GroupStore, raws: list[bytes]) -> list[object]:
    results: list[object] = [None] * len(raws)
    start = threading.Barrier(len(raws))

    def one(index: int) -> None:
        start.wait()
        try:
            results[index] = store(raws[index], "fred@example.net", [OURS])
        except Exception as error:  # noqa: BLE001 - the test looks at it
            results[index] = error

    threads = [threading.Thread(target=one, args=(n,)) for n in range(len(raws))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_mails_stored_together_share_commits_and_each_is_stored(
        database, clock, monkeypatch) -> None:
    real = intake.store_inbox_id
    first = person_mail(1)

    def store_inbox(session, raw, *args, **kwargs):  # type: ignore[no-untyped-def]
        if raw == first:
            threading.Event().wait(0.5)  # a slow disk: the others gather meanwhile
        return real(session, raw, *args, **kwargs)

    monkeypatch.setattr(intake, "store_inbox_id", store_inbox)
    store = GroupStore(database, clock)
    commits = _commits(database)
    leader = threading.Thread(target=store, args=(first, "fred@example.net", [OURS]))
    leader.start()
    threading.Event().wait(0.1)
    raws = [person_mail(n) for n in range(2, 25)]
    results = _in_threads(store, raws)
    leader.join(30)
    assert all(isinstance(r, tuple) and r[1] is True for r in results), results
    ids = [r[0] for r in results]  # type: ignore[index]
    assert len(set(ids)) == len(raws)
    assert len(_stored(database)) == len(raws) + 1
    assert len(commits) <= 3  # the first mail's own, then the rest together


def test_a_redelivery_in_the_same_group_is_stored_once(database, clock) -> None:
    store = GroupStore(database, clock)
    results = _in_threads(store, [person_mail(7)] * 6)
    assert all(isinstance(r, tuple) for r in results), results
    assert len({r[0] for r in results}) == 1  # type: ignore[index]
    assert sum(r[1] for r in results) == 1  # type: ignore[index]
    assert len(_stored(database)) == 1


def test_a_mail_that_cannot_be_stored_fails_alone(database, clock, monkeypatch) -> None:
    real = intake.store_inbox_id
    poison = person_mail(3)

    def store_inbox(session, raw, *args, **kwargs):  # type: ignore[no-untyped-def]
        if raw == poison:
            raise RuntimeError("the disk is full, say")
        return real(session, raw, *args, **kwargs)

    monkeypatch.setattr(intake, "store_inbox_id", store_inbox)
    store = GroupStore(database, clock)
    raws = [person_mail(n) for n in range(1, 9)]
    results = _in_threads(store, raws)
    failed = [raw for raw, r in zip(raws, results) if isinstance(r, Exception)]
    assert failed == [poison]
    assert len(_stored(database)) == len(raws) - 1


def test_a_failed_commit_stores_nothing_and_raises(database, clock, monkeypatch) -> None:
    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("database away")

    monkeypatch.setattr(intake, "store_inbox_id", broken)
    with pytest.raises(RuntimeError, match="database away"):
        GroupStore(database, clock)(person_mail(1), "fred@example.net", [OURS])
    assert _stored(database) == {}
