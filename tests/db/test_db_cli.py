"""`abalone-pbm db upgrade` and `db current`, run as the admin runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from abalone_pbm.cli import main
from abalone_pbm.db.session import Database

#: The newest migration, whatever it is called.
HEAD = Database("sqlite://").head()


def run(*args: str, cwd: Path, url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABALONE_PBM_")}
    if url is not None:
        env["ABALONE_PBM_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "abalone_pbm", "db", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
    )


def test_upgrade_and_current_in_a_subprocess(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state' / 'abalone.sqlite3'}"
    first = run("upgrade", cwd=tmp_path, url=url)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"database {url} ")
    assert f"upgraded from empty to revision {HEAD} (head)" in first.stdout
    assert (tmp_path / "state" / "abalone.sqlite3").is_file()

    current = run("current", cwd=tmp_path, url=url)
    assert current.returncode == 0, current.stderr
    assert current.stdout.strip() == (
        f"database {url} (file {tmp_path / 'state' / 'abalone.sqlite3'}) "
        f"is at revision {HEAD} (head)"
    )


def test_the_default_database_is_under_the_working_directory(tmp_path: Path) -> None:
    result = run("upgrade", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("database sqlite:///var/abalone-pbm.sqlite3 ")
    assert (tmp_path / "var" / "abalone-pbm.sqlite3").is_file()


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for key in list(os.environ):
        if key.startswith("ABALONE_PBM_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_current_before_upgrade_creates_nothing(
    clean_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "current"]) == 0
    assert "does not exist yet" in capsys.readouterr().out
    assert not (clean_environment / "var").exists()


def test_config_file_before_or_after_the_action(
    clean_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = clean_environment / "abalone.toml"
    database = clean_environment / "other.sqlite3"
    config.write_text(f'database_url = "sqlite:///{database}"\n')
    assert main(["db", "upgrade", "--config", str(config)]) == 0
    assert f"upgraded from empty to revision {HEAD} (head)" in capsys.readouterr().out
    assert main(["db", "--config", str(config), "upgrade"]) == 0
    assert f"is at revision {HEAD} (head); nothing to do" in capsys.readouterr().out
    assert main(["db", "--config", str(config), "downgrade", "base"]) == 0
    assert f"downgraded from revision {HEAD} (head) to empty" in capsys.readouterr().out
    assert main(["db", "current", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert str(database) in out and "is empty (no schema yet)" in out
    assert "run `abalone-pbm db upgrade`" in out


def test_bad_settings_are_reported_without_a_traceback(
    clean_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "current", "--config", str(clean_environment / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("abalone-pbm db current: ") and "Traceback" not in err
