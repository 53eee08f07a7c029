"""Secrets taken out of text that is shown or logged: database passwords and reply tokens.

- ``mask_database_url`` hides the password of a database URL wherever it sits: the
  user-info part (``postgresql://user:secret@host/db``), a query parameter
  (``?password=secret``, ``&password=``, also with the key percent-encoded as
  ``pass%77ord``), and a libpq key=value connection string (``host=db password=secret``
  or ``password = 'a b'``). It works on any text, so an error message that quotes a URL
  is masked as well as the URL itself.
- ``mask_reply_tokens`` hides the token of every reply address
  (``abalone+101.k3x9q7mf2a@host`` becomes ``abalone+101.****@host``): whoever reads the
  token can move for that player.
- ``mask_log_text`` does both; the log formatter runs every line through it.

Every function is one pass of regular expressions without backtracking over the text,
so its cost is linear in the text's length.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["MASK", "mask_database_url", "mask_reply_tokens", "mask_log_text",
           "is_secret_key"]

#: What a hidden secret is shown as (SQLAlchemy's own choice for URLs).
MASK = "***"

#: ``scheme://user:password@``: the password ends at the first ``@`` (SQLAlchemy's rule).
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@]*:)[^\s@]*@")
#: ``?key=value`` / ``&key=value`` / ``;key=value`` of a URL's query.
_QUERY = re.compile(r"(?P<head>[?&;](?P<key>[A-Za-z0-9_.%\-]+)=)(?P<value>[^&;#\s]*)")
#: ``key=value`` / ``key = 'quoted value'`` of a libpq connection string, also where a
#: message quotes the string (``'password=...'``).
_DSN = re.compile(
    r"(?P<head>(?:^|(?<=[\s'\"(\[,]))(?P<key>[A-Za-z0-9_%\-]+)\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'?|[^\s']\S*)"
)
#: A reply address's board and token: ``+101.k3x9q7mf2a`` (``protocol.reply``).
_REPLY_TOKEN = re.compile(r"(?P<head>\+\d{1,12}\.)[A-Za-z0-9]{1,64}(?![A-Za-z0-9])")


def is_secret_key(key: str) -> bool:
    """Whether a connection parameter named ``key`` holds a password (``password``,
    ``sslpassword``, ``pwd``...; any letter case, percent-encoding undone)."""
    name = unquote(key).lower().replace("-", "").replace("_", "")
    return "password" in name or name in ("pass", "passwd", "pwd")


def _masked_value(match: re.Match[str]) -> str:
    if not is_secret_key(match.group("key")):
        return match.group(0)
    return match.group("head") + MASK


def mask_database_url(text: str) -> str:
    """``text`` (a URL, a connection string, or a message quoting one) with every
    database password replaced by ``***``."""
    text = _USERINFO.sub(lambda m: m.group("head") + MASK + "@", text)
    text = _QUERY.sub(_masked_value, text)
    return _DSN.sub(_masked_value, text)


def mask_reply_tokens(text: str) -> str:
    """``text`` with the token of every reply address replaced by ``****``."""
    return _REPLY_TOKEN.sub(lambda m: m.group("head") + "****", text)


def mask_log_text(text: str) -> str:
    """A log line without database passwords or reply tokens."""
    return mask_reply_tokens(mask_database_url(text))
