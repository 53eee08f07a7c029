"""``quick_mime.parse_simple`` builds the very message the standard parser
builds (headers, parts, bodies, preamble, epilogue, defects), or declines: compared on
the replies mail programs write, the big and hostile mails of the cost benchmark and
the abuse tests, and on mutations of them around every delimiter line and of their
line ends (LF alone in some lines or all, as a thread's parts have them)."""

from __future__ import annotations

import email.parser
import random
import sys
from email.message import EmailMessage, Message
from pathlib import Path
from typing import Any

from abalone_pbm.mail.mime import BoundedMessage, bounded_bytes
from abalone_pbm.mail.quick_mime import parse_simple
from abalone_pbm.worker import LEAN_POLICY, parse_mail
from tests.abuse.hostile_mail import hostile_mail

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import mail_cost  # noqa: E402
from reply_shapes import Original, reply  # noqa: E402

POLICY = LEAN_POLICY.clone(message_factory=BoundedMessage)


def _shape(message: Message) -> Any:
    """Everything of a parsed message the server can read."""
    payload = message._payload  # type: ignore[attr-defined]
    return (type(message), message.get_unixfrom(), list(message.raw_items()),
            list(message.items()), message.get_default_type(), message.preamble,
            message.epilogue, [type(defect) for defect in message.defects],
            [_shape(part) for part in payload] if isinstance(payload, list) else payload)


def _board_mail() -> bytes:
    message = EmailMessage()
    message["From"] = "Abalone <abalone@localhost>"
    message["To"] = "fred@example.org"
    message["Subject"] = "Abalone Board 101 fred"
    message["Message-ID"] = "<board-101-7@localhost>"
    message["Reply-To"] = "abalone+101.k3x9@localhost"
    message["Date"] = "Fri, 27 Nov 2026 12:00:00 +0000"
    message.set_content("Summary of Abalone Board 101\n\nIt is fred's move.\n" * 20)
    message.add_alternative("<div><p>It is fred&#39;s move.</p>\n<pre>o o o</pre></div>\n" * 40,
                            subtype="html")
    return message.as_bytes()


def _corpus() -> list[bytes]:
    original = Original.parse(_board_mail())
    mails = [reply(shape, sender="fred@example.org", sender_name="Fred",
                   to="abalone+101.k3x9@localhost", subject="Re: Abalone Board 101 fred",
                   message_id=f"<r{n}@players.test>", move="c3-c5,d4", original=original)
             for n, shape in enumerate(("gmail", "bare-headers", "bare", "gmail"))]
    mails += [build() for build in mail_cost.SHAPES.values()]
    mails += [hostile_mail(random.Random(seed), seed).raw for seed in range(300)]
    attached = EmailMessage()
    attached["Subject"] = "board"
    attached.set_content("see the picture\n")
    attached.add_alternative("<p>see the picture</p>\n", subtype="html")
    attached.add_attachment(b"\x89PNG", maintype="image", subtype="png", filename="b.png")
    mails.append(attached.as_bytes().replace(b"\n", b"\r\n"))
    for ending in (b"\n", b"\r", b"\r\n"):  # one part, as a test harness or a pipe writes it
        plain = EmailMessage()
        plain["Subject"] = "Re: Abalone Board 101 fred"
        plain.set_content("c3-c5\n\n> It is fred's move.\n" * 50)
        mails.append(plain.as_bytes().replace(b"\n", ending))
    return mails


def _mutations(raw: bytes, rng: random.Random) -> list[bytes]:
    """``raw`` changed around its delimiter lines, line ends and header block."""
    found = [line for line in raw.split(b"\r\n") if line.startswith(b"--")][:3]
    out = [raw, raw.replace(b"\r\n", b"\n"), raw + b"epilogue\r\n", raw.rstrip(b"\r\n")]
    for line in found:
        out += [raw.replace(line + b"\r\n", line + b" \t\r\n", 1),
                raw.replace(line + b"\r\n", line + b"\r\n" + line + b"\r\n", 1),
                raw.replace(line + b"\r\n", b"", 1),
                raw.replace(line + b"\r\n", line + b"x\r\n", 1),
                raw.replace(line + b"\r\n", b"preamble\r\n" + line + b"\r\n", 1),
                raw.replace(line + b"\r\n", line + b"\r\nNo header here\r\n", 1),
                raw.replace(line + b"\r\n", line + b"\r\n\r\n", 1)]
    cut = rng.randrange(len(raw) + 1)
    out.append(raw[:cut])
    return out


def _line_ends_mixed(raw: bytes, rng: random.Random) -> list[bytes]:
    """``raw`` with some of its CRLF line ends written LF alone: at random (or CR
    alone, now and then), in the bodies only (after each part's empty line, up to the
    next delimiter), and all but the header blocks' and delimiters'."""
    lines = raw.split(b"\r\n")
    ends = (b"\r\n", b"\n") * 5 + (b"\r",)
    randomly = b"".join(line + rng.choice(ends) for line in lines[:-1])
    in_bodies = []
    in_body = False
    for line in lines[:-1]:
        is_delimiter = line.startswith(b"--")
        if is_delimiter:
            in_body = False
        in_bodies.append(line + (b"\n" if in_body and rng.random() < 0.9 else b"\r\n"))
        if not line and not is_delimiter:
            in_body = True
    return [randomly + lines[-1], b"".join(in_bodies) + lines[-1],
            raw.replace(b"\n--", b"\r--", 1), raw.replace(b"--\r\n", b"--\r \r\n", 1),
            raw.replace(b"\r\n\r\n", b"\r\n\r\r\n", 2)]


def test_the_quick_parse_is_the_parsers_or_none() -> None:
    rng = random.Random(4)
    quick = compared = 0
    for raw in _corpus():
        for mutated in _mutations(raw, rng):
            data = bounded_bytes(mutated)
            fast = parse_simple(data, POLICY)
            if fast is None:
                continue
            slow = email.parser.BytesParser(policy=POLICY).parsebytes(data)
            assert _shape(fast) == _shape(slow), mutated[:300]
            if len(data) < 40_000:  # (writing a 256 KB header again takes seconds)
                assert fast.as_bytes() == slow.as_bytes()
            quick += 1
        compared += 1
    assert quick > 60 and compared > 300


def test_parts_ending_lines_in_lf_are_read_as_the_parser_reads_them() -> None:
    rng = random.Random(25)
    quick = compared = 0
    for raw in _corpus():
        for mixed in _line_ends_mixed(raw, rng):
            for mutated in _mutations(mixed, rng):
                data = bounded_bytes(mutated)
                fast = parse_simple(data, POLICY)
                compared += 1
                if fast is None:
                    continue
                slow = email.parser.BytesParser(policy=POLICY).parsebytes(data)
                assert _shape(fast) == _shape(slow), mutated[:300]
                if len(data) < 40_000:
                    assert fast.as_bytes() == slow.as_bytes()
                quick += 1
    assert quick > 200 and compared > 5000


def test_a_quoted_thread_with_lf_in_its_parts_is_parsed_quickly() -> None:
    raw = mail_cost.quoted_thread()
    assert b"\n>" in raw and b"\r\n--=_b" in raw  # (LF inside the parts, CRLF around)
    fast = parse_simple(bounded_bytes(raw), POLICY)
    assert fast is not None
    assert _shape(fast) == _shape(email.parser.BytesParser(policy=POLICY).parsebytes(
        bounded_bytes(raw)))


def test_the_worker_reads_a_gmail_reply_quickly_and_the_same() -> None:
    raw = reply("gmail", sender="fred@example.org", sender_name="Fred",
                to="abalone+101.k3x9@localhost", subject="Re: Abalone Board 101 fred",
                message_id="<r9@players.test>", move="c3-c5,d4",
                original=Original.parse(_board_mail()))
    assert parse_simple(bounded_bytes(raw), POLICY) is not None
    message = parse_mail(raw)
    # (parse_bounded takes the quick path itself: compare with the parser proper.)
    assert _shape(message) == _shape(
        email.parser.BytesParser(policy=POLICY).parsebytes(bounded_bytes(raw)))
    text = message.get_body(("plain",))
    html = message.get_body(("html",))
    assert text is not None and str(text.get_content()).startswith("c3-c5,d4\r\n\r\nOn ")
    assert html is not None and "c3-c5,d4" in str(html.get_content())
