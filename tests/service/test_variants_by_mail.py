"""A short game of each neutral-marble variant through the mail path."""

from __future__ import annotations

import pytest

from .harness import Harness

#: From the two-player start, fred (player 1) first; each ends by the variant's own rule.
QUICK_GAMES = {
    "princess": (
        "c3-c4,d3 g7,g8 d3-d4,e3 g8,g7 e3-e4,e5 g7,g8 e4-e5,e6 g8,g7 e5-e6,e7 g7,g8 "
        "e6-e7,e8 g8,g7 e7-e8,e9",
        "pushed off the princess",
    ),
    "soccer": (
        "c3-c4,d3 g5,g4 d3-d4,e3 g4,g5 e3-e4,e5 g5,g4 e4-e5,e6 g4,g5 b4-c5,d6 g5,g4 "
        "c5-d6,e7 g4,g5 d6-e7,f8 g5,g4 e7-f8,g9",
        "ball",
    ),
    "thief": (
        "c4-c5,d5 i7-g7,f7 d5-d6,e5 h7-f7,e7 e5-e6,f5 g7-e7,d7 f5-f6,f7 g5,g4 f6-f7,f8 "
        "g4,g5 f7-f8,f9",
        "treasure",
    ),
}


def _start(harness: Harness, option: str) -> dict[str, str]:
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    mails = harness.challenge("fred", "wilma", options=f"-{option}")
    return {name: mail.body for name, mail in mails.items()}


@pytest.mark.parametrize("variant", sorted(QUICK_GAMES))
def test_a_variant_game_to_its_end(harness: Harness, variant: str) -> None:
    moves, reason = QUICK_GAMES[variant]
    bodies = _start(harness, variant)
    assert "*" in bodies["fred"] or variant == "thief"
    passwords = {"fred": "pw1", "wilma": "pw2"}
    sent = []
    for ply, move in enumerate(moves.split()):
        who = ("fred", "wilma")[ply % 2]
        sent = harness.mail(f"{who}@example.org", f"abalone move 101 {who} {passwords[who]} {move}")
        assert not any("Error" in s.subject for s in sent), sent[0].body
    final = {s.to: s for s in sent}
    assert final["fred@example.org"].subject == "Abalone Board 101"
    assert "fred wins" in final["wilma@example.org"].body
    assert reason in final["wilma@example.org"].body


def test_the_pillar_blocks_a_push_by_mail(harness: Harness) -> None:
    _start(harness, "pillar")
    passwords = {"fred": "pw1", "wilma": "pw2"}
    for ply, move in enumerate("a1-c3,d4 g6,f6 b1,c1 f6,e6 c1,b1 e6,d5".split()):
        who = ("fred", "wilma")[ply % 2]
        harness.mail(f"{who}@example.org", f"abalone move 101 {who} {passwords[who]} {move}")
    sent = harness.mail("fred@example.org", "abalone move 101 fred pw1 a5-c5,d5")
    assert sent[0].subject == "Abalone Board 101 Error"
    assert "blocked by the pillar on e5" in sent[0].body


def test_variants_that_make_no_sense_are_refused(harness: Harness) -> None:
    for name in ("fred", "wilma", "barney"):
        harness.signup(name)
    sent = harness.mail("fred@example.org", "abalone challenge -soccer fred wilma barney")
    assert sent[0].subject == "Abalone error" and "two players" in sent[0].body
    sent = harness.mail("fred@example.org", "abalone challenge -princess -thief fred wilma")
    assert "at most one variant" in sent[0].body


def test_a_pillar_game_to_its_end(harness: Harness) -> None:
    """The pillar has no win of its own: a blitz game (-target=2) around it, by mail."""
    from abalone_pbm.rules import Rules

    from ..e2e.scripted import scripted_game

    moves = scripted_game(rules=Rules(variant="pillar", target=2))
    harness.signup("fred", "pw1")
    harness.signup("wilma", "pw2")
    mails = harness.challenge("fred", "wilma", options="-pillar -target=2")
    assert "E- . . . . * . . . ." in mails["fred"].body
    passwords = {"fred": "pw1", "wilma": "pw2"}
    sent = []
    for ply, move in enumerate(moves):
        who = ("fred", "wilma")[ply % 2]
        sent = harness.mail(f"{who}@example.org", f"abalone move 101 {who} {passwords[who]} {move}")
        assert not any("Error" in s.subject for s in sent), sent[0].body
    assert {s.subject for s in sent} == {"Abalone Board 101"}
    assert "fred wins" in sent[0].body
