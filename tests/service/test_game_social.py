"""chat, subscribe/unsubscribe, notify, limit, accept/reject, seek."""

from __future__ import annotations

from .game_helpers import (
    FRED,
    WILMA,
    expect_errors,
    first_round,
    game,
    games,
    move,
    only,
    subjects,
    text,
    two_players,
)
from .harness import Harness

FRED_AT = "fred@example.org"
WILMA_AT = "wilma@example.org"
BETTY_AT = "betty@example.org"


def with_betty(h: Harness) -> None:
    two_players(h)
    h.signup("betty", "pw4")


# ---------------------------------------------------------------------------- chat
def test_chat_reaches_players_and_observers(harness: Harness) -> None:
    with_betty(harness)
    harness.signup("barney", "pw3")
    harness.mail("barney@example.org", "abalone subscribe 101 barney pw3")
    body = "Nice opening!\n\n> quoted old text\n-- \nbetty's signature"
    sent = harness.mail(BETTY_AT, "abalone chat 101 betty pw4", body)
    assert sorted(s.to for s in sent) == ["barney@example.org", BETTY_AT, FRED_AT, WILMA_AT]
    assert subjects(sent) == {"Abalone Board 101 chat betty"}
    mail = text(only(sent, FRED_AT))
    assert "betty writes about Abalone board 101:" in mail and "Nice opening!" in mail
    assert "quoted old text" not in mail and "signature" not in mail
    assert only(sent, FRED_AT).reply_to is None
    assert game(harness).ply == 0
    expect_errors(harness, [
        (BETTY_AT, "abalone chat 101 betty pw4", "Your chat has no text", ""),
        (BETTY_AT, "abalone chat 101 betty wrong", "Invalid password entered", "hi"),
        (BETTY_AT, "abalone chat 999 betty pw4", "Abalone board 999 not found", "hi"),
        (BETTY_AT, "abalone chat 101 nobody pw4", "Invalid userid entered", "hi"),
    ])




# ------------------------------------------------------------------ subscribe
def test_subscribe_and_unsubscribe(harness: Harness) -> None:
    with_betty(harness)
    sent = harness.mail(BETTY_AT, "abalone subscribe 101 betty pw4")
    assert [(s.to, s.subject) for s in sent] == [(BETTY_AT, "Abalone Board 101 fred")]
    assert "betty now watches board 101" in text(sent[0])
    assert "abalone unsubscribe 101 betty <password>" in text(sent[0])
    sent = move(harness, "fred", "pw1", FRED[0])
    assert "Observers: betty" in text(only(sent, BETTY_AT))
    assert only(sent, BETTY_AT).reply_to is None
    sent = harness.mail(BETTY_AT, "abalone subscribe 101 betty pw4")
    assert "You watch board 101 already" in text(sent[0])
    sent = harness.mail(BETTY_AT, "abalone unsubscribe 101 betty pw4")
    assert [s.subject for s in sent] == ["Abalone Board 101 unsubscribe"]
    sent = move(harness, "wilma", "pw2", WILMA[0])
    assert BETTY_AT not in {s.to for s in sent}
    expect_errors(harness, [
        (BETTY_AT, "abalone unsubscribe 101 betty pw4", "You do not watch board 101"),
        (FRED_AT, "abalone subscribe 101 fred pw1", "You play in this game"),
        (BETTY_AT, "abalone subscribe 101 betty pw1", "Invalid password entered"),
        (BETTY_AT, "abalone subscribe 707 betty pw4", "Abalone board 707 not found"),
        (BETTY_AT, "abalone unsubscribe 707 betty pw4", "Abalone board 707 not found"),
        (BETTY_AT, "abalone subscribe betty pw4 everything", 'is not "all"'),
    ])


def test_subscribe_to_a_finished_game_is_refused(harness: Harness) -> None:
    with_betty(harness)
    harness.mail(WILMA_AT, "abalone resign 101 wilma pw2")
    sent = harness.mail(BETTY_AT, "abalone subscribe 101 betty pw4")
    assert "The game has ended" in text(sent[0])


def test_subscribe_all_watches_new_boards(harness: Harness) -> None:
    with_betty(harness)  # board 101 exists already and is not watched
    sent = harness.mail(BETTY_AT, "abalone subscribe betty pw4 all")
    assert [s.subject for s in sent] == ["Abalone subscribe all"]
    sent = harness.mail(FRED_AT, "abalone challenge wilma fred")
    assert sorted(s.to for s in sent) == [BETTY_AT, FRED_AT, WILMA_AT]
    assert only(sent, BETTY_AT).subject == "New Abalone Board 102 wilma"
    assert "Observers: betty" in text(only(sent, FRED_AT))
    sent = move(harness, "wilma", "pw2", FRED[0], board=102)
    assert BETTY_AT in {s.to for s in sent}
    sent = move(harness, "fred", "pw1", FRED[0], board=101)
    assert BETTY_AT not in {s.to for s in sent}
    sent = harness.mail(BETTY_AT, "abalone unsubscribe betty pw4 all")
    assert "(you watched 1 board)" in text(sent[0])
    sent = harness.mail(FRED_AT, "abalone challenge wilma fred")
    assert BETTY_AT not in {s.to for s in sent}


# ------------------------------------------------------------------------ notify
def test_notify_sends_only_the_result(harness: Harness) -> None:
    with_betty(harness)
    expect_errors(harness, [
        (FRED_AT, "abalone notify fred pw1 101", "You play in board 101"),
        (BETTY_AT, "abalone notify betty pw4 101 808", "Abalone board 808 not found"),
        (BETTY_AT, "abalone notify betty xx 101", "Invalid password entered"),
        (BETTY_AT, "abalone notify betty pw4 soon", "is not a board number"),
    ])
    sent = harness.mail(BETTY_AT, "abalone notify betty pw4 101")
    assert "betty will be told the result of board 101" in text(sent[0])
    first_round(harness)
    sent = move(harness, "fred", "pw1", FRED[1])
    assert BETTY_AT not in {s.to for s in sent}
    sent = harness.mail(WILMA_AT, "abalone resign 101 wilma pw2")
    assert only(sent, BETTY_AT).subject == "Abalone Board 101"
    assert "fred wins" in text(only(sent, BETTY_AT))


def test_notify_without_boards_sends_the_result_of_every_game(harness: Harness) -> None:
    with_betty(harness)
    sent = harness.mail(BETTY_AT, "notify betty pw4")
    assert "betty will be told the result of every game" in text(only(sent, BETTY_AT))
    harness.mail(FRED_AT, "abalone challenge fred wilma")  # board 102, started later
    for number in (101, 102):
        for userid, password, played in (("fred", "pw1", FRED[0]), ("wilma", "pw2", WILMA[0]),
                                          ("fred", "pw1", FRED[1])):
            sent = move(harness, userid, password, played, board=number)
            assert BETTY_AT not in {s.to for s in sent}  # no mail for each move
        sent = harness.mail(WILMA_AT, f"abalone resign {number} wilma pw2")
        result = only(sent, BETTY_AT)
        assert result.subject == f"Abalone Board {number}" and "fred wins" in text(result)
        assert result.reply_to is None
    harness.mail(BETTY_AT, "abalone unsubscribe betty pw4 all")
    harness.mail(FRED_AT, "abalone challenge fred wilma")
    for userid, password, played in (("fred", "pw1", FRED[0]), ("wilma", "pw2", WILMA[0]),
                                      ("fred", "pw1", FRED[1])):
        move(harness, userid, password, played, board=103)
    sent = harness.mail(WILMA_AT, "abalone resign 103 wilma pw2")
    assert "fred wins" in text(only(sent, FRED_AT)) and BETTY_AT not in {s.to for s in sent}


# ----------------------------------------------------------------- challenges
def test_limit_accept_and_reject(harness: Harness) -> None:
    with_betty(harness)
    sent = harness.mail(FRED_AT, "abalone limit fred pw1")
    assert "fred accepts challenges, with no limit on the number of games" in text(sent[0])
    assert "fred plays 1 active games now" in text(sent[0])
    sent = harness.mail(FRED_AT, "abalone limit fred pw1 1")
    assert "at most 1 active games" in text(sent[0])
    sent = harness.mail(BETTY_AT, "abalone challenge betty fred")
    assert "fred already plays 1 games, the most they accept" in text(sent[0])
    # pbmserv: a limit of 0 refuses every challenge naming fred (bare "limit" works too).
    sent = harness.mail(FRED_AT, "limit fred pw1 0")
    assert "fred refuses every challenge (limit 0)" in text(sent[0])
    sent = harness.mail(BETTY_AT, "abalone challenge betty fred")
    assert [s.to for s in sent] == [BETTY_AT]
    assert "fred does not accept challenges at the moment (limit 0)" in text(sent[0])
    harness.mail(FRED_AT, "abalone limit fred pw1 accept")
    sent = harness.mail(BETTY_AT, "abalone challenge betty fred")
    assert only(sent, FRED_AT).subject == "New Abalone Board 102 betty"
    sent = harness.mail(FRED_AT, "abalone limit fred pw1 reject")
    assert "fred refuses every challenge" in text(sent[0])
    sent = harness.mail(BETTY_AT, "abalone challenge betty fred")
    assert "fred does not accept challenges" in text(sent[0])
    sent = harness.mail(FRED_AT, "abalone accept fred pw1")
    assert [s.subject for s in sent] == ["Abalone accept"]
    sent = harness.mail(BETTY_AT, "abalone challenge betty fred")
    assert only(sent, FRED_AT).subject == "New Abalone Board 103 betty"
    sent = harness.mail(FRED_AT, "abalone reject fred pw1")
    assert "fred refuses every challenge" in text(sent[0])
    assert "abalone accept fred <password>" in text(sent[0])
    sent = harness.mail(BETTY_AT, "abalone challenge betty fred")
    assert "does not accept challenges" in text(sent[0])
    harness.mail(FRED_AT, "abalone limit fred pw1 accept")
    assert len(games(harness)) == 3
    expect_errors(harness, [
        (FRED_AT, "abalone limit fred wrong", "Invalid password entered"),
        (FRED_AT, "abalone limit fred pw1 lots", "is not a number of games"),
        (FRED_AT, "abalone accept fred wrong", "Invalid password entered"),
        (FRED_AT, "abalone reject ghost pw1", "Invalid userid entered"),
    ])


def test_seek_starts_a_game_when_enough_players_seek(harness: Harness) -> None:
    for name in ("fred", "wilma", "barney"):
        harness.signup(name, "pw")
    sent = harness.mail(FRED_AT, "abalone seek fred pw 3")
    assert [s.subject for s in sent] == ["Abalone seek"]
    assert "Your seek for a 3-player game is registered" in text(sent[0])
    assert "Nobody else is waiting yet" in text(sent[0])
    sent = harness.mail(FRED_AT, "abalone seek fred pw 3")
    assert "is still waiting" in text(sent[0])
    harness.clock.advance(seconds=60)
    sent = harness.mail(WILMA_AT, "abalone seek wilma pw 3")
    assert "Also waiting: fred" in text(sent[0])
    assert games(harness) == []
    # Everyone sees who is waiting: in the games list and the list of players.
    listed = text(only(harness.mail("barney@example.org", "abalone games"),
                       "barney@example.org"))
    assert "Looking for a game (abalone seek): fred a 3-player game wilma a 3-player" in listed
    players = text(only(harness.mail("barney@example.org", "list"), "barney@example.org"))
    assert "seeks a 3-player game" in players
    sent = harness.mail("barney@example.org", "abalone seek barney pw 3")
    assert subjects(sent) == {"New Abalone Board 101 fred"}
    assert sorted(s.to for s in sent) == ["barney@example.org", FRED_AT, WILMA_AT]
    stored = game(harness)
    assert [s.user.userid for s in stored.seats] == ["fred", "wilma", "barney"]
    # The seeks are used up.
    sent = harness.mail(WILMA_AT, "abalone seek wilma pw 3")
    assert "Nobody else is waiting yet" in text(sent[0])


def test_seek_skips_players_who_cannot_play(harness: Harness) -> None:
    for name in ("fred", "wilma", "barney"):
        harness.signup(name, "pw")
    harness.mail(FRED_AT, "abalone seek fred pw 2")
    harness.mail(FRED_AT, "abalone reject fred pw")
    sent = harness.mail(WILMA_AT, "abalone seek wilma pw 2")
    assert "Nobody else is waiting yet" in text(sent[0])
    sent = harness.mail(WILMA_AT, "abalone seek wilma pw 2")
    sent = harness.mail("barney@example.org", "abalone seek barney pw 2")
    assert subjects(sent) == {"New Abalone Board 101 wilma"}


def test_seek_errors_and_seeking_while_refusing_challenges(harness: Harness) -> None:
    harness.signup("fred", "pw")
    harness.mail(FRED_AT, "abalone reject fred pw")
    expect_errors(harness, [
        (FRED_AT, "abalone seek fred pw 2", "You cannot seek a game: fred does not accept"),
        (FRED_AT, "abalone seek fred wrong 2", "Invalid password entered"),
        (FRED_AT, "abalone seek fred pw 7", "is not a number of players from 2 to 6"),
        (FRED_AT, "abalone seek fred pw", "needs the number of players"),
    ])
