"""Checking what comes in from the open internet before it reaches a column, a header,
a log line or the relay (DESIGN §2.6 "Isolation").

Everything a stranger's mail carries is text of unknown quality: bytes that are not
UTF-8, control characters, line feeds hidden in encoded words, addresses of any length,
numbers of any size. The functions here turn such text into something every later step
accepts (``clean_text``, ``one_line``), or say in a short sentence why it cannot be used
(``address_problem``), so that no single mail can make the worker fail — on SQLite and
PostgreSQL alike (PostgreSQL refuses NUL characters and over-long strings, SQLite does
not; both refuse text that is not valid Unicode).

Reasons and errors produced here never quote the offending value: they end up in logs
and in ``last_error``, and a value that broke one step may break the next one too.
"""

from __future__ import annotations

import re
import traceback
from email.header import decode_header

from ..values import INTEGER_MAX, INTEGER_MIN, ValueFreeError

__all__ = [
    "ValueFreeError",
    "MAX_ADDRESS_LENGTH",
    "MAX_LOCAL_PART_LENGTH",
    "MAX_DOMAIN_LENGTH",
    "MAX_HEADER_TEXT",
    "INTEGER_MIN",
    "INTEGER_MAX",
    "clean_text",
    "one_line",
    "has_unsafe_characters",
    "address_problem",
    "normalise_address",
    "needs_smtputf8",
    "fits_integer_column",
    "parse_bounded_int",
    "error_summary",
    "decode_encoded_words",
    "message_ids",
    "BIDI_CONTROLS",
    "without_bidi_controls",
]

#: RFC 5321 §4.5.3.1 (path of 256 octets less the angle brackets); RFC 3696 erratum 1690.
MAX_ADDRESS_LENGTH = 254
MAX_LOCAL_PART_LENGTH = 64
MAX_DOMAIN_LENGTH = 253
_MAX_LABEL_LENGTH = 63
#: Longest header text kept after decoding (RFC 5322 lines are at most 998 octets; a
#: folded header can be longer, but nothing the server reads needs more than this).
MAX_HEADER_TEXT = 4000

#: C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_EXCEPT_LINES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Invisible characters some mail programs put between words (zero-width space, word
#: joiner, byte order mark): read as the blanks they stand for.
_INVISIBLE_BLANKS = re.compile("[\u200b\u2060\ufeff]")
#: The bidirectional formatting characters (Unicode UAX #9): the Arabic letter mark,
#: the left-to-right and right-to-left marks, the embeddings and overrides with their
#: pop, and the isolates with theirs.  Invisible, they make text read in another order
#: than it is written ("Trojan Source"), and an unclosed one reorders what follows it.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_WITHOUT_BIDI = str.maketrans(dict.fromkeys(map(ord, BIDI_CONTROLS)))


def without_bidi_controls(text: str) -> str:
    """``text`` without its bidirectional formatting characters (``BIDI_CONTROLS``).

    Removed, not isolated: inside an isolate they could still make a user's own words
    (a move, a name) read as others, and without them the letters alone set the order,
    so right-to-left writing still reads as written.  Linear in the text's length."""
    return text.translate(_WITHOUT_BIDI)


#: What stands for a character that could not be read or kept.
REPLACEMENT = "\ufffd"
_BLANKS = re.compile(r"\s+")
#: Characters RFC 5322 allows in a dot-atom local part (and any non-ASCII, RFC 6531).
_LOCAL_ATOM = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u0080-\U0010ffff]+$")
_DOMAIN_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")


def _valid_unicode(text: str) -> str:
    """``text`` with every surrogate gone: bytes a parser kept as ``surrogateescape``
    are read again as UTF-8 (so 8-bit UTF-8 headers come out right), the rest become
    U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # surrogates that did not come from bytes
        return _SURROGATE.sub("\ufffd", text)


def clean_text(text: str, *, keep_newlines: bool = False, limit: int | None = None) -> str:
    """Valid Unicode without control characters (tabs become blanks).

    With ``keep_newlines`` line ends survive (as ``\\n``), for bodies; otherwise the
    text is made one line. ``limit`` cuts it to that many characters.
    """
    text = _INVISIBLE_BLANKS.sub(" ", _valid_unicode(text))
    # Other controls become U+FFFD, not nothing: "a\x01b@x" must not turn into the
    # address of somebody else ("ab@x"); with U+FFFD it is plainly unusable.
    if keep_newlines:
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
        text = _CONTROL_EXCEPT_LINES.sub(REPLACEMENT, text)
    else:
        text = _CONTROL.sub(
            lambda m: " " if m.group() in "\t\r\n\u2028\u2029" else REPLACEMENT, text
        )
    if limit is not None and len(text) > limit:
        text = text[:limit]
    return text


def one_line(text: str, limit: int | None = MAX_HEADER_TEXT) -> str:
    """Clean header text: one line, runs of blanks made one blank, at most ``limit``."""
    return _BLANKS.sub(" ", clean_text(text, limit=None)).strip()[: limit or None]


def has_unsafe_characters(text: str) -> bool:
    """True when ``text`` holds a control character or is not valid Unicode."""
    return bool(_CONTROL.search(text) or _SURROGATE.search(text))


def _split(address: str) -> tuple[str, str]:
    local, _, domain = address.rpartition("@")
    return local, domain


def _ascii_domain(domain: str) -> str | None:
    """The domain in ASCII (IDNA A-labels), lower case, or None when it is not one."""
    domain = domain.lower().rstrip(".") if domain.endswith(".") and len(domain) > 1 else domain.lower()
    if not domain.isascii():
        try:
            domain = domain.encode("idna").decode("ascii")
        except (UnicodeError, ValueError):
            return None
    if not domain or len(domain) > MAX_DOMAIN_LENGTH:
        return None
    labels = domain.split(".")
    if any(len(label) > _MAX_LABEL_LENGTH or not _DOMAIN_LABEL.match(label) for label in labels):
        return None
    return domain


def address_problem(address: str) -> str | None:
    """Why ``address`` cannot be used to send mail to (one short phrase), or None.

    A usable address is one plain ``local@domain`` (no display name, no quoted local
    part, no source route or address literal) of at most 254 characters, with a local
    part of at most 64, a domain of DNS labels (internationalised domains allowed) and
    no control character. A non-ASCII local part is usable: it needs a relay that
    offers SMTPUTF8, which the sender finds out.
    """
    if not address:
        return "there is no address"
    if _SURROGATE.search(address) or REPLACEMENT in address:
        return "the address is not valid UTF-8"
    if _CONTROL.search(address):
        return "the address contains control characters"
    if len(address) > MAX_ADDRESS_LENGTH:
        return f"the address is longer than {MAX_ADDRESS_LENGTH} characters"
    if _BLANKS.search(address):
        return "the address contains blanks"
    if address.count("@") != 1:
        return "the address is not of the form name@domain"
    local, domain = _split(address)
    if not local or not domain:
        return "the address is not of the form name@domain"
    if len(local) > MAX_LOCAL_PART_LENGTH:
        return f"the part before @ is longer than {MAX_LOCAL_PART_LENGTH} characters"
    if local.startswith(".") or local.endswith(".") or ".." in local:
        return "the part before @ has a misplaced dot"
    if not all(_LOCAL_ATOM.match(atom) for atom in local.split(".")):
        return "the part before @ contains characters mail addresses cannot have"
    if _ascii_domain(domain) is None:
        return "the domain is not a valid domain name"
    return None


def normalise_address(address: str) -> str:
    """A usable address in the form the server stores and compares: lower case, the
    domain in ASCII (``jörg@exämple.org`` → ``jörg@xn--exmple-cua.org``).

    Raises ValueFreeError (with ``address_problem``'s reason) when it is not usable.
    """
    bare = address.strip()
    if bare.startswith("<") and bare.endswith(">"):
        bare = bare[1:-1].strip()
    problem = address_problem(bare)
    if problem is not None:
        raise ValueFreeError(problem)
    local, domain = _split(bare)
    ascii_domain = _ascii_domain(domain)
    assert ascii_domain is not None  # address_problem checked it
    return f"{local.lower()}@{ascii_domain}"


def needs_smtputf8(address: str) -> bool:
    """True when mail to ``address`` can only go through a relay offering SMTPUTF8."""
    return not address.isascii()


def fits_integer_column(value: int) -> bool:
    """True when ``value`` fits an Integer column on every database the server runs on."""
    return INTEGER_MIN <= value <= INTEGER_MAX


def parse_bounded_int(word: str, low: int = 1, high: int = INTEGER_MAX) -> int | None:
    """The ASCII decimal ``word`` as an int within [low, high], or None.

    Never converts an absurdly long digit string (a 5,000-digit "board number" is
    refused by its length, not by Python's int-conversion limit).
    """
    if not word or not word.isascii() or not word.isdigit() or len(word) > len(str(high)) + 1:
        return None
    value = int(word)
    return value if low <= value <= high else None


def error_summary(error: BaseException, limit: int = 4000) -> str:
    """What went wrong, on one line, without the failing value (for logs and
    ``last_error``).

    The messages of ordinary exceptions often quote the value that broke them (a
    database error quotes its parameters, a ValueError the text it refused), and such a
    value may break the next step too, or hold a password. So only the type of each
    exception in the chain is kept, with the innermost frames as ``file:line in
    function``; the message only of a ``ValueFreeError``, which never quotes one.
    """
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(parts) < 4:
        seen.add(id(current))
        name = type(current).__name__
        if isinstance(current, ValueFreeError):
            name += ": " + one_line(str(current), limit=300)
        frames = traceback.extract_tb(current.__traceback__)[-4:]
        where = " <- ".join(
            f"{frame.filename.rsplit('/', 2)[-1]}:{frame.lineno} in {frame.name}"
            for frame in reversed(frames)
        )
        parts.append(f"{name} at {where}" if where else name)
        current = current.__cause__ or current.__context__
    text = one_line("; caused by ".join(parts), limit=None)
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: Headers are decoded in pieces of about this many characters (see
#: ``decode_encoded_words``).
_DECODE_PIECE = 2000
_HEADER_BLANKS = re.compile(r"[ \t]+")  # where a long header is cut (not _BLANKS)
_TOKEN = re.compile(r"[^ \t]+")
#: An encoded word as ``decode_header`` finds one (its own pattern, whole token).
_ENCODED_WORD = re.compile(r"=\?[^?]*?\?[qQbB]\?.*?\?=", re.DOTALL)


def decode_encoded_words(text: str, piece: int = _DECODE_PIECE) -> str:
    """A header's RFC 2047 encoded words decoded; never raises.

    A word in a charset Python does not know is read as UTF-8 with replacement
    characters, not left encoded: text that still looked like an encoded word would be
    decoded again (with the bytes kept as surrogates) wherever it is written into a
    header of an answer, and writing that answer would fail. Malformed words that no
    decoder recognises stay as written.

    The standard library's ``decode_header`` takes time quadratic in the number of
    words (it joins each to the last by copying), so a long header is decoded in pieces
    of about ``piece`` characters cut at blanks, joined as ``decode_header`` would join
    them: the blanks between two encoded words dropped, any other kept.
    """
    if "=?" not in text:
        return text
    if len(text) <= piece:
        return _decode_piece(text)
    out: list[str] = []
    start = 0
    for blanks in _HEADER_BLANKS.finditer(text):
        if blanks.start() - start < piece:
            continue
        left = text[start:blanks.start()]
        last = _TOKEN.findall(left[-200:])[-1:] if left else []
        first = _TOKEN.match(text, blanks.end())
        out.append(_decode_piece(left))
        between_words = (bool(last) and _ENCODED_WORD.fullmatch(last[0]) is not None
                         and first is not None
                         and _ENCODED_WORD.fullmatch(first.group()) is not None)
        if not between_words:
            out.append(blanks.group())
        start = blanks.end()
    out.append(_decode_piece(text[start:]))
    return "".join(out)


def _decode_piece(text: str) -> str:
    try:
        pieces = decode_header(text)
    except Exception:  # malformed: nobody decodes it later either
        return text
    out: list[str] = []
    for piece, charset in pieces:
        if isinstance(piece, str):
            out.append(piece)
            continue
        try:
            out.append(piece.decode(charset or "ascii", "replace"))
        except (LookupError, UnicodeError, ValueError):
            out.append(piece.decode("utf-8", "replace"))
    return "".join(out)


#: One msg-id as RFC 5322 writes it: ``<left@right>`` without blanks or brackets inside.
_MESSAGE_ID = re.compile(r"<[^<>\s]{1,900}>")


def message_ids(text: str) -> list[str]:
    """The msg-ids in a Message-ID, In-Reply-To or References header, and nothing else.

    An answer copies them into its own In-Reply-To and References; anything that is
    not a plain ``<...>`` id (a malformed encoded word, a control character, a stray
    word) is left out, so the answer's headers can always be written.
    """
    found = _MESSAGE_ID.findall(text)
    return [mid for mid in found if "=?" not in mid and not has_unsafe_characters(mid)]
