"""Sub-commands of the mail server (serve, process, db, send, tick, users, games).

Each server module adds its own sub-commands by appending a registrar here.
"""

from __future__ import annotations

import argparse
from typing import Callable

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

REGISTRARS: list[Registrar] = []
from .mail import cli as _mail_cli  # noqa: E402,F401  (serve, process, work, send)
from .db import cli as _db_cli  # noqa: E402,F401  (db upgrade, downgrade, current)
from . import admin_cli as _admin_cli  # noqa: E402,F401  (tick, users, games, mail)
