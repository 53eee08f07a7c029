"""The way out, through a running `abalone-pbm serve`, a real SMTP client, a real relay
sink and real HTTP: an observer stops a board by mail to the token address named in
List-Unsubscribe, and another by the one-click POST (RFC 8058) to serve's HTTP listener;
a GET only shows the button; a forged token changes nothing."""

from __future__ import annotations

import http.client
import re
import socket
import time
from collections.abc import Iterator

import pytest

from .conftest import LiveServer, RelaySink, free_port

FRED = "fred@example.org"
WILMA = "wilma@example.org"
BETTY = "betty@example.org"
BARNEY = "barney@example.org"
PUBLIC = "https://pbm.example.org/abalone"
_URIS = re.compile(r"<([^<>]+)>")


@pytest.fixture
def server_env(server_env: dict[str, str]) -> dict[str, str]:
    server_env.update(ABALONE_PBM_HTTP_LISTEN=f"127.0.0.1:{free_port()}",
                      ABALONE_PBM_PUBLIC_URL=PUBLIC, ABALONE_PBM_HTTP_REQUEST_TIMEOUT="3")
    return server_env


@pytest.fixture
def http_port(live_server: LiveServer) -> Iterator[int]:
    port = int(live_server.env["ABALONE_PBM_HTTP_LISTEN"].rsplit(":", 1)[1])
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            assert time.monotonic() < deadline, "the HTTP listener did not start"
            time.sleep(0.1)
    yield port


def _request(port: int, method: str, path: str, body: bytes | None = None,
             content_type: str = "application/x-www-form-urlencoded") -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Content-Type": content_type} if body is not None else {}
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


def _set_up(server: LiveServer) -> None:
    for userid, address in (("fred", FRED), ("wilma", WILMA), ("betty", BETTY),
                            ("barney", BARNEY)):
        server.send(address, f"signup {userid} {userid}-pw1")
        server.mailbox.wait_for(address, rf"^Abalone signup {userid}")
    server.send(FRED, "abalone challenge fred wilma")
    server.mailbox.wait_for(WILMA, r"^New Abalone Board 101 fred$")
    for userid, address in (("betty", BETTY), ("barney", BARNEY)):
        server.send(address, f"abalone subscribe 101 {userid} {userid}-pw1")
        server.mailbox.wait_for(address, r"^Abalone Board 101 fred$")


def _observer_mail(sink: RelaySink, server: LiveServer, address: str, move: str,
                   mover: str) -> tuple[str, str]:
    """The mailto address and the https URL of the List-Unsubscribe of the board mail
    that ``address`` gets for ``move``."""
    before = len(server.mailbox.all_to(address))
    server.send(f"{mover}@example.org", f"abalone move 101 {mover} {mover}-pw1 {move}")
    deadline = time.monotonic() + 20
    while len(server.mailbox.all_to(address)) == before:
        assert time.monotonic() < deadline, "no board mail for the observer"
        time.sleep(0.05)
    mail = server.mailbox.all_to(address)[-1]
    assert str(mail["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
    mailto, url = _URIS.findall(str(mail["List-Unsubscribe"]))
    assert mailto.startswith("mailto:abalone+unsub.") and url.startswith(PUBLIC + "/unsubscribe/")
    text = mail.get_body(("plain",)).get_content()
    assert "To stop it" in text and url in " ".join(text.split())
    return mailto.removeprefix("mailto:").split("?")[0], url


def test_observers_unsubscribe_by_mail_and_by_one_click(
        live_server: LiveServer, relay: tuple[RelaySink, int], http_port: int) -> None:
    server, (sink, _) = live_server, relay
    _set_up(server)
    betty_address, _ = _observer_mail(sink, server, BETTY, "c3-c5,d4", "fred")
    _, barney_url = _observer_mail(sink, server, BARNEY, "g7-g5,f6", "wilma")

    # betty: one mail to the token address, no password.
    server.send(BETTY, "unsubscribe", to=betty_address)
    done = server.mailbox.wait_for(BETTY, r"^Abalone unsubscribe$")
    assert "betty no longer watches board 101" in done.get_body(("plain",)).get_content()

    # barney: a link scanner's GET changes nothing; the one-click POST does.
    path = barney_url.removeprefix(PUBLIC)
    status, page = _request(http_port, "GET", path)
    assert status == 200 and 'method="post"' in page and "barney watches" not in page
    assert _request(http_port, "POST", path, b"List-Unsubscribe=Something")[0] == 400
    forged = path[:-1] + ("a" if path[-1] != "a" else "b")
    assert _request(http_port, "POST", forged, b"List-Unsubscribe=One-Click")[0] == 404
    assert _request(http_port, "GET", "/other")[0] == 404
    status, page = _request(http_port, "POST", path, b"List-Unsubscribe=One-Click")
    assert status == 200 and "barney no longer watches board 101" in page
    # Again (a mail program retries): the same answer, nothing else changes.
    assert _request(http_port, "POST", path, b"List-Unsubscribe=One-Click")[0] == 200
    # An oversized body is refused before it is read.
    assert _request(http_port, "POST", path, b"x" * 10_000)[0] == 413

    # The next move reaches the players and neither observer.
    before = {a: len(server.mailbox.all_to(a)) for a in (BETTY, BARNEY)}
    server.send(FRED, "abalone move 101 fred fred-pw1 b2-b4,c3")
    server.mailbox.wait_for(WILMA, r"^Abalone Board 101 wilma$")
    time.sleep(1.0)
    assert {a: len(server.mailbox.all_to(a)) for a in (BETTY, BARNEY)} == before


def test_a_slow_client_is_cut_off_at_the_request_timeout(
        live_server: LiveServer, http_port: int) -> None:
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", http_port), timeout=10) as client:
        client.sendall(b"POST /unsubscribe/x HTTP/1.0\r\n")
        try:
            while True:
                client.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.5)
                if time.monotonic() - started > 8:
                    break
        except OSError:
            pass
        ended = time.monotonic() - started
    assert ended < 6  # cut at the 3 s deadline, not when the client chose

