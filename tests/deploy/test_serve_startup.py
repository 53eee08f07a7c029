"""`abalone-pbm serve` on a port that is taken: one line naming the setting, exit 2."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from abalone_pbm.mail.listener import check_bindable


@pytest.mark.parametrize("variable", ["ABALONE_PBM_LISTEN", "ABALONE_PBM_POLICY_LISTEN"])
def test_busy_port_is_one_line_and_exit_2(tmp_path: Path, variable: str) -> None:
    with socket.socket() as busy, socket.socket() as spare:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        spare.bind(("127.0.0.1", 0))
        taken = f"127.0.0.1:{busy.getsockname()[1]}"
        free = f"127.0.0.1:{spare.getsockname()[1]}"
        spare.close()
        # aiosmtpd's listener would say so only after its ready timeout: a long one
        # here, so that the answer must come without waiting for it.
        env = dict(os.environ, ABALONE_PBM_LISTEN=free, ABALONE_PBM_POLICY_LISTEN=free,
                   AIOSMTPD_CONTROLLER_TIMEOUT="300")
        env[variable] = taken
        if variable == "ABALONE_PBM_LISTEN":
            env.pop("ABALONE_PBM_POLICY_LISTEN")
        result = subprocess.run(
            [sys.executable, "-m", "abalone_pbm", "serve"], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=120,
        )
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "INFO" not in line]
    assert errors == [f"abalone-pbm serve: cannot listen on {taken} ({variable}): address "
                      "already in use (is another abalone-pbm serve running?)"], result.stderr
    assert "Traceback" not in result.stderr


def test_a_busy_address_is_found_before_the_listener_starts() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(OSError) as refused:
            check_bindable("127.0.0.1", port)
        assert refused.value.errno == errno.EADDRINUSE
        # The same port on an address it does not hold, and any free port, are fine.
        check_bindable("127.0.0.2", port)
        check_bindable("127.0.0.1", 0)
    check_bindable("127.0.0.1", port)  # let go: free again
    check_bindable("localhost", port)  # every address of the name (IPv6 if enabled)
