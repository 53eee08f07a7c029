from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from .harness import Harness, make_harness


@pytest.fixture
def harness(db_url: str, tmp_path: Path) -> Iterator[Harness]:
    h = make_harness(db_url, tmp_path)
    try:
        yield h
    finally:
        h.database.dispose()
