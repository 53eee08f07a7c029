"""Reading delivery reports (DESIGN §2.8): which recipient failed, how, and which of the
server's mails it was.

``read_report(message)`` returns a :class:`Report` for a delivery report and None for
anything else (a person's mail, an auto-reply, spam). It reads

* RFC 3464 reports (``multipart/report; report-type=delivery-status``, and RFC 6533's
  ``message/global-delivery-status``) as Postfix, Exim, Sendmail, Exchange and
  Office 365, Gmail and most others write them: each recipient's ``Action``,
  ``Status`` (``5.1.1``; Microsoft's ``5.1.10`` too) and ``Diagnostic-Code``;
* the common reports that are not RFC 3464: qmail's "Hi. This is the qmail-send
  program", Yahoo's "Sorry, we were unable to deliver your message", Exim's "This
  message was created automatically by mail delivery software" (failures and its
  "has not yet been delivered" warnings), Sendmail's and others' plain transcripts with
  a bounce Subject, each recipient with the SMTP reply or enhanced status nearest it;

and the Message-ID of the returned mail (its ``message/rfc822`` part, its
``text/rfc822-headers``, or the copy quoted in a text report), which ties a report that
did not come to a bounce address (``verp``) to the one mail it is about.

What counts against an address is decided here too (``Recipient.counts``): a
permanent failure, ``Action: failed`` with a 5.x.x status (or a 5xx reply where the
report has no status). ``Action: delayed`` and every 4.x.x never count, nor do
5.7.x refusals: those refuse the server's mail (SPF, DKIM, DMARC, reputation), not
the address, and counting them would stop mail to everyone at a provider the day a
DNS record breaks (they are logged, for the admin).

**flufl.bounce or our own?** GNU Mailman's ``flufl.bounce`` (Apache 2.0 since 3.0,
LGPL before; 6.0 is current and maintained) answers "which addresses bounced",
temporary or permanent, from some 20 heuristic detectors run over the whole mail. With
a bounce address of its own per mail the server already knows the address; what it
needs is the verdict (permanent, delayed, a policy refusal, not a report at all) and the
status and diagnostic to show the admin, which flufl.bounce does not return. Its
detectors read the whole mail, each with its own regular expressions (the cost of a
256 KiB report is theirs, not bounded by us), and it would add ``zope.interface`` and
``atpublic`` to the dependencies. So the reports are read here: one walk of at most
``mime.MAX_PARTS`` parts of the bounded parse, at most ``TEXT_READ`` characters of each
text read, patterns that cannot backtrack; linear in the mail's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import EmailMessage, Message

from .guards import auto_reply_reason

__all__ = ["Recipient", "Report", "read_report", "TEXT_READ", "MOST_RECIPIENTS"]

#: Characters of one text part (a report's explanation, a returned header block) read.
TEXT_READ = 64 * 1024
#: Recipients of one report read (a report lists the recipients of one mail: ours have one).
MOST_RECIPIENTS = 50
#: Characters kept of a diagnostic for the log and the admin.
_DIAGNOSTIC_KEPT = 300

_REPORT_TYPES = ("message/delivery-status", "message/global-delivery-status")
_RETURNED_HEADER_TYPES = ("text/rfc822-headers", "text/global-headers")
_RETURNED_MESSAGE_TYPES = ("message/rfc822", "message/global")

#: An enhanced status code (RFC 3463); Microsoft writes three digits in the last field.
_STATUS = re.compile(r"(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.])")
#: An SMTP reply code as MTAs quote them ("550 5.1.1 …", "550-5.1.1", "554 delivery
#: error"); not a number inside a longer one, a date or a time.
_REPLY = re.compile(r"(?<![\d.:/-])([45])\d\d(?=[ -]\S)(?![ -]\d\d[:\d])")
_ADDRESS = re.compile(r"<?([A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9-]{1,63}"
                      r"(?:\.[A-Za-z0-9-]{1,63}){0,10})>?")
_MESSAGE_ID = re.compile(r"^message-id:[ \t]*(?:\r?\n[ \t]+)?(<[^<>\s]{1,250}>)",
                         re.IGNORECASE | re.MULTILINE)
_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9-]{0,40})[ \t]*:[ \t]*(.*)$")


@dataclass(frozen=True)
class Recipient:
    """One recipient a report speaks of."""

    #: The address, lower case ("" when the report does not say).
    address: str
    #: RFC 3464's Action: failed, delayed, delivered, relayed, expanded.
    action: str
    #: The enhanced status (``5.1.1``), or "" when the report gives none.
    status: str
    #: The diagnostic (the remote server's answer), short, on one line.
    diagnostic: str

    @property
    def status_class(self) -> str:
        """"5" permanent, "4" temporary, "2" success, "" unknown: the status, else
        the SMTP reply code of the diagnostic."""
        if self.status:
            return self.status[0]
        reply = _REPLY.search(self.diagnostic)
        return reply.group(1) if reply else ""

    @property
    def policy_refusal(self) -> bool:
        """A 5.7.x: the recipient's server refused the mail or its sender, not the
        address (authentication, reputation, content)."""
        return self.status.startswith("5.7.")

    @property
    def counts(self) -> bool:
        """Whether this counts against the address: a permanent failure of it."""
        return (self.action == "failed" and self.status_class == "5"
                and not self.policy_refusal)

    def describe(self) -> str:
        """``5.1.1 (550 5.1.1 <x@y>: user unknown)`` for the log and the admin."""
        text = self.status or self.action
        if self.diagnostic:
            text += f" ({self.diagnostic})"
        return text[:_DIAGNOSTIC_KEPT]


@dataclass(frozen=True)
class Report:
    """What a delivery report says."""

    #: How it was written: "RFC 3464", "qmail", "Yahoo", "Exim", "text".
    form: str
    recipients: tuple[Recipient, ...]
    #: The Message-IDs of the returned mail (usually one).
    message_ids: tuple[str, ...]

    @property
    def counted(self) -> tuple[Recipient, ...]:
        return tuple(r for r in self.recipients if r.counts)

    def verdict(self) -> str:
        """One line for the inbox note: what the report says, and whether it counts."""
        if self.counted:
            return f"permanent failure {self.counted[0].describe()}"
        if any(r.action == "failed" and r.policy_refusal for r in self.recipients):
            first = next(r for r in self.recipients if r.policy_refusal)
            return f"a refusal of our mail, not of the address: {first.describe()}"
        if any(r.action == "delayed" for r in self.recipients):
            return "delivery delayed (still being retried)"
        if any(r.action == "failed" for r in self.recipients):
            first = next(r for r in self.recipients if r.action == "failed")
            return f"a failure that is not permanent: {first.describe()}"
        if self.recipients:
            return f"action {self.recipients[0].action}: nothing failed"
        return "no recipient named"


def _one_line(text: str, limit: int = _DIAGNOSTIC_KEPT) -> str:
    return " ".join(text[: limit * 4].split())[:limit]


def _text_of(part: Message, limit: int = TEXT_READ) -> str:
    """The first ``limit`` characters of a leaf part's decoded text ("" on trouble)."""
    try:
        payload = part.get_payload(decode=True)
    except Exception:
        return ""
    if not isinstance(payload, bytes):
        return ""
    charset = "utf-8"
    try:
        charset = part.get_content_charset() or "utf-8"
        return payload[: limit * 4].decode(charset, "replace")[:limit]
    except (LookupError, ValueError):
        return payload[: limit * 4].decode("utf-8", "replace")[:limit]


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except Exception:
        return ""
    return "" if value is None else " ".join(str(value)[:2000].split())


# -- RFC 3464 -------------------------------------------------------------------------


def _field_blocks(part: Message) -> list[dict[str, str]]:
    """The header blocks of a delivery-status part (per-message, then per-recipient),
    each a dict of lower-case field names; unfolded, bounded."""
    payload = part.get_payload()
    blocks: list[dict[str, str]] = []
    if isinstance(payload, list):  # the email package parsed the blocks already
        for block in payload[: MOST_RECIPIENTS + 1]:
            if isinstance(block, Message):
                fields: dict[str, str] = {}
                for name, value in list(block.items())[:40]:
                    fields.setdefault(str(name).lower(), _one_line(str(value), 1000))
                blocks.append(fields)
        return blocks
    text = _text_of(part)
    current: dict[str, str] = {}
    last = ""
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            if current:
                blocks.append(current)
                if len(blocks) > MOST_RECIPIENTS:
                    break
            current, last = {}, ""
            continue
        if line[:1] in " \t" and last:
            current[last] = _one_line(current[last] + " " + line, 1000)
            continue
        found = _FIELD.match(line)
        if found:
            last = found.group(1).lower()
            current.setdefault(last, _one_line(found.group(2), 1000))
    if current:
        blocks.append(current)
    return blocks


def _typed_address(value: str) -> str:
    """``rfc822; Fred@Example.org`` → ``fred@example.org`` ("" when none)."""
    kind, semicolon, address = value.partition(";")
    text = address if semicolon else kind
    found = _ADDRESS.search(text.strip())
    return found.group(1).lower() if found else ""


def status_of(value: str) -> str:
    """The first enhanced status code in ``value`` (``5.1.1``), or ""."""
    found = _STATUS.search(value)
    return ".".join(found.groups()) if found else ""


def _dsn_recipients(blocks: list[dict[str, str]]) -> list[Recipient]:
    found: list[Recipient] = []
    for fields in blocks:
        if "action" not in fields and "final-recipient" not in fields:
            continue  # the per-message block
        address = (_typed_address(fields.get("final-recipient", ""))
                   or _typed_address(fields.get("original-recipient", "")))
        action = fields.get("action", "").split("(")[0].strip().lower()
        diagnostic = fields.get("diagnostic-code", "")
        _kind, semicolon, rest = diagnostic.partition(";")
        diagnostic = _one_line(rest if semicolon else diagnostic)
        status = status_of(fields.get("status", "")) or status_of(diagnostic)
        found.append(Recipient(address, action, status, diagnostic))
    return found[:MOST_RECIPIENTS]


# -- reports in text ------------------------------------------------------------------

#: (form, a phrase that opens or marks it, the action it reports). Matched against the
#: casefolded first part of the text; the first that is found wins.
_TEXT_FORMS: tuple[tuple[str, str, str], ...] = (
    ("qmail", "this is the qmail-send program", "failed"),
    ("qmail", "i'm afraid i wasn't able to deliver your message", "failed"),
    ("Yahoo", "sorry, we were unable to deliver your message", "failed"),
    ("Exim", "has not yet been delivered to one or more of its", "delayed"),
    ("Exim", "could not be delivered to one or more of its", "failed"),
    ("text", "delivery to the following recipient has been delayed", "delayed"),
    ("text", "delivery to the following recipients has been delayed", "delayed"),
    ("text", "warning: could not send message for past", "delayed"),
    ("text", "will continue to try", "delayed"),
    ("text", "delivery attempts will continue", "delayed"),
    ("text", "still being retried", "delayed"),
    ("text", "delivery has failed to these recipients", "failed"),
    ("text", "delivery to the following recipient failed permanently", "failed"),
    ("text", "delivery to the following recipients failed permanently", "failed"),
    ("text", "the following addresses had permanent fatal errors", "failed"),
    ("text", "your message could not be delivered", "failed"),
    ("text", "your message wasn't delivered", "failed"),
    ("text", "could not be delivered", "failed"),
    ("text", "undeliverable", "failed"),
    ("text", "permanent error", "failed"),
    ("text", "user unknown", "failed"),
)
#: Subjects of bounces (casefolded openings): a text that names none of the phrases
#: above still is a report when its Subject is one of these and it comes from the
#: mail system.
_BOUNCE_SUBJECTS: tuple[tuple[str, str], ...] = (
    ("delayed mail", "delayed"),
    ("delivery status notification (delay)", "delayed"),
    ("warning: could not send message", "delayed"),
    ("delivery delayed", "delayed"),
    ("undelivered mail returned to sender", "failed"),
    ("mail delivery failed", "failed"),
    ("delivery status notification (failure)", "failed"),
    ("returned mail", "failed"),
    ("undeliverable", "failed"),
    ("undelivered mail", "failed"),
    ("failure notice", "failed"),
    ("delivery failure", "failed"),
    ("mail delivery subsystem", "failed"),
    ("non remis", "failed"),
    ("unzustellbar", "failed"),
    ("onbestelbaar", "failed"),
    ("no se puede entregar", "failed"),
)
#: Where the returned copy of the mail begins in a text report (nothing after it is
#: read as the report: it is our own mail, with our own addresses).
_COPY_MARKERS = (
    "--- below this line is a copy of the message",
    "------ this is a copy of the message",
    "----- original message follows -----",
    "------ original message follows ------",
    "--- enclosed are the original headers",
    "original message headers:",
)
_SYSTEM_LOCALS = ("mailer-daemon", "postmaster", "mail-daemon", "mailerdaemon")


def _from_mail_system(message: Message, envelope_from: str) -> bool:
    """Whether a text mail comes from a mail system: a null envelope sender, or From
    MAILER-DAEMON / postmaster."""
    if not envelope_from.strip().strip("<>"):
        return True
    sender = _header(message, "From").lower()
    return any(local in sender for local in _SYSTEM_LOCALS)


def _report_text(message: Message) -> str:
    """The report's own text: the first text/plain leaf (the whole body of a one-part
    mail), cut where the returned copy begins."""
    for part in message.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        if kind in _RETURNED_MESSAGE_TYPES or kind in _RETURNED_HEADER_TYPES:
            break
        if kind == "text/plain":
            return _text_of(part)
    return ""


def _cut_copy(text: str) -> tuple[str, str]:
    """(the report, the returned copy) of a text report."""
    folded = text.casefold()
    cut = len(text)
    for marker in _COPY_MARKERS:
        at = folded.find(marker)
        if 0 <= at < cut:
            cut = at
    return text[:cut], text[cut:]


def _text_recipients(report: str, action: str, envelope_hint: list[str],
                     our_domain: str) -> list[Recipient]:
    """Each address the report names (not ours), with the status or SMTP reply that
    follows it nearest (before the next address)."""
    found: list[tuple[int, str]] = []
    for match in _ADDRESS.finditer(report):
        address = match.group(1).lower().rstrip(".")
        if our_domain and address.endswith("@" + our_domain):
            continue
        if any(address == known for _, known in found):
            continue
        found.append((match.end(), address))
        if len(found) >= MOST_RECIPIENTS:
            break
    if not found and envelope_hint:
        found = [(0, address) for address in envelope_hint]
    recipients = []
    ends = [start for start, _ in found[1:]] + [len(report)]
    for (start, address), end in zip(found, ends):
        window = report[start:min(end, start + 2000)]
        status = status_of(window)
        reply = _REPLY.search(window)
        diagnostic = _one_line(window[reply.start():]) if reply else ""
        recipients.append(Recipient(address, action, status, diagnostic))
    if not recipients:
        status = status_of(report)
        reply = _REPLY.search(report)
        recipients.append(Recipient("", action, status,
                                    _one_line(report[reply.start():]) if reply else ""))
    return recipients


def _text_report(message: Message, envelope_from: str, our_domain: str) -> Report | None:
    """A report written as text (see ``_TEXT_FORMS``), or None."""
    text = _report_text(message)
    report, copy = _cut_copy(text)
    opening = report[:4000].casefold()
    subject = _header(message, "Subject").casefold()
    form = action = ""
    for name, phrase, said in _TEXT_FORMS:
        if phrase in opening:
            form, action = name, said
            break
    if not form:
        for phrase, said in _BOUNCE_SUBJECTS:
            if subject.startswith(phrase) or subject.startswith("re: " + phrase):
                form, action = "text", said
                break
    if not form or not _from_mail_system(message, envelope_from):
        return None
    if auto_reply_reason(message, auto_submitted=False):
        # An out-of-office (its null sender as RFC 3834 asks) that happens to say
        # "could not be delivered": never a report. Reports carry Auto-Submitted too,
        # so only the other marks tell.
        return None
    if action == "failed" and form in ("text", "Exim"):
        # A failure notice that speaks only of delays is a warning (Exim's, Sendmail's).
        if any(p in opening for p in ("has not yet been delivered", "will continue to try",
                                      "delivery attempts will continue")):
            action = "delayed"
    hint = [a.strip().lower() for a in _header(message, "X-Failed-Recipients").split(",")
            if "@" in a][:MOST_RECIPIENTS]
    recipients = _text_recipients(report, action, hint, our_domain)
    if form == "qmail" and action == "failed" and "permanent error" in opening:
        # qmail says so in words and may quote no reply code.
        recipients = [r if r.status_class else Recipient(r.address, r.action, "5.0.0",
                                                         r.diagnostic)
                      for r in recipients]
    return Report(form, tuple(recipients), tuple(_MESSAGE_ID.findall(copy[:TEXT_READ]))[:5])


# -- the whole ------------------------------------------------------------------------


def read_report(message: EmailMessage | Message, envelope_from: str = "",
                our_domain: str = "") -> Report | None:
    """What a delivery report says (see the module text), or None when ``message`` is
    not one. ``envelope_from``: its envelope sender (a text report must come from the
    mail system); ``our_domain``: addresses there are never a failed recipient."""
    our_domain = our_domain.lower()
    blocks: list[dict[str, str]] = []
    message_ids: list[str] = []
    for part in message.walk():
        kind = part.get_content_type()
        if kind in _REPORT_TYPES:
            blocks.extend(_field_blocks(part))
        elif kind in _RETURNED_HEADER_TYPES:
            message_ids.extend(_MESSAGE_ID.findall(_text_of(part)))
        elif kind in _RETURNED_MESSAGE_TYPES:
            inner = part.get_payload()
            if isinstance(inner, list) and inner and isinstance(inner[0], Message):
                value = _header(inner[0], "Message-ID")
                message_ids.extend(re.findall(r"<[^<>\s]{1,250}>", value)[:1])
        if len(message_ids) >= 5:
            break
    recipients = _dsn_recipients(blocks)
    if recipients:
        return Report("RFC 3464", tuple(recipients), tuple(dict.fromkeys(message_ids)))
    text = _text_report(message, envelope_from, our_domain)
    if text is not None and message_ids and not text.message_ids:
        text = Report(text.form, text.recipients, tuple(dict.fromkeys(message_ids)))
    return text
