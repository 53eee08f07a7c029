"""Passwords stay secret (DESIGN §2.6): guesses are throttled per user and per sender with
growing delays and a notice to the owner, who is never locked out; masking hides
passwords in every answer, also of misspelt commands, and never ordinary words."""

from __future__ import annotations

import re

from ..e2e.conftest import LiveServer
from .conftest import body_of, mails_to, new_game, send_long, settle, signup, unique


def test_two_hundred_guesses_in_one_mail(server: LiveServer) -> None:
    owner, owner_address = unique("owner"), f"{unique('owner')}@players.test"
    signup(server, owner, "Right-Pw", owner_address)
    guesser = f"{unique('guesser')}@evil.test"
    guesses = "".join(f"vacation {owner} guess{n} on\n" for n in range(200))
    send_long(server, guesser, "multiple", guesses)
    summary = body_of(server.mailbox.wait_for(guesser, r"^Abalone multiple$"))
    assert summary.count("Invalid password") == 3
    assert summary.count("Too many wrong passwords") == 47
    assert "150 more lines were not processed" in summary
    notice = server.mailbox.wait_for(owner_address, rf"^Abalone: wrong passwords for {owner}$")
    assert "3 wrong passwords" in body_of(notice)
    # More guesses in more mails: still throttled, one answer each, no second notice.
    for n in range(5):
        server.send(guesser, f"vacation {owner} Right-Pw on")
    settle(server)
    answers = [m for m in mails_to(server, guesser) if str(m["Subject"]) == "Abalone error"]
    assert len(answers) == 5
    assert all("Too many wrong passwords" in body_of(m) for m in answers)
    assert not [m for m in answers if "is on vacation" in body_of(m)]
    assert len([m for m in mails_to(server, owner_address) if "wrong passwords" in str(m["Subject"])]) == 1
    # The owner, from their own address, is not slowed down by the stranger.
    server.send(owner_address, f"vacation {owner} Right-Pw on")
    assert "Vacation is on" in body_of(server.mailbox.wait_for(owner_address, r"^Abalone vacation$"))
    for mail in mails_to(server, guesser):
        assert "guess1" not in mail.as_string() and "Right-Pw" not in mail.as_string()


def test_one_sender_guessing_many_users_is_throttled(server: LiveServer) -> None:
    users = [unique("target") for _ in range(6)]
    for user in users:
        signup(server, user, "pw-" + user, f"{user}@players.test")
    guesser = f"{unique('sprayer')}@evil.test"
    for user in users:
        server.send(guesser, f"vacation {user} password123 on")
    settle(server)
    bodies = [body_of(m) for m in mails_to(server, guesser)]
    assert sum("Invalid password" in b for b in bodies) == 3
    assert sum("Too many wrong passwords from your address" in b for b in bodies) == 3


MISSPELT = [
    "change pasword {u} {pw} brand-new-1",
    "chnage password {u} {pw} brand-new-1",
    "pasword set {u} {pw} brand-new-1",
    "change adress {u} {pw} x@example.org",
    "abalone move",
    "abalone mvoe 101 {u} {pw} c3-c5,d4",
    "abalone move 101 {u} {pw}",
    "singup {u} {pw}",
    "vaction {u} {pw} on",
]


def test_misspelt_commands_never_echo_the_password(server: LiveServer) -> None:
    sent: dict[str, str] = {}
    for template in MISSPELT:
        sender = f"{unique('typo')}@players.test"
        password = "Zq-" + unique("secret")
        sent[sender] = password
        subject = template.format(u=unique("someone"), pw=password)
        if template == "abalone move":
            # A bare command line, the rest of the command on the next line.
            server.send(sender, "multiple", f"abalone move\nabalone move 101 fred {password} c3-c5,d4\n")
            server.send(sender, "abalone move", f"101 fred {password} c3-c5,d4\n")
        else:
            server.send(sender, subject, f"{subject}\n")
            server.send(sender, "multiple", f"{subject}\n")
    settle(server)
    for sender, password in sent.items():
        assert len(mails_to(server, sender)) == 2
        for mail in mails_to(server, sender):
            assert password not in mail.as_string()


def test_quoted_board_mail_keeps_its_words(server: LiveServer) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "pw-f", fred_address)
    signup(server, wilma, "pw-w", wilma_address)
    board, fred_reply, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    new = [m for m in mails_to(server, fred_address) if "New Abalone Board" in str(m["Subject"])][-1]
    quoted = "\n".join("> " + line for line in body_of(new).splitlines())
    send_long(server, fred_address, f"Re: {new['Subject']}", f"what now?\n\n{quoted}\n",
              to=fred_reply)
    error = body_of(server.mailbox.wait_for(fred_address, rf"^Abalone Board {board} Error$"))
    assert "********" not in error
    assert f"> Subject: New Abalone Board {board} {fred}" in error
    # The quoted how-to-move lines keep their words: the <password> placeholder too.
    assert re.search(r"abalone move .*<password>", error)
