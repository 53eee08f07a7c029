"""Building the server's outgoing mail: one message per recipient, text/plain, or
multipart/alternative with an HTML part when the mail shows a board (DESIGN §2.7).

Every mail the server sends carries ``Message-ID``, ``Date``, ``Auto-Submitted`` and
``X-Loop`` (DESIGN §2.3); an answer also carries ``In-Reply-To``/``References`` so that the
player's mail program threads it under their command.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email import quoprimime
from email.message import EmailMessage
from email.policy import SMTP as smtp_policy
from email.policy import SMTPUTF8 as smtputf8_policy
from email.policy import default as default_policy
from email.utils import format_datetime, getaddresses

from ..verp import bounce_address

__all__ = ["compose", "compose_mail", "ComposedMail", "new_message_id", "one_address",
           "MAX_LINE", "OUTBOX_POLICY"]

#: Longest line RFC 5322 allows (without CRLF); a longer body line forces quoted-printable.
MAX_LINE = 998
#: A List-Unsubscribe URI: mailto or https, printable ASCII without blanks or brackets.
_URI = re.compile(r"(?:mailto:|https://)[!#-;=?-~]{1,900}")


def new_message_id(domain: str) -> str:
    """A fresh, globally unique ``<…@domain>`` Message-ID (time + 80 random bits)."""
    domain = (domain or "localhost").strip().strip("<>").rsplit("@", 1)[-1] or "localhost"
    return f"<{int(time.time() * 1000):x}.{secrets.token_hex(10)}@{domain}>"


#: A bare address of dot-separated atoms (``fred.f+101.x@example.org``): parsed by
#: getaddresses, it is itself (a test holds the two equal).
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_BARE_ADDRESS = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_NAMED_BARE_ADDRESS = re.compile(
    rf'"[A-Za-z0-9]+(?: [A-Za-z0-9]+)*" <({_ATOM}(?:\.{_ATOM})*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)>')


def one_address(text: str) -> str:
    """The single mail address in ``text`` (``"Fred <fred@x>"`` → ``fred@x``).

    Raises ValueError when ``text`` holds no address or more than one: the server never
    sends one mail to many people.
    """
    if _BARE_ADDRESS.fullmatch(text):
        return text  # what getaddresses would find, without its parser
    named = _NAMED_BARE_ADDRESS.fullmatch(text)
    if named:
        return named.group(1)  # likewise (the server's own '"Abalone" <abalone@…>')
    if "\r" in text or "\n" in text:
        raise ValueError("an address may not contain line breaks")
    found = [addr for _, addr in getaddresses([text]) if addr]
    if len(found) != 1 or "@" not in found[0]:
        raise ValueError(f"exactly one recipient address is needed, not {text!r}")
    return found[0]


def _domain_of(address: str) -> str:
    return address.rsplit("@", 1)[1] if "@" in address else "localhost"


def _one_line(text: str) -> str:
    """Header text on one line (a subject may quote what a player wrote)."""
    return " ".join(text.split())


def _body_text(body: str) -> str:
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") else text + "\n"


def _transfer_encoding(text: str) -> str:
    """7bit for plain ASCII (readable diagrams in any mail reader), else quoted-printable."""
    if text.isascii() and (len(text) <= MAX_LINE
                           or max(map(len, text.split("\n"))) <= MAX_LINE):
        return "7bit"
    return "quoted-printable"


def _header_address(text: str) -> str:
    """Keep a display name if given (``Fred <fred@x>``) but insist on one address."""
    one_address(text)
    return text.strip()


def compose(
    *,
    sender: str,
    to: str,
    subject: str,
    body: str,
    reply_to: str | None = None,
    in_reply_to: str | None = None,
    references: list[str] | None = None,
    auto_submitted: str = "auto-replied",
    loop_token: str,
    date: datetime,
    message_id: str | None = None,
    html: str | None = None,
    list_unsubscribe: Sequence[str] = (),
) -> EmailMessage:
    """One UTF-8 mail from the server to exactly one recipient: text/plain, or with
    ``html`` multipart/alternative of the text and that HTML page.

    ``in_reply_to`` is the Message-ID of the mail being answered; ``references`` its own
    References chain (the answered Message-ID is appended to it when missing).
    ``loop_token`` goes into ``X-Loop`` (the server address), ``auto_submitted`` into
    ``Auto-Submitted`` (``auto-replied`` for answers, ``auto-generated`` for reminders).
    ``list_unsubscribe``: the URIs of a subscribed mail's ``List-Unsubscribe`` (RFC
    2369); an ``https:`` one among them makes it one-click (``List-Unsubscribe-Post``,
    RFC 8058). Serialise with ``OUTBOX_POLICY``, which writes that header as it is.
    """
    headers = _headers(sender, to, subject, reply_to, in_reply_to, references,
                       auto_submitted, loop_token, date, message_id, list_unsubscribe)
    message = EmailMessage(policy=_COMPOSE_POLICY)
    for name, value in headers:
        if name in _RAW_HEADERS:
            message.set_raw(name, value)
        else:
            message[name] = value
    text = _body_text(body)
    message.set_content(text, subtype="plain", charset="utf-8", cte=_transfer_encoding(text))
    if html is not None:
        # The text part comes first: readers that cannot show HTML take it, and it stays
        # the reference (the pbmserv diagram).
        page = _body_text(html)
        message.add_alternative(
            page, subtype="html", charset="utf-8", cte=_transfer_encoding(page)
        )
    return message


@dataclass(frozen=True)
class ComposedMail:
    """A mail ready for the outbox: its bytes as sent, and its envelope."""

    message_id: str
    #: The envelope sender (the mail's own bounce address, ``verp``) and the one
    #: recipient, bare addresses.
    sender: str
    recipient: str
    raw: bytes


#: Header values written as they are (no encoded words, no quoting, no folding needed).
_PLAIN_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+")
#: The same with a quoted display name of letters, digits and blanks (the server's From).
_PLAIN_NAMED_ADDRESS = re.compile(
    r'"[A-Za-z0-9 ]+" <[A-Za-z0-9.!#$%&\'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+>'
)
_PLAIN_TEXT = re.compile(r"[ -~]*")
_ADDRESS_HEADERS = frozenset({"From", "To", "Reply-To"})
#: RFC 5322's recommended line length, where the email package starts folding.
_FOLD_AT = 78


def _plain_header(name: str, value: str) -> bool:
    """Whether the email package would write ``name: value`` unchanged on one line."""
    if not value or len(name) + 2 + len(value) > _FOLD_AT or "=?" in value:
        return False
    if name in _ADDRESS_HEADERS:
        return (_PLAIN_ADDRESS.fullmatch(value) is not None
                or _PLAIN_NAMED_ADDRESS.fullmatch(value) is not None)
    return _PLAIN_TEXT.fullmatch(value) is not None and value == value.strip()


#: Headers written as composed, folded where ``_headers`` folded them: the email
#: package would turn a URI longer than a line into encoded words, which no mail
#: program reads as a URI (RFC 2369 allows folding between the URIs only).
_RAW_HEADERS = frozenset({"List-Unsubscribe"})
#: The policies the outbox's bytes are written with: the SMTP policies, except that a
#: header set as it is (``_RAW_HEADERS``) is not refolded (the others are header
#: objects, folded the same either way).
OUTBOX_POLICY = smtp_policy.clone(refold_source="none")
_COMPOSE_POLICY = default_policy.clone(refold_source="none")
_OUTBOX_UTF8_POLICY = smtputf8_policy.clone(refold_source="none")


def _header_text(name: str, value: str) -> str | None:
    """``name: value`` as the email package writes it (lines joined by ``\\n``): as it
    is when plain, folded by the package's own folding otherwise (a reply's long
    References chain, a Subject with an accent: one header folded costs a few tens of
    microseconds, the whole mail through the package a millisecond or two); None for
    an address header that is not plain (written through the package)."""
    if _plain_header(name, value) or name in _RAW_HEADERS:
        return f"{name}: {value}"
    if name in _ADDRESS_HEADERS:
        return None
    folded: str = smtp_policy.fold(name, smtp_policy.header_store_parse(name, value)[1])
    return folded.replace("\r\n", "\n").rstrip("\n")


def compose_mail(
    *,
    sender: str,
    to: str,
    subject: str,
    body: str,
    reply_to: str | None = None,
    in_reply_to: str | None = None,
    references: list[str] | None = None,
    auto_submitted: str = "auto-replied",
    loop_token: str,
    date: datetime,
    message_id: str | None = None,
    html: str | None = None,
    list_unsubscribe: Sequence[str] = (),
) -> ComposedMail:
    """``compose`` as the bytes the outbox stores, built directly when every header is
    plain ASCII that needs no encoding or folding (board mails, the common case), else
    through the email package. Either way the bytes are those ``compose(...)``
    serialised with ``OUTBOX_POLICY`` would give (a test holds the two paths equal).
    """
    headers = _headers(sender, to, subject, reply_to, in_reply_to, references,
                       auto_submitted, loop_token, date, message_id, list_unsubscribe)
    # Each mail's envelope sender is a bounce address of its own (``verp``): a
    # delivery report then names the mail it is about without being parsed.
    envelope_sender, recipient = bounce_address(one_address(sender)), one_address(to)
    found_id = next(value for name, value in headers if name == "Message-ID")
    text = _body_text(body)
    cte = _transfer_encoding(text)
    written = [_header_text(name, value) for name, value in headers]
    header_lines = [line for line in written if line is not None]
    if html is None and len(header_lines) == len(written):
        lines = [line.replace("\n", "\r\n") for line in header_lines]
        lines += ['Content-Type: text/plain; charset="utf-8"',
                  f"Content-Transfer-Encoding: {cte}", "MIME-Version: 1.0", ""]
        if cte == "7bit":
            payload = text
        else:
            payload = quoprimime.body_encode(
                b"\n".join(text.encode("utf-8").splitlines()).decode("latin-1") + "\n",
                _FOLD_AT)
            if not payload.endswith("\n"):
                payload += "\n"
        raw = ("\r\n".join(lines) + "\r\n" + payload.replace("\n", "\r\n")).encode("ascii")
        return ComposedMail(found_id, envelope_sender, recipient, raw)
    page = _body_text(html) if html is not None else ""
    if (html is not None and cte == "7bit" and _transfer_encoding(page) == "7bit"
            and len(header_lines) == len(written)):
        # A board mail: text and picture laid out as the email package does, with a
        # boundary of its form that neither part contains.
        boundary = _boundary(text + page)
        lines = list(header_lines)
        lines += ["MIME-Version: 1.0", "Content-Type: multipart/alternative;",
                  f' boundary="{boundary}"', "", f"--{boundary}",
                  'Content-Type: text/plain; charset="utf-8"',
                  "Content-Transfer-Encoding: 7bit", ""]
        html_head = ["", f"--{boundary}", 'Content-Type: text/html; charset="utf-8"',
                     "Content-Transfer-Encoding: 7bit", "MIME-Version: 1.0", ""]
        tail = f"\n--{boundary}--\n"
        raw = ("\n".join(lines) + "\n" + text + "\n".join(html_head) + "\n" + page
               + tail).replace("\n", "\r\n").encode("ascii")
        return ComposedMail(found_id, envelope_sender, recipient, raw)
    # Anything else, and the multipart board mails with their picture, through the
    # email package.
    message = compose(sender=sender, to=to, subject=subject, body=body, reply_to=reply_to,
                      in_reply_to=in_reply_to, references=references,
                      auto_submitted=auto_submitted, loop_token=loop_token, date=date,
                      message_id=found_id, html=html, list_unsubscribe=list_unsubscribe)
    # An internationalised address can only be written in UTF-8 (RFC 6532); such a
    # mail goes out with SMTPUTF8, everything else stays 7-bit clean.
    policy = OUTBOX_POLICY if recipient.isascii() else _OUTBOX_UTF8_POLICY
    return ComposedMail(found_id, envelope_sender, recipient, message.as_bytes(policy=policy))


def _boundary(content: str) -> str:
    """A MIME boundary in the email package's form, found in none of ``content``."""
    while True:
        boundary = "=" * 15 + f"{secrets.randbelow(10**19):019d}" + "=="
        if boundary not in content:
            return boundary


def _headers(
    sender: str,
    to: str,
    subject: str,
    reply_to: str | None,
    in_reply_to: str | None,
    references: list[str] | None,
    auto_submitted: str,
    loop_token: str,
    date: datetime,
    message_id: str | None,
    list_unsubscribe: Sequence[str] = (),
) -> list[tuple[str, str]]:
    """The headers of a server mail, in order, as (name, value) before encoding."""
    one_address(sender)
    headers = [("From", _header_address(sender)), ("To", _header_address(to)),
               ("Subject", _one_line(subject))]
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)
    headers.append(("Date", format_datetime(date)))
    headers.append(("Message-ID", message_id or new_message_id(_domain_of(one_address(sender)))))
    if reply_to:
        headers.append(("Reply-To", _header_address(reply_to)))
    chain = [ref for ref in (references or []) if ref and ref.strip()]
    if in_reply_to and in_reply_to.strip():
        answered = in_reply_to.strip()
        headers.append(("In-Reply-To", answered))
        if answered not in chain:
            chain.append(answered)
    if chain:
        headers.append(("References", " ".join(_one_line(ref) for ref in chain)))
    uris = [_one_line(uri) for uri in list_unsubscribe if uri.strip()]
    if uris:
        if any(not _URI.fullmatch(uri) for uri in uris):
            raise ValueError(f"not a List-Unsubscribe URI: {uris!r}")
        # One URI a line (a URI is never folded); one-click when one is https (RFC 8058).
        headers.append(("List-Unsubscribe", ",\n ".join(f"<{uri}>" for uri in uris)))
        if any(uri.startswith("https://") for uri in uris):
            headers.append(("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))
    headers.append(("Auto-Submitted", _one_line(auto_submitted) or "auto-replied"))
    # Exchange and Outlook send no out-of-office or other automatic answer to a mail
    # that carries this (the others keep to Auto-Submitted, RFC 3834).
    headers.append(("X-Auto-Response-Suppress", "All"))
    headers.append(("X-Loop", _one_line(loop_token)))
    return headers
