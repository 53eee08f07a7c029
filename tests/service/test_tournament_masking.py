"""The password of a tournament command is masked wherever the server quotes it back,
with the game word or without it ("tournament join x fred secret")."""

from __future__ import annotations

import pytest

from abalone_pbm.protocol.masking import mask_passwords
from abalone_pbm.service import tournaments

from . import tournament_play as tp
from .harness import Harness

SECRET = "Sw0rdfish9"


@pytest.mark.parametrize("line", [
    f"tournament join x fred {SECRET}",
    f"abalone tournament join x fred {SECRET}",
    f"tournament join x fred {SECRET} once",
    f"Re: tournament withdraw x fred {SECRET}",
    f"tournament mail x fred {SECRET} off",
    f"abalone tournament mail x fred {SECRET} on",
])
def test_masked_in_text(line: str) -> None:
    masked = mask_passwords(line)
    assert SECRET not in masked and "fred ********" in masked


def test_words_that_only_mention_a_tournament_are_kept() -> None:
    for line in ("the tournament join was fun", "abalone tournament standings x",
                 "tournament show x"):
        assert mask_passwords(line) == line


@pytest.mark.parametrize("game_word", ["", "abalone "])
@pytest.mark.parametrize("where", ["subject", "body"])
def test_masked_in_every_answer(harness: Harness, game_word: str, where: str) -> None:
    harness.signup("fred", SECRET)
    tp.create(harness, tournaments.Plan(name="x", format="swiss"))
    command = f"{game_word}tournament join x fred {SECRET}"
    mistaken = f"{game_word}tournament join nosuch fred {SECRET}"
    for text in (command, mistaken, f"{command} and more words"):
        subject, body = (text, "") if where == "subject" else ("", text)
        sent = harness.mail("fred@example.org", subject, body)
        assert sent, text
        for mail in sent:
            assert SECRET not in mail.subject and SECRET not in mail.body, (text, mail.body)
            assert SECRET not in mail.message.as_string()
    with harness.database.read() as session:
        t = tournaments.require(session, "x")
        assert [e.user.userid for e in tournaments.entries_of(session, t)] == ["fred"]
