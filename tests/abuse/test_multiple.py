"""One mail in, a bounded answer out (DESIGN §2.6): `multiple` runs a fixed number of lines
and answers in one summary; the comment of a multiple line never carries its password."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from abalone_pbm.rules import Board

from ..e2e.conftest import LiveServer
from ..e2e.scripted import scripted_game
from .conftest import body_of, mails_to, new_game, scalar, send_long, settle, signup, unique


def test_ten_thousand_help_lines_get_one_bounded_answer(server: LiveServer) -> None:
    flooder = f"{unique('flood')}@evil.test"
    bystander = f"{unique('bystander')}@players.test"
    send_long(server, flooder, "multiple", "help\n" * 10_000)
    server.send(bystander, "help")
    server.mailbox.wait_for(bystander, r"^Abalone help", timeout=30)
    summary = server.mailbox.wait_for(flooder, r"^Abalone multiple$")
    text = body_of(summary)
    assert text.count("-> done") == 50
    assert "9950 more lines were not processed" in text
    assert len(summary.as_bytes()) < 400_000
    settle(server)
    assert len(mails_to(server, flooder)) == 1


def test_summary_says_done_failed_and_not_processed(server: LiveServer) -> None:
    user, address = unique("lister"), f"{unique('lister')}@players.test"
    signup(server, user, "pw-list", address)
    lines = ["list", "bogus words here", f"vacation {user} wrong-pw on", "help signup"]
    lines += ["list"] * 60
    send_long(server, address, "multiple", "\n".join(lines) + "\n")
    summary = body_of(server.mailbox.wait_for(address, r"^Abalone multiple$"))
    assert "-> failed: Unknown command" in summary
    assert "-> failed: Invalid password" in summary
    assert "wrong-pw" not in summary
    assert "14 more lines were not processed" in summary
    # The answers of the lines are in the summary itself (one mail, not one per line).
    assert "registered players" in summary and "signup <userid>" in summary
    settle(server)
    assert [str(m["Subject"]) for m in mails_to(server, address)][-1] == "Abalone multiple"
    assert len(mails_to(server, address)) == 2  # the signup answer and the summary


def test_a_multiple_move_keeps_the_passwords_out_of_the_comment(
    server: LiveServer, engine: Engine
) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "Sekrit-Fred", fred_address)
    signup(server, wilma, "Sekrit-Wilma", wilma_address)
    board, _, _ = new_game(server, (fred, fred_address), (wilma, wilma_address))
    first = scripted_game()[0]
    server.send(
        fred_address, "multiple",
        f"abalone move {board} {fred} Sekrit-Fred {first}\n"
        f"change password {fred} Sekrit-Fred Sekrit-Fred-2\n"
        f"vacation {wilma} Sekrit-Wilma-guess on\n",
    )
    seen = server.mailbox.wait_for(wilma_address, rf"^Abalone Board {board} {wilma}")
    summary = server.mailbox.wait_for(fred_address, r"^Abalone multiple$")
    settle(server)
    for mail in [seen, summary, *mails_to(server, wilma_address), *mails_to(server, fred_address)]:
        text = mail.as_string()
        assert "Sekrit" not in text
    comments = scalar(engine, "SELECT count(*) FROM moves m JOIN games g ON g.id = m.game_id "
                      "WHERE g.number = :b AND m.comment LIKE '%Sekrit%'", b=board)
    assert comments == 0
    assert body_of(summary).count("-> done") == 2


def test_normal_play_by_multiple_still_works(server: LiveServer) -> None:
    fred, wilma = unique("fred"), unique("wilma")
    fred_address, wilma_address = f"{fred}@players.test", f"{wilma}@players.test"
    signup(server, fred, "pw-f", fred_address)
    signup(server, wilma, "pw-w", wilma_address)
    boards = [new_game(server, (fred, fred_address), (wilma, wilma_address))[0] for _ in range(2)]
    move = scripted_game()[0]
    server.send(fred_address, "multiple",
                "".join(f"abalone move {b} {fred} pw-f {move}\n" for b in boards))
    for b in boards:
        mail = server.mailbox.wait_for(fred_address, rf"^Abalone Board {b} {wilma}$")
        assert mail["Reply-To"], "the mover's board mail keeps its reply address"
        server.mailbox.wait_for(wilma_address, rf"^Abalone Board {b} {wilma}$")
    board = Board.from_layout("standard")
    board.push_text(move)
    assert "-> done" in body_of(server.mailbox.wait_for(fred_address, r"^Abalone multiple$"))
