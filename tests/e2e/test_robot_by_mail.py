"""A computer player through a running `abalone-pbm serve`: the worker's commit wakes the
robots for the board whose turn it handed over (they are not woken by every mail, and
their every-30-seconds look at all games would be too late for this test)."""

from __future__ import annotations

import time

from .conftest import LiveServer

FRED = "fred@example.org"


def test_a_robot_answers_a_move_by_mail_at_once(live_server: LiveServer) -> None:
    server, mailbox = live_server, live_server.mailbox
    server.send(FRED, "signup fred Choc0late")
    mailbox.wait_for(FRED, r"^Abalone signup fred")
    server.send(FRED, "abalone challenge fred pebble")
    mailbox.wait_for(FRED, r"^New Abalone Board 101 fred$")
    started = time.monotonic()
    server.send(FRED, "abalone move 101 fred Choc0late c3-c5,d4")
    mailbox.wait_for(FRED, r"^Abalone Board 101 pebble$")
    answer = mailbox.wait_for(FRED, r"^Abalone Board 101 fred$", timeout=25)
    assert time.monotonic() - started < 25
    assert "2." in answer.get_body(("plain",)).get_content()
