"""Computer players through a running `abalone-pbm serve`: games of three and four
robots (free-for-all and teams, best-reply search), started by the admin's command
line, played in the server's robot lanes to their end, watched by a subscriber over SMTP; mail keeps flowing while they
think."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .conftest import LiveServer

FRED = "fred@example.org"


@pytest.fixture
def server_env(server_env: dict[str, str]) -> dict[str, str]:
    # Quick robots: the games take seconds, not minutes.
    server_env["ABALONE_PBM_ROBOT_BUDGET"] = "0.05"
    # Games the admin starts from the command line are picked up by the robots' sweep.
    server_env["ABALONE_PBM_ROBOT_SWEEP_SECONDS"] = "1"
    return server_env


def _admin_start(server: LiveServer, *words: str) -> str:
    """``abalone-pbm games start``, as the admin runs it beside the server."""
    done = subprocess.run([sys.executable, "-m", "abalone_pbm", "games", "start", "--", *words],
                          cwd=server.workdir, env=server.env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _text(message) -> str:  # type: ignore[no-untyped-def]
    return message.get_body(("plain",)).get_content()


def test_robot_games_of_three_and_four_players_end_by_mail(live_server: LiveServer) -> None:
    server = live_server
    mailbox = server.mailbox
    server.send(FRED, "signup fred Choc0late")
    mailbox.wait_for(FRED, r"^Abalone signup fred")
    server.send(FRED, "abalone subscribe fred Choc0late all")
    mailbox.wait_for(FRED, r"^Abalone subscribe")
    # Games of computer players only are the admin's: by mail they are refused.
    server.send(FRED, "abalone challenge -movelimit=30 boulder avalanche pebble")
    refused = _text(mailbox.wait_for(FRED, r"^Abalone error"))
    assert "computer players only" in refused, refused
    assert "board 101 started" in _admin_start(server, "-movelimit=30", "boulder", "avalanche",
                                               "pebble")
    _admin_start(server, "-teams", "-movelimit=32", "boulder", "marble", "avalanche", "pebble")
    # Mail is answered while the robots think.
    server.send(FRED, "help robots")
    assert "avalanche" in _text(mailbox.wait_for(FRED, r"^Abalone help", timeout=20))
    for number, players in ((101, 3), (102, 4)):
        over = mailbox.wait_for(FRED, rf"^Abalone Board {number}( \*\*)?$", timeout=120)
        text = _text(over)
        assert "The game is over" in text, text
        assert re.search(r"move limit|pushed off", text), text
        for name in ("boulder", "avalanche", "pebble"):
            assert name in text
    # Each board mail on the way was for a move of the game: 30 and 32 of them at most.
    boards = [m for m in mailbox.all_to(FRED) if re.match(r"^Abalone Board 10[12] ", str(m["Subject"]))]
    assert 0 < len(boards) <= 30 + 32
    # The one error is the refused challenge by mail.
    assert len([m for m in mailbox.all_to(FRED) if "rror" in str(m["Subject"])]) == 1
