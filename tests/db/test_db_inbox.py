"""The inbox: redelivered mail is stored once, work is claimed oldest first."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from abalone_pbm.db import repository
from abalone_pbm.mail import intake
from abalone_pbm.mail.idempotency import inbox_key
from abalone_pbm.db.models import InboxMail
from abalone_pbm.db.session import Database

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def mail(subject: str, message_id: str | None = None) -> bytes:
    lines = ["From: fred@example.org", "To: abalone@localhost", f"Subject: {subject}"]
    if message_id is not None:
        lines.append(f"Message-ID: {message_id}")
    return ("\r\n".join(lines) + "\r\n\r\nbody\r\n").encode()


def store(database: Database, raw: bytes) -> tuple[int | None, bool]:
    with database.write() as session:
        row, created = intake.store_inbox(
            session, raw, "fred@example.org", ["abalone@localhost"], NOW
        )
        return (row.id if row else None), created


def count(database: Database) -> int:
    with database.read() as session:
        return session.query(InboxMail).count()


def test_dedup_key() -> None:
    key = inbox_key(mail("x", "  <a@b>  "), "fred@example.org")
    assert key.startswith("mid:") and key.isascii() and len(key) <= 255
    folded = b"Message-ID:\r\n <a@b>\r\nSubject: x\r\n\r\nbody\r\n"
    assert inbox_key(folded, "fred@example.org") == key
    # The envelope sender is part of the key (its case and brackets are not).
    assert inbox_key(mail("x", "<a@b>"), "<FRED@example.org>") == key
    assert inbox_key(mail("x", "<a@b>"), "eve@example.org") != key
    long_id = "<" + "x" * 300 + "@b>"
    assert len(inbox_key(mail("x", long_id), "f@e")) <= 255
    assert inbox_key(mail("x", long_id), "f@e") == inbox_key(
        mail("y", long_id), "f@e"
    )
    eight_bit = b"Message-ID: <caf\xe9@b>\r\nSubject: x\r\n\r\nbody\r\n"
    key = inbox_key(eight_bit, "f@e")
    assert key.isascii() and key.startswith("mid:")
    # Without Message-ID: the bytes of a traced delivery, else every delivery its own.
    traced = b"Received: from mx by here with ESMTP id 4F2; now\r\n" + mail("x")
    assert inbox_key(traced, "f@e", ["a@l"]) == inbox_key(
        traced, "f@e", ["a@l"]
    )
    assert inbox_key(traced, "f@e", ["a@l"]).startswith("bytes:")
    assert inbox_key(mail("x"), "f@e") != inbox_key(mail("x"), "f@e")


def test_same_message_id_is_stored_once(database: Database) -> None:
    first_id, created = store(database, mail("move 1", "<m1@example.org>"))
    assert created and first_id is not None
    # A redelivery, even with other bytes (a new Received: line), is the same mail.
    again_id, created_again = store(database, mail("move 1 again", "<m1@example.org>"))
    assert (again_id, created_again) == (first_id, False)
    assert count(database) == 1


def test_another_sender_cannot_squat_a_message_id(database: Database) -> None:
    with database.write() as session:
        squat, _ = intake.store_inbox(
            session, mail("help", "<m1@example.org>"), "eve@example.org", ["a@l"], NOW
        )
    first_id, created = store(database, mail("move 1", "<m1@example.org>"))
    assert created and squat is not None and first_id != squat.id
    assert count(database) == 2


def test_without_message_id_every_untraced_delivery_counts(database: Database) -> None:
    a, created_a = store(database, mail("one"))
    b, created_b = store(database, mail("one"))
    assert created_a and created_b and a != b
    traced = b"Received: from mx by here with ESMTP id 4F2; now\r\n" + mail("two")
    c, created_c = store(database, traced)
    d, created_d = store(database, traced)
    assert created_c and not created_d and c == d
    assert count(database) == 3


def test_a_redelivery_leaves_the_transaction_usable(database: Database) -> None:
    with database.write() as session:
        first, _ = intake.store_inbox(session, mail("a", "<x@y>"), "f@e", ["t@e"], NOW)
        again, created = intake.store_inbox(session, mail("a", "<x@y>"), "f@e", ["t@e"], NOW)
        assert not created and again is first
        other, created_other = intake.store_inbox(session, mail("b"), "f@e", ["t@e"], NOW)
        assert created_other and other is not None
    assert count(database) == 2


def test_stored_fields(database: Database) -> None:
    raw = mail("hello", "<f@e>")
    with database.write() as session:
        row, _ = intake.store_inbox(
            session, raw, "fred@example.org", ["a@localhost", "b@localhost"], NOW
        )
        assert row is not None
        row_id = row.id
    with database.read() as session:
        row = session.get_one(InboxMail, row_id)
        assert row.raw == raw
        assert row.envelope_to == "a@localhost,b@localhost"
        assert row.status == "new" and row.attempts == 0
        assert row.received_at == NOW and row.received_at.tzinfo is not None


def test_a_flood_from_one_sender_does_not_hold_up_the_others(database: Database) -> None:
    """The sender with the fewest mails waiting goes first, each sender's mails in
    their order; a +tag or upper case does not make the flood many senders."""
    def store_from(sender: str, n: int) -> int:
        raw = f"From: {sender}\r\nSubject: {n}\r\nMessage-ID: <f{n}.{sender}>\r\n\r\nx\r\n"
        with database.write() as session:
            row, _ = intake.store_inbox(session, raw.encode(), sender, ["a@l"], NOW)
            assert row is not None
            return row.id

    flood = [store_from(f"Flood+{n}@Evil.example", n) for n in range(40)]
    wilma = store_from("wilma@example.org", 1)
    fred = [store_from("fred@example.org", n) for n in range(2)]
    order = []
    while True:
        with database.write() as session:
            claimed = repository.claim_next_inbox(session)
            if claimed is None:
                break
            order.append(claimed.id)
            repository.mark_inbox(session, claimed, "done", now=NOW)
    assert order == [wilma, *fred, *flood]


def test_claim_takes_the_oldest_new_mail(database: Database) -> None:
    ids = [store(database, mail(f"m{n}", f"<m{n}@e>"))[0] for n in range(3)]
    with database.write() as session:
        claimed = repository.claim_next_inbox(session)
        assert claimed is not None and claimed.id == ids[0]
        repository.mark_inbox(session, claimed, "done", now=NOW)
    with database.write() as session:
        claimed = repository.claim_next_inbox(session)
        assert claimed is not None and claimed.id == ids[1]
        repository.mark_inbox(session, claimed, "parked", error="Boom", now=NOW)
    with database.write() as session:
        claimed = repository.claim_next_inbox(session)
        assert claimed is not None and claimed.id == ids[2]
        repository.mark_inbox(session, claimed, "dropped", note="auto-submitted", now=NOW)
    with database.write() as session:
        assert repository.claim_next_inbox(session) is None
    with database.read() as session:
        done = session.get_one(InboxMail, ids[0])
        assert (done.status, done.attempts, done.processed_at) == ("done", 1, NOW)
        dropped = session.get_one(InboxMail, ids[2])
        assert dropped.note == "auto-submitted"
        parked = repository.parked_mails(session)
        assert [m.id for m in parked] == [ids[1]]
        assert parked[0].last_error == "Boom"


def test_a_failed_claim_rolls_back_and_the_mail_stays_new(database: Database) -> None:
    mail_id, _ = store(database, mail("m", "<m@e>"))
    with pytest.raises(RuntimeError):
        with database.write() as session:
            claimed = repository.claim_next_inbox(session)
            assert claimed is not None
            repository.mark_inbox(session, claimed, "done", now=NOW)
            raise RuntimeError("crash while processing")
    with database.write() as session:
        claimed = repository.claim_next_inbox(session)
        assert claimed is not None and claimed.id == mail_id and claimed.status == "new"


def test_requeue_for_the_admin(database: Database) -> None:
    mail_id, _ = store(database, mail("m", "<m@e>"))
    assert mail_id is not None
    with database.write() as session:
        claimed = repository.claim_next_inbox(session)
        assert claimed is not None
        repository.mark_inbox(session, claimed, "parked", error="Boom", now=NOW)
    with database.write() as session:
        again = repository.requeue_inbox(session, mail_id)
        assert again is not None and again.status == "new"
        assert repository.requeue_inbox(session, 999999) is None
    with database.write() as session:
        claimed = repository.claim_next_inbox(session)
        assert claimed is not None and claimed.id == mail_id
        repository.mark_inbox(session, claimed, "done", now=NOW)
    with database.write() as session:
        with pytest.raises(ValueError):
            repository.requeue_inbox(session, mail_id)
        assert repository.requeue_inbox(session, mail_id, force=True) is not None


def test_mark_inbox_refuses_unknown_status(database: Database) -> None:
    store(database, mail("m", "<m@e>"))
    with database.write() as session:
        claimed = repository.claim_next_inbox(session)
        assert claimed is not None
        with pytest.raises(ValueError):
            repository.mark_inbox(session, claimed, "finished")


# -- one board's mails in acceptance order ---------------------------------------------


@pytest.mark.parametrize(("subject", "board"), [
    ("abalone move 101 fred pw c3-c4", 101),
    ("Re: AW: Fwd: ABALONE MOVE 102 fred pw c3-c4", 102),
    ("abalone mvoe 103 fred pw c3-c4", 103),  # an alias of move
    ("abalone queue 104 fred pw c3-c4", 104),
    ("abalone submit 105#7 fred pw c3-c4", 105),
    ("abalone confirm 106 fred pw", 106),
    ("abalone resign 107 fred pw", 107),
    ("abalone chat 108 fred pw", 108),
    ("abalone show 109#5 110", 109),
    ("abalone show board 111", 111),
    ("accept 112 fred pw", 112),  # a vote on a draw, read without the game word
    ("abalone preview 113#2 c3-c4", 113),
    ("=?utf-8?q?abalone_move_114_fred_pw_c3-c4?=", 114),
    ("multiple", None),  # its commands are in the body
    ("", None),  # the body's first line is the command
    ("signup fred pw", None),
    ("abalone challenge fred wilma", None),
    ("abalone preview new 3 c3-c4", None),
    ("abalone move fred pw c3-c4", None),
    ("abalone move 99999999999999999999 fred pw c3-c4", None),  # does not fit a column
    ("Re: " * 5000 + "abalone move 115 fred pw c3-c4", None),  # past the bounded prefix
])
def test_the_board_of_a_subject(subject: str, board: int | None) -> None:
    raw = f"From: f@e\r\nSubject: {subject}\r\nMessage-ID: <b@e>\r\n\r\nx\r\n".encode()
    values = intake.inbox_values(raw, "f@e", ["abalone@localhost"], NOW)
    assert values["board"] == board


def test_the_reply_address_names_the_board_before_the_subject() -> None:
    raw = b"From: f@e\r\nSubject: abalone move 101 fred pw c3-c4\r\n\r\nc3-c4\r\n"
    reply = intake.inbox_values(raw, "f@e", ["<Abalone+202.k3x9q7mf2a@Host>"], NOW)
    assert reply["board"] == 202
    # Not a reply address (no token, a token of other characters): the Subject.
    for recipient in ("abalone@host", "abalone+202@host", "abalone+202.x!@host"):
        assert intake.inbox_values(raw, "f@e", [recipient], NOW)["board"] == 101
    # Delivered through a pipe without the envelope: the headers the worker reads.
    piped = b"Delivered-To: abalone+303.k3x9q7mf2a@host\r\n" + raw
    assert intake.inbox_values(piped, "f@e", [], NOW)["board"] == 303
    assert intake.inbox_values(piped, "f@e", ["abalone@host"], NOW)["board"] == 101


def store_about(database: Database, sender: str, subject: str, recipient: str = "a@l"
                ) -> int:
    raw = (f"From: {sender}\r\nSubject: {subject}\r\nMessage-ID: <{subject}.{sender}>\r\n"
           "\r\nx\r\n").encode()
    with database.write() as session:
        row, _ = intake.store_inbox(session, raw, sender, [recipient], NOW)
        assert row is not None
        return row.id


def claim_all(database: Database, exclude: tuple[int, ...] = ()) -> list[int]:
    order = []
    while True:
        with database.write() as session:
            claimed = repository.claim_next_inbox(session, exclude=exclude)
            if claimed is None:
                return order
            order.append(claimed.id)
            repository.mark_inbox(session, claimed, "done", now=NOW)


def test_a_backlog_is_taken_in_acceptance_order_per_board(database: Database) -> None:
    """Two players of each of three boards move in turn, faster than the worker (a
    backlog after an outage); a third sender floods. Each board's moves are taken in
    the order accepted, although fairness alone would take each sender's first mail
    first; mails of unknown board keep their sender's order only."""
    moves: dict[int, list[int]] = {101: [], 102: [], 103: []}
    flood = [store_about(database, "flood@evil.example", f"help {n}") for n in range(5)]
    for ply in range(6):
        for board in moves:
            # Player 1 (fred) moves on odd plies and player 2 (a per-board opponent)
            # on even ones; the opponent answers through the reply address.
            if ply % 2 == 0:
                moves[board].append(store_about(
                    database, "fred@example.org", f"abalone move {board} fred pw {ply}"))
            else:
                moves[board].append(store_about(
                    database, f"p{board}@example.org", f"{ply}",
                    recipient=f"abalone+{board}.tok{board}x@l"))
    chat = store_about(database, "wilma@example.org", "multiple")
    with database.read() as session:
        ahead = [mail.id for mail in repository.next_waiting_inbox(session, 1000)]
    order = claim_all(database)
    assert order == ahead  # the read-ahead foresees the claims
    assert sorted(order) == sorted([*flood, chat, *(i for b in moves.values() for i in b)])
    for board_moves in moves.values():
        assert [i for i in order if i in board_moves] == board_moves
    assert [i for i in order if i in flood] == flood
    # Fair still: wilma's one mail (no board) is not held up by the others' backlog.
    assert order.index(chat) == 0


def test_fairness_still_orders_senders_whose_boards_do_not_meet(database: Database) -> None:
    flood = [store_about(database, "flood@evil.example", f"abalone move 101 x y {n}")
             for n in range(30)]
    wilma = store_about(database, "wilma@example.org", "abalone move 102 wilma pw c3-c4")
    fred = [store_about(database, "fred@example.org", f"abalone move 10{n + 3} f p c3-c4")
            for n in range(2)]
    assert claim_all(database) == [wilma, *fred, *flood]


def test_a_mail_behind_a_flood_on_its_board_waits_only_for_the_earlier_ones(
        database: Database) -> None:
    """A stranger's mails naming a board are ordered with the players' mails about it:
    a player's move waits for those accepted before it, never for those after."""
    early = [store_about(database, "flood@evil.example", f"abalone move 101 x y {n}")
             for n in range(3)]
    player = store_about(database, "fred@example.org", "abalone move 101 fred pw c3-c4")
    late = [store_about(database, "flood@evil.example", f"abalone move 101 x y {n}")
            for n in range(3, 10)]
    assert claim_all(database) == [*early, player, *late]


def test_a_mail_set_aside_holds_up_nothing(database: Database) -> None:
    first = store_about(database, "fred@example.org", "abalone move 101 fred pw c3-c4")
    second = store_about(database, "wilma@example.org", "abalone move 101 wilma pw i5-h5")
    assert claim_all(database, exclude=(first,)) == [second]


def test_postgresql_a_locked_mail_holds_up_its_board_only(postgres_url: str) -> None:
    database = Database(postgres_url)
    try:
        database.ensure_schema()
        fred_101 = store_about(database, "fred@example.org", "abalone move 101 fred pw a")
        wilma_101 = store_about(database, "wilma@example.org", "abalone move 101 w pw b")
        fred_102 = store_about(database, "fred@example.org", "abalone move 102 fred pw c")
        barney_102 = store_about(database, "barney@example.org", "abalone move 102 b p d")
        with database.write() as first, database.write() as second:
            taken = repository.claim_next_inbox(first)
            assert taken is not None and taken.id == fred_101
            # Board 101's next mail waits for the locked one; fred's other board goes.
            other = repository.claim_next_inbox(second)
            assert other is not None and other.id == fred_102
            with database.write() as third:
                assert repository.claim_next_inbox(third) is None
            repository.mark_inbox(first, taken, "done", now=NOW)
        assert claim_all(database) == [wilma_101, fred_102, barney_102]
    finally:
        database.dispose()
