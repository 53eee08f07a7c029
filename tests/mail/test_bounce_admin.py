"""`abalone-pbm bounces` and `abalone-pbm status` as an admin runs them: the bouncing
addresses listed, one cleared, and status warning while an address is no longer mailed."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from abalone_pbm.config import Settings
from abalone_pbm.db.session import Database
from abalone_pbm.service import bounce_scores


def _run(url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABALONE_PBM_")}
    env.update(ABALONE_PBM_DATABASE_URL=url, ABALONE_PBM_ADDRESS="abalone@example.org")
    return subprocess.run([sys.executable, "-m", "abalone_pbm", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120)


def test_list_clear_and_status(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    database = Database(url)
    database.ensure_schema()
    settings = Settings(database_url=url, bounce_threshold=2)
    now = datetime.now(timezone.utc)
    with database.write() as session:
        for day in (2, 1):
            bounce_scores.record_failure(session, settings, "dead@players.test",
                                         "5.1.1 (550 5.1.1 user unknown)",
                                         now - timedelta(days=day))
        bounce_scores.record_failure(session, settings, "shaky@players.test",
                                     "5.2.2 (552 mailbox full)", now)
    database.dispose()

    status = _run(url, tmp_path, "status", "--no-listener")
    assert status.returncode == 1, status.stdout + status.stderr
    assert "1 address(es) no longer mailed: their mail bounces" in status.stdout
    assert "bounces:" in status.stdout and "1 more with bounces" in status.stdout

    listed = _run(url, tmp_path, "bounces")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:3] == ["ADDRESS", "USERS", "SCORE"]
    assert "dead@players.test" in lines[1] and "no longer mailed" in lines[1]
    assert "shaky@players.test" in lines[2] and "1 of 5" in lines[2]
    assert "user unknown" in lines[1]

    cleared = _run(url, tmp_path, "bounces", "clear", "DEAD@players.test")
    assert cleared.returncode == 0 and "was no longer mailed" in cleared.stdout
    again = _run(url, tmp_path, "bounces", "clear", "dead@players.test")
    assert again.returncode == 1 and "has no bounces" in again.stderr
    status = _run(url, tmp_path, "status", "--no-listener")
    assert "no longer mailed: their mail bounces" not in status.stdout
