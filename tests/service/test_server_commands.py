"""Server commands of issue 4 through the mail path: list, message, broadcast, all show,
vacation, password reset/set, help robots and the syntax of the nearest command."""

from __future__ import annotations

import re

from abalone_pbm.db import repository
from abalone_pbm.service.robots import ensure_robot_users

from .harness import Harness, Sent


def _errors(sent: list[Sent]) -> list[Sent]:
    return [s for s in sent if s.subject.startswith("Abalone") and "rror" in s.subject]


def _only_error(sent: list[Sent]) -> str:
    assert len(sent) == 1 and sent[0].subject == "Abalone error", [
        (s.to, s.subject, s.body[:200]) for s in sent
    ]
    return sent[0].body


def _players(harness: Harness, *names: str) -> None:
    for name in names:
        harness.signup(name, f"{name}-pw")


def _establish(harness: Harness, *names: str) -> None:
    """Make players established (rated games, an older account): they may broadcast."""
    from datetime import timedelta

    from abalone_pbm.db import repository

    with harness.database.write() as session:
        for name in names:
            user = repository.get_user(session, name)
            assert user is not None
            user.rated_games = 5
            user.created_at = harness.clock.now() - timedelta(days=8)


# ------------------------------------------------------------------------------ list
def test_list_shows_ratings_vacations_and_robots(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    with harness.database.write() as session:
        ensure_robot_users(session, harness.clock)
    harness.mail("wilma@example.org", "vacation wilma wilma-pw on")
    sent = harness.mail("someone@example.net", "list")
    assert [(s.to, s.subject) for s in sent] == [("someone@example.net", "Abalone players")]
    lines = {line.split()[0]: line for line in sent[0].body.splitlines()
             if line.startswith("  ") and line.split()}
    assert "1600*" in lines["fred"] and "vacation" not in lines["fred"]
    assert "on vacation" in lines["wilma"]
    for robot in ("pebble", "marble", "boulder"):
        assert "computer player" in lines[robot]
    assert "@" not in sent[0].body  # no addresses


def test_list_takes_no_arguments(harness: Harness) -> None:
    body = _only_error(harness.mail("someone@example.net", "list everyone"))
    assert 'Syntax is "list"' in body


# --------------------------------------------------------------------------- message
def _confirm(harness: Harness, sent: list) -> None:  # type: ignore[type-arg]
    """The owner of each new address answers its confirmation request (double opt-in)."""
    requests = [s for s in sent if s.subject.startswith("confirm address ")]
    assert requests
    for request in requests:
        answer = harness.mail(request.to, f"Re: {request.subject}")
        assert any(a.subject == "Abalone address confirmed" for a in answer)


def test_message_relays_the_body_to_each_address_once(harness: Harness) -> None:
    _players(harness, "fred", "wilma", "barney")
    _confirm(harness, harness.mail("wilma@example.org", "add wilma wilma-pw wilma@work.example"))
    body = "Shall we play tomorrow?\n\n> an old quoted line\n-- \nFred's signature\n"
    sent = harness.mail("fred@example.org", "message fred fred-pw wilma barney wilma", body)
    relayed = [s for s in sent if s.subject == "Abalone message from fred"]
    assert sorted(s.to for s in relayed) == [
        "barney@example.org", "wilma@example.org", "wilma@work.example"
    ]
    for mail in relayed:
        assert mail.body.replace("\r\n", "\n").startswith("From fred:\n\nShall we play tomorrow?")
        assert "\n-- \n" in mail.body.replace("\r\n", "\n")
        assert "old quoted line" not in mail.body and "Fred's signature" not in mail.body
        assert "fred@example.org" not in mail.body and "fred-pw" not in mail.body
        assert mail.reply_to is None
    confirmation = [s for s in sent if s.to == "fred@example.org"]
    assert [s.subject for s in confirmation] == ["Abalone message sent"]
    assert "wilma and barney" in confirmation[0].body
    assert "@" not in confirmation[0].body.split("Your mail was")[0]


def test_message_failures(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    body = _only_error(harness.mail("fred@example.org", "message fred wrong wilma", "hi"))
    assert "Invalid password" in body and "wrong" not in body
    body = _only_error(
        harness.mail("fred@example.org", "message fred fred-pw wilma ghost nobody", "hi")
    )
    assert "There are no users ghost and nobody" in body and "Nothing was sent" in body
    body = _only_error(harness.mail("fred@example.org", "message fred fred-pw wilma", ""))
    assert "Your message is empty" in body
    body = _only_error(harness.mail("fred@example.org", "message fred fred-pw", "hi"))
    assert 'Syntax is "message <userid> <password> <to-userid>..."' in body
    with harness.database.write() as session:
        ensure_robot_users(session, harness.clock)
    body = _only_error(harness.mail("fred@example.org", "message fred fred-pw pebble", "hi"))
    assert "pebble cannot get messages" in body


# ------------------------------------------------------------------------- broadcast
def test_broadcast_goes_to_everyone_once_a_day(harness: Harness) -> None:
    _players(harness, "fred", "wilma", "barney")
    with harness.database.write() as session:
        ensure_robot_users(session, harness.clock)
    body = _only_error(harness.mail("fred@example.org", "broadcast fred fred-pw", "Too early"))
    assert "established players: at least 5 rated games" in body
    _establish(harness, "fred", "wilma")
    sent = harness.mail("fred@example.org", "broadcast fred fred-pw", "Tournament on Sunday!")
    relayed = [s for s in sent if s.subject == "Abalone broadcast from fred"]
    assert sorted(s.to for s in relayed) == ["barney@example.org", "wilma@example.org"]
    assert all(s.body.replace("\r\n", "\n").startswith("From fred:\n\nTournament on Sunday!")
               for s in relayed)
    confirmation = next(s for s in sent if s.to == "fred@example.org")
    assert confirmation.subject == "Abalone broadcast sent"
    assert "2 addresses" in confirmation.body

    harness.clock.advance(hours=23)
    body = _only_error(harness.mail("fred@example.org", "broadcast fred fred-pw", "Again!"))
    assert "one broadcast in 24 hours" in body
    assert "the next is allowed from 2026-01-02 12:00 UTC" in body
    # Another user has an allowance of their own.
    sent = harness.mail("wilma@example.org", "broadcast wilma wilma-pw", "Me too")
    assert len([s for s in sent if s.subject == "Abalone broadcast from wilma"]) == 2
    harness.clock.advance(hours=1)
    sent = harness.mail("fred@example.org", "broadcast fred fred-pw", "Again!")
    assert len([s for s in sent if s.subject == "Abalone broadcast from fred"]) == 2


def test_broadcast_failures_do_not_use_the_allowance(harness: Harness) -> None:
    _players(harness, "fred", "wilma")
    _establish(harness, "fred")
    body = _only_error(harness.mail("fred@example.org", "broadcast fred nope", "Hello"))
    assert "Invalid password" in body
    body = _only_error(harness.mail("fred@example.org", "broadcast fred fred-pw", "> quoted"))
    assert "Your broadcast is empty" in body
    body = _only_error(harness.mail("fred@example.org", "broadcast fred", "Hello"))
    assert 'Syntax is "broadcast <userid> <password>"' in body
    sent = harness.mail("fred@example.org", "broadcast fred fred-pw", "Hello")
    assert any(s.subject == "Abalone broadcast from fred" for s in sent)


# -------------------------------------------------------------------------- all show
def test_all_show_mails_each_board(harness: Harness) -> None:
    _players(harness, "fred", "wilma", "barney")
    harness.challenge("fred", "wilma")  # 101: fred to move
    harness.challenge("wilma", "fred")  # 102: wilma to move
    harness.challenge("fred", "barney")  # 103, finished below
    harness.mail("barney@example.org", "abalone resign 103 barney barney-pw")
    sent = harness.mail("observer@example.net", "all show fred")
    assert [(s.to, s.subject) for s in sent] == [
        ("observer@example.net", "Abalone Board 101 fred"),
        ("observer@example.net", "Abalone Board 102 wilma"),
    ]
    assert "Summary of Abalone Board" in sent[0].body
    sent = harness.mail("observer@example.net", "ALL SHOW Fred next")
    assert [s.subject for s in sent] == ["Abalone Board 101 fred"]
    sent = harness.mail("observer@example.net", "all show fred active")
    assert len(sent) == 2


def test_all_show_without_games_and_failures(harness: Harness) -> None:
    _players(harness, "fred")
    sent = harness.mail("observer@example.net", "all show fred")
    assert [s.subject for s in sent] == ["Abalone boards"]
    assert "fred has no active games" in sent[0].body
    sent = harness.mail("observer@example.net", "all show fred next")
    assert "no game where it is their turn" in sent[0].body
    body = _only_error(harness.mail("observer@example.net", "all show ghost"))
    assert "Invalid userid" in body
    body = _only_error(harness.mail("observer@example.net", "all show fred later"))
    assert 'Syntax is "all show <userid> [next|active]"' in body


# -------------------------------------------------------------------------- vacation
def test_vacation_refuses_challenges_until_off(harness: Harness) -> None:
    _players(harness, "fred", "wilma", "barney")
    sent = harness.mail("wilma@example.org", "vacation wilma wilma-pw on")
    assert [s.subject for s in sent] == ["Abalone vacation"]
    assert "Vacation is on for wilma" in sent[0].body
    sent = harness.mail("wilma@example.org", "vacation wilma wilma-pw on")
    assert "on vacation already" in sent[0].body
    body = _only_error(harness.mail("fred@example.org", "abalone challenge fred barney wilma"))
    assert "wilma is on vacation and cannot be challenged" in body
    with harness.database.read() as session:
        assert repository.get_game(session, 101) is None
    sent = harness.mail("wilma@example.org", "vacation wilma wilma-pw off")
    assert "vacation is off" in sent[0].body
    sent = harness.mail("wilma@example.org", "vacation wilma wilma-pw off")
    assert "not on vacation" in sent[0].body
    assert harness.challenge("fred", "wilma")["wilma"].subject == "New Abalone Board 101 fred"


def test_vacation_failures(harness: Harness) -> None:
    _players(harness, "wilma")
    body = _only_error(harness.mail("wilma@example.org", "vacation wilma secret on"))
    assert "Invalid password" in body and "secret" not in body
    body = _only_error(harness.mail("wilma@example.org", "vacation wilma wilma-pw maybe"))
    assert 'Syntax is "vacation <userid> <password> on|off"' in body
    body = _only_error(harness.mail("wilma@example.org", "vacation ghost pw on"))
    assert "Invalid userid" in body
    with harness.database.read() as session:
        user = repository.get_user(session, "wilma")
        assert user is not None and not user.vacation


# -------------------------------------------------------------------- password reset
def _code(mail: Sent) -> str:
    match = re.search(r"one-time code is:\s+(\S+)", mail.body)
    assert match, mail.body
    return match.group(1)


def test_password_reset_and_set(harness: Harness) -> None:
    _players(harness, "fred")
    _confirm(harness, harness.mail("fred@example.org", "add fred fred-pw fred@home.example"))
    sent = harness.mail("stranger@example.net", "password reset FRED")
    codes = [s for s in sent if s.subject == "Abalone password reset for fred"]
    assert sorted(s.to for s in codes) == ["fred@example.org", "fred@home.example"]
    code = _code(codes[0])
    assert len(code) >= 8 and _code(codes[1]) == code
    answer = [s for s in sent if s.to == "stranger@example.net"]
    assert [s.subject for s in answer] == ["Abalone password reset"]
    assert code not in answer[0].body and "example.org" not in answer[0].body
    assert "home.example" not in answer[0].body
    with harness.database.read() as session:
        user = repository.get_user(session, "fred")
        assert user is not None and user.reset_code_hash and code not in user.reset_code_hash

    sent = harness.mail("stranger@example.net", f"password set fred {code} brand-new")
    assert [(s.to, s.subject) for s in sent if s.to == "stranger@example.net"] == [
        ("stranger@example.net", "Abalone password changed")
    ]
    assert {s.to for s in sent} == {"stranger@example.net", "fred@example.org",
                                    "fred@home.example"}
    assert all(code not in s.body and "brand-new" not in s.body for s in sent)
    assert harness.mail("fred@example.org", "change password fred brand-new newer")[0].subject \
        == "Abalone password changed"
    # The code works once.
    body = _only_error(harness.mail("stranger@example.net", f"password set fred {code} again"))
    assert "not valid for fred" in body and code not in body


def test_password_set_wrong_or_expired_code(harness: Harness) -> None:
    _players(harness, "fred")
    body = _only_error(harness.mail("fred@example.org", "password set fred abcdefghij new"))
    no_code = body.split("Your mail was")[0]
    sent = harness.mail("fred@example.org", "password reset fred")
    assert [s.subject for s in sent] == ["Abalone password reset for fred"]  # no extra answer
    code = _code(sent[0])
    body = _only_error(harness.mail("fred@example.org", "password set fred wrongcode1 new"))
    wrong = body.split("Your mail was")[0]
    assert "********" in body and "wrongcode1" not in body
    harness.clock.advance(hours=24, minutes=1)
    body = _only_error(harness.mail("fred@example.org", f"password set fred {code} new"))
    expired = body.split("Your mail was")[0]
    assert wrong == expired == no_code  # no hint which
    assert "Invalid password" in harness.mail("fred@example.org",
                                              "change password fred new x")[0].body


def test_password_reset_limits_and_failures(harness: Harness) -> None:
    _players(harness, "fred")
    harness.mail("fred@example.org", "password reset fred")
    body = _only_error(harness.mail("fred@example.org", "password reset fred"))
    assert "less than an hour ago" in body and "fred@" not in body.split("Your mail")[0]
    harness.clock.advance(hours=1)
    sent = harness.mail("fred@example.org", "password reset fred")
    assert [s.subject for s in sent] == ["Abalone password reset for fred"]
    assert "Invalid userid" in _only_error(harness.mail("x@example.net", "password reset ghost"))
    body = _only_error(harness.mail("x@example.net", "password reset"))
    assert 'Syntax is "password reset <userid>"' in body
    body = _only_error(harness.mail("x@example.net", "password forgot fred"))
    assert 'did you mean "password reset" or "password set"' in " ".join(body.split())
    with harness.database.write() as session:
        ensure_robot_users(session, harness.clock)
    assert "computer player" in _only_error(harness.mail("x@example.net", "password reset pebble"))


# ------------------------------------------------------------------ help and syntax
def test_help_robots_lists_the_computer_players(harness: Harness) -> None:
    sent = harness.mail("someone@example.net", "help robots")
    assert sent[0].subject == "Abalone help: robots"
    for name in ("pebble", "marble", "boulder"):
        assert re.search(rf"^\s+{name}\s+level \d", sent[0].body, re.MULTILINE), sent[0].body
    sent = harness.mail("someone@example.net", "abalone help robots")
    assert "boulder" in sent[0].body


def test_help_for_the_new_commands(harness: Harness) -> None:
    for topic, syntax in (
        ("vacation", "vacation <userid> <password> on|off"),
        ("password set", "password set <userid> <code> <new-password>"),
        ("broadcast", "broadcast <userid> <password>"),
    ):
        sent = harness.mail("someone@example.net", f"help {topic}")
        assert syntax in sent[0].body, sent[0].body


def test_unknown_commands_answer_with_the_nearest_syntax(harness: Harness) -> None:
    cases = {
        "signpu fred pw": 'Syntax is "signup <userid> <password> [<address>...]"',
        "vacaton fred pw on": 'Syntax is "vacation <userid> <password> on|off"',
        "abalone mvoo 101 fred pw c3-c5,d4":
            'Syntax is "abalone move <board> <userid> <password> <move>',
        "brodcast fred pw": 'Syntax is "broadcast <userid> <password>"',
        "move 101 fred pw c3-c5,d4": 'Game commands begin with the word "abalone"',
    }
    for subject, expected in cases.items():
        body = _only_error(harness.mail("someone@example.net", subject))
        assert expected in body, (subject, body)
        quoted = body.split("Your mail was:")[1]
        assert " pw " not in quoted and "********" in quoted  # passwords masked
