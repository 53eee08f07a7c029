"""games, show <userid>, showas, history, standings, ratings."""

from __future__ import annotations

from .game_helpers import (
    FRED,
    expect_errors,
    first_round,
    move,
    subjects,
    text,
    two_players,
)
from .harness import Harness

FRED_AT = "fred@example.org"
WILMA_AT = "wilma@example.org"
ASKER = "someone@example.org"


def three_boards(h: Harness) -> None:
    """101 fred-wilma (fred to move), 102 wilma-barney (finished, wilma won),
    103 barney-fred (barney to move)."""
    two_players(h)
    h.signup("barney", "pw3")
    h.challenge("wilma", "barney", by=WILMA_AT)
    move(h, "wilma", "pw2", FRED[0], board=102)
    move(h, "barney", "pw3", "g7-g5,f6", board=102)
    move(h, "wilma", "pw2", FRED[1], board=102)
    h.mail("barney@example.org", "abalone resign 102 barney pw3")
    h.challenge("barney", "fred", by=FRED_AT)


def board_lines(mail_text: str) -> list[int]:
    return [int(w) for w in mail_text.split() if w.isdigit() and 101 <= int(w) <= 199]


GAMES_CASES = [
    ("abalone games", [101, 103]),
    ("abalone games all", [101, 102, 103]),
    ("abalone games active", [101, 103]),
    ("abalone games inactive", [102]),
    ("abalone games fred", [101, 103]),
    ("abalone games wilma all", [101, 102]),
    ("abalone games fred next", [101]),
    ("abalone games barney next", [103]),
    ("abalone games wilma next", []),
    ("abalone games next", [101, 103]),
]


def test_games_filters(harness: Harness) -> None:
    three_boards(harness)
    for subject, boards in GAMES_CASES:
        sent = harness.mail(ASKER, subject)
        assert [s.subject for s in sent] == ["Abalone games"]
        listed = [int(line.split()[0]) for line in sent[0].body.splitlines()[2:]
                  if line.strip() and line.split()[0].isdigit()]
        assert listed == boards, subject
    expect_errors(harness, [(ASKER, "abalone games ghost", "Invalid userid entered")])


def test_show_user_sends_their_boards(harness: Harness) -> None:
    three_boards(harness)
    sent = harness.mail(ASKER, "abalone show fred")
    assert [s.subject for s in sent] == ["Abalone Board 101 fred", "Abalone Board 103 barney"]
    assert all(s.to == ASKER and s.reply_to is None for s in sent)
    sent = harness.mail(ASKER, "abalone show wilma inactive")
    assert [s.subject for s in sent] == ["Abalone Board 102"]
    assert "wilma wins" in text(sent[0])
    sent = harness.mail(ASKER, "abalone show wilma barney next")
    assert [s.subject for s in sent] == ["Abalone Board 103 barney"]
    sent = harness.mail(ASKER, "abalone show wilma next")
    assert [s.subject for s in sent] == ["Abalone show"]
    assert "wilma has no next games" in text(sent[0])
    sent = harness.mail(ASKER, "abalone show ghost")
    assert "Invalid userid entered" in text(sent[0])


def test_showas_gives_the_players_view_with_reply_address(harness: Harness) -> None:
    three_boards(harness)
    sent = harness.mail("elsewhere@example.org", "abalone showas fred pw1")
    assert [s.subject for s in sent] == ["Abalone Board 101 fred", "Abalone Board 103 barney"]
    assert all(s.to == "elsewhere@example.org" for s in sent)
    assert sent[0].reply_to and sent[0].reply_to.startswith("abalone+101.")
    assert "Reply to this mail with your move" in text(sent[0])
    assert "It is not your move" in text(sent[1])
    sent = harness.mail(WILMA_AT, "abalone showas wilma pw2 102")
    assert [s.subject for s in sent] == ["Abalone Board 102"] and sent[0].reply_to is None
    sent = harness.mail(WILMA_AT, "abalone showas wilma pw2 inactive")
    assert [s.subject for s in sent] == ["Abalone Board 102"]
    expect_errors(harness, [
        (FRED_AT, "abalone showas fred wrong", "Invalid password entered"),
        (FRED_AT, "abalone showas fred pw1 102", "You are NOT playing this game"),
        (FRED_AT, "abalone showas fred pw1 909", "Abalone board 909 not found"),
        (FRED_AT, "abalone showas fred pw1 101 all", "not both"),
    ])
    # The reply address given works for a move.
    sent = harness.mail(FRED_AT, "Re: board", FRED[0], to=harness.mail(
        FRED_AT, "abalone showas fred pw1 101")[0].reply_to)
    assert subjects(sent) == {"Abalone Board 101 wilma"}


def test_history_standings_and_ratings(harness: Harness) -> None:
    three_boards(harness)
    sent = harness.mail(ASKER, "abalone history")
    body = text(sent[0])
    assert sent[0].subject == "Abalone history"
    assert "102" in body and "wilma won (barney resigned), 3 moves" in body
    assert "ratings: wilma 1600 -> 1800, barney 1600 -> 1400" in body
    assert board_lines(sent[0].body.split("\n", 1)[1]) == [102]
    sent = harness.mail(ASKER, "abalone history fred")
    assert "none" in text(sent[0])
    sent = harness.mail(ASKER, "abalone history ghost")
    assert "Invalid userid entered" in text(sent[0])

    sent = harness.mail(ASKER, "abalone ratings")
    lines = [line.split() for line in sent[0].body.splitlines()]
    table = [line for line in lines if line and line[0].isdigit()]
    assert table[0][1] == "wilma" and table[-1][1] == "barney"  # robots: 1600, between
    assert table[0][2:8] == ["1800", "1", "1", "0", "0", "P"]
    assert table[-1][2:7] == ["1400", "1", "0", "0", "1"]
    sent = harness.mail(ASKER, "abalone standings")
    assert sent[0].subject == "Abalone standings"
    assert "most wins first" in text(sent[0])


def test_ratings_list_robots_and_draws(harness: Harness) -> None:
    from abalone_pbm.robots import ROBOTS

    sent = harness.mail(ASKER, "abalone ratings")
    rows = {line.split()[1]: line.split() for line in sent[0].body.splitlines()
            if line.split() and line.split()[0].isdigit()}
    assert set(rows) == set(ROBOTS)  # nobody has played: only the computer players
    assert all(row[3] == "0" and row[-2:] == ["P", "C"] for row in rows.values())
    two_players(harness)
    first_round(harness)
    harness.mail(FRED_AT, "abalone move 101 fred pw1 propose")
    harness.mail(WILMA_AT, "abalone move 101 wilma pw2 accept")
    sent = harness.mail(ASKER, "abalone standings")
    rows = {line.split()[1]: line.split() for line in sent[0].body.splitlines()
            if line.split() and line.split()[0].isdigit()}
    assert rows["fred"][2:7] == ["1600", "1", "0", "1", "0"]
    assert list(rows)[:2] == ["fred", "wilma"]  # a draw beats no game at all


def test_empty_rating_list_and_bad_arguments(harness: Harness) -> None:
    from abalone_pbm.render import player_table

    subject, body = player_table("Abalone ratings", "Abalone rating list:", [])
    assert subject == "Abalone ratings" and "No rated games have been played yet." in body
    sent = harness.mail(ASKER, "abalone ratings please")
    assert "Too many words" in text(sent[0])
