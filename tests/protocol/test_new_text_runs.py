"""The reader of a reply's new text takes a quote and the blank lines among and after
it as one run (a body alternating quoted and blank lines is no longer read a line at a
time): it reads every body as when a run of quoted lines ended at a blank line, on
random bodies of quotes, blank lines, banners, client lines, attributions, header
blocks and text, also where the reading stops at its bounds."""

from __future__ import annotations

import random
import re
import time

import pytest

from abalone_pbm.protocol import new_text

_LINES = (
    "> q", ">", "  > q", "> > deep", "", "   ", "\t", "\u00a0", "c3-c5", "nice move",
    "resign", "[EXTERNAL]", "CAUTION: This email originated from outside the organization.",
    "Do not click links unless you recognise the sender.", "Sent from my iPhone",
    "On Mon, 27 Nov 2026, fred <fred@example.org> wrote:", "fred wrote:",
    "From: fred@example.org", "Sent: Monday", "To: abalone@localhost", "-- ",
    "Summary of Abalone Board 101",
)
#: The run of quoted lines as it was read before: up to the first line not quoted.
_QUOTES_ONLY_RUN_END_RE = re.compile(r"\n(?![ ]*>)")


def _reference(body: str, monkeypatch: pytest.MonkeyPatch) -> new_text.NewText:
    with monkeypatch.context() as patched:
        patched.setattr(new_text, "_QUOTED_RUN_END_RE", _QUOTES_ONLY_RUN_END_RE)
        return new_text._Reader(body).read()


@pytest.mark.parametrize("most_lines", [new_text.MAX_NEW_LINES, 3])
def test_runs_of_quotes_and_blanks_read_as_before(
        most_lines: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(new_text, "MAX_NEW_LINES", most_lines)
    rng = random.Random(most_lines)
    for _ in range(3000):
        lines = [rng.choice(_LINES) for _ in range(rng.randrange(0, 16))]
        body = rng.choice(("\n", "\r\n")).join(lines) + rng.choice(("", "\n", "\n\n"))
        assert new_text._Reader(body).read() == _reference(body, monkeypatch), body


def test_a_body_alternating_quotes_and_blank_lines_is_read_quickly() -> None:
    body = "c3-c5\n" + "> a\n\n" * 50_000
    started = time.process_time()
    read = new_text._Reader(body).read()
    spent = time.process_time() - started
    assert read.lines == ("c3-c5",) and read.had_old_mail
    assert spent < 0.03  # (read a line at a time: about 0.1 s)
