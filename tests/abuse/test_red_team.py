"""A stranger's attacks on a real `abalone-pbm serve` (DESIGN §2.6), beyond the other
modules: passwords typed where no command has one, look-alike userids, what a
stranger can learn about others, mail loops, and analyses."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ..e2e.conftest import LiveServer
from ..e2e.scripted import scripted_game
from .conftest import body_of, mails_to, new_game, scalar, send_long, settle, signup, unique


def test_passwords_typed_where_no_command_has_one_never_come_back(
    server: LiveServer, engine: Engine
) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "Hidden-Fred-7", fred_address)
    signup(server, wilma, "Hidden-Wilma-7", wilma_address)
    board, _, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    secret = "Hidden-Fred-7"
    lines = [
        f"abalone games {fred} {secret}", f"games {fred} {secret}",
        f"abalone history {fred} {secret}", f"all {fred} {secret}", f"chat {fred} {secret}",
        f"ratings {fred} {secret}", f"list {fred} {secret}",
        f"abalone challenge {fred} {secret}", f"signup\u200b{fred}\u200b{secret}",
        f"change password {fred} {secret} {secret}Fwd: change password {fred} {secret}",
    ]
    for line in lines:
        server.send(fred_address, line, f"{line}\n")
    send_long(server, fred_address, "multiple", "\n".join(lines) + "\n")
    # Two commands run together: the second one is the comment of the move.
    first = scripted_game()[0]
    server.send(fred_address,
                f"abalone move {board} {fred} {secret} {first}",
                f"mvoe {board} {fred} {secret} {first}Fwd: mvoe {board} {fred} {secret}\n")
    wilma_board = server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} {wilma}")
    settle(server)
    everything = [*mails_to(server, fred_address), *mails_to(server, wilma_address)]
    assert len(mails_to(server, fred_address)) >= len(lines) + 2
    for mail in everything:
        assert secret not in mail.as_string(), mail["Subject"]
    assert "********" in body_of(wilma_board)
    stored = scalar(engine, "SELECT count(*) FROM moves WHERE comment LIKE :s", s=f"%{secret}%")
    assert stored == 0


def test_an_ordinary_comment_arrives_as_written(server: LiveServer) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "pw-comment-f", fred_address)
    signup(server, wilma, "pw-comment-w", wilma_address)
    board, _, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    comment = f"{wilma} played well last time, nice game; all {fred} wants is a draw"
    server.send(fred_address, f"abalone move {board} {fred} pw-comment-f {scripted_game()[0]}",
                f"{comment}\n")
    mail = server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} {wilma}")
    assert comment in " ".join(body_of(mail).split())


def test_look_alike_and_common_word_userids_are_refused(server: LiveServer, engine: Engine) -> None:
    sender = f"{unique('lookalike')}@players.test"
    base = unique("fredx")
    signup(server, base, "pw-base", sender)
    tries = [f"\uff46{base[1:]}", f"{base[:2]}\u200b{base[2:]}", f"{base[:1]}\u00e9{base[2:]}",
             f"{base.upper()}", "me", "the"]
    for userid in tries:
        server.send(sender, f"signup {userid} pw-look")
    settle(server)
    answers = [body_of(m) for m in mails_to(server, sender)][1:]
    assert len(answers) == len(tries)
    assert all("error" in a.lower() or "taken" in a or "not a valid userid" in a
               or "common English word" in a for a in answers), answers
    assert scalar(engine, "SELECT count(*) FROM users WHERE userid IN ('me', 'the')") == 0
    assert scalar(engine, "SELECT count(*) FROM users WHERE lower(userid) = :u", u=base) == 1
    assert scalar(engine, "SELECT count(*) FROM users WHERE userid NOT LIKE '%'") == 0


def test_one_sender_signs_up_a_bounded_number_of_users(server: LiveServer, engine: Engine) -> None:
    sender = f"{unique('storm')}@evil.test"
    names = [unique("storm") for _ in range(8)]
    for name in names:
        server.send(sender, f"signup {name} pw-storm")
    settle(server)
    created = scalar(engine, "SELECT count(*) FROM users WHERE userid LIKE 'storm%' "
                     "AND userid IN (" + ", ".join(f"'{n}'" for n in names) + ")")
    assert created == 5  # signups_per_sender_daily
    bodies = [body_of(m) for m in mails_to(server, sender)]
    assert sum("at most 5 users a day" in b for b in bodies) == 3
    # Another address signs up as usual.
    other = f"{unique('calm')}@players.test"
    signup(server, unique("calm"), "pw-calm", other)


def test_a_stranger_never_learns_an_address(server: LiveServer) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@private.test", f"{wilma}@private.test"
    signup(server, fred, "pw-private-f", fred_address)
    signup(server, wilma, "pw-private-w", wilma_address)
    new_game(server, (fred, fred_address), (wilma, wilma_address))
    stranger = f"{unique('nosy')}@evil.test"
    for subject in ["list", f"abalone games {fred}", f"all show {fred}", f"abalone history {fred}",
                    f"abalone showas {fred} wrong-pw all", f"message {fred} wrong {wilma}",
                    f"password reset {fred}", f"add {fred} wrong {stranger}",
                    f"abalone challenge {fred} {wilma}"]:
        server.send(stranger, subject)
    settle(server)
    seen = "\n".join(m.as_string() for m in mails_to(server, stranger))
    assert seen
    assert "private.test" not in seen
    # A password reset goes to the owner, and only there.
    assert all(stranger not in str(m["To"]) for m in mails_to(server, fred_address))


def test_mail_loops_and_robots_get_no_answer(server: LiveServer) -> None:
    robot = f"{unique('robot')}@lists.test"
    for headers in [{"Auto-Submitted": "auto-replied"}, {"Precedence": "bulk"},
                    {"Precedence": "list"}, {"List-Id": "<abalone.lists.test>"},
                    {"X-Loop": "abalone@localhost"}]:
        server.send(robot, "help", headers=headers)
    server.send("MAILER-DAEMON@lists.test", "help")
    server.send("abalone@localhost", "help")
    person = f"{unique('person')}@players.test"
    server.send(person, "help")
    server.mailbox.wait_for(person, r"^Abalone help")
    settle(server)
    assert mails_to(server, robot) == []
    assert mails_to(server, "MAILER-DAEMON@lists.test") == []
    assert mails_to(server, "abalone@localhost") == []


def test_analyses_refused_in_running_games_and_one_a_mail(server: LiveServer) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "pw-an-f", fred_address)
    signup(server, wilma, "pw-an-w", wilma_address)
    board, _, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    server.send(wilma_address, f"abalone analyze {board}")
    refusal = body_of(server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} Error$"))
    assert "still running" in refusal
    moves = scripted_game()
    server.send(fred_address, f"abalone move {board} {fred} pw-an-f {moves[0]}")
    server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} {wilma}")
    server.send(wilma_address, f"abalone move {board} {wilma} pw-an-w {moves[1]}")
    server.mailbox.wait_for(fred_address, rf"^Abalone Board {board} {fred}")
    server.send(fred_address, f"abalone resign {board} {fred} pw-an-f")
    server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board}\b", timeout=30)
    send_long(server, fred_address, "multiple",
              f"abalone analyze {board}#0\nabalone analyze {board}#1\nabalone analyze {board}#0\n")
    summary = body_of(server.mailbox.wait_for(fred_address, r"^Abalone multiple$", timeout=60))
    assert summary.count("One mail may ask for one analysis") == 2
    assert summary.count("-> done") == 1
