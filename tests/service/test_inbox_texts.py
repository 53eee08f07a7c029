"""What a new player reads, through the mail path: replies to any of the server's
mails, help for every word a mail suggests, errors that name the next step, tidy text
(72 columns, the real count of earlier moves, the move as typed), the sender's name,
and the pbmserv challenge comment."""

from __future__ import annotations

import re
from email.utils import parseaddr

from abalone_pbm.rules import Board
from e2e.scripted import scripted_game

from .game_helpers import FRED, WILMA, first_round, game, move, only, text, two_players
from .harness import Harness, Sent

FRED_AT, WILMA_AT = "fred@example.org", "wilma@example.org"
#: Lines that may be longer than 72 columns: the board diagram and quoted text.
_BOARD_LINE = re.compile(r"^\s*([A-I]- |1 2 3 4 5|/ / / / /)")


def _canonical(before: list[str], typed: str) -> str:
    """How the server spells ``typed`` after the moves ``before`` from the start."""
    board = Board.from_layout("standard")
    for played in before:
        board.push(board.parse_move(played))
    return str(board.parse_move(typed))


def _long_lines(mail: Sent) -> list[str]:
    out = []
    in_comment = False
    for line in mail.body.replace("\r", "").split("\n"):
        if line == "*" * 72:
            in_comment = not in_comment  # a player's comment is their own text
            continue
        if in_comment or line.startswith(">") or _BOARD_LINE.match(line):
            continue
        if len(line) > 72:
            out.append(line)
    return out


def test_every_line_but_the_board_and_quotes_fits_72_columns(harness: Harness) -> None:
    h = harness
    h.signup("fred", "pw1")
    h.signup("wilma", "pw2")
    h.signup("betty", "pw4")
    sent: list[Sent] = []
    for subject in (
        "help", "abalone help", "help robots", "help reply", "help variants",
        "help layouts", "help notation", "help move", "help propose", "help accept",
        "help **", "help format", "help digest", "list", "abalone games", "abalone ratings",
        "abalone standings", "abalone history", "abalone challenge fred wilma",
        "abalone move 101 wilma pw2 c3-c5,d4", "abalone move 101 fred wrong c3-c5,d4",
        "abalone move 999 fred pw1 c3-c5,d4", "abalone move 101 fred pw1 c3-c5,e4",
        "abalone showas fred pw1 101", "vacation fred pw1 on", "vacation fred pw1 off",
        "abalone limit fred pw1", "notify fred pw1", "abalone preview 101 c3-c5,d4",
        "abalone submit 101 fred pw1 c3-c5,d4", "password reset fred",
        "format fred pw1 text", "digest fred pw1 on", "abalone seek betty pw4 2",
        "help limits", "help confirm address", "add fred pw1 fred@home.example",
        "confirm address nonsense", "broadcast fred pw1",
        "help analyze", "abalone analyze 101", "abalone challenge -think=30 fred boulder",
    ):
        sent += h.mail(FRED_AT, subject)
    # The limits' own texts: a multiple's summary, a throttle, the owner's notice.
    sent += h.mail(FRED_AT, "multiple", "help reply\nhelp signup\nbogus words\n" + "help\n" * 60)
    for n in range(5):
        sent += h.mail("mallory@evil.example", f"vacation betty wrong{n} on")
    for ply, played in enumerate(scripted_game(), start=1):
        userid, password = ("fred", "pw1") if ply % 2 else ("wilma", "pw2")
        sent += move(h, userid, password, played)
    analysis = h.mail(FRED_AT, "abalone analyze 101#10")
    assert analysis[0].subject == "Abalone Board 101 analysis"
    sent += analysis
    h.clock.advance(days=8)
    sent += h.tick()
    offenders = {(s.subject, line) for s in sent for line in _long_lines(s)}
    assert not offenders, sorted(offenders)
    assert len(sent) > 100


def test_the_count_of_earlier_moves_not_shown_is_right(harness: Harness) -> None:
    h = harness
    two_players(h)
    moves = scripted_game()[:30]
    for ply, played in enumerate(moves, start=1):
        userid, password = ("fred", "pw1") if ply % 2 else ("wilma", "pw2")
        sent = move(h, userid, password, played)
    board_mail = only(sent, FRED_AT)
    # Five rounds (ten moves) are shown: moves 21 to 30; the first twenty are not.
    assert "(20 earlier moves not shown)" in board_mail.body
    assert f"21. {moves[20]}" in board_mail.body and f"20. {moves[19]}" not in board_mail.body


def test_the_move_is_named_in_the_spelling_the_player_typed(harness: Harness) -> None:
    h = harness
    two_players(h)
    sent = move(h, "fred", "pw1", "C3 - C5 , D6")  # the same move as c3-c5,d4
    body = text(only(sent, WILMA_AT))
    assert "fred wrote move #1 as c3-c5,d6, the same move as c3-c5,d4" in body
    assert "1. c3-c5,d4" in body
    canonical = _canonical([FRED[0]], WILMA[0])
    assert canonical != WILMA[0]
    sent = move(h, "wilma", "pw2", canonical)
    assert "wrote move" not in text(only(sent, FRED_AT))  # typed as the server spells it


def test_mails_come_from_abalone_by_name(harness: Harness) -> None:
    h = harness
    sent = h.mail(FRED_AT, "help")
    name, address = parseaddr(str(sent[0].message["From"]))
    assert (name, address) == ("Abalone", h.settings.address)
    assert sent[0].message.as_bytes().startswith(b"From: \"Abalone\" <") or \
        b'\nFrom: "Abalone" <' in sent[0].message.as_bytes()


def test_help_for_every_word_a_mail_suggests(harness: Harness) -> None:
    h = harness
    for word, expected in (
        ("propose", "abalone move <board> <userid> <password> propose"),
        ("undo", "take back"),
        ("resign", "abalone resign <board> <userid> <password>"),
        ("show", "abalone show <board>"),
        ("queue", "abalone queue <board> <userid> <password> <move>"),
        ("**", "carries a comment"),
        ("*", "the server played it"),
        ("format", "format <userid> <password> text|html"),
        ("digest", "digest <userid> <password> on|off"),
        ("password", "password reset <userid>"),
        ("change", "change address <userid> <password> <address>"),
        ("all", "all show <userid>"),
    ):
        mail = only(h.mail("someone@example.net", f"help {word}"), "someone@example.net")
        assert expected in text(mail), (word, text(mail)[:300])
        assert "There is no help" not in mail.body, word
    # accept and reject: the vote on a board and the challenges, told apart.
    body = text(only(h.mail("someone@example.net", "help accept"), "someone@example.net"))
    assert "abalone move <board> <userid> <password> accept" in body
    assert "abalone accept <userid> <password>" in body
    assert "Do not mix these up" in body


def test_accept_and_reject_with_a_board_answer_its_vote(harness: Harness) -> None:
    h = harness
    two_players(h)
    first_round(h)
    h.mail(FRED_AT, "abalone move 101 fred pw1 propose")
    sent = h.mail(WILMA_AT, "abalone accept 101 wilma pw2")
    assert "pw2" not in "".join(s.body for s in sent)
    assert game(h).status == "finished"  # the draw was agreed
    # Without a board it is about challenges; a vote that is not there says so.
    h.mail(FRED_AT, "abalone challenge fred wilma")
    sent = h.mail(WILMA_AT, "reject 102 wilma pw2")
    error = only(sent, WILMA_AT)
    assert "There is no draw offer or undo request to reject on board 102" in text(error)
    assert 'send "abalone reject <userid> <password>" without a board number' in text(error)
    assert "pw2" not in error.body


def test_errors_name_the_next_step(harness: Harness) -> None:
    h = harness
    two_players(h)
    error = only(h.mail(FRED_AT, "abalone move 101 fred wrong c3-c5,d4"), FRED_AT)
    assert "Invalid password entered" in text(error)
    assert 'send the Subject "password reset fred"' in text(error)
    error = only(h.mail(FRED_AT, "abalone move 1234 fred pw1 c3-c5,d4"), FRED_AT)
    assert "Abalone board 1234 not found" in text(error)
    assert '"abalone games <userid>" lists the boards' in text(error)
    error = only(h.mail(FRED_AT, "abalone challenge fred ghost"), FRED_AT)
    assert "Invalid userid entered" in text(error) and '"list" shows every userid' in text(error)
    # pbmserv's way, a password between the userids: hidden, and the answer says why.
    error = only(h.mail(FRED_AT, "abalone challenge fred Choc0late7 wilma"), FRED_AT)
    assert "Choc0late7" not in text(error) and "choc0late7" not in text(error)
    assert "written as a password, so it is hidden here" in text(error)
    assert "mail from your registered address is enough" in text(error)


def test_a_reply_to_any_of_our_mails_is_answered_helpfully(harness: Harness) -> None:
    h = harness
    two_players(h)
    # A reply to a board mail that went to the server's own address: told where replies
    # go, from the board's reply address, so that answering this mail works.
    sent = h.mail(FRED_AT, "Re: New Abalone Board 101 fred", "c3-c5,d4\n")
    answer = only(sent, FRED_AT)
    assert answer.subject == "Abalone Board 101 Error"
    assert "not to your reply address for board 101" in text(answer)
    assert answer.reply_to and answer.reply_to.startswith("abalone+101.")
    assert game(h).ply == 0
    played = h.mail(FRED_AT, "Re: Abalone Board 101 Error", "c3-c5,d4\n", to=answer.reply_to)
    assert {s.subject for s in played} == {"Abalone Board 101 wilma"}
    # A reply to the signup mail or to a digest: not "Unknown command".
    for subject in ("Re: Abalone signup fred", "AW: Abalone digest fred: 1 board awaits"):
        answer = only(h.mail(FRED_AT, subject, "c3-c5,d4\n"), FRED_AT)
        assert "looks like a reply to the server's mail" in text(answer)
        assert "Unknown command" not in answer.body
    # The same words as a command (no Re:) are still read as a command.
    answer = only(h.mail(FRED_AT, "abalone games fred"), FRED_AT)
    assert answer.subject == "Abalone games"


def test_the_body_of_a_challenge_is_its_comment(harness: Harness) -> None:
    h = harness
    h.signup("fred", "pw1")
    h.signup("wilma", "pw2")
    h.signup("barney", "pw3")
    sent = h.mail("barney@example.org", "abalone challenge fred wilma",
                  "Fred, Wilma: the winner plays me next!\n-- \nbarney")
    for address in (FRED_AT, WILMA_AT, "barney@example.org"):
        mail = only(sent, address)
        assert mail.subject == "New Abalone Board 101 fred **"
        body = text(mail)
        assert "challenged by barney" in body
        assert "barney writes: Fred, Wilma: the winner plays me next!" in body
        assert "-- barney" not in body  # the signature is not part of the comment
    sent = h.mail(FRED_AT, "abalone challenge fred wilma")
    assert {s.subject for s in sent} == {"New Abalone Board 102 fred"}
    assert "writes:" not in only(sent, FRED_AT).body


def test_bare_settings_commands_hide_the_password(harness: Harness) -> None:
    h = harness
    two_players(h)
    for subject in ("limit fred pw1 lots", "seek fred pw1 9", "notify fred pw1 x"):
        error = only(h.mail(FRED_AT, subject), FRED_AT)
        assert "pw1" not in error.body and "********" in error.body, subject


def test_queued_move_is_marked_and_explained(harness: Harness) -> None:
    h = harness
    two_players(h)
    h.mail(WILMA_AT, f"abalone queue 101 wilma pw2 {WILMA[0]}")
    sent = move(h, "fred", "pw1", FRED[0])
    body = text(only(sent, FRED_AT))
    assert f"{_canonical([FRED[0]], WILMA[0])}*" in body
    assert "* after a move: the server played it for the player" in body
