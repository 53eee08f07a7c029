"""Mail the server must not answer (DESIGN §2.4, §2.8): automatic mail, lists, bounces,
loops.

``reason_to_ignore`` returns a short reason for the log and the inbox note, or None when
the mail is a person's and must be answered. The worker asks it before it counts the
daily reply cap or a sender's share, and before any password is checked, so a dropped
mail costs its sender nothing. ``auto_reply_reason`` is the part that recognises
auto-replies (out-of-office, vacation); the opt-in asks it too.
"""

from __future__ import annotations

import re
import unicodedata
from email.message import EmailMessage, Message
from functools import lru_cache
from email.utils import getaddresses

from .validation import (
    address_problem, decode_encoded_words, has_unsafe_characters, normalise_address,
)

__all__ = [
    "reason_to_ignore", "auto_reply_reason", "local_part", "is_our_address", "addresses_in",
    "answer_address",
    "answer_address_problem",
]

_COMMENT = re.compile(r"\([^()]*\)")
_BULK_PRECEDENCE = {"bulk", "junk", "list"}
_SYSTEM_LOCALS = {"mailer-daemon", "postmaster"}
_REPORT_TYPES = {
    "message/delivery-status",
    "message/global-delivery-status",
    "message/disposition-notification",
    "message/global-disposition-notification",
    "message/feedback-report",
}


def _bare(address: str) -> str:
    return address.strip().strip("<>").strip().lower()


def local_part(address: str) -> str:
    """The part before the last ``@`` (the whole text when there is none), lower case."""
    bare = _bare(address)
    return bare.rsplit("@", 1)[0] if "@" in bare else bare


def is_our_address(address: str, our_address: str) -> bool:
    """True for the server address and every ``<local>+anything@<domain>`` (any case)."""
    bare, ours = _bare(address), _bare(our_address)
    if not bare or "@" not in bare or has_unsafe_characters(bare) or len(bare) > 320:
        return False
    if bare == ours:
        return True
    local, _, domain = bare.rpartition("@")
    our_local, _, our_domain = ours.rpartition("@")
    return domain == our_domain and local.startswith(our_local + "+")


def addresses_in(message: Message, header: str) -> list[str]:
    """Every address in every ``header`` line of ``message`` (empty on garbage)."""
    try:
        values = tuple(str(value) for value in message.get_all(header, []))
    except Exception:  # a header the parser could not make sense of
        return []
    if not values:
        return []
    if sum(map(len, values)) > _KEPT_HEADER_LENGTH:
        return list(_addresses.__wrapped__(values))
    return list(_addresses(values))


#: Header values up to this length are kept with their addresses (``_addresses``).
_KEPT_HEADER_LENGTH = 1000


@lru_cache(maxsize=1024)
def _addresses(values: tuple[str, ...]) -> tuple[str, ...]:
    """The addresses in these header values. Kept (short ones): the worker and the
    service layer read the same From and Reply-To several times a mail, and a player's
    headers are the same in every mail; parsing them is most of what reading an
    address costs."""
    try:
        return tuple(addr for _, addr in getaddresses(list(values)) if addr)
    except Exception:
        return ()


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except Exception:
        return "?"
    return "" if value is None else " ".join(str(value).split())


def _system_sender(address: str) -> str | None:
    local = local_part(address)
    if local in _SYSTEM_LOCALS:
        return local
    if local.startswith("owner-"):
        return "owner-*"
    if local.endswith("-request"):
        return "*-request"
    return None


def _is_report(message: Message) -> str | None:
    if message.get_content_type() == "multipart/report":
        report = message.get_param("report-type", header="content-type")
        return f"multipart/report ({report})" if report else "multipart/report"
    if message.get_param("report-type", header="content-type"):
        return "report-type=" + str(message.get_param("report-type", header="content-type"))
    for part in message.walk():
        if part.get_content_type() in _REPORT_TYPES:
            return part.get_content_type()
    return None


#: Headers that common responders (Yahoo, AOL, cPanel, Zimbra, Courier, hosting
#: panels, CRM systems) put on the replies they generate instead of RFC 3834's
#: Auto-Submitted: any value but a negative one marks an auto-reply.
#: ``X-Auto-Response-Suppress`` is deliberately not among them: Outlook and Exchange
#: put it on people's mail too (it asks others not to auto-reply, it does not say the
#: mail is one), and a person's reply must never be dropped.
_MARKER_HEADERS = (
    "X-Autoreply", "X-Auto-Reply", "X-Autorespond", "X-Autoresponder", "X-Mail-Autoreply",
    "X-Autoreply-From", "X-Autoresponse-From",
)
_NEGATIVE = {"no", "false", "0", "off", "none"}
#: Headers whose value names an auto-reply: (header, the value's words, one of which it
#: must hold, or be when ``whole``).  Delivered-To normally holds an address, so only
#: the whole value ``Autoresponder`` (as some responders set it) counts there.
_MARKER_VALUES: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("Precedence", ("auto_reply", "auto-reply"), False),
    ("X-Precedence", ("auto_reply", "auto-reply"), False),
    ("X-Autogenerated", ("reply",), False),
    ("X-POST-MessageClass", ("autoresponder",), False),
    ("X-FC-MachineGenerated", ("true",), True),
    ("Delivered-To", ("autoresponder",), True),
)

#: The opening of an auto-reply's Subject, casefolded, in the common languages: a phrase
#: no player starts a command with.  A phrase must stand as words of its own (not the
#: start of a longer word); the last group are single words that could open a person's
#: own Subject, so they count only with a colon (or alone, or bracketed) after them.
_AUTO_PHRASES = (
    "out of office", "out of the office", "out-of-office", "automatic reply",
    "automatic response", "automated reply", "automated response", "auto reply",
    "auto-reply", "autoreply", "auto response", "auto-response", "autoresponse",
    "autoresponder", "auto-responder", "vacation reply", "vacation response",
    "autosvar", "automatisk svar", "automatiskt svar", "automatisch antwoord",
    "automatische antwort", "abwesenheitsnotiz", "automatische abwesenheitsnotiz",
    "réponse automatique", "reponse automatique", "respuesta automática",
    "respuesta automatica", "fuera de la oficina", "fuera de oficina", "risposta automatica",
    "fuori sede", "fuori ufficio", "resposta automática", "resposta automatica",
    "fora do escritório", "fora do escritorio", "automaattinen vastaus",
    "automatyczna odpowiedź", "automatyczna odpowiedz", "automatická odpověď",
    "automatikus válasz", "автоматический ответ", "автоответ", "αυτόματη απάντηση",
    "otomatik yanıt", "otomatik yanit", "otomatik cevap",
)
#: Written without blanks between words: a prefix is enough.
_AUTO_PREFIXES = (
    "自动回复", "自動回覆", "自動回復", "自动答复", "自動応答", "自動返信", "不在", "자동 회신",
    "자동 응답",
)
_AUTO_WORDS = (
    "absence", "absent", "ausente", "afwezig", "abwesend", "frånvaro", "fravær", "fravaer",
    "poissa", "nieobecność", "assente", "ooo", "auto",
)
_AUTO_SUBJECT = re.compile(
    r"[\[(]?\s*(?:"
    r"(?P<phrase>" + "|".join(map(re.escape, _AUTO_PHRASES)) + r")(?!\w)"
    r"|(?P<prefix>" + "|".join(map(re.escape, _AUTO_PREFIXES)) + r")"
    r"|(?P<word>" + "|".join(map(re.escape, _AUTO_WORDS)) + r")\s*(?:[:：\])]|$)"
    r")"
)
#: Only the Subject's opening is read: the phrases are short, the cost stays bounded.
_SUBJECT_OPENING = 200


def _shown(value: str, limit: int = 60) -> str:
    """A header value fit for the log and the inbox note: short, printable ASCII."""
    kept = "".join(c if " " <= c <= "~" else "?" for c in value[:limit])
    return kept + ("..." if len(value) > limit else "")


def auto_reply_reason(message: EmailMessage | Message, *,
                      auto_submitted: bool = True) -> str | None:
    """Why this mail is an automatic reply (out-of-office, vacation, autoresponder), or
    None: RFC 3834's Auto-Submitted (any value but ``no``), the headers common
    responders set instead, or a Subject that opens with a vacation phrase.

    The headers are read as the mail wrote them (``raw_items``), each up to a fixed
    length: the cost is linear in the header block whatever policy parsed the mail (the
    modern policy's own parsing of a long header is not). ``auto_submitted`` False:
    Auto-Submitted is not read (delivery reports carry it too; ``service.bounces``
    tells an auto-reply from a report by the other marks)."""
    values = _marker_values(message)
    for auto in values.get("auto-submitted", [])[:1] if auto_submitted else ():
        auto = _COMMENT.sub(" ", auto).split(";", 1)[0].strip()
        if auto and auto.lower() != "no":
            return f"Auto-Submitted: {_shown(auto)}"
    for name in _MARKER_HEADERS:
        for value in values.get(name.lower(), [])[:1]:
            if value and value.lower().strip(" .;") not in _NEGATIVE:
                return f"auto-reply ({name}: {_shown(value)})"
    for name, words, whole in _MARKER_VALUES:
        for value in values.get(name.lower(), []):
            value = value.lower()
            if (value in words) if whole else any(word in value for word in words):
                return f"auto-reply ({name}: {_shown(value)})"
    for subject in values.get("subject", [])[:1]:
        opening = unicodedata.normalize("NFKC", subject[:_SUBJECT_OPENING]).casefold()
        found = _AUTO_SUBJECT.match(opening)
        if found:
            return f"auto-reply (Subject begins {_shown(found.group(0).strip(), 40)!r})"
    return None


#: The headers ``auto_reply_reason`` reads (lower case).
_READ_HEADERS = frozenset(
    ["auto-submitted", "subject"] + [name.lower() for name in _MARKER_HEADERS]
    + [name.lower() for name, _, _ in _MARKER_VALUES]
)
#: Of each header, at most this many characters are read: every mark is short.
_VALUE_READ = 1000


def _marker_values(message: Message) -> dict[str, list[str]]:
    """The values of the headers that can mark an auto-reply, by lower-case name, each
    unfolded, decoded (RFC 2047) and its blanks made single spaces."""
    found: dict[str, list[str]] = {}
    try:
        items = list(message.raw_items())
    except Exception:  # a header block the parser could not make sense of
        return found
    for name, value in items:
        key = str(name).lower()
        if key not in _READ_HEADERS:
            continue
        text = "".join(str(value)[:_VALUE_READ].splitlines())
        if not text.isascii():  # bytes that were not UTF-8 come as surrogates
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if "=?" in text:
            text = decode_encoded_words(text)
        found.setdefault(key, []).append(" ".join(text.split()))
    return found


def reason_to_ignore(
    message: EmailMessage | Message, envelope_from: str, our_address: str
) -> str | None:
    """Why this mail must be dropped unanswered, or None when it is to be answered."""
    envelope = _bare(envelope_from or "")
    if not envelope:
        return "empty envelope sender (a bounce)"
    auto_reply = auto_reply_reason(message)
    if auto_reply:
        return auto_reply
    for name in ("Precedence", "X-Precedence"):
        precedence = _header(message, name).lower()
        if precedence in _BULK_PRECEDENCE:
            return f"{name}: {precedence}"
    if message.get("List-Id") is not None:
        return "mailing list mail (List-Id)"
    for value in message.get_all("X-Loop", []) or []:
        for _, addr in getaddresses([str(value)]):
            if addr and _bare(addr) == _bare(our_address):
                return "X-Loop: our own"
        if _bare(str(value)) == _bare(our_address):
            return "X-Loop: our own"
    report = _is_report(message)
    if report:
        return f"delivery report ({report})"
    system = _system_sender(envelope)
    if system:
        return f"envelope sender is {system}"
    for address in addresses_in(message, "From"):
        system = _system_sender(address)
        if system:
            return f"From is {system}"
        if is_our_address(address, our_address):
            return "From is our own address"
    if is_our_address(envelope, our_address):
        return "envelope sender is our own address"
    for address in addresses_in(message, "Reply-To"):
        if is_our_address(address, our_address):
            return "Reply-To is our own address"
    return None


def _answer_candidates(message: Message, envelope_from: str) -> list[str]:
    """Where answers could go, in order: Reply-To, From, the envelope sender."""
    found: list[str] = []
    for header in ("Reply-To", "From"):
        found.extend(a for a in addresses_in(message, header) if "@" in a)
    found.append(envelope_from or "")
    return [a.strip() for a in found]


def answer_address(message: EmailMessage | Message, envelope_from: str) -> str:
    """Where answers to this mail go: the first usable address of Reply-To, From and
    the envelope sender, normalised (``mail.validation.normalise_address``); ``""``
    when none can take mail (too long, control characters, not an address...).

    The worker's daily cap and the service layer's answers both use it, so the cap
    counts the address the answers really go to.
    """
    for candidate in _answer_candidates(message, envelope_from):
        if address_problem(_strip_brackets(candidate)) is None:
            return normalise_address(candidate)
    return ""


def answer_address_problem(message: EmailMessage | Message, envelope_from: str) -> str:
    """Why no address of the mail can be answered (for the drop note; no value quoted)."""
    for candidate in _answer_candidates(message, envelope_from):
        problem = address_problem(_strip_brackets(candidate))
        if candidate and problem is not None:
            return f"the sender {problem.removeprefix('the ')}"
    return "the mail names no sender"


def _strip_brackets(address: str) -> str:
    bare = address.strip()
    return bare[1:-1].strip() if bare.startswith("<") and bare.endswith(">") else bare
