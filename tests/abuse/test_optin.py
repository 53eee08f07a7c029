"""Only consenting addresses get mail (DESIGN §2.6): double opt-in for every address that
did not send the mail, a signup names at most a few addresses, text written by one user
reaches only confirmed players within per-user limits, broadcast for established users."""

from __future__ import annotations

import re

from ..e2e.conftest import LiveServer
from .conftest import body_of, mails_to, new_game, send_long, settle, signup, unique


def _confirmation_code(message) -> str:  # type: ignore[no-untyped-def]
    match = re.fullmatch(r"confirm address ([a-z0-9]+)", str(message["Subject"]))
    assert match, message["Subject"]
    return match.group(1)


def test_signup_naming_hundreds_of_addresses_mails_none_of_them(server: LiveServer) -> None:
    spammer = f"{unique('spammer')}@evil.test"
    victims = [f"{unique('victim')}@victims.test" for _ in range(300)]
    send_long(server, spammer, f"signup {unique('spam')} secret1 {' '.join(victims)}", "\n")
    error = server.mailbox.wait_for(spammer, r"^Abalone error$")
    assert "at most 3 addresses" in body_of(error)
    server.send(spammer, f"signup {unique('spam')} secret1 {' '.join(victims[:4])}")
    server.mailbox.wait_for(spammer, r"^Abalone error$")
    settle(server)
    assert not any(mails_to(server, v) for v in victims)
    assert len(mails_to(server, spammer)) == 2


def test_extra_addresses_get_one_confirmation_and_nothing_else(server: LiveServer) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_home = f"{fred}@home.test"
    others = [f"{fred}@work.test", f"{fred}@phone.test"]
    server.send(fred_home, f"signup {fred} pw-fred {' '.join([fred_home, *others])}")
    welcome = server.mailbox.wait_for(fred_home, rf"^Abalone signup {fred}")
    assert "confirm" in body_of(welcome).lower()
    requests = {a: server.mailbox.wait_for(a, r"^confirm address ") for a in others}
    for address, request in requests.items():
        text = body_of(request)
        assert fred in text
        # The request tells nothing about the other addresses (nor the password).
        assert not [a for a in [fred_home, *others] if a != address and a in text]
        assert "pw-fred" not in request.as_string()
    signup(server, wilma, "pw-wilma", f"{wilma}@home.test")
    board, _, _ = new_game(server, (fred, fred_home), (wilma, f"{wilma}@home.test"))
    settle(server)
    for address in others:
        assert len(mails_to(server, address)) == 1, "nothing but the one confirmation"

    # The owner of one address confirms it by replying to the request.
    work = others[0]
    code = _confirmation_code(requests[work])
    server.send(work, f"Re: confirm address {code}", "yes, that's me\n")
    done = server.mailbox.wait_for(work, r"^Abalone address confirmed")
    assert fred in body_of(done)
    server.send(fred_home, f"abalone show {board}")
    server.mailbox.wait_for(fred_home, rf"^Abalone Board {board} ")
    server.send(f"{wilma}@home.test", f"message {wilma} pw-wilma {fred}", "hello fred\n")
    server.mailbox.wait_for(work, rf"^Abalone message from {wilma}$")
    settle(server)
    assert not [m for m in mails_to(server, others[1]) if "confirm address" not in str(m["Subject"])]
    # A code works once.
    server.send(work, f"confirm address {code}")
    error = server.mailbox.wait_for(work, r"^Abalone error$")
    assert "not valid" in body_of(error)


def test_a_signup_for_someone_else_mails_them_nothing(server: LiveServer) -> None:
    """Reply-To naming a stranger neither registers nor mails that stranger: answers go
    to the address the mail came from unless the header names a confirmed address."""
    attacker = f"{unique('mallory')}@evil.test"
    victim = f"{unique('alice')}@victims.test"
    userid = unique("alias")
    server.send(attacker, f"signup {userid} secret", headers={"Reply-To": victim})
    server.mailbox.wait_for(attacker, rf"^Abalone signup {userid}")
    server.send(attacker, "help", headers={"Reply-To": victim})
    server.mailbox.wait_for(attacker, r"^Abalone help")
    settle(server)
    assert mails_to(server, victim) == []


def test_confirmation_requests_to_one_address_are_capped(server: LiveServer) -> None:
    attacker = f"{unique('mallory')}@evil.test"
    victim = f"{unique('bob')}@victims.test"
    for n in range(6):
        server.send(attacker, f"signup {unique('fake')} secret {attacker} {victim.upper() if n % 2 else victim}")
    settle(server)
    assert len(mails_to(server, victim)) + len(mails_to(server, victim.upper())) == 3


def test_message_and_chat_reach_only_confirmed_players(server: LiveServer, engine) -> None:  # type: ignore[no-untyped-def]
    attacker = f"{unique('mallory')}@evil.test"
    victim = f"{unique('carol')}@victims.test"
    decoy, sender_id = unique("decoy"), unique("talker")
    server.send(attacker, f"signup {decoy} secret {victim}")
    server.mailbox.wait_for(victim, r"^confirm address ")
    signup(server, sender_id, "pw-talk", attacker)
    server.send(attacker, f"message {sender_id} pw-talk {decoy}", "Buy cheap watches\n")
    error = server.mailbox.wait_for(attacker, r"^Abalone error$")
    assert "cannot get messages" in body_of(error)
    # chat in a game with the decoy: the decoy's unconfirmed address gets nothing.
    server.send(attacker, f"abalone challenge {sender_id} {decoy}")
    new = server.mailbox.wait_for(attacker, r"^New Abalone Board \d+ ")
    board = re.findall(r"\d+", str(new["Subject"]))[0]
    server.send(attacker, f"abalone chat {board} {sender_id} pw-talk", "Buy cheap watches\n")
    settle(server)
    assert len(mails_to(server, victim)) == 1
    assert "Buy cheap" not in mails_to(server, victim)[0].as_string()


def test_messages_per_user_are_limited(server: LiveServer) -> None:
    talker, talker_address = unique("chatty"), f"{unique('chatty')}@players.test"
    signup(server, talker, "pw-chat", talker_address)
    friends = []
    for _ in range(6):
        friend = unique("friend")
        signup(server, friend, "pw", f"{friend}@players.test")
        friends.append(friend)
    # 50 a day (the default): 6 recipients x 8 messages = 48, then 6 more is over.
    for n in range(8):
        server.send(talker_address, f"message {talker} pw-chat {' '.join(friends)}", f"news {n}\n")
    server.send(talker_address, f"message {talker} pw-chat {' '.join(friends)}", "news 9\n")
    settle(server)
    for friend in friends:
        got = [m for m in mails_to(server, f"{friend}@players.test") if "message from" in str(m["Subject"])]
        assert len(got) == 8
    errors = [m for m in mails_to(server, talker_address) if str(m["Subject"]) == "Abalone error"]
    assert len(errors) == 1 and "at most 50 addresses a day" in body_of(errors[0])


def test_broadcast_is_for_established_users_and_confirmed_addresses(server: LiveServer, engine) -> None:  # type: ignore[no-untyped-def]
    newbie, address = unique("newbie"), f"{unique('newbie')}@players.test"
    signup(server, newbie, "pw-new", address)
    server.send(address, f"broadcast {newbie} pw-new", "Hello everyone\n")
    error = server.mailbox.wait_for(address, r"^Abalone error$")
    assert "established" in body_of(error)
    listener = unique("listener")
    listener_address = f"{listener}@players.test"
    unconfirmed = f"{listener}@elsewhere.test"
    server.send(listener_address, f"signup {listener} pw {listener_address} {unconfirmed}")
    server.mailbox.wait_for(unconfirmed, r"^confirm address ")
    veteran, veteran_address = unique("veteran"), f"{unique('veteran')}@players.test"
    signup(server, veteran, "pw-old", veteran_address)
    with engine.begin() as connection:
        from sqlalchemy import text
        connection.execute(text(
            "UPDATE users SET rated_games = 25, created_at = created_at - INTERVAL '30 days' "
            "WHERE userid = :u" if engine.dialect.name == "postgresql" else
            "UPDATE users SET rated_games = 25, created_at = datetime(created_at, '-30 days') "
            "WHERE userid = :u"), {"u": veteran})
    server.send(veteran_address, f"broadcast {veteran} pw-old", "Tournament on Sunday\n")
    server.mailbox.wait_for(veteran_address, r"^Abalone broadcast sent$")
    server.mailbox.wait_for(listener_address, rf"^Abalone broadcast from {veteran}$")
    settle(server)
    assert len(mails_to(server, unconfirmed)) == 1
