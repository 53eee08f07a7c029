"""Encoded words in headers (RFC 2047): decoded as the standard library decodes them,
in pieces, so that a long header costs time linear in its length (``decode_header``
alone is quadratic in the number of words)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from abalone_pbm.mail.validation import _decode_piece, decode_encoded_words
from abalone_pbm.protocol.registry import COMMANDS, nearest_command

_WORDS = st.sampled_from([
    "=?utf-8?q?ab?=", "=?utf-8?b?w6k=?=", "plain", "=?iso-8859-1?q?caf=E9?=", "x",
    "=?bogus?q?a?=", "=?utf-8?q??=", "=?", "?=", "=?utf-8?q?a_b?=", "=?UTF-8?B?w6nDqQ==?=",
    "signup", "fred",
])
_BLANKS = st.sampled_from([" ", "  ", "\t", " \t"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_WORDS, _BLANKS), min_size=1, max_size=16),
       st.integers(min_value=1, max_value=40))
def test_decoded_in_pieces_as_decode_header_decodes_the_whole(words, piece):
    text = "".join(word + blank for word, blank in words).strip()
    assert decode_encoded_words(text, piece=piece) == _decode_piece(text)


def test_a_long_subject_of_encoded_words_is_decoded_whole():
    text = " ".join(["=?utf-8?q?caf=C3=A9?="] * 20000)
    assert decode_encoded_words(text) == "café" * 20000
    mixed = " ".join(["=?utf-8?q?ab?= plain"] * 20000)
    assert decode_encoded_words(mixed) == " ".join(["ab plain"] * 20000)


def test_a_mistyped_command_of_one_endless_word_gets_the_help_usage():
    assert nearest_command(["x" * 200_000, "fred"]) == COMMANDS["help"].syntax
    assert nearest_command(["singup", "fred", "pw"]) == COMMANDS["signup"].syntax
