"""A password run together with the next command or a Subject prefix (``PWsignup``,
``Pw7Re:``) is also kept without it (``masking._secrets_of``); the words whose last
character cannot end a command are passed by without the search. What is kept is what
the search alone gives, on words built from command words, prefixes and characters
that case folding maps onto ASCII letters."""

from __future__ import annotations

import random

from abalone_pbm.protocol import masking

_PIECES = (
    "Pw7", "secret", "x", "9", "signup", "SIGNUP", "Move", "resign", "re", "Re:", "fwd:",
    "AW :", "sv:", "tr", ":", "s", "K", "\u212a", "\u017f", "\u0130", "é", "ß", "-", ".",
)


def _by_search(word: str) -> set[str]:
    kept = {word}
    glued = masking._GLUED_RE.search(word)
    if glued and glued.start() > 0:
        kept.add(word[: glued.start()])
    return kept


def test_kept_words_are_what_the_search_gives() -> None:
    chance = random.Random(20261127)
    words = ["".join(chance.choice(_PIECES) for _ in range(chance.randint(1, 4)))
             for _ in range(20_000)]
    words += [piece + command for piece in ("Pw7", "secretX", "ab")
              for command in sorted(masking._COMMAND_WORDS_ANY)]
    # Letters that case folding takes to the ASCII last letter of a command.
    words += ["Pw7" + command[:-1] + folded for command in sorted(masking._COMMAND_WORDS_ANY)
              for folded in ("\u017f", "\u212a") if command[-1] in "sk"]
    for word in words:
        line = f"signup fred {word}"
        span = (0, len(line) - len(word), len(line))
        assert masking._secrets_of([line], [span]) == _by_search(word), word


def test_a_password_glued_to_a_command_is_kept_both_ways() -> None:
    line = "signup fred Pw7xQsignup"
    assert masking._secrets_of([line], [(0, 12, len(line))]) == {"Pw7xQsignup", "Pw7xQ"}
    line = "signup fred Pw7xQ1"
    assert masking._secrets_of([line], [(0, 12, len(line))]) == {"Pw7xQ1"}
