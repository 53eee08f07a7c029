"""What masking finds in a text does not depend on the texts it read before: a command
line's reading is kept across calls with the lines after it that it read (a quoted
board's lines come back in every reply, their neighbours changed), and taken again
only where those lines are the same."""

from __future__ import annotations

import random

from abalone_pbm.protocol import masking
from tests.abuse.hostile_mail import USERIDS, command_line

_PROSE = ["", "> ", "How to move", "Reply with your move", "  c3-c5,d4", "=", "fred",
          "Secret1x", "on", "please", "> abalone", "wilma Pw7zQ", "-- ", ">"]


def _texts(rng: random.Random) -> list[str]:
    texts = []
    for _ in range(300):
        lines: list[str] = []
        for _ in range(rng.randint(1, 9)):
            if rng.random() < 0.45:
                line = command_line(rng)
                if rng.random() < 0.3:  # a command cut over lines
                    cut = rng.randint(1, max(1, len(line) - 1))
                    lines += [line[:cut], line[cut:]]
                    continue
                lines.append(line)
            else:
                lines.append(rng.choice(_PROSE) + " " + rng.choice(_PROSE))
        texts.append("\n".join(lines))
    return texts


def _readings(texts: list[str]) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    users = set(USERIDS[:3])

    def is_userid(word: str) -> bool:
        return word.lower() in users

    return [(masking.mask_passwords(text), frozenset(masking.find_passwords(text)),
             frozenset(masking.find_passwords(text, is_userid))) for text in texts]


def test_a_reading_is_the_same_with_or_without_the_readings_kept_before() -> None:
    rng = random.Random(25)
    texts = _texts(rng)
    masking._KNOWN_WINDOWS.clear()
    alone = []
    for text in texts:
        masking._KNOWN_WINDOWS.clear()
        alone += _readings([text])
    # Every text again, in another order, after all of them were read (and kept).
    _readings(texts)
    order = list(range(len(texts)))
    rng.shuffle(order)
    again = dict(zip(order, _readings([texts[n] for n in order])))
    assert [again[n] for n in range(len(texts))] == alone
    assert any(found for _, found, _ in alone)  # (texts with passwords were read)
    kept = sum(len(readings) for readings in masking._KNOWN_WINDOWS.values())
    assert kept > 100


def test_a_line_read_with_the_lines_after_it_is_not_taken_for_other_lines() -> None:
    """"abalone" alone on a line, the command in the next ones: kept with those."""
    masking._KNOWN_WINDOWS.clear()
    assert masking.find_passwords("abalone\n move 101 fred Secret9x c3-c5") == {"Secret9x"}
    assert masking.find_passwords("abalone\n move 101 fred Other8y c3-c5") == {"Other8y"}
    assert masking.find_passwords("abalone\nis a fine game") == set()
