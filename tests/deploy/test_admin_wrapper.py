"""deploy/abalone-pbm, the admin's command: the service's settings, directory and user."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

WRAPPER = Path(__file__).resolve().parents[2] / "deploy" / "abalone-pbm"


def test_runs_with_the_service_settings_as_its_user(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("switching to the service's user needs root")
    home = tmp_path / "home"
    home.mkdir()
    tmp_path.chmod(0o755)
    shutil.chown(home, user="nobody")
    env_file = tmp_path / "abalone-pbm.env"
    env_file.write_text("ABALONE_PBM_ADDRESS=abalone@pbm.example.org\n"
                        "ABALONE_PBM_LISTEN=127.0.0.1:8025\n")
    result = subprocess.run(
        ["sh", str(WRAPPER), "sh", "-c", "id -un; pwd; echo $ABALONE_PBM_ADDRESS"],
        env={**os.environ, "ABALONE_PBM_ENV_FILE": str(env_file),
             "ABALONE_PBM_PROGRAM": "/usr/bin/env", "ABALONE_PBM_USER": "nobody",
             "ABALONE_PBM_HOME": str(home)},
        capture_output=True, text=True, timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["nobody", str(home), "abalone@pbm.example.org"]
