"""Who holds an outbox lease, and whether that process is still alive.

A sender leases the outbox rows it is about to send (``outbox.lease_owner``,
``outbox.next_attempt_at``); another sender skips them until the lease runs out. A
sender that dies (kill -9, power cut) would leave its mails waiting for the whole
lease. So every sender names itself (``ProcessIdentity.owner``: host, pid, the
process's start time, and a random part) and keeps a heartbeat row in
``mail_senders``. A lease is honoured only while its owner is alive:

- a heartbeat older than ``STALE_AFTER`` means the owner is gone (any host);
- on the same host a sender sees at once that a predecessor's process is gone (no
  such pid, or a pid reused by a process that started at another time) and removes
  its row, so a restarted server sends its predecessor's mails within seconds.

A live sender's rows are never taken (its heartbeat is fresh and its process
exists), so no mail is sent twice by two live senders.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import delete, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session

from .models import MailSender

__all__ = [
    "HEARTBEAT_INTERVAL",
    "STALE_AFTER",
    "ProcessIdentity",
    "beat",
    "forget",
    "bury_dead_neighbours",
]

log = logging.getLogger(__name__)

#: Seconds between two heartbeats of a running sender.
HEARTBEAT_INTERVAL = 5.0
#: A sender whose heartbeat is older than this is taken to be dead.
STALE_AFTER = timedelta(seconds=30)


def _process_start(pid: int) -> str | None:
    """When the process ``pid`` started, in clock ticks since boot (Linux), or None.

    Together with the pid this names one process run: a reused pid has another start.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) may hold blanks and parentheses; fields follow the last ")".
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class ProcessIdentity:
    """This sender: host, process, the process's start, and a part of its own."""

    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    start: str = field(default_factory=lambda: _process_start(os.getpid()) or "0")
    nonce: str = field(default_factory=lambda: secrets.token_hex(4))

    @property
    def owner(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}:{self.nonce}"[:200]

    @staticmethod
    def is_gone(owner: str, host: str) -> bool:
        """True when ``owner`` names a process on ``host`` (this host) that has ended."""
        parts = owner.rsplit(":", 3)
        if len(parts) != 4 or parts[0] != host:
            return False
        try:
            pid = int(parts[1])
        except ValueError:
            return True
        if not _pid_exists(pid):
            return True
        start = _process_start(pid)
        # Same pid, other start time: the pid was reused by a later process.
        return start is not None and parts[2] != "0" and start != parts[2]


def beat(session: Session, me: ProcessIdentity, now: datetime, started_at: datetime) -> None:
    """Record that ``me`` is alive at ``now`` (inserting its row the first time)."""
    changed = cast(CursorResult[Any], session.execute(
        update(MailSender).where(MailSender.owner == me.owner).values(heartbeat_at=now)
    )).rowcount
    if not changed:
        session.add(MailSender(owner=me.owner, host=me.host[:255], pid=me.pid,
                               started_at=started_at, heartbeat_at=now))
        session.flush()


def forget(session: Session, me: ProcessIdentity) -> None:
    """``me`` stops sending: its row goes, so any lease it still holds is free at once."""
    session.execute(delete(MailSender).where(MailSender.owner == me.owner))


def bury_dead_neighbours(session: Session, me: ProcessIdentity, now: datetime) -> list[str]:
    """Remove the rows of senders on this host whose process has ended, and of any
    sender silent for a day; returns the owners removed (their leases are now free)."""
    rows = session.execute(
        select(MailSender.owner, MailSender.host, MailSender.heartbeat_at)
    ).all()
    dead = [
        owner for owner, host, heartbeat in rows
        if owner != me.owner and (
            (host == me.host and ProcessIdentity.is_gone(owner, me.host))
            or heartbeat < now - timedelta(days=1)
        )
    ]
    if dead:
        session.execute(delete(MailSender).where(MailSender.owner.in_(dead)))
        log.warning("senders %s are gone; their leased mail is sent again now",
                    ", ".join(dead))
    return dead
