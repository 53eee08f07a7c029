"""Recipient checks for Postfix: a policy service (Postfix's SMTPD_POLICY_README protocol).

Postfix asks, for each RCPT of a game address, whether to accept it; the answer comes
from the database, so a reply address is accepted the moment its board mail exists and
refused (5xx, during the SMTP session: no bounce later, no backscatter) when its token
is wrong. Nothing is cached on Postfix's side: while the server is down Postfix cannot
connect and uses the ``default_action`` of ``deploy/``'s recipe (a 4xx for reply
addresses, so the sender's MTA simply retries), and the first request after a restart
gets a fresh answer.

The protocol: the client sends ``name=value`` lines ending with an empty line; we answer
``action=<access(5) action>`` and an empty line; the connection stays open for the next
request. The service runs in its own threads (one per Postfix connection), so a slow
database never blocks the SMTP/LMTP listener.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import threading
from typing import TYPE_CHECKING, Callable

from ..config import Settings
from ..protocol import parse_reply_address

if TYPE_CHECKING:  # pragma: no cover
    from ..db.session import Database

__all__ = [
    "PolicyServer",
    "recipient_action",
    "make_token_check",
    "start_policy_server",
    "DUNNO",
]

log = logging.getLogger(__name__)

#: access(5): no objection; Postfix goes on with the site's own restrictions.
DUNNO = "DUNNO"
TEMPFAIL = "451 4.3.0 The game server cannot check this address now, please retry"
#: Longest request we read (Postfix's requests are well under 2 KiB).
MAX_REQUEST_BYTES = 64 * 1024

#: ``token_is_valid(board, token)``: whether a reply token belongs to that board.
TokenCheck = Callable[[int, str], bool]


def _bare(address: str) -> str:
    return address.strip().strip("<>").strip().lower()


def recipient_action(
    settings: Settings, recipient: str, size: int, token_is_valid: TokenCheck
) -> str:
    """The access(5) action for one recipient of a mail of ``size`` bytes (0: unknown).

    Addresses outside the game's domain are never ours to judge (``DUNNO``); in the
    game's domain only the game address and valid reply addresses are accepted.
    Raises when the database cannot answer (the caller answers 4xx then).
    """
    bare = _bare(recipient)
    local, at, domain = bare.rpartition("@")
    if not at or domain != settings.address_domain.lower():
        return DUNNO
    our_local = settings.address_local.lower()
    if local != our_local and not local.startswith(our_local + "+"):
        return "550 5.1.1 No such address here"
    if settings.max_message_bytes and size > settings.max_message_bytes:
        return (f"552 5.3.4 Message size exceeds the game's limit of "
                f"{settings.max_message_bytes} bytes")
    if local == our_local:
        return DUNNO
    found = parse_reply_address(local, settings.address_local)
    if found is None:
        return "550 5.1.1 Not a valid reply address of this game server"
    board, token = found
    if not token_is_valid(board, token):
        return (f"550 5.1.1 Unknown reply address for board {board}; reply to the latest "
                f"mail of the board, or use the abalone move command")
    return DUNNO


def make_token_check(database: Database) -> TokenCheck:
    """A token check that reads the seats of ``database`` (one short read transaction)."""
    from sqlalchemy import select

    from ..db.models import Game, Seat

    def token_is_valid(board: int, token: str) -> bool:
        with database.read() as session:
            found = session.execute(
                select(Seat.id).join(Game, Seat.game_id == Game.id)
                .where(Seat.reply_token == token, Game.number == board)
            ).first()
        return found is not None

    return token_is_valid


def parse_request(lines: list[bytes]) -> dict[str, str]:
    """The attributes of one request (``name=value`` lines; a bad line is skipped)."""
    attributes: dict[str, str] = {}
    for line in lines:
        name, equals, value = line.decode("utf-8", "replace").partition("=")
        if equals:
            attributes[name.strip()] = value.strip()
    return attributes


def answer(settings: Settings, attributes: dict[str, str], token_is_valid: TokenCheck) -> str:
    """The action for one request; a fault in the check is answered with a 4xx."""
    recipient = attributes.get("recipient", "")
    if not recipient:  # another protocol stage, or a null recipient: not ours to judge
        return DUNNO
    size_text = attributes.get("size", "0")
    size = int(size_text) if size_text.isdigit() else 0
    try:
        action = recipient_action(settings, recipient, size, token_is_valid)
    except Exception:
        log.exception("policy: could not check recipient %r", recipient)
        return TEMPFAIL
    if action != DUNNO:
        log.info("policy: %s from %r (client %s): %s", recipient, attributes.get("sender"),
                 attributes.get("client_address"), action)
    return action


class _PolicyHandler(socketserver.StreamRequestHandler):
    server: PolicyServer

    def handle(self) -> None:
        lines: list[bytes] = []
        received = 0
        while True:
            try:
                line = self.rfile.readline(MAX_REQUEST_BYTES)
            except OSError:  # Postfix closed an idle connection
                return
            if not line:
                return
            received += len(line)
            if received > MAX_REQUEST_BYTES:
                log.warning("policy: request too long from %s; closing", self.client_address)
                return
            line = line.rstrip(b"\r\n")
            if line:
                lines.append(line)
                continue
            action = answer(self.server.settings, parse_request(lines),
                            self.server.token_is_valid)
            lines, received = [], 0
            try:
                self.wfile.write(f"action={action}\n\n".encode())
                self.wfile.flush()
            except OSError:
                return


class PolicyServer(socketserver.ThreadingTCPServer):
    """The policy service; ``start()`` serves in a thread, ``stop()`` ends it."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, settings: Settings, token_is_valid: TokenCheck,
                 host: str, port: int) -> None:
        self.settings = settings
        self.token_is_valid = token_is_valid
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.address_family = family
        super().__init__((host, port), _PolicyHandler)
        self._thread: threading.Thread | None = None

    @property
    def host_port(self) -> tuple[str, int]:
        host, port = self.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.5},
            name="abalone-pbm-policy", daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None


def start_policy_server(settings: Settings, database: Database) -> PolicyServer:
    """Serve recipient checks on ``settings.policy_listen`` (raises OSError if busy)."""
    assert settings.policy_listen is not None
    host, _, port = settings.policy_listen.rpartition(":")
    server = PolicyServer(settings, make_token_check(database), host.strip("[]"), int(port))
    server.start()
    return server
