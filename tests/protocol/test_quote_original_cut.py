"""``quote_original`` splits only the lines it quotes and counts the others, and
``_unreadable`` searches its patterns one at a time: both give what splitting the
whole body and one search of the whole pattern gave, on random bodies of every line
end, blank lines, escapes, controls and commands, cut at every length."""

from __future__ import annotations

import random

from abalone_pbm.protocol import masking

_PIECES = ("\r\n", "\n", "\r", " ", "", "\t", "signup fred Pw7xQ", "c3-c5", "> o o o",
           "=E9=80", "=?utf-8?Q?", "\ufffd", "\x01", "hello", "=", "\u00e2\u0080\u0083",
           "\u2003")


def _reference_quote(subject: str, body: str, max_lines: int) -> str:
    """quote_original as it read every line of the body before cutting them."""
    subject_line = f"Subject: {subject.strip()}"
    body_lines = body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    if not any(line.strip() for line in body_lines):
        body_lines = []
    cut = len(body_lines) - max_lines
    body_lines = body_lines[:max_lines]
    masked = masking._mask_lines([subject_line, *body_lines])
    masked = [masking._UNREADABLE_NOTE if _reference_unreadable(line) else line
              for line in masked]
    if masked[0] == masking._UNREADABLE_NOTE:
        masked[0] = f"Subject: {masking._UNREADABLE_NOTE}"
    lines = masked[:1]
    if body_lines:
        lines += ["", *masked[1:]]
        if cut > 0:
            lines.append(f"[... {cut} more line{'s' if cut != 1 else ''} not quoted]")
    return "\n".join(f"> {line}".rstrip() if line.strip() else ">" for line in lines)


def _reference_unreadable(line: str) -> bool:
    return bool(masking._UNREADABLE_RE.search(line)
                or (not line.isascii() and masking._LONG_MOJIBAKE_RE.search(line)))


def test_a_quote_is_cut_as_when_every_line_was_split() -> None:
    rng = random.Random(1127)
    for _ in range(1500):
        body = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 30)))
        for max_lines in (0, 1, 2, 3, 5, 200):
            assert masking.quote_original("Re: x", body, max_lines=max_lines) == \
                _reference_quote("Re: x", body, max_lines), (body, max_lines)


def test_a_long_body_is_cut_with_its_count() -> None:
    body = "c3-c5\r\n" + "> o o o\n" * 300 + "last\r"
    quoted = masking.quote_original("Re: Board", body, max_lines=200)
    assert quoted == _reference_quote("Re: Board", body, 200)
    assert quoted.endswith("[... 102 more lines not quoted]")


def test_unreadable_is_the_one_pattern_search() -> None:
    rng = random.Random(25)
    for _ in range(5000):
        line = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 8)))
        assert masking._unreadable(line) == _reference_unreadable(line), repr(line)
