"""One-click unsubscribe over HTTP (RFC 8058), answered by ``serve``.

The listener (``ABALONE_PBM_HTTP_LISTEN``, off by default) sits behind the admin's
HTTPS reverse proxy, which serves it at ``ABALONE_PBM_PUBLIC_URL``; subscribed mail
then names ``<public_url>/unsubscribe/<token>`` in ``List-Unsubscribe`` beside the
token address, with ``List-Unsubscribe-Post: List-Unsubscribe=One-Click``.

* ``POST /unsubscribe/<token>`` with the body ``List-Unsubscribe=One-Click`` (form
  encoded or multipart, as RFC 8058 allows) stops what the token names (idempotent:
  the second time changes nothing) and answers 200 with a short page.
* ``GET /unsubscribe/<token>`` only shows a page with a button that makes that POST:
  link scanners and previews fetch every link of a mail, and must not unsubscribe.
* A forged or outdated token is answered 404, anything else 404 or 405.

Every client is a stranger: at most ``http_max_connections`` connections (a thread
each), ``http_max_connections_per_client`` from one client (the proxy is one client:
keep the two close), each closed ``http_request_timeout`` seconds after it was
accepted whatever it is doing; a request line and headers of at most
``MAX_HEADER_BYTES``, a body of at most ``MAX_BODY_BYTES``; one request a connection.
Refused connections are logged once per ``refused_log_interval`` with their count.
"""

from __future__ import annotations

import html
import logging
import re
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from .config import Settings
from .mail.limits import CappedThreadingServer, ConnectionCaps, ConnectionCounter, RefusalLog
from .service.unsubscribe import apply, describe, token_user

if TYPE_CHECKING:  # pragma: no cover
    from .db.session import Database

__all__ = ["MAX_BODY_BYTES", "MAX_HEADER_BYTES", "UnsubscribeServer",
           "start_http_listener"]

log = logging.getLogger(__name__)

#: Most bytes of a request body (RFC 8058's is 26 bytes, or a small multipart form).
MAX_BODY_BYTES = 4096
#: Most bytes of the request line and headers together.
MAX_HEADER_BYTES = 16384
_PATH = re.compile(r"/unsubscribe/([a-z0-9.]{1,80})/?")
_MULTIPART_ONE_CLICK = re.compile(
    rb'name="?List-Unsubscribe"?\r?\n(?:[^\r\n]+\r?\n)*\r?\nOne-Click\r?\n')


class _Request(BaseHTTPRequestHandler):
    server: UnsubscribeServer
    protocol_version = "HTTP/1.0"  # one request a connection
    server_version = "abalone-pbm"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        # The whole connection's deadline, however slowly its bytes come.
        self._deadline = threading.Timer(self.server.settings.http_request_timeout,
                                         self._expire)
        self._deadline.daemon = True
        self._deadline.start()

    def finish(self) -> None:
        self._deadline.cancel()
        try:
            super().finish()
        except OSError:
            pass

    def _expire(self) -> None:
        self.server.record_refusal("closed {count} slow connection{s}",
                                   "not done within the request timeout")
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def handle_one_request(self) -> None:
        # The request line and headers within their bound (http.server allows 64 KiB a
        # line and 100 lines).
        self.rfile = _BoundedReader(self.rfile, MAX_HEADER_BYTES)  # type: ignore[assignment]
        super().handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http %s: " + format, self.client_address[0], *args)

    # -- answers ----------------------------------------------------------------------

    def do_GET(self) -> None:
        token = self._token()
        if token is None:
            return
        what = self.server.look_up(token)
        if what is None:
            self._page(HTTPStatus.NOT_FOUND, "Not a valid unsubscribe link",
                       "<p>This unsubscribe link is not valid (it may have been cut or "
                       "changed on the way).  Every subscribed mail names its own.</p>")
            return
        self._page(HTTPStatus.OK, "Unsubscribe",
                   f"<p>Stop this: {html.escape(what.userid)} {html.escape(describe(what))}?"
                   "</p><form method=\"post\"><input type=\"hidden\" name=\"List-Unsubscribe\""
                   " value=\"One-Click\"><button type=\"submit\">Unsubscribe</button></form>")

    def do_POST(self) -> None:
        token = self._token()
        if token is None:
            return
        body = self._body()
        if body is None:
            return
        if not _is_one_click(self.headers.get("Content-Type", ""), body):
            self._page(HTTPStatus.BAD_REQUEST, "Not understood",
                       "<p>An unsubscribe request carries List-Unsubscribe=One-Click.</p>")
            return
        what = self.server.unsubscribe(token)
        if what is None:
            self._page(HTTPStatus.NOT_FOUND, "Not a valid unsubscribe link",
                       "<p>This unsubscribe link is not valid; nothing was changed.</p>")
            return
        self._page(HTTPStatus.OK, "Unsubscribed",
                   f"<p>Done: {html.escape(what.userid)} {html.escape(describe(what))}."
                   "</p>")

    def do_HEAD(self) -> None:
        self._page(HTTPStatus.METHOD_NOT_ALLOWED, "Not allowed", "")

    def _token(self) -> str | None:
        found = _PATH.fullmatch(self.path.split("?", 1)[0])
        if found is None:
            self._page(HTTPStatus.NOT_FOUND, "Not found", "<p>Nothing here.</p>")
            return None
        return found.group(1)

    def _body(self) -> bytes | None:
        length_text = self.headers.get("Content-Length", "")
        if not length_text.isdigit():
            self._page(HTTPStatus.LENGTH_REQUIRED, "Length required", "")
            return None
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            self._page(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "Too large", "")
            return None
        body = self.rfile.read(length) if length else b""
        if len(body) != length:
            self.close_connection = True
            return None
        return body

    def _page(self, status: HTTPStatus, title: str, content: str) -> None:
        page = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
                f"{html.escape(title)}</title><meta name=\"robots\" content=\"noindex\">"
                f"</head><body><h1>{html.escape(title)}</h1>{content}</body></html>\n"
                ).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(page)
        except OSError:
            pass
        self.close_connection = True


class _BoundedReader:
    """A request's reader that ends (reads as closed) after ``limit`` bytes of request
    line and headers; the body is read through ``read``, bounded by the caller."""

    def __init__(self, raw: Any, limit: int) -> None:
        self._raw = raw
        self._left = limit

    def readline(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        wanted = self._left if size < 0 else min(size, self._left)
        line: bytes = self._raw.readline(wanted)
        self._left -= len(line)
        return line

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._raw.read(size)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _is_one_click(content_type: str, body: bytes) -> bool:
    """Whether ``body`` says ``List-Unsubscribe=One-Click`` (RFC 8058 §3.1)."""
    if content_type.lower().startswith("multipart/form-data"):
        return _MULTIPART_ONE_CLICK.search(body) is not None
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=16)
    except (UnicodeDecodeError, ValueError):
        return False
    return fields.get("List-Unsubscribe") == ["One-Click"]


class UnsubscribeServer(CappedThreadingServer):
    """The HTTP listener; ``start()`` serves in a thread, ``stop()`` ends it."""

    request_queue_size = 128
    thread_name = "abalone-pbm-http"

    def __init__(self, settings: Settings, database: Database, host: str, port: int,
                 *, caps: ConnectionCaps | None = None) -> None:
        self.settings = settings
        self.database = database
        super().__init__(host, port, _Request, ConnectionCounter(caps or ConnectionCaps(
            settings.http_max_connections, settings.http_max_connections_per_client)),
            RefusalLog("HTTP listener", settings.refused_log_interval))

    def look_up(self, token: str) -> Any:
        with self.database.read() as session:
            return token_user(session, self.settings, token)

    def unsubscribe(self, token: str) -> Any:
        """Stop what ``token`` names (None: not a valid token, nothing done)."""
        with self.database.write() as session:
            what = token_user(session, self.settings, token)
            if what is not None:
                apply(session, what)
        return what

def start_http_listener(settings: Settings, database: Database) -> UnsubscribeServer:
    """Serve one-click unsubscribe on ``settings.http_listen`` (raises OSError if busy)."""
    assert settings.http_listen is not None
    host, _, port = settings.http_listen.rpartition(":")
    server = UnsubscribeServer(settings, database, host.strip("[]"), int(port))
    server.start()
    return server
