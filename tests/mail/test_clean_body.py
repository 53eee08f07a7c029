"""``decoding.clean_body`` is ``clean_text(text, keep_newlines=True)``, also for the
ASCII text it cleans at C speed."""

from __future__ import annotations

import random

from abalone_pbm.mail.decoding import clean_body
from abalone_pbm.mail.validation import clean_text


def test_clean_body_is_clean_text_with_line_ends_kept() -> None:
    rng = random.Random(11)
    pool = ["a", " ", "\t", "\r", "\n", "\r\n", "\x00", "\x0b", "\x0c", "\x1b", "\x7f", "\x85",
            "\u200b", "\ufeff", "\u2028", "é", "\udc80", "c3-c5", "> "]
    for _ in range(20000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 12)))
        assert clean_body(text) == clean_text(text, keep_newlines=True), repr(text)
    body = "c3-c5\r\n\r\n> It is fred's move.\t\r\n" * 5000
    assert clean_body(body) == clean_text(body, keep_newlines=True)
