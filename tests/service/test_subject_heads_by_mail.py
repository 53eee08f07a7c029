"""Commands behind what mail programs and mail systems put first in a Subject ("Odp:",
"回复：", "[EXTERNAL] RE:", "*SPAM*"), through the mail path: the command runs, its
password is in no answer and no stored copy, a reply to a board mail with such a
Subject plays, and prose behind a head gets the answer it got before."""

from __future__ import annotations

import email
import email.policy

from sqlalchemy import select

from abalone_pbm.db.models import InboxMail

from .game_helpers import FRED, game, only, subjects, text, two_players
from .harness import Harness, Sent

FRED_AT, WILMA_AT = "fred@example.org", "wilma@example.org"


def _everything(sent: list[Sent]) -> str:
    return "\n".join(f"{mail.subject}\n{mail.body}\n{mail.html or ''}" for mail in sent)


def _stored_subjects(harness: Harness) -> list[str]:
    with harness.database.read() as session:
        raws = [bytes(row.raw) for row in
                session.scalars(select(InboxMail).order_by(InboxMail.id))]
    return [str(email.message_from_bytes(raw, policy=email.policy.default)["Subject"])
            for raw in raws]


def test_a_signup_behind_heads_signs_up_and_shows_no_password(harness: Harness) -> None:
    sent = harness.mail(FRED_AT, "[EXTERNAL] Odp: signup fred Secr3tPw9")
    assert [mail.subject for mail in sent if mail.subject.startswith("Abalone signup")], \
        [mail.subject for mail in sent]
    assert "Secr3tPw9" not in _everything(sent)
    stored = _stored_subjects(harness)[-1]
    assert stored.startswith("[EXTERNAL] Odp: signup fred ") and "Secr3tPw9" not in stored
    # The password is fred's: a command with it runs.
    sent = harness.mail(FRED_AT, "回复：abalone limit fred Secr3tPw9 4")
    assert "Secr3tPw9" not in _everything(sent)
    assert not any("Unknown command" in mail.body for mail in sent), _everything(sent)


def test_a_slip_in_a_signup_behind_a_head_is_answered_with_the_password_masked(
        harness: Harness) -> None:
    harness.signup("fred", "pw1")
    sent = harness.mail(WILMA_AT, "Vá: signup fred Secr3tPw9")  # fred is taken
    assert sent and "Secr3tPw9" not in _everything(sent)
    assert not any('Unknown command "Vá:"' in mail.body for mail in sent)
    assert "Secr3tPw9" not in _stored_subjects(harness)[-1]


def test_a_move_and_a_show_behind_heads(harness: Harness) -> None:
    two_players(harness)
    sent = harness.mail(FRED_AT, f"*SPAM* [EXTERNAL] RE: abalone move 101 fred pw1 {FRED[0]}")
    assert subjects(sent) == {"Abalone Board 101 wilma"}
    assert game(harness).ply == 1
    assert "pw1" not in _everything(sent)
    behind = harness.mail(WILMA_AT, "Ynt: abalone show 101")
    alone = harness.mail(WILMA_AT, "abalone show 101")
    assert [(mail.to, mail.subject) for mail in behind] == [
        (mail.to, mail.subject) for mail in alone] == [(WILMA_AT, "Abalone Board 101 wilma")]


def test_a_reply_to_a_board_mail_with_a_head_plays(harness: Harness) -> None:
    boards = two_players(harness)
    fred_mail = boards["fred"]
    sent = harness.mail(FRED_AT, f"[EXTERNAL] Odp: {fred_mail.subject}", f"{FRED[0]}\n",
                        to=fred_mail.reply_to)
    assert subjects(sent) == {"Abalone Board 101 wilma"}
    assert game(harness).ply == 1
    # The move typed in the Subject behind the head, the body empty.
    wilma_mail = only(sent, WILMA_AT)
    sent = harness.mail(WILMA_AT, f"回复：{wilma_mail.subject} g7-g5,f6", "",
                        to=wilma_mail.reply_to)
    assert subjects(sent) == {"Abalone Board 101 fred"}
    assert game(harness).ply == 2
    # The move typed before the prefixes the mail program put on the board mail's Subject.
    fred_mail = only(sent, FRED_AT)
    sent = harness.mail(FRED_AT, f"{FRED[1]} Odp: {fred_mail.subject}", "",
                        to=fred_mail.reply_to)
    assert subjects(sent) == {"Abalone Board 101 wilma"}
    assert game(harness).ply == 3


def test_prose_behind_a_head_gets_the_answer_it_got(harness: Harness) -> None:
    harness.signup("fred", "pw1")
    sent = harness.mail(FRED_AT, "Note: I will be away")
    assert any('Unknown command "Note:"' in text(mail) for mail in sent), _everything(sent)
    sent = harness.mail(FRED_AT, "abalone: move 101 fred pw1 c3-c5,d4")
    assert any('Unknown command "abalone:"' in text(mail) for mail in sent), _everything(sent)
    assert "pw1" not in _everything(sent)
