"""A real Postfix from Debian's packages, run as a private instance for one test module.

``install_postfix()`` installs the ``postfix`` package when it is missing (as root, with
debconf told "No configuration", so nothing of the machine's own mail set-up is
created or started) and says why not when it cannot. ``PostfixInstance`` is a site's
Postfix in a directory of its own: its own main.cf/master.cf, queue, mail spool and log,
its SMTP service on 127.0.0.1 at a free port, no chroot; the machine's /etc/postfix
and port 25 are never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from apt_packages import apt_install

DEBCONF_PRESEED = "postfix postfix/main_mailer_type select No configuration\n"
INSTALL_TIMEOUT = 240


class PostfixUnavailable(Exception):
    """Why a real Postfix cannot be had here (the tests skip with this reason)."""


def _run(argv: list[str], timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          check=False, **kwargs)  # type: ignore[call-overload]


def _postfix_present() -> bool:
    return bool(shutil.which("postfix", path="/usr/sbin:/usr/bin")) and Path(
        "/usr/lib/postfix/sbin/master").exists()


def install_postfix() -> None:
    """Postfix from Debian's packages; PostfixUnavailable with the reason when impossible."""
    why_not = apt_install("postfix", _postfix_present, timeout=INSTALL_TIMEOUT,
                          debconf=DEBCONF_PRESEED)
    if why_not:
        raise PostfixUnavailable(why_not)


class PostfixInstance:
    """A site's Postfix in ``root`` with SMTP on 127.0.0.1:``smtp_port``."""

    def __init__(self, root: Path, smtp_port: int, hostname: str = "mx.site.test") -> None:
        self.root = root
        self.config_dir = root / "etc"
        self.queue_dir = root / "queue"
        self.spool_dir = root / "spool"
        self.log_file = root / "maillog"
        self.smtp_port = smtp_port
        self.hostname = hostname

    def postconf(self, *args: str) -> str:
        result = _run(["postconf", "-c", str(self.config_dir), *args])
        if result.returncode != 0:
            raise RuntimeError(f"postconf {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout

    def create(self, settings: dict[str, str]) -> None:
        """main.cf with Debian's defaults plus ``settings``; master.cf from the package."""
        for directory in (self.config_dir, self.queue_dir, root_data := self.root / "data"):
            directory.mkdir(parents=True, exist_ok=True)
        # Postfix's daemons run as the user postfix: they must reach the queue.
        self.root.chmod(0o755)
        shutil.chown(root_data, user="postfix")
        self.spool_dir.mkdir(exist_ok=True)
        self.spool_dir.chmod(0o1777)  # mailbox delivery runs as the recipient
        shutil.copy("/usr/share/postfix/main.cf.debian", self.config_dir / "main.cf")
        master = Path("/usr/share/postfix/master.cf.dist")
        if not master.exists():
            master = Path("/etc/postfix/master.cf")
        shutil.copy(master, self.config_dir / "master.cf")
        shutil.copy("/usr/share/postfix/dynamicmaps.cf", self.config_dir / "dynamicmaps.cf")
        base = {
            "myhostname": self.hostname,
            "mydestination": "$myhostname, localhost",
            "inet_interfaces": "127.0.0.1",
            "inet_protocols": "ipv4",
            "mynetworks": "127.0.0.0/8",
            "queue_directory": str(self.queue_dir),
            "data_directory": str(root_data),
            "maillog_file": str(self.log_file),
            "maillog_file_prefixes": str(self.root),
            "mail_spool_directory": str(self.spool_dir),
            "alias_maps": "",
            "alias_database": "",
            "smtpd_relay_restrictions":
                "permit_mynetworks, permit_sasl_authenticated, defer_unauth_destination",
            # Test speed: retry deferred mail soon (the README flushes the queue instead).
            "queue_run_delay": "10s",
            "minimal_backoff_time": "10s",
            "maximal_backoff_time": "20s",
            "smtp_dns_support_level": "disabled",
            "lmtp_dns_support_level": "disabled",
        }
        base.update(settings)
        self.postconf("-e", *(f"{name} = {value}" for name, value in base.items()))
        # No chroot (it would need copies of /etc files), SMTP on our port only.
        self.postconf("-F", "*/*/chroot = n")
        self.postconf("-MX", "smtp/inet")
        self.postconf("-M", f"127.0.0.1:{self.smtp_port}/inet = "
                      f"127.0.0.1:{self.smtp_port} inet n - n - - smtpd")

    def command(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run(["postfix", "-c", str(self.config_dir), *args])

    def start(self) -> None:
        result = self.command("start")
        if result.returncode != 0:
            raise RuntimeError(f"postfix start failed: {result.stderr}{result.stdout}"
                               f"\n{self.log()}")
        deadline = time.monotonic() + 30
        import socket

        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.smtp_port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"postfix does not listen on {self.smtp_port}\n{self.log()}")

    def stop(self) -> None:
        self.command("stop")
        # master exits a moment after `postfix stop` returns
        pid_file = self.queue_dir / "pid" / "master.pid"
        deadline = time.monotonic() + 15
        while pid_file.exists() and time.monotonic() < deadline:
            try:
                os.kill(int(pid_file.read_text().split()[0]), 0)
            except (OSError, ValueError, IndexError):
                break
            time.sleep(0.2)

    def flush(self) -> None:
        _run(["postqueue", "-c", str(self.config_dir), "-f"])

    def queue(self) -> str:
        return _run(["postqueue", "-c", str(self.config_dir), "-p"]).stdout

    def sendmail(self, sender: str, raw: bytes) -> None:
        """Local submission (a cron job, a local user): never sees smtpd's restrictions."""
        result = subprocess.run(
            ["sendmail", "-C", str(self.config_dir), "-f", sender, "-t", "-i"],
            input=raw, capture_output=True, timeout=30, check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"sendmail failed: {result.stderr.decode(errors='replace')}")

    def log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except OSError:
            return "(no maillog)"
