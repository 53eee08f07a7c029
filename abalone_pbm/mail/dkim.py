"""DKIM signatures (RFC 6376) on outgoing mail, made by the sender as it sends.

Where and when: the outbox keeps each mail's unsigned bytes; the sender signs a copy
just before it hands the mail to the relay (or writes it into the Maildir), in its own
thread, never in the worker's transaction. So a retry carries a fresh ``t=``, a new key
takes effect at the next restart for every mail still waiting, and an admin with no
MTA of their own (a smarthost only) still sends signed mail.

How: ``c=relaxed/relaxed`` canonicalisation, SHA-256, an RSA (``rsa-sha256``) or
Ed25519 (``ed25519-sha256``, RFC 8463) key from a PEM file. The signature itself is
made with ``cryptography`` (OpenSSL): a 26 KB board mail costs 1.4 ms with RSA-2048
where dkimpy's own signing, whose RSA is pure Python and holds the interpreter, takes
11 ms (``benchmarks/dkim_signing.py``); dkimpy is the independent verifier of the
tests and of ``abalone-pbm dns --check``.

The headers that say who wrote the mail, what it is about and how to answer or leave it
are signed; those a reader sees or acts on are also "over-signed" (named once more than
they occur), so nobody on the way can add a second From, Subject or List-Unsubscribe
without breaking the signature. Every step is one pass over the mail: the cost is
linear in its size.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import time
from dataclasses import dataclass
from typing import Callable, Union

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

__all__ = ["DkimError", "DkimKey", "DkimSigner", "load_key", "generate_key",
           "txt_record_strings", "SIGNED_HEADERS", "OVERSIGNED_HEADERS"]

PrivateKey = Union[rsa.RSAPrivateKey, ed25519.Ed25519PrivateKey]

#: Headers signed when present, in this order.
SIGNED_HEADERS: tuple[str, ...] = (
    "from", "sender", "reply-to", "to", "cc", "subject", "date", "message-id",
    "in-reply-to", "references", "mime-version", "content-type",
    "content-transfer-encoding", "auto-submitted", "list-id", "list-unsubscribe",
    "list-unsubscribe-post", "list-help",
)
#: Headers named once more than they occur: no one may add another on the way.
OVERSIGNED_HEADERS: frozenset[str] = frozenset({
    "from", "sender", "reply-to", "to", "cc", "subject", "date", "message-id",
    "list-unsubscribe", "list-unsubscribe-post",
})
#: RSA keys shorter than this are refused: receivers ignore signatures under 1024 bits
#: (RFC 8301), and the big providers want 2048.
MIN_RSA_BITS = 1024

_LINE_ENDS = re.compile(rb"\r\n|\n|\r(?!\n)")
_BLANKS = re.compile(rb"[ \t]+")
_BLANK_BEFORE_CRLF = re.compile(rb" \r\n")
_FIELD_NAME = re.compile(rb"^([!-9;-~]+)[ \t]*:")
_SELECTOR = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")


class DkimError(ValueError):
    """A key or setting DKIM cannot use; the text says which and why."""


@dataclass(frozen=True)
class DkimKey:
    """A private key with the domain (``d=``) and selector (``s=``) it signs for."""

    domain: str
    selector: str
    private_key: PrivateKey
    path: str

    @property
    def algorithm(self) -> str:
        """The ``a=`` tag: ``rsa-sha256`` or ``ed25519-sha256``."""
        return "ed25519-sha256" if isinstance(self.private_key, ed25519.Ed25519PrivateKey) \
            else "rsa-sha256"

    @property
    def kind(self) -> str:
        """The ``k=`` tag of the DNS record: ``rsa`` or ``ed25519``."""
        return self.algorithm.split("-", 1)[0]

    @property
    def description(self) -> str:
        """e.g. ``RSA-2048`` or ``Ed25519``, for status and the log."""
        if isinstance(self.private_key, rsa.RSAPrivateKey):
            return f"RSA-{self.private_key.key_size}"
        return "Ed25519"

    @property
    def record_name(self) -> str:
        """Where the public key is published: ``<selector>._domainkey.<domain>``."""
        return f"{self.selector}._domainkey.{self.domain}"

    @property
    def public_key_base64(self) -> str:
        """The ``p=`` tag: RSA's SubjectPublicKeyInfo, Ed25519's raw 32 bytes."""
        public = self.private_key.public_key()
        if isinstance(public, ed25519.Ed25519PublicKey):
            data = public.public_bytes(serialization.Encoding.Raw,
                                       serialization.PublicFormat.Raw)
        else:
            data = public.public_bytes(serialization.Encoding.DER,
                                       serialization.PublicFormat.SubjectPublicKeyInfo)
        return base64.b64encode(data).decode("ascii")

    @property
    def record_value(self) -> str:
        """The TXT record's text, one string before it is cut into DNS pieces."""
        return f"v=DKIM1; k={self.kind}; p={self.public_key_base64}"


def txt_record_strings(value: str, size: int = 255) -> list[str]:
    """``value`` as the quoted strings of one TXT record: each at most 255 bytes (DNS's
    limit per string); resolvers join them back without a separator."""
    return [value[start:start + size] for start in range(0, len(value), size)] or [""]


def _check_names(domain: str, selector: str) -> None:
    if not _SELECTOR.match(selector):
        raise DkimError(f"the DKIM selector {selector!r} is not a DNS label "
                        "(letters, digits, hyphens; dots between labels)")
    if not _SELECTOR.match(domain) or "." not in domain:
        raise DkimError(f"the DKIM domain {domain!r} is not a domain name")


def load_key(path: str, domain: str, selector: str) -> DkimKey:
    """The PEM private key at ``path`` (RSA of at least 1024 bits, or Ed25519)."""
    _check_names(domain, selector)
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 16)
    except OSError as error:
        raise DkimError(f"the DKIM key {path} cannot be read: "
                        f"{error.strerror or error}") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise DkimError(f"the DKIM key {path} is no unencrypted PEM private key "
                        f"({' '.join(str(error).split())[:200]})") from None
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < MIN_RSA_BITS:
            raise DkimError(f"the DKIM key {path} has {key.key_size} bits; receivers "
                            f"ignore RSA keys under {MIN_RSA_BITS} (2048 is usual)")
    elif not isinstance(key, ed25519.Ed25519PrivateKey):
        raise DkimError(f"the DKIM key {path} is a {key.__class__.__name__}; DKIM signs "
                        "with RSA or Ed25519")
    return DkimKey(domain=domain.lower(), selector=selector, private_key=key, path=path)


def generate_key(path: str, kind: str = "rsa", bits: int = 2048) -> None:
    """Write a new private key to ``path`` (mode 0600), refusing to overwrite one."""
    key: PrivateKey
    if kind == "rsa":
        if bits < 2048:
            raise DkimError("a new RSA key has at least 2048 bits")
        key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    elif kind == "ed25519":
        key = ed25519.Ed25519PrivateKey.generate()
    else:
        raise DkimError(f"a DKIM key is rsa or ed25519, not {kind!r}")
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise DkimError(f"{path} exists already; a key in use is never overwritten "
                        "(rotate to a new selector with a new file)") from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def _relaxed_header(field: bytes) -> bytes:
    """One header field, relaxed (RFC 6376 3.4.2): the name in lower case, folding
    undone, runs of blanks as one space, no blanks around the colon or at the end."""
    name, _, value = field.partition(b":")
    value = _BLANKS.sub(b" ", value.replace(b"\r\n", b"")).strip(b" ")
    return name.strip(b" \t").lower() + b":" + value


def _relaxed_body(body: bytes) -> bytes:
    """The body, relaxed (RFC 6376 3.4.4): runs of blanks as one space, none at a
    line's end, no empty lines at the end; a non-empty body ends with CRLF."""
    body = _BLANK_BEFORE_CRLF.sub(b"\r\n", _BLANKS.sub(b" ", body))
    body = body.rstrip(b"\r\n")
    if body.endswith(b" "):
        body = body.rstrip(b" ")
    return body + b"\r\n" if body else b""


def _fields(head: bytes) -> list[tuple[str, bytes]]:
    """The header's fields as (lower-case name, the field's bytes with folding)."""
    found: list[tuple[str, bytes]] = []
    for line in head.split(b"\r\n"):
        if line[:1] in (b" ", b"\t") and found:
            name, field = found[-1]
            found[-1] = (name, field + b"\r\n" + line)
            continue
        match = _FIELD_NAME.match(line)
        if match is not None:
            found.append((match.group(1).decode("ascii").lower(), line))
    return found


def _fold(tags: list[str], width: int = 76) -> str:
    """``tags`` joined by "; ", a line break before a piece that would pass ``width``;
    the ``h=`` list may break after any colon (FWS is allowed there, RFC 6376 3.5)."""
    lines = ["DKIM-Signature:"]
    for index, tag in enumerate(tags):
        pieces = re.findall(r"[^:]+:?", tag) if tag.startswith("h=") else [tag]
        pieces[-1] += ";" if index < len(tags) - 1 else ""
        for number, piece in enumerate(pieces):
            text = piece if number else " " + piece
            if len(lines[-1]) + len(text) > width and lines[-1] != "DKIM-Signature:":
                lines.append(" " + piece)
            else:
                lines[-1] += text
    return "\r\n".join(lines)


class DkimSigner:
    """Signs mails with one key; safe to use from several threads at once."""

    def __init__(self, key: DkimKey, now: Callable[[], float] = time.time) -> None:
        self.key = key
        self._now = now

    def sign(self, raw: bytes) -> bytes:
        """``raw`` with CRLF line ends (as SMTP sends it) and a DKIM-Signature first."""
        raw = _LINE_ENDS.sub(b"\r\n", raw)
        head, separator, body = raw.partition(b"\r\n\r\n")
        if not separator:  # a header without a body: nothing follows its last line
            head, body = head.removesuffix(b"\r\n"), b""
        body_hash = base64.b64encode(hashlib.sha256(_relaxed_body(body)).digest())

        fields = _fields(head)
        count: dict[str, int] = {}
        for name, _field in fields:
            count[name] = count.get(name, 0) + 1
        names: list[str] = []
        for name in SIGNED_HEADERS:
            names += [name] * (count.get(name, 0) + (name in OVERSIGNED_HEADERS))

        # Each named instance is taken from the bottom up (RFC 6376 5.4.2); a name
        # beyond the instances present (over-signing) adds nothing to the hash.
        remaining = {name: [f for n, f in fields if n == name] for name in set(names)}
        hashed = bytearray()
        for name in names:
            if remaining[name]:
                hashed += _relaxed_header(remaining[name].pop()) + b"\r\n"

        tags = [
            "v=1", f"a={self.key.algorithm}", "c=relaxed/relaxed", f"d={self.key.domain}",
            f"s={self.key.selector}", f"t={int(self._now())}", "h=" + ":".join(names),
            f"bh={body_hash.decode('ascii')}", "b=",
        ]
        unsigned = _fold(tags)
        hashed += _relaxed_header(unsigned.encode("ascii"))
        signature = base64.b64encode(self._signature(bytes(hashed))).decode("ascii")
        # The signature goes after "b=" in pieces on lines of their own: relaxed
        # canonicalisation of the verifier removes the folding again.
        pieces = [signature[start:start + 72] for start in range(0, len(signature), 72)]
        header = unsigned + "".join("\r\n " + piece for piece in pieces)
        return header.encode("ascii") + b"\r\n" + raw

    def _signature(self, data: bytes) -> bytes:
        key = self.key.private_key
        if isinstance(key, ed25519.Ed25519PrivateKey):
            # RFC 8463: Ed25519 signs the SHA-256 digest of the data.
            return key.sign(hashlib.sha256(data).digest())
        return key.sign(data, padding.PKCS1v15(), hashes.SHA256())


#: Looks up a TXT record: the name (str) to the record's text, or None (dkimpy's shape).
TxtLookup = Callable[..., Union[bytes, str, None]]


def published_key(key: DkimKey, lookup: TxtLookup | None = None) -> str | None:
    """The ``p=`` of the TXT record at ``key.record_name`` (None: there is none)."""
    record = (lookup or resolve_txt)(key.record_name.encode("ascii"), timeout=3)
    if not record:
        return None
    text = record.decode("ascii", "replace") if isinstance(record, bytes) else record
    tags = dict(part.strip().partition("=")[::2] for part in text.split(";") if "=" in part)
    return "".join(tags.get("p", "").split())


def verify_published(signer: DkimSigner, lookup: TxtLookup | None = None) -> tuple[bool, str]:
    """Sign a sample mail and verify it with dkimpy against the record in DNS:
    (it verifies, a sentence saying so or why not)."""
    import dkim as dkimpy  # type: ignore[import-untyped]

    key = signer.key
    try:
        published = published_key(key, lookup)
    except Exception as error:  # the resolver's failures have no common base class
        return False, f"DNS lookup of {key.record_name} failed: {error.__class__.__name__}"
    if published is None:
        return False, (f"no DKIM record at {key.record_name} (`abalone-pbm dns` prints "
                       "it): receivers cannot check the signatures")
    if published != key.public_key_base64:
        return False, (f"the DKIM record at {key.record_name} holds another key than "
                       f"{key.path}: signatures fail")
    sample = (f"From: <postmaster@{key.domain}>\r\nTo: <postmaster@{key.domain}>\r\n"
              f"Subject: DKIM check\r\nMessage-ID: <dkim-check@{key.domain}>\r\n\r\n"
              "A signed sample.\r\n").encode("ascii")
    verified = dkimpy.verify(signer.sign(sample), dnsfunc=lookup or _dkimpy_lookup())
    if not verified:
        return False, f"a mail signed with {key.path} does not verify with {key.record_name}"
    return True, f"the record at {key.record_name} verifies signed mail"


def resolve_txt(name: bytes, timeout: float = 3) -> bytes | None:
    """The TXT record at ``name`` (its strings joined), None when the name has none;
    a resolver that cannot answer raises (unlike dkimpy's lookup, which says None)."""
    import dns.resolver

    try:
        answer = dns.resolver.resolve(name.decode("ascii"), "TXT", lifetime=timeout)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return None
    for record in answer:
        return b"".join(record.strings)
    return None


def _dkimpy_lookup() -> TxtLookup:
    return resolve_txt
