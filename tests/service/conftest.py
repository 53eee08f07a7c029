from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from argon2 import PasswordHasher

from abalone_pbm.service import passwords

from .harness import Harness, make_harness


@pytest.fixture
def harness(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    """The mail-path harness on an already migrated, empty database (SQLite and
    PostgreSQL), with cheap password hashing: still argon2, but the real parameters
    cost ~70 ms a password and the tests sign up hundreds of users."""
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))
    h = make_harness(migrated_db_url, tmp_path)
    try:
        yield h
    finally:
        h.database.dispose()
