"""A way out of every subscription (List-Unsubscribe, token addresses) and one thread
per board (References to the board's first mail), through the real mail path."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import select

from abalone_pbm.db.models import Observer, User
from abalone_pbm.mail.policy import DUNNO, recipient_action
from abalone_pbm.service.unsubscribe import make_unsubscribe_check
from abalone_pbm.service.server_key import ensure_server_key, server_key
from abalone_pbm.service.unsubscribe import parse_token, token_in_local_part

from .game_helpers import FRED, WILMA, first_round, move, only, two_players
from .harness import Harness, Sent, make_harness

FRED_AT = "fred@example.org"
WILMA_AT = "wilma@example.org"
BETTY_AT = "betty@example.org"
_MAILTO = re.compile(r"<mailto:([^?>]+)\?subject=unsubscribe>")


def _way_out(mail: Sent) -> str:
    """The token address a subscribed mail names in List-Unsubscribe."""
    header = str(mail.message["List-Unsubscribe"])
    found = _MAILTO.search(header)
    assert found, header
    return found.group(1)


def _watching(h: Harness, userid: str) -> list[int]:
    with h.database.read() as session:
        user = session.scalars(select(User).where(User.userid == userid)).one()
        return [o.game_id for o in session.scalars(
            select(Observer).where(Observer.user_id == user.id))]


def _betty_watches(h: Harness) -> None:
    two_players(h)
    h.signup("betty", "pw4")
    h.mail(BETTY_AT, "abalone subscribe 101 betty pw4")


def test_observer_board_mails_offer_a_way_out_and_players_mails_none(harness: Harness) -> None:
    _betty_watches(harness)
    sent = move(harness, "fred", "pw1", FRED[0])
    observer, player = only(sent, BETTY_AT), only(sent, WILMA_AT)
    address = _way_out(observer)
    local, _, domain = address.rpartition("@")
    assert domain == "localhost" and local.startswith("abalone+unsub.o.")
    assert parse_token(token_in_local_part(local, harness.settings) or "") is not None
    # No public URL configured: the address only, so not one-click.
    assert observer.message["List-Unsubscribe-Post"] is None
    assert "https://" not in str(observer.message["List-Unsubscribe"])
    # The text and the picture say why it came and how to stop it.
    assert "betty watches board 101" in observer.body
    assert address in " ".join(observer.body.split())
    assert observer.html is not None and address in observer.html
    # A player's own board mail is transactional.
    assert player.message["List-Unsubscribe"] is None
    assert "To stop it" not in player.body


def test_mail_to_the_token_address_stops_watching_without_a_password(
        harness: Harness) -> None:
    _betty_watches(harness)
    address = _way_out(only(move(harness, "fred", "pw1", FRED[0]), BETTY_AT))
    # A mail program's one mail to the address, from any of the user's addresses.
    sent = harness.mail(BETTY_AT, "unsubscribe", to=address)
    assert [(s.to, s.subject) for s in sent] == [(BETTY_AT, "Abalone unsubscribe")]
    assert "betty no longer watches board 101" in sent[0].body
    assert _watching(harness, "betty") == []
    assert BETTY_AT not in [s.to for s in move(harness, "wilma", "pw2", WILMA[0])]
    # Again: nothing more to stop, nothing breaks, the same answer.
    again = harness.mail(BETTY_AT, "unsubscribe", to=address.upper())
    assert "betty no longer watches board 101" in again[0].body
    assert _watching(harness, "betty") == []


def test_a_forged_token_changes_nothing(harness: Harness) -> None:
    _betty_watches(harness)
    address = _way_out(only(move(harness, "fred", "pw1", FRED[0]), BETTY_AT))
    local, _, domain = address.rpartition("@")
    forged_signature = local[:-1] + ("a" if local[-1] != "a" else "b")
    # Another user's id under betty's signature, and a damaged signature.
    kind, user_id, scope, signature = parse_token(token_in_local_part(local, harness.settings)
                                                  or "") or ("", 0, 0, "")
    other_user = f"abalone+unsub.{kind}.{user_id - 1:x}.{scope:x}.{signature}"
    for forged in (forged_signature, other_user):
        sent = harness.mail(BETTY_AT, "unsubscribe", to=f"{forged}@{domain}")
        assert [s.subject for s in sent] == ["Abalone unsubscribe"]
        assert "not a valid unsubscribe address" in sent[0].body
        assert len(_watching(harness, "betty")) == 1


def test_postfix_policy_refuses_a_forged_token_at_rcpt(harness: Harness) -> None:
    _betty_watches(harness)
    address = _way_out(only(move(harness, "fred", "pw1", FRED[0]), BETTY_AT))
    check = make_unsubscribe_check(harness.settings, harness.database)
    never = lambda board, token: False  # noqa: E731 (no reply address in these)
    assert recipient_action(harness.settings, address, 0, never, check) == DUNNO
    assert recipient_action(harness.settings, address.upper(), 0, never, check) == DUNNO
    forged = address.replace("@", "x@")
    assert recipient_action(harness.settings, forged, 0, never, check).startswith("550 5.1.1")
    assert recipient_action(harness.settings, "abalone+unsub.zz@localhost", 0, never,
                            check).startswith("550 5.1.1")
    assert _watching(harness, "betty") != []


def test_digest_results_and_broadcasts_each_have_their_own_way_out(
        migrated_db_url: str, tmp_path: Path) -> None:
    h = make_harness(migrated_db_url, tmp_path, broadcast_min_games=0,
                     broadcast_min_age_days=0, public_url="https://pbm.example.org/abalone")
    try:
        two_players(h)
        h.signup("betty", "pw4")
        h.signup("barney", "pw3")
        h.mail(BETTY_AT, "abalone notify betty pw4")
        h.mail(FRED_AT, "digest fred pw1 on")
        # The digest (fred has board 101 to move).
        digest = [s for s in h.tick() if s.subject.startswith("Abalone digest")]
        assert [s.to for s in digest] == [FRED_AT]
        header = str(digest[0].message["List-Unsubscribe"])
        assert "<https://pbm.example.org/abalone/unsubscribe/d." in header
        assert str(digest[0].message["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
        assert "fred asked for a daily digest" in digest[0].body
        h.mail(FRED_AT, "unsubscribe", to=_way_out(digest[0]))
        with h.database.read() as session:
            assert session.scalars(select(User.digest).where(User.userid == "fred")).one() \
                is False
        # A broadcast: barney stops them; betty still gets the next one.
        sent = h.mail("barney@example.org", "broadcast barney pw3", "Hello all")
        out = only(sent, BETTY_AT)
        assert "betty gets the broadcasts" in out.body
        h.mail(BETTY_AT, "unsubscribe", to=_way_out(out))
        h.clock.advance(days=2)
        again = h.mail("barney@example.org", "broadcast barney pw3", "Hello again")
        assert BETTY_AT not in [s.to for s in again] and FRED_AT in [s.to for s in again]
        # notify without boards: the result of every game, stopped by its own token.
        first_round(h)
        result = only(h.mail(FRED_AT, "abalone resign 101 fred pw1"), BETTY_AT)
        assert "betty asked for the result of every game" in result.body
        assert _way_out(result).startswith("abalone+unsub.n.")
        h.mail(BETTY_AT, "unsubscribe", to=_way_out(result))
        with h.database.read() as session:
            assert session.scalars(
                select(User.notify_all).where(User.userid == "betty")).one() is False
    finally:
        h.database.dispose()


def test_the_key_is_shared_by_every_process_of_a_database(
        harness: Harness, tmp_path: Path) -> None:
    ensure_server_key(harness.database, harness.settings)
    with harness.database.read() as session:
        first = server_key(session, harness.settings)
    other = make_harness(harness.settings.database_url, tmp_path / "other")
    try:
        with other.database.read() as session:
            assert server_key(session, other.settings) == first
        with other.database.read() as session:
            secret = replace(other.settings, secret="a long random text for the key")
            assert server_key(session, secret) != first
    finally:
        other.database.dispose()


def _ids(text: str) -> list[str]:
    return re.findall(r"<[^<>]+>", text)


def test_every_mail_about_a_board_refers_to_its_first_mail(harness: Harness) -> None:
    new_boards = two_players(harness)
    roots = {}
    for userid, mail in new_boards.items():
        root = str(mail.message["Message-ID"])
        assert root.startswith("<abalone.board-101.")
        roots[f"{userid}@example.org"] = root
    assert len(set(roots.values())) == 2  # one thread per board and address
    sent = move(harness, "fred", "pw1", FRED[0])
    sent += move(harness, "wilma", "pw2", WILMA[0])
    sent += harness.mail(FRED_AT, "abalone move 101 fred wrong c3-c5")  # an error
    assert {s.to for s in sent} == {FRED_AT, WILMA_AT}
    for mail in sent:
        references = _ids(str(mail.message["References"] or ""))
        assert references[0] == roots[mail.to], (mail.subject, references)
        assert str(mail.message["Message-ID"]) != roots[mail.to]
    # An observer who comes later: their first board mail opens their thread.
    harness.signup("betty", "pw4")
    first = only(harness.mail(BETTY_AT, "abalone subscribe 101 betty pw4"), BETTY_AT)
    betty_root = str(first.message["Message-ID"])
    assert betty_root.startswith("<abalone.board-101.") and betty_root not in roots.values()
    later = only(move(harness, "fred", "pw1", FRED[1]), BETTY_AT)
    assert _ids(str(later.message["References"]))[0] == betty_root
    # Another board is another thread; a mail about no board has none.
    help_mail = harness.mail(FRED_AT, "help")[0]
    assert help_mail.message["References"] is not None  # the answer's own chain
    assert not any(i.startswith("<abalone.board-")
                   for i in _ids(str(help_mail.message["References"])))


@pytest.mark.parametrize("kind", ["results_only", "full"])
def test_notify_results_carry_the_boards_way_out(harness: Harness, kind: str) -> None:
    two_players(harness)
    harness.signup("betty", "pw4")
    command = ("abalone notify betty pw4 101" if kind == "results_only"
               else "abalone subscribe 101 betty pw4")
    harness.mail(BETTY_AT, command)
    first_round(harness)
    sent = harness.mail(FRED_AT, "abalone resign 101 fred pw1")
    result = only(sent, BETTY_AT)
    assert _way_out(result).startswith("abalone+unsub.o.")
    assert "betty watches board 101" in result.body
