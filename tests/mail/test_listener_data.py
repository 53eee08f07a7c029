"""The listener reads a DATA in a few large pieces (``listener.read_data``), and what
it takes and answers is what aiosmtpd's own line-by-line DATA takes and answers: the
same bytes stored, the same refusals, whatever the lines and however the client's
bytes are cut into packets. Both servers run live on free ports, side by side."""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Iterator

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session

from abalone_pbm.mail.listener import IntakeController

SIZE_LIMIT = 4000


class Keeper:
    """A DATA handler keeping the bytes it is given."""

    def __init__(self) -> None:
        self.kept: list[bytes] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        assert isinstance(envelope.original_content, bytes)
        self.kept.append(envelope.original_content)
        return "250 2.0.0 kept"


class AiosmtpdItself(IntakeController):
    """The same controller serving aiosmtpd's own session (its DATA read line by line)."""

    def factory(self) -> SMTP:
        return SMTP(self.handler, **self.SMTP_kwargs)


@pytest.fixture
def servers() -> Iterator[list[tuple[IntakeController, Keeper]]]:
    started = []
    for kind in (IntakeController, AiosmtpdItself):
        keeper = Keeper()
        controller = kind(keeper, hostname="127.0.0.1", port=0, data_size_limit=SIZE_LIMIT,
                          server_hostname="localhost")
        controller.start()
        started.append((controller, keeper))
    yield started
    for controller, _ in started:
        controller.stop()


def _reply(connection: socket.socket, wanted: int = 1) -> list[bytes]:
    """The next ``wanted`` complete replies (a multiline one counts once)."""
    data = b""
    replies: list[bytes] = []
    deadline = time.monotonic() + 10
    while len(replies) < wanted:
        assert time.monotonic() < deadline, data
        data += connection.recv(65536)
        while b"\r\n" in data:
            line, data = data.split(b"\r\n", 1)
            if line[3:4] != b"-":
                replies.append(line)
    return replies


def _send(port: int, data: bytes, rng: random.Random) -> bytes:
    """Send one transaction with ``data`` (the DATA's bytes, end line included) cut at
    random places; the answer to the DATA."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        _reply(connection)
        connection.sendall(b"EHLO client.test\r\n")
        _reply(connection)
        connection.sendall(b"MAIL FROM:<fred@example.org>\r\nRCPT TO:<abalone@localhost>\r\n"
                           b"DATA\r\n")
        _reply(connection, 3)
        start = 0
        while start < len(data):
            end = start + rng.choice([1, 2, 3, 7, 100, 1003, 5000, 70000])
            connection.sendall(data[start:end])
            start = end
            if rng.random() < 0.2:
                time.sleep(0.002)  # (a packet of its own)
        [answer] = _reply(connection)
        connection.sendall(b"QUIT\r\n")
        return answer


def _datas(rng: random.Random) -> Iterator[bytes]:
    # (Each line as a client sends it: one beginning with a dot has one more.)
    lines = [b"", b"..", b".x", b"x.", b"end.", b"bare\nlf", b"cr\ralone", b"\n.", b". ",
             b"...", b"Subject: move", b"c3-c5,d4", b"=2E", b"x" * 60]
    long_lines = [b"a" * 997, b"a" * 998, b"a" * 999, b"b" * 1000, b"c" * 1001, b"d" * 1003,
                  b"e" * 2500]
    yield b".\r\n"  # no data at all
    yield b"..\r\n.\r\n"
    yield b"x\r\n.\r\n"
    yield b"x\n.\r\n.\r\n"  # a line feed alone ends no line: the line is "x\n."
    for _ in range(100):
        body = b"".join(rng.choice(long_lines if rng.random() < 0.04 else lines) + b"\r\n"
                        for _ in range(rng.randint(0, 12)))
        yield body + b".\r\n"
    # Around the size limit, with and without long lines.
    for size in (SIZE_LIMIT - 3, SIZE_LIMIT - 2, SIZE_LIMIT, SIZE_LIMIT + 1, SIZE_LIMIT + 500):
        yield b"y" * 60 + b"\r\n" + b"z" * (size - 64) + b"\r\n.\r\n"
        yield (b"w" * 40 + b"\r\n") * (size // 42) + b"v" * 1200 + b"\r\n.\r\n"


def test_the_same_data_is_taken_and_the_same_refusals_given(
        servers: list[tuple[IntakeController, Keeper]]) -> None:
    rng = random.Random(20261127)
    (ours, our_keeper), (theirs, their_keeper) = servers
    refused = kept = 0
    for data in _datas(rng):
        seed = rng.random()
        answer = _send(ours.port, data, random.Random(seed))
        expected = _send(theirs.port, data, random.Random(seed))
        assert answer == expected, data[:80]
        assert our_keeper.kept == their_keeper.kept, data[:80]
        refused += not answer.startswith(b"250")
        kept += answer.startswith(b"250")
    assert refused >= 5 and kept >= 30  # both kinds of answer were compared


def test_a_reply_quoting_a_board_is_read_in_few_pieces() -> None:
    """Some 600 lines of a reply cost a few dozen reads, not one a line."""
    import asyncio

    from abalone_pbm.mail.listener import read_data

    lines = [f"> line {n} of a quoted board" + ("." if n % 10 == 0 else "")
             for n in range(600)]
    data = ("\r\n".join(lines) + "\r\n.\r\n").encode()

    class Counting(asyncio.StreamReader):
        calls = 0

        async def readuntil(self, separator: bytes = b"\n") -> bytes:
            Counting.calls += 1
            return await super().readuntil(separator)

    async def read() -> bytes:
        reader = Counting(limit=1001)
        reader.feed_data(data)
        reader.feed_eof()
        content, refusal = await read_data(reader, 10 ** 6, 1001)
        assert refusal is None
        return content

    assert asyncio.run(read()) == data[:-3]
    assert Counting.calls < 100


def test_the_header_block_parses_to_the_same_headers_as_the_whole_mail() -> None:
    """``intake.header_block`` cuts a mail after its first empty line, however its lines
    end: the headers (and their defects) are those of the whole mail."""
    from email.parser import BytesHeaderParser
    from email.policy import compat32

    from abalone_pbm.mail.intake import header_block

    rng = random.Random(7)
    atoms = [b"A: b", b"\r\n", b"\n", b"\r", b" cont", b"\tx", b"no colon", b"B:", b": v",
             b"\xff", b"From x", b"Subject: move"]
    cut = 0
    for _ in range(3000):
        raw = b"".join(rng.choice(atoms) for _ in range(rng.randint(0, 16)))
        whole = BytesHeaderParser(policy=compat32).parsebytes(raw)
        block = header_block(raw)
        head = BytesHeaderParser(policy=compat32).parsebytes(block)
        assert head.items() == whole.items(), raw
        assert [type(d) for d in head.defects] == [type(d) for d in whole.defects], raw
        cut += len(block) < len(raw)
    assert cut > 500  # (most mails were cut: the comparison is of two readings)
    assert header_block(b"To: a\r\n\r\n" + b"x\r\n" * 1000) == b"To: a\r\n\r\n"
