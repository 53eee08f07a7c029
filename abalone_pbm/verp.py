"""Bounce addresses (VERP): every outgoing mail's envelope sender is an address of its own
under the game address's plus-addressing, ``abalone+bounce.<token>@pbm.example.org``.

A delivery report goes to the envelope sender, so a report that arrives at such an
address names the one mail (and so the one recipient) that failed without anything of
it being parsed; GNU Mailman does the same with its per-member ``-bounces+`` addresses.
The token is 80 random bits in lower-case base32 (some mail systems change the case of
local parts): it is stored with the outbox row (``OutboxMail.sender``), which is how a
report is tied to its mail, and a token that no row holds is refused at RCPT by the
policy service and the listener (a forged bounce cannot name an address). The Postfix
recipe's ``abalone+…`` line already routes these addresses to the server.
"""

from __future__ import annotations

import base64
import re
import secrets

__all__ = ["BOUNCE_WORD", "bounce_address", "bounce_token", "canonical_bounce_address",
           "TOKEN_LENGTH"]

#: The word after the ``+`` that marks a bounce address (no reply address starts so:
#: theirs is a board number).
BOUNCE_WORD = "bounce"
#: Characters of a token: 80 bits of base32.
TOKEN_LENGTH = 16
_TOKEN = re.compile(rf"[a-z2-7]{{{TOKEN_LENGTH}}}")


def bounce_address(our_address: str) -> str:
    """A fresh bounce address under ``our_address`` (``abalone@host`` →
    ``abalone+bounce.<token>@host``); the address as it is when it is not one."""
    local, at, domain = our_address.strip().rpartition("@")
    if not at or not local or not domain:
        return our_address
    token = base64.b32encode(secrets.token_bytes(10)).decode("ascii").lower()
    return canonical_bounce_address(token, our_address)


def bounce_token(address: str, our_address: str) -> str | None:
    """The token of a bounce address under ``our_address`` (any case), or None when
    ``address`` is not one (the game address, a reply address, anything else)."""
    bare = address.strip().strip("<>").strip().lower()
    ours = our_address.strip().lower()
    local, at, domain = bare.rpartition("@")
    our_local, _, our_domain = ours.rpartition("@")
    if not at or domain != our_domain:
        return None
    prefix = f"{our_local.split('+', 1)[0]}+{BOUNCE_WORD}."
    if not local.startswith(prefix):
        return None
    token = local[len(prefix):]
    return token if _TOKEN.fullmatch(token) else None


def canonical_bounce_address(token: str, our_address: str) -> str:
    """The bounce address of ``token`` as the outbox stores it (``bounce_address``'s
    form), to find its row whatever case the report's envelope arrived in."""
    local, _, domain = our_address.strip().rpartition("@")
    return f"{local.split('+', 1)[0]}+{BOUNCE_WORD}.{token}@{domain}"
