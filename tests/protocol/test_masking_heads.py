"""What a mail program or system puts before a command hides no password from the masking
(rule 1 of ``protocol.masking``: a command may begin after a head of reply and forward
prefixes in any language and script, and tags).

Mail programs write "Re:" in the user's language ("Odp:" in Polish Outlook, "Vá:" in
Hungarian, "ΑΠ:" in Greek, "回复：" in Chinese, "YNT:" in Turkish), and mail systems put
tags first ("[EXTERNAL]", "[EXT]", "[Possible Spam]"). The server reads no command behind
a head it does not know, and answers with the Subject quoted: every password must be
masked there as it is in the line alone. ``Odp: sigup Secr3tPw`` (a password-shaped
word after a slip, the userid left out) and ``[EXTERNAL] RE: signnup bar hunter``
showed their password before; so did ``Vá: abalone singup bar Secr3tPw``.
"""

from __future__ import annotations

import time

import pytest

from abalone_pbm.protocol.masking import (
    PASSWORD_MASK, UseridCheck, mask_and_find_passwords, mask_passwords, quote_original,
)
from tests.protocol.misspelt_commands import misspelt_commands, misspelt_without_userid

#: Heads as mail programs and mail systems write them, one or several.
HEADS = (
    "Odp:", "Vá:", "ΑΠ:", "回复：", "答复:", "回覆:", "YNT:", "R:", "Rif:", "Atb:", "Ats:",
    "RES:", "Odg:", "Sv:", "השב:", "رد:", "TR :", "[EXTERNAL]", "[EXT]", "[Possible Spam]",
    "[EXTERNAL] RE:", "Re: [EXT] AW:", "Odp: Odp:", "回复： Re:",
)
_KNOWN_USERS: UseridCheck = {"bar", "wilma"}.__contains__
#: Every how many misspelt lines one is read behind every head.
_EVERY = 120


def _lines() -> list[tuple[str, tuple[str, ...]]]:
    """A sample of the misspelt commands with their passwords: with the userid, and
    without it (``liit Secr3tPw``), and a command written right."""
    return [("signup bar Secr3tPw1", ("Secr3tPw1",)),
            *((line, secrets) for line, secrets, _, _ in misspelt_commands()[::_EVERY]),
            *((line, secrets) for line, secrets, _ in misspelt_without_userid()[::_EVERY])]


@pytest.mark.parametrize("head", HEADS)
def test_a_head_hides_no_password(head: str) -> None:
    """Behind each head every line is masked and quoted exactly as it is alone (the
    head itself unchanged); read as the server reads it (its users known), every
    password is hidden and found. (Without a userid check a few lines keep a password
    in a userid's place, alone as behind a head: tests/protocol/test_masking_slips.py.)"""
    shown: list[str] = []
    for line, secrets in _lines():
        for is_userid in (_KNOWN_USERS, None):
            alone, found_alone = mask_and_find_passwords(line, is_userid)
            masked, found = mask_and_find_passwords(f"{head} {line}", is_userid)
            if masked != f"{head} {alone}" or found != found_alone:
                shown.append(f"{masked!r} {sorted(found)}, alone {alone!r} "
                             f"{sorted(found_alone)}")
            if is_userid is not None and (any(secret in masked for secret in secrets)
                                          or not set(secrets) <= found):
                shown.append(f"{masked!r} found {sorted(found)}")
        quoted = quote_original(f"{head} {line}", "")
        if quoted != quote_original(line, "").replace("Subject: ", f"Subject: {head} ", 1):
            shown.append(f"quoted: {quoted!r}")
    assert not shown, f"{len(shown)} shown, e.g.\n" + "\n".join(shown[:20])


def test_a_head_in_the_body_and_in_a_quoted_line_hides_the_password() -> None:
    for text in ("[EXTERNAL] signnup bar hunter\nthanks\n", "> Odp: sigup Secr3tPw\n",
                 "hello\n\nVá: abalone singup bar Secr3tPw\n"):
        masked = mask_passwords(text, _KNOWN_USERS)
        assert "hunter" not in masked and "Secr3tPw" not in masked, masked
        assert PASSWORD_MASK in masked


@pytest.mark.parametrize("prose", [
    "Odp: see you at the club tomorrow",
    "[EXTERNAL] all fred wants is a draw",
    "Vá: signup for the tournament now",
    "回复：see you at the club tomorrow",
    "Note: move your marbles to the centre",
    "[Possible Spam] Rif: fred played well, nice game",
    "Re: [EXT] help with the rules please, I am lost",
])
def test_prose_behind_a_head_is_not_masked(prose: str) -> None:
    assert mask_passwords(prose, _KNOWN_USERS) == prose
    assert mask_passwords(prose) == prose


def test_a_long_head_costs_time_linear_in_its_length() -> None:
    """A line of nothing but heads (a stranger's Subject) is read in one pass: four
    times the heads cost about four times the time, not sixteen."""
    def seconds(count: int) -> float:
        text = "Odp: [EXT] " * count + "signnup bar hunter"
        started = time.process_time()
        masked = mask_passwords(text)
        spent = time.process_time() - started
        assert "hunter" not in masked
        return spent
    seconds(500)  # (warm)
    small = min(seconds(4_000) for _ in range(3))
    large = min(seconds(16_000) for _ in range(3))
    assert large < 8 * small + 0.01, (small, large)
