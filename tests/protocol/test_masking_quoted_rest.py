"""Which lines a command may begin on (``masking._lines_beginning_commands``: for a
text of many lines judging each by its rest after the quote marks up to their last
blank) is what reading each whole line finds: on random lines of quote marks, blanks,
command words and their slips, prefixes, tags, escapes, encoded words and blanks of
every kind."""

from __future__ import annotations

import itertools
import random

from abalone_pbm.protocol import masking

_PREFIX_PIECES = (">", " ", "> ", ">>", "\t", "  ")
_PIECES = (
    "signup", "sgnup", "SIGNUP", "ignup", "move", "resign", "fred", "Pw7xQ", "hello", "a1",
    " ", "  ", "\t", ">", "> ", "Re:", "AW: ", "Subject:", "wd:", "<p>", "</b>", "<b ",
    "-->", "<!--", "&nbsp;", "=E9", "=E9=0F", "=?utf-8?Q?", "?=", "?", "+IAs-", "+",
    "=", "-", "--", ",", ":", "\u00e2\u0080\u0083", "\u00a0", "\u2003", "\u200b", "\u00e9",
    "\x00", "\ufffd",
)


def _reference(line: str, fine: bool) -> bool:
    words = masking._first_words(masking._analysis(line, fine))
    return any(masking._command_like(word) for word in words)


def _check(lines: list[str]) -> None:
    """Both ways of judging (line by line for a text of few lines, by the rests for
    more) find the lines that reading each whole line finds."""
    for fine in (False, True):
        expected = {line for line in set(lines) if _reference(line, fine)}
        assert masking._lines_beginning_commands(lines, fine) == expected, (fine, lines)
        by_rests = masking._beginning_of_distinct(frozenset(lines), fine)
        assert by_rests == expected, (fine, lines)


def test_every_short_quote_before_short_rests() -> None:
    rests = ["", *(" ".join(pair) for pair in itertools.product(
        ("signup", "Re: move", "<p>resign", "=E9signup", "x", ">"), repeat=2))]
    for length in range(4):
        for prefix in itertools.product(_PREFIX_PIECES, repeat=length):
            _check(["".join(prefix) + rest for rest in rests])


def test_random_lines_are_judged_as_whole_lines() -> None:
    rng = random.Random(20261127)
    for _ in range(400):
        lines = []
        for _ in range(rng.randrange(1, 12)):
            prefix = "".join(rng.choice(_PREFIX_PIECES) for _ in range(rng.randrange(0, 6)))
            rest = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 8)))
            lines.append(prefix + rest)
        _check(lines)


def test_a_line_holding_a_line_feed_is_judged_whole() -> None:
    _check(["> x\n> signup fred Pw7xQ", "> hello", ""])


def test_a_quoted_board_at_every_depth_is_judged_once_a_rest() -> None:
    board = ["How to move: reply with your move", "  I o o o o o", "signup fred Pw7xQ", ""]
    lines = ["> " * depth + line for depth in range(60) for line in board]
    _check(lines)
    beginning = masking._lines_beginning_commands(lines, True)
    assert {line.rsplit("> ", 1)[-1] for line in beginning} == {
        line for line in board if _reference(line, True)}
