"""Fixtures of the mail tests; the helpers are in ``mail_helpers``.

The ``database`` fixture (SQLite and PostgreSQL) comes from ``tests/conftest.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from mail_helpers import OURS, Echo, Relay  # noqa: E402

from abalone_pbm.clock import ManualClock  # noqa: E402
from abalone_pbm.config import Settings  # noqa: E402


@pytest.fixture
def relay():
    sink = Relay().start()
    yield sink
    sink.stop()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def make_settings(database, tmp_path):
    def make(**overrides) -> Settings:
        values = dict(
            database_url=database.url,
            address=OURS,
            listen="127.0.0.1:0",
            maildir=str(tmp_path / "outgoing"),
        )
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
def echo() -> Echo:
    return Echo()
