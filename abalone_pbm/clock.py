"""Time as a dependency, so that tests move it forward instead of sleeping, and a site
on trial can run as if it were later (``ABALONE_PBM_CLOCK_OFFSET``)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class OffsetClock:
    """The system's time moved forward by a fixed offset: every deadline (reminders,
    forfeits, a tournament's sign-up and rounds) falls that much sooner in real time."""

    def __init__(self, offset: timedelta) -> None:
        self.offset = offset

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + self.offset


_OFFSET = re.compile(r"(?:(\d{1,5})d)?(?:(\d{1,6})h)?(?:(\d{1,7})m)?(?:(\d{1,9})s)?")


def parse_offset(text: str) -> timedelta:
    """``"8d"``, ``"1d12h"``, ``"90m"``, ``"45s"`` (or ``""``/``"0"``: none) as a
    timedelta; ValueError for anything else, negative offsets included."""
    compact = text.strip().lower().replace(" ", "")
    if compact in ("", "0"):
        return timedelta(0)
    match = _OFFSET.fullmatch(compact)
    if match is None or not any(match.groups()):
        raise ValueError(f"not a duration such as 8d, 1d12h, 90m or 45s: {text!r}")
    days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def site_clock(offset: str) -> Clock:
    """The clock every process of a site runs on: the system's, moved by ``offset``."""
    moved = parse_offset(offset)
    return OffsetClock(moved) if moved else SystemClock()


class ManualClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now


def as_utc(moment: datetime) -> datetime:
    """SQLite hands datetimes back without a zone; they were stored in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
