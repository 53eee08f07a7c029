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

Its connections are capped like the listener's (``mail.limits``): at most
``policy_max_connections`` (so as many threads), ``policy_max_connections_per_client``
from one client; more are closed at once (the protocol has no greeting to refuse
with; Postfix then uses its ``default_action``). A connection waiting for a request
is closed after ``policy_idle_timeout``; a request once begun must be complete
within ``REQUEST_SECONDS``. Refusals and failed accepts are logged once per
``refused_log_interval`` with their counts.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import time
from typing import TYPE_CHECKING, Callable

from ..config import Settings
from ..protocol import parse_reply_address
from ..verp import bounce_token
from .limits import (
    LISTEN_BACKLOG,
    CappedThreadingServer,
    ConnectionCaps,
    ConnectionCounter,
    RefusalLog,
    client_key,
    listener_caps,
    needed_open_files,
)

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
#: Seconds from a request's first byte to its end (Postfix writes one in one go).
REQUEST_SECONDS = 10.0

#: ``token_is_valid(board, token)``: whether a reply token belongs to that board.
TokenCheck = Callable[[int, str], bool]
#: ``unsubscribe_is_valid(token)``: whether an unsubscribe address's token is genuine.
UnsubscribeCheck = Callable[[str], bool]
#: The plus-address tag of unsubscribe addresses (``service.unsubscribe.TAG``).
UNSUBSCRIBE_TAG = "unsub."
#: ``bounce_is_known(address)``: whether a bounce address (``verp``) is one of a
#: mail we sent (``service.bounces.make_bounce_check``).
BounceCheck = Callable[[str], bool]


def _bare(address: str) -> str:
    return address.strip().strip("<>").strip().lower()


def recipient_action(
    settings: Settings, recipient: str, size: int, token_is_valid: TokenCheck,
    unsubscribe_is_valid: UnsubscribeCheck = lambda token: False,
    bounce_is_known: BounceCheck = lambda address: False,
) -> str:
    """The access(5) action for one recipient of a mail of ``size`` bytes (0: unknown).

    Addresses outside the game's domain are never ours to judge (``DUNNO``); in the
    game's domain only the game address, valid reply and unsubscribe addresses and the
    bounce addresses of mails we sent are accepted (a forged bounce is refused).
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
    if local.startswith(our_local + "+" + UNSUBSCRIBE_TAG):
        # An unsubscribe address: its token is signed (service.unsubscribe).
        if unsubscribe_is_valid(local[len(our_local) + 1 + len(UNSUBSCRIBE_TAG):]):
            return DUNNO
        return "550 5.1.1 Not a valid unsubscribe address of this game server"
    if bounce_token(bare, settings.address) is not None:
        if bounce_is_known(bare):
            return DUNNO
        return "550 5.1.1 Unknown bounce address of this game server"
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


def answer(settings: Settings, attributes: dict[str, str], token_is_valid: TokenCheck,
           unsubscribe_is_valid: UnsubscribeCheck = lambda token: False,
           bounce_is_known: BounceCheck = lambda address: False) -> str:
    """The action for one request; a fault in the check is answered with a 4xx."""
    recipient = attributes.get("recipient", "")
    if not recipient:  # another protocol stage, or a null recipient: not ours to judge
        return DUNNO
    size_text = attributes.get("size", "0")
    size = int(size_text) if size_text.isdigit() else 0
    try:
        action = recipient_action(settings, recipient, size, token_is_valid,
                                  unsubscribe_is_valid, bounce_is_known)
    except Exception:
        log.exception("policy: could not check recipient %r", recipient)
        return TEMPFAIL
    if action != DUNNO:
        log.info("policy: %s from %r (client %s): %s", recipient, attributes.get("sender"),
                 attributes.get("client_address"), action)
    return action


class _PolicyHandler(socketserver.BaseRequestHandler):
    """One Postfix connection: requests answered in turn until it closes, idles out,
    or sends a request too long or too slowly."""

    server: PolicyServer
    request: socket.socket

    def handle(self) -> None:
        connection = self.request
        client = client_key(str(self.client_address[0]))
        lines: list[bytes] = []
        pending = bytearray()
        request_bytes = 0
        begun: float | None = None  # when the request being read began
        while True:
            newline = pending.find(b"\n")
            if newline >= 0:
                line = bytes(pending[:newline]).rstrip(b"\r")
                del pending[:newline + 1]
                if line:
                    lines.append(line)
                    continue
                action = answer(self.server.settings, parse_request(lines),
                                self.server.token_is_valid,
                                self.server.unsubscribe_is_valid,
                                self.server.bounce_is_known)
                try:
                    connection.sendall(f"action={action}\n\n".encode())
                except OSError:
                    return
                lines, request_bytes = [], len(pending)
                begun = time.monotonic() if pending else None
                continue
            if request_bytes > MAX_REQUEST_BYTES:
                self.server.record_refusal(f"closed {{count}} connection{{s}} from {client}",
                                           f"a request over {MAX_REQUEST_BYTES:,} bytes")
                return
            if begun is None:
                wait = self.server.idle_timeout
            else:
                wait = begun + REQUEST_SECONDS - time.monotonic()
                if wait <= 0:
                    self.server.record_refusal(
                        f"closed {{count}} connection{{s}} from {client}",
                        f"a request not complete within {REQUEST_SECONDS:g} s")
                    return
            try:
                connection.settimeout(wait)
                chunk = connection.recv(4096)
            except OSError:  # idle too long, or Postfix went away
                return
            if not chunk:
                return
            if begun is None:
                begun = time.monotonic()
            pending += chunk
            request_bytes += len(chunk)


class PolicyServer(CappedThreadingServer):
    """The policy service; ``start()`` serves in a thread, ``stop()`` ends it.

    One thread per connection, at most ``caps.total`` of them (default: the settings'
    caps, fitted to the open files limit)."""

    request_queue_size = LISTEN_BACKLOG
    thread_name = "abalone-pbm-policy"

    def __init__(self, settings: Settings, token_is_valid: TokenCheck,
                 host: str, port: int, *, caps: ConnectionCaps | None = None,
                 unsubscribe_is_valid: UnsubscribeCheck = lambda token: False,
                 bounce_is_known: BounceCheck = lambda address: False) -> None:
        self.settings = settings
        self.token_is_valid = token_is_valid
        self.unsubscribe_is_valid = unsubscribe_is_valid
        self.bounce_is_known = bounce_is_known
        self.idle_timeout = settings.policy_idle_timeout
        super().__init__(
            host, port, _PolicyHandler,
            ConnectionCounter(caps or listener_caps(settings, with_policy=True).policy),
            RefusalLog("policy service", settings.refused_log_interval))


def start_policy_server(settings: Settings, database: Database, *,
                        unsubscribe_is_valid: UnsubscribeCheck = lambda token: False,
                        bounce_is_known: BounceCheck = lambda address: False) -> PolicyServer:
    """Serve recipient checks on ``settings.policy_listen`` (raises OSError if busy).
    The unsubscribe and bounce address checks are the service's, given by ``serve``
    (this edge of the server reads only its own tables)."""
    assert settings.policy_listen is not None
    host, _, port = settings.policy_listen.rpartition(":")
    caps = listener_caps(settings, with_policy=True)
    wanted = ConnectionCaps(settings.policy_max_connections,
                            settings.policy_max_connections_per_client)
    if caps.policy != wanted:
        log.warning(
            "the open files limit (RLIMIT_NOFILE) is %d: the policy service holds at most "
            "%d connections, %d per client (not %d and %d); raise the limit to %d or more "
            "(LimitNOFILE= in the systemd unit) to keep the settings",
            caps.open_files_limit, caps.policy.total, caps.policy.per_client, wanted.total,
            wanted.per_client, needed_open_files(settings, with_policy=True),
        )
    server = PolicyServer(settings, make_token_check(database), host.strip("[]"), int(port),
                          caps=caps.policy, unsubscribe_is_valid=unsubscribe_is_valid,
                          bounce_is_known=bounce_is_known)
    log.info("policy service: at most %d connections, %d per client; idle ones closed "
             "after %g s", caps.policy.total, caps.policy.per_client,
             settings.policy_idle_timeout)
    server.start()
    return server
