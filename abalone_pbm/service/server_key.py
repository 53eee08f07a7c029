"""The server's own key: signs unsubscribe tokens and names mail threads.

Every ``serve`` process of one database must use the same key, and it must outlive
restarts (a token in a mail sent last year still works). It is ``ABALONE_PBM_SECRET``
when the admin sets one; otherwise it is made once, from the operating system's random
source, and kept in the ``counters`` table as ``KEY_PARTS`` rows of 31 random bits each
(the table's values are 32-bit integers), so no migration is needed. Two processes
that make it at the same moment collide on the rows' unique names: the loser's rows
are rolled back and it reads the winner's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
from datetime import datetime, timezone
from weakref import WeakKeyDictionary

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..config import Settings
from ..db.models import ServerCounter
from ..db.session import Database

__all__ = ["KEY_PARTS", "KEY_ROW_PREFIX", "ensure_server_key", "server_key", "signature"]

#: Rows of 31 random bits: 248 bits of key.
KEY_PARTS = 8
KEY_ROW_PREFIX = "server_key."
_PART_BITS = 31

_known: WeakKeyDictionary[Engine, bytes] = WeakKeyDictionary()
_lock = threading.Lock()


#: ``session.info`` mark of a session that made the key rows: they are not committed
#: yet, so the key is not remembered for the engine (the transaction may roll back).
_MADE_HERE = "abalone_pbm.server_key_made"


def server_key(session: Session, settings: Settings) -> bytes:
    """The key (32 bytes): from the setting, else the database's (made on first use,
    in a savepoint of ``session``); remembered per database engine once committed."""
    if settings.secret:
        return hashlib.sha256(b"abalone-pbm server key\0" + settings.secret.encode()).digest()
    engine = session.get_bind()
    with _lock:
        known = _known.get(engine) if isinstance(engine, Engine) else None
    if known is not None:
        return known
    parts = _read_parts(session)
    if parts is None:
        parts = _make_parts(session)
        session.info[_MADE_HERE] = True
    key = hashlib.sha256(b"abalone-pbm server key\0"
                         + b"".join(p.to_bytes(4, "big") for p in parts)).digest()
    if isinstance(engine, Engine) and not session.info.get(_MADE_HERE):
        with _lock:
            _known[engine] = key
    return key


def ensure_server_key(database: Database, settings: Settings) -> None:
    """Make the key now, in a transaction of its own (``serve`` at start: every later
    reader finds it committed)."""
    if settings.secret:
        return
    with database.write() as session:
        server_key(session, settings)


def _names() -> list[str]:
    return [f"{KEY_ROW_PREFIX}{index}" for index in range(KEY_PARTS)]


def _read_parts(session: Session) -> list[int] | None:
    rows = dict(session.execute(
        select(ServerCounter.name, ServerCounter.value).where(ServerCounter.name.in_(_names()))
    ).all())
    if len(rows) != KEY_PARTS:
        return None
    return [int(rows[name]) for name in _names()]


def _make_parts(session: Session) -> list[int]:
    now = datetime.now(timezone.utc)
    parts = [secrets.randbits(_PART_BITS) for _ in range(KEY_PARTS)]
    savepoint = session.begin_nested()
    try:
        session.add_all(ServerCounter(name=name, value=value, updated_at=now)
                        for name, value in zip(_names(), parts))
        session.flush()
        savepoint.commit()
        return parts
    except IntegrityError:
        # Another process made the key first (its rows are committed: PostgreSQL
        # makes this insert wait for that commit, then fail on the names).
        savepoint.rollback()
        found = _read_parts(session)
        if found is None:
            raise
        return found


def signature(key: bytes, *fields: str | int, length: int = 16) -> str:
    """``length`` lower-case base32 characters (5 bits each) of the HMAC-SHA256 of
    ``fields`` under ``key``: letters and digits only, as mail systems that change the
    case of an address's local part leave them comparable."""
    message = "\0".join(str(f) for f in fields).encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:length]
