"""Reading the site MTA's ``Authentication-Results`` header (RFC 8601).

Only a header whose authserv-id is the site's own is believed: anybody can write an
``Authentication-Results`` header into a mail, and the site's MTA (OpenDKIM, OpenDMARC,
policyd-spf) removes incoming ones that carry its own id and adds its verdict on top.
A ``pass`` counts only for the domain of the address the mail came from.
"""

from __future__ import annotations

import re
from email.message import Message

__all__ = ["authenticated_by"]

_COMMENT = re.compile(r"\([^()]*\)")
_RESULT = re.compile(r"^\s*(dmarc|dkim|spf)\s*=\s*([a-z]+)\b(.*)$", re.IGNORECASE | re.DOTALL)
_PROPERTY = re.compile(r"\b(header\.from|header\.d|header\.i|smtp\.mailfrom)\s*=\s*(\S+)",
                       re.IGNORECASE)


def _domain(value: str) -> str:
    return value.strip().strip("<>\"'").rsplit("@", 1)[-1].lower().rstrip(".")


def authenticated_by(message: Message, authserv_id: str, sender: str) -> str | None:
    """The method (``dmarc``, ``dkim``, ``spf``) for which the site MTA's topmost
    verdict is ``pass`` for the domain of ``sender``, or None."""
    wanted_id = authserv_id.strip().lower()
    sender_domain = _domain(sender)
    try:
        headers = [str(h) for h in message.get_all("Authentication-Results", []) or []]
    except Exception:  # a header the parser could not read is no verdict
        return None
    for header in headers:
        text = _COMMENT.sub(" ", " ".join(header.split()))
        parts = text.split(";")
        words = parts[0].split()
        if not words or words[0].lower() != wanted_id:
            continue
        for part in parts[1:]:
            found = _RESULT.match(part)
            if not found or found.group(2).lower() != "pass":
                continue
            domains = {_domain(v) for _, v in _PROPERTY.findall(found.group(3))}
            if not domains or sender_domain in domains:
                return found.group(1).lower()
        # Only the topmost verdict of our own MTA counts (it is the one it just added).
        return None
    return None
