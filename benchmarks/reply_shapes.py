"""Replies to a board mail as the load generators send them (not a benchmark itself).

Players move by replying to the board mail they received, and their mail program
writes that reply: the move on the first line, then an attribution line and the
whole board mail quoted below it, in a text part and an HTML part, with the
``In-Reply-To``/``References`` that tie it to the mail it answers and the trace
headers of the provider's servers. A load generator that sends only the move on a
bare line measures a server nobody uses, so the default here is Gmail's shape:

- ``gmail``: ``multipart/alternative``; the text part is the move, a blank line,
  "On <date> <sender> wrote:" and the board mail's text part quoted with ``> ``;
  the HTML part is ``<div dir="ltr">move</div>`` and Gmail's ``gmail_quote``
  container with the board mail's HTML inside a ``<blockquote>``; Gmail's headers
  (Received, DKIM-Signature, X-Google-*, MIME-Version, In-Reply-To, References).
- ``bare-headers``: only the move in a text part, but with the same headers as
  ``gmail`` (to tell the cost of the headers from the cost of the quote).
- ``bare``: only the move, and only From/To/Subject/Message-ID (what the benchmark
  sent before).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email import message_from_bytes
from email.message import EmailMessage, Message
from email.policy import SMTP as SMTP_POLICY
from email.policy import default as default_policy
from email.utils import format_datetime

SHAPES = ("gmail", "bare-headers", "bare")

_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Original:
    """What a reply needs of the board mail it answers."""

    message_id: str
    references: str
    date: datetime
    reply_to: str
    text: str
    html: str | None

    @classmethod
    def parse(cls, raw: bytes) -> "Original":
        message = message_from_bytes(raw, policy=default_policy)
        assert isinstance(message, EmailMessage)
        text_part = message.get_body(("plain",))
        html_part = message.get_body(("html",))
        text = text_part.get_content() if text_part is not None else ""
        html = html_part.get_content() if html_part is not None else None
        date = message["Date"].datetime if message["Date"] else datetime.now(timezone.utc)
        return cls(
            message_id=str(message.get("Message-ID", "")).strip(),
            references=" ".join(str(message.get("References", "")).split()),
            date=date,
            reply_to=str(message.get("Reply-To", "")).strip(),
            text=text,
            html=html,
        )


def _gmail_date(when: datetime) -> str:
    # "On Fri, Nov 27, 2026 at 2:25 PM"
    hour = when.hour % 12 or 12
    return (f"{when:%a}, {when:%b} {when.day}, {when.year} at {hour}:{when:%M} "
            f"{'AM' if when.hour < 12 else 'PM'}")


def _folded(name: str, value: str, width: int = 76) -> str:
    """``name: value`` folded at blanks, and inside long tokens as DKIM signers fold a
    signature (a tab and the next piece): as the provider writes it, no encoded words."""
    lines: list[str] = []
    line = f"{name}:"
    for word in value.split(" "):
        while len(word) > width - 1:
            room = max(width - len(line) - 1, 8)
            lines.append(f"{line} {word[:room]}")
            line, word = "\t", word[room:]
        if len(line) + 1 + len(word) > width and line.strip():
            lines.append(line)
            line = "\t" + word
        else:
            line = f"{line} {word}" if line != "\t" else "\t" + word
    lines.append(line)
    return "\r\n".join(lines) + "\r\n"


def _trace_headers(sender: str, message_id: str, now: datetime) -> str:
    """The headers Gmail's servers put on a mail, as raw lines (their size and number
    matter to a server that reads them; their values are plausible, not signed)."""
    domain = sender.rsplit("@", 1)[-1]
    digest = hashlib.sha256(message_id.encode()).digest()
    signature = base64.b64encode(digest * 8).decode()
    stamp = format_datetime(now)
    t = int(now.timestamp())
    fields = [
        ("Received", f"by mail-ed1-f54.google.com with SMTP id {digest.hex()[:16]} "
                     f"for <abalone@localhost>; {stamp}"),
        ("Received", f"by 2002:a05:6402:{digest.hex()[:4]} with SMTP id "
                     f"{digest.hex()[16:32]}; {stamp}"),
        ("DKIM-Signature", f"v=1; a=rsa-sha256; c=relaxed/relaxed; d={domain}; s=20230601; "
                           f"t={t}; x={t + 604800}; darn=localhost; h=to:subject:message-id"
                           ":date:from:in-reply-to:references:mime-version:from:to:cc:subject"
                           f":date:message-id:reply-to; bh={base64.b64encode(digest).decode()}; "
                           f"b={signature}"),
        ("X-Google-DKIM-Signature", f"v=1; a=rsa-sha256; c=relaxed/relaxed; d=1e100.net; "
                                    f"s=20230601; t={t}; x={t + 604800}; h=x-gm-message-state"
                                    ":from:to:cc:subject:date:message-id:reply-to; "
                                    f"bh={base64.b64encode(digest).decode()}; b={signature}"),
        ("X-Gm-Message-State", base64.b64encode(digest * 3).decode()),
        ("X-Google-Smtp-Source", base64.b64encode(digest * 2).decode()),
        ("X-Received", f"by 2002:a05:6402:{digest.hex()[:4]} with SMTP id "
                       f"{digest.hex()[32:48]}; {stamp}"),
    ]
    return "".join(_folded(name, value) for name, value in fields)


def reply(shape: str, *, sender: str, sender_name: str, to: str, subject: str,
          message_id: str, move: str, original: Original | None,
          now: datetime | None = None) -> bytes:
    """The reply of ``shape`` (see the module text) with ``move`` on its first line."""
    if shape not in SHAPES:
        raise ValueError(f"reply shape must be one of {', '.join(SHAPES)}")
    now = now or datetime.now(timezone.utc)
    message = EmailMessage()
    trace = _trace_headers(sender, message_id, now) if shape != "bare" else ""
    if shape != "bare":
        message["MIME-Version"] = "1.0"
        if original is not None and original.message_id:
            references = f"{original.references} {original.message_id}".strip()
            message["References"] = references
            message["In-Reply-To"] = original.message_id
        message["From"] = f"{sender_name} <{sender}>"
        message["Date"] = format_datetime(now)
    else:
        message["From"] = sender
    message["Message-ID"] = message_id
    message["Subject"] = subject
    message["To"] = to
    if shape != "gmail" or original is None:
        message.set_content(f"{move}\n")
        return trace.encode() + message.as_bytes(policy=SMTP_POLICY)
    attribution = f"On {_gmail_date(original.date)} <{original.reply_to or to}> wrote:"
    quoted = "\n".join(f"> {line}".rstrip() if line else ">"
                       for line in original.text.rstrip("\n").split("\n"))
    # Gmail sends both parts quoted-printable (the quoted HTML has long lines).
    message.set_content(f"{move}\n\n{attribution}\n\n{quoted}\n", cte="quoted-printable")
    inner = original.text if original.html is None else original.html
    found = _BODY.search(inner) if original.html is not None else None
    quoted_html = found.group(1) if found else inner
    address = original.reply_to or to
    html = (
        f'<div dir="ltr">{move}</div><br><div class="gmail_quote gmail_quote_container">'
        f'<div dir="ltr" class="gmail_attr">On {_gmail_date(original.date)} &lt;'
        f'<a href="mailto:{address}">{address}</a>&gt; wrote:<br></div>'
        '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px '
        f'solid rgb(204,204,204);padding-left:1ex">{quoted_html}</blockquote></div>\n'
    )
    message.add_alternative(html, subtype="html", cte="quoted-printable")
    # CRLF line ends: smtplib sends bytes as they are.
    return trace.encode() + message.as_bytes(policy=SMTP_POLICY)
