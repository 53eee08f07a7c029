"""The package type-checks: mypy over all of it, with ``--strict`` on the rules core
(the ``[tool.mypy]`` overrides in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_no_errors_in_the_package(tmp_path: Path) -> None:
    # A cache of our own: the checkout stays as it was and no stale cache hides an error.
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "abalone_pbm"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
