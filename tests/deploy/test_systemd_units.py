"""deploy/'s systemd units: accepted by `systemd-analyze verify`, with the hardening and
the state directory the README relies on."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNITS = ["abalone-pbm.service", "abalone-pbm-backup.service", "abalone-pbm-backup.timer"]
INSTALLED = "/opt/abalone-pbm/.venv/bin/abalone-pbm"


def _service(name: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for line in (DEPLOY / name).read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), []).append(value.strip())
    return values


def test_server_unit_runs_hardened_as_its_own_user() -> None:
    unit = _service("abalone-pbm.service")
    for key, value in {
        "User": "abalone", "StateDirectory": "abalone-pbm", "ProtectSystem": "strict",
        "NoNewPrivileges": "true", "PrivateTmp": "true", "Restart": "on-failure",
        "Type": "notify", "WorkingDirectory": "/var/lib/abalone-pbm",
        "EnvironmentFile": "/etc/abalone-pbm/abalone-pbm.env",
    }.items():
        assert unit.get(key) == [value], key
    assert unit["ExecStart"] == [f"{INSTALLED} serve"]
    backup = _service("abalone-pbm-backup.service")
    assert backup["User"] == ["abalone"] and backup["ProtectSystem"] == ["strict"]


def test_systemd_analyze_verify_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd is not installed here (no systemd-analyze)")
    # verify checks that ExecStart's program exists: point it at this checkout's.
    program = Path(sys.executable).parent / "abalone-pbm"
    if not program.exists():
        pytest.skip(f"the console script {program} is not installed")
    for name in UNITS:
        text = (DEPLOY / name).read_text().replace(INSTALLED, str(program))
        (tmp_path / name).write_text(text)
    result = subprocess.run([analyze, "verify", *(str(tmp_path / n) for n in UNITS)],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    # It exits 0 on unknown keys and bad values too, only warning: no output is the test.
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if str(tmp_path) in line or "abalone-pbm" in line]
    assert result.returncode == 0 and not complaints, result.stdout + result.stderr


def test_server_unit_allows_the_open_files_the_listeners_caps_need() -> None:
    from abalone_pbm.config import Settings
    from abalone_pbm.mail.limits import needed_open_files

    unit = _service("abalone-pbm.service")
    assert len(unit.get("LimitNOFILE", [])) == 1, "the unit must set LimitNOFILE once"
    limit = int(unit["LimitNOFILE"][0])
    # The default caps with the policy service on (the deploy recipe's setup) fit.
    needed = needed_open_files(Settings(policy_listen="127.0.0.1:8026"))
    assert limit >= needed, (limit, needed)
