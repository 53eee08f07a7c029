"""The second reading's blanking of punctuation words (``_punctuation_blanked``) gives
what one ``_blanked(_PUNCTUATION_WORD_RE, ...)`` pass gives, one-character words at C
speed: on every short line of a small alphabet that has blanks, punctuation, letters,
digits and non-ASCII letters and blanks."""

from __future__ import annotations

import itertools
import random

from abalone_pbm.protocol import masking

_ALPHABET = " \t>-=a1.\u00e9\u00a0\u2003,<"


def _reference(text: str) -> str:
    return masking._blanked(masking._PUNCTUATION_WORD_RE, text)


def test_every_short_line_is_blanked_as_by_one_pass() -> None:
    for length in range(5):
        for letters in itertools.product(_ALPHABET, repeat=length):
            text = "".join(letters)
            assert masking._punctuation_blanked(text) == _reference(text), repr(text)


def test_long_random_lines_are_blanked_as_by_one_pass() -> None:
    rng = random.Random(20261127)
    for _ in range(3000):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(5, 60)))
        assert masking._punctuation_blanked(text) == _reference(text), repr(text)


def test_a_deep_quote_keeps_its_words_in_place() -> None:
    line = "> " * 200 + ">> -- signup fred Pw7x =="
    blanked = masking._punctuation_blanked(line)
    assert len(blanked) == len(line)
    assert blanked.split() == ["signup", "fred", "Pw7x"]
    assert blanked.index("signup") == line.index("signup")
