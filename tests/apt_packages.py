"""Installing a Debian package for the tests (Chromium, Postfix) on a machine that lacks it.

Only as root with apt-get (a fresh CI machine); elsewhere the caller skips its tests
with the reason returned.  One lock file serialises every install of every test
process: the suite runs in parallel processes (pytest-xdist), and two apt-get runs at
once fail on dpkg's own lock.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

INSTALL_LOCK = Path(tempfile.gettempdir()) / "abalone-pbm-apt-install.lock"


def apt_install(package: str, present: Callable[[], bool], *, timeout: float = 900,
                debconf: str = "", recommends: bool = False) -> str | None:
    """Install ``package`` unless ``present()``; None when present after, else why not.

    ``debconf``: selections to preseed first (answers the package's install questions);
    ``recommends``: install the packages it recommends too (Chromium's fonts).
    """
    if present():
        return None
    if os.geteuid() != 0:
        return f"{package} is not installed and installing it needs root"
    if shutil.which("apt-get") is None:
        return f"{package} is not installed and there is no apt-get to install it"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    with open(INSTALL_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if present():  # another test process installed it while we waited
            return None
        if debconf:
            done = subprocess.run(["debconf-set-selections"], input=debconf, env=env,
                                  capture_output=True, text=True, timeout=60)
            if done.returncode != 0:
                return f"debconf-set-selections failed: {done.stderr.strip()}"
        # An apt index of a fresh machine may be missing or stale: update, then install.
        install = ["apt-get", "install", "-y", "-q", package]
        if not recommends:
            install.insert(-1, "--no-install-recommends")
        steps = (["apt-get", "update", "-q"], install)
        for step in steps:
            try:
                done = subprocess.run(step, env=env, capture_output=True, text=True,
                                      timeout=timeout)
            except subprocess.TimeoutExpired:
                return (f"{' '.join(step)} took longer than {timeout:.0f} s "
                        "(no network to the Debian mirror?)")
            if done.returncode != 0 and step[1] == "install":
                tail = " ".join((done.stderr or done.stdout).split()[-30:])
                return f"{' '.join(step)} failed: {tail}"
    return None if present() else f"apt-get installed {package} but it is still missing"
