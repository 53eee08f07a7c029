"""Odd and hostile mail for the intake fuzzers (tests/abuse, benchmarks/fuzz_intake.py).

``hostile_mail(rng)`` makes one delivery — envelope sender and the bytes — from a
``random.Random``: command mails with mangled subjects, headers of random bytes,
encoded words in known and unknown charsets (some hiding line feeds or NULs), 8-bit
headers, very long lines and fields, broken and deeply nested MIME, bodies of
thousands of commands, Message-IDs of any length and bytes, squatted and repeated
Message-IDs, internationalised and unusable addresses, and plain random bytes.

Every password a mail carries is one of ``PASSWORDS`` (unlike any ordinary word), so a
run can look for them in what the server wrote.
"""

from __future__ import annotations

import base64
import quopri
import random
from dataclasses import dataclass

#: Every password the fuzzed commands use: easy to find in logs and mails.
PASSWORDS = tuple(f"Pw{n}zQx{n * 7919 % 9973:04d}" for n in range(12))
USERIDS = ("fred", "wilma", "barney", "betty", "dino", "pebbles")
OURS = "abalone@localhost"

_CHARSETS = (
    "utf-8", "iso-8859-1", "koi8-r", "shift_jis", "gb2312", "windows-1252", "utf-16",
    "us-ascii", "x-bogus", "unknown-8bit", "utf-7", "", "iso-2022-jp", "ebcdic-cp-us",
)
_SENDERS = (
    "fred@example.org", "wilma@example.org", "Barney <barney@example.org>",
    "betty@example.org", "jörg@exämple.org", "δοκιμή@παράδειγμα.δοκιμή",
    "a\x01b@example.org", "\"quoted local\"@example.org", "x" * 70 + "@example.org",
    "y@" + ("d" * 60 + ".") * 5 + "org", "eve@example.org, mallory@example.org",
    "", "<>", "undisclosed-recipients:;", "MAILER-DAEMON@example.org",
    "caf\udcc3\udca9@example.org", "tab\tuser@example.org", "z" * 330 + "@example.org",
)
_ENVELOPES = (
    "fred@example.org", "wilma@example.org", "barney@example.org", "eve@example.org",
    "jörg@exämple.org", "", "x" * 64 + "@" + "e" * 63 + ".org", "z" * 300 + "@example.org",
)
_MOVES = ("c3-c5,d4", "a1b2c3-d4", "i5-h5", "c3c5", "resign", "propose", "undo", "accept")
_UNICODE_BLANKS = ("\u00a0", "\u2003", "\u3000", "\t", "  ", "\u200b", "\ufeff")


@dataclass
class Delivery:
    """One SMTP delivery: envelope sender, recipient and the exact bytes."""

    envelope_from: str
    recipient: str
    raw: bytes
    kind: str


def _word(rng: random.Random) -> str:
    return rng.choice(
        ["help", "signup", "abalone", "move", "show", "list", "multiple", "games", "board",
         "challenge", "password", "reset", "add", "change", "address", "delete",
         "message", "broadcast", "vacation", "all", "history", "ratings", "chat"]
    )


def command_line(rng: random.Random) -> str:
    """A command, often valid, sometimes mangled; passwords from PASSWORDS."""
    user, other = rng.choice(USERIDS), rng.choice(USERIDS)
    password = rng.choice(PASSWORDS)
    board = rng.choice(["101", "102", "0", "-1", "99999999999999999999999", "3000000000",
                        "1" * 400, "١٠١", "101#5", "board#99999999999"])
    lines = [
        f"signup {user} {password}",
        f"signup {user} {password} {rng.choice(_SENDERS)}",
        f"abalone move {board} {user} {password} {rng.choice(_MOVES)}",
        f"abalone move {board} {user} {password} {rng.choice(_MOVES)}#{rng.choice(['2', '9' * 30])}",
        f"abalone challenge {user} {other}",
        f"abalone challenge -players {rng.choice(['2', '3', '99999999999'])} {user} {other}",
        f"abalone show {board}",
        f"abalone showas {user} {password} {board}",
        f"change password {user} {password} {rng.choice(PASSWORDS)}",
        f"change address {user} {password} {rng.choice(_SENDERS)}",
        f"add {user} {password} {rng.choice(_SENDERS)}",
        f"password set {user} {rng.choice(['12345678', '9' * 50])} {password}",
        f"password reset {user}",
        f"message {user} {password} {other}",
        f"vacation {user} {password} {rng.choice(['on', 'off', 'maybe'])}",
        f"signoff {user} {password}",
        "help", "abalone help", "list", "abalone games", "abalone ratings",
        " ".join(_word(rng) for _ in range(rng.randint(1, 8))),
        f"{_word(rng)} {user} {password}",
        f"mvoe {board} {user} {password} c3-c5",
    ]
    line = rng.choice(lines)
    if rng.random() < 0.2:
        line = line.replace(" ", rng.choice(_UNICODE_BLANKS))
    if rng.random() < 0.1:
        line = rng.choice(["Re: ", "Fwd: ", "AW: ", "RE: re: "]) + line
    if rng.random() < 0.1:
        line = line.upper()
    return line


def _random_text(rng: random.Random, size: int) -> str:
    pools = [
        "abcdefghijklmnopqrstuvwxyz0123456789 ",
        "äöüßéèçñøåÆΩЖжあ漢字😀\u202e\u200f",
        "\x00\x01\x07\x08\x0b\x0c\x1b\x7f\x85\u2028\u2029\r\n\t",
        "<>@,;:\\\"()[]=?_.%",
    ]
    return "".join(rng.choice(rng.choice(pools)) for _ in range(size))


def _random_bytes(rng: random.Random, size: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(size))


def encoded_word(rng: random.Random, text: str) -> str:
    """``text`` as an RFC 2047 encoded word in some charset, correct or not."""
    charset = rng.choice(_CHARSETS)
    try:
        data = text.encode(charset or "utf-8")
    except (LookupError, UnicodeError):
        data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.5:
        payload = base64.b64encode(data).decode("ascii")
        if rng.random() < 0.1:
            payload = payload[:-1]  # broken padding
        return f"=?{charset}?B?{payload}?="
    payload = quopri.encodestring(data, header=True).decode("ascii").replace("\n", "")
    return f"=?{charset}?Q?{payload}?="


def header_value(rng: random.Random, text: str) -> bytes:
    """``text`` written into a header in one of many odd ways."""
    how = rng.randrange(8)
    if how == 0:
        return text.encode("utf-8", "surrogateescape")  # 8-bit header
    if how == 1:
        return encoded_word(rng, text).encode("ascii", "replace")
    if how == 2:  # encoded word hiding a line feed or NUL
        return encoded_word(rng, text + rng.choice(["\n", "\r\n", "\x00", "\n Bcc: x@y"])).encode(
            "ascii", "replace")
    if how == 3:
        return text.encode("latin-1", "replace")
    if how == 4:
        return _random_bytes(rng, rng.randint(0, 80))
    if how == 5:  # folded, with blank continuation lines
        return text.encode("utf-8", "replace").replace(b" ", b"\r\n ", 3)
    if how == 6:  # a very long header, folded (an unfolded line over 998 is refused)
        data = (text * rng.randint(50, 300)).encode("utf-8", "replace")[:20000]
        return b"\r\n ".join(data[n:n + 900] for n in range(0, len(data), 900))
    return text.encode("utf-8", "replace")


def message_id(rng: random.Random, serial: int) -> bytes | None:
    how = rng.randrange(10)
    if how == 0:
        return None
    if how == 1:
        return b"<" + b"m" * rng.choice([250, 300, 1000, 5000]) + b"@example.org>"
    if how == 2:
        return b"<caf\xe9\xff" + str(serial).encode() + b"@example.org>"
    if how == 3:
        return b"<shared-" + str(rng.randrange(5)).encode() + b"@example.org>"  # squatted
    if how == 4:
        return b""
    if how == 5:
        return encoded_word(rng, f"<id{serial}\n@x>").encode("ascii", "replace")
    return f"<fuzz.{serial}.{rng.getrandbits(40):x}@example.org>".encode()


def _body(rng: random.Random) -> tuple[bytes, bytes]:
    """(extra headers, body) for a random MIME structure."""
    how = rng.randrange(12)
    text = rng.choice(["", command_line(rng), _random_text(rng, rng.randint(0, 300))])
    if how == 0:  # thousands of commands
        lines = "\n".join(command_line(rng) for _ in range(rng.choice([50, 500, 3000])))
        return b"", lines.encode("utf-8", "replace")
    if how == 1:  # unknown / wrong charset
        charset = rng.choice(_CHARSETS).encode()
        return (b"Content-Type: text/plain; charset=" + charset + b"\r\n",
                text.encode("utf-8", "replace") + _random_bytes(rng, 30))
    if how == 2:  # broken base64
        return (b"Content-Transfer-Encoding: base64\r\n",
                base64.b64encode(text.encode("utf-8", "replace"))[:-3] + b"!!\r\n")
    if how == 3:  # broken quoted-printable
        return b"Content-Transfer-Encoding: quoted-printable\r\n", b"=ZZ=\r\n=E9=0" + text.encode(
            "utf-8", "replace")
    if how == 4:  # multipart without its closing boundary, or with a wrong one
        boundary = rng.choice([b"XyZ", b"", b"a" * 200, b"\xff\xfe"])
        return (
            b'Content-Type: multipart/alternative; boundary="' + boundary + b'"\r\n',
            b"--" + boundary + b"\r\nContent-Type: text/plain\r\n\r\n"
            + text.encode("utf-8", "replace")
            + b"\r\n--" + boundary + b"\r\nContent-Type: text/html\r\n\r\n<p>"
            + command_line(rng).encode("utf-8", "surrogateescape") + b"</p>\r\n" + rng.choice([b"", b"--" + boundary + b"--"]),
        )
    if how == 5:  # deeply nested multiparts
        depth = rng.choice([5, 50, 200])
        head = b"".join(
            b'--b%d\r\nContent-Type: multipart/mixed; boundary="b%d"\r\n\r\n' % (n, n + 1)
            for n in range(depth)
        )
        return (b'Content-Type: multipart/mixed; boundary="b0"\r\n',
                head + b"--b%d\r\nContent-Type: text/plain\r\n\r\nhelp\r\n" % depth)
    if how == 6:  # HTML only
        return (b"Content-Type: text/html; charset=utf-8\r\n",
                b"<html><body><script>x</script><p>" + text.encode("utf-8", "replace")
                + b"</p><!-- " + _random_bytes(rng, 20) + b"</body>")
    if how == 7:  # a delivery report (must be dropped, not answered)
        return (b'Content-Type: multipart/report; report-type=delivery-status; boundary="r"\r\n',
                b"--r\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--r\r\n"
                b"Content-Type: message/delivery-status\r\n\r\nStatus: 5.0.0\r\n--r--\r\n")
    if how == 8:  # garbage content type and parameters
        return (b"Content-Type: " + _random_bytes(rng, 40).replace(b"\n", b" ") + b"\r\n",
                text.encode("utf-8", "replace"))
    if how == 9:  # a long single line
        return b"", (command_line(rng) + " " + "x" * rng.choice([998, 5000, 100000])).encode("utf-8", "surrogateescape")
    if how == 10:
        return b"", _random_bytes(rng, rng.randint(0, 2000))
    return b"Content-Type: text/plain; charset=utf-8\r\n", text.encode("utf-8", "surrogatepass")


def hostile_mail(rng: random.Random, serial: int) -> Delivery:
    """One odd or hostile delivery (see the module text)."""
    kind = rng.randrange(20)
    envelope = rng.choice(_ENVELOPES)
    recipient = OURS if rng.random() < 0.9 else f"abalone+101.{rng.getrandbits(48):x}@localhost"
    if kind == 0:  # nothing but random bytes
        return Delivery(envelope, recipient, _random_bytes(rng, rng.randint(0, 5000)), "bytes")
    headers: list[bytes] = []
    sender = rng.choice(_SENDERS) if rng.random() < 0.4 else envelope or "fred@example.org"
    if rng.random() < 0.95:
        headers.append(b"From: " + header_value(rng, sender) if rng.random() < 0.3
                       else b"From: " + sender.encode("utf-8", "surrogateescape"))
    if rng.random() < 0.1:
        headers.append(b"From: " + header_value(rng, rng.choice(_SENDERS)))
    if rng.random() < 0.2:
        headers.append(b"Reply-To: " + header_value(rng, rng.choice(_SENDERS)))
    headers.append(b"To: " + recipient.encode())
    subject = command_line(rng)
    if rng.random() < 0.6:
        headers.append(b"Subject: " + subject.encode("utf-8", "surrogatepass"))
    else:
        headers.append(b"Subject: " + header_value(rng, subject))
    mid = message_id(rng, serial)
    if mid is not None:
        headers.append(b"Message-ID: " + mid)
    for _ in range(rng.choice([0, 0, 0, 1, 3, 20, 20, 500])):
        name = rng.choice([b"X-Junk", b"Comments", b"References", b"In-Reply-To", b"Date",
                           b"Received", b"X-\xff\xfe", b"Content-Disposition", b"Auto-Submitted",
                           b"Precedence", b"Return-Path", b"MIME-Version"])
        headers.append(name + b": " + header_value(rng, _random_text(rng, rng.randint(0, 60))))
    extra, body = _body(rng)
    if rng.random() < 0.05:
        separator = b"\n"  # bare line feeds
    else:
        separator = b"\r\n"
    raw = separator.join(headers) + separator + extra.replace(b"\r\n", separator) + separator + body
    return Delivery(envelope, recipient, raw, "mail")


def redelivery_pairs(rng: random.Random, serial: int) -> list[Delivery]:
    """A mail and its redelivery, or a squatter's mail reusing another's Message-ID."""
    first = hostile_mail(rng, serial)
    return [first, Delivery(first.envelope_from, first.recipient, first.raw, "redelivery")]
