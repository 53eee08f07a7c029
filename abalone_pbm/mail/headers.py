"""Reading incoming mail so that no header can make the reader fail.

``parse_incoming`` parses stored bytes with ``SAFE_POLICY``: the standard library's
modern policy, except that every header is decoded defensively when it is read. A
header the standard parser cannot make sense of (it raises on some malformed address
and parameter lists) is read as plain text instead; a value whose decoded form holds
line feeds or other control characters (``=?utf-8?q?a=0Ab?=``), or bytes that are not
UTF-8, is cleaned. So ``message["Subject"]``, ``message.get_all("From")`` and friends
always give one line of valid Unicode, whatever the sender wrote, and the values can be
put into an answer's headers, a log line or a column without further thought.
"""

from __future__ import annotations

import email
from email.message import EmailMessage
from email.policy import EmailPolicy
from typing import Any

from .validation import has_unsafe_characters, one_line

__all__ = ["SafePolicy", "SAFE_POLICY", "parse_incoming", "header_text"]


class SafePolicy(EmailPolicy):
    """``email.policy.default`` whose header reads never raise and never return control
    characters or invalid Unicode (see the module text)."""

    def header_fetch_parse(self, name: str, value: Any) -> Any:
        try:
            header = super().header_fetch_parse(name, value)
            text = str(header)
        except Exception:  # a malformed header the standard parser chokes on
            return self._rebuilt(name, str(value))
        if has_unsafe_characters(text):
            return self._rebuilt(name, text)
        return header

    def _rebuilt(self, name: str, text: str) -> Any:
        """The header made again from cleaned text; empty when even that fails."""
        cleaned = one_line(text, limit=None)
        for candidate in (cleaned, ""):
            try:
                header = self.header_factory(name, candidate)
                if not has_unsafe_characters(str(header)):
                    return header
            except Exception:
                continue
        return ""


#: The policy every incoming mail is read with.
SAFE_POLICY = SafePolicy()


def parse_incoming(raw: bytes) -> EmailMessage:
    """The stored bytes as an EmailMessage read with ``SAFE_POLICY``."""
    message = email.message_from_bytes(raw, policy=SAFE_POLICY)
    assert isinstance(message, EmailMessage)
    return message


def header_text(message: EmailMessage, name: str) -> str:
    """The first ``name`` header as clean one-line text (``""`` when absent or broken)."""
    try:
        value = message.get(name)
    except Exception:
        return ""
    return "" if value is None else one_line(str(value))

