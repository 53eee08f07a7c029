"""A local smarthost for the tests: aiosmtpd with STARTTLS (or TLS from the start) and
AUTH, a certificate made here with ``cryptography``, and a mailbox of what it took."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mail_helpers import free_port

USER = "game-sender"


def make_certificate(directory: Path, name: str = "relay") -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost (it is its own CA):
    (certificate file, key file)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name}.test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / f"{name}.crt", directory / f"{name}.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


@dataclass
class Taken:
    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    encrypted: bool
    login: str | None


@dataclass
class SmarthostHandler:
    password: str
    received: list[Taken] = field(default_factory=list)
    logins: list[tuple[str, str, bool]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        assert isinstance(auth_data, LoginPassword)
        login = auth_data.login.decode()
        accepted = login == USER and auth_data.password.decode() == self.password
        with self.lock:
            self.logins.append((mechanism, login, accepted))
        # handled=False: aiosmtpd answers a refusal with its 535 itself.
        return AuthResult(success=accepted, handled=False, auth_data=auth_data)

    async def handle_DATA(self, server, session, envelope):
        login = session.auth_data.login.decode() \
            if isinstance(session.auth_data, LoginPassword) else None
        with self.lock:
            self.received.append(Taken(envelope.mail_from, list(envelope.rcpt_tos),
                                       envelope.original_content,
                                       server.transport.get_extra_info("ssl_object")
                                       is not None, login))
        return "250 2.0.0 Ok: queued"


class Smarthost:
    """A submission server on 127.0.0.1: ``mode`` "starttls" (offered, and required
    before AUTH and mail), "smtps" (TLS from the start) or "plain" (no TLS at all, no
    AUTH); ``mechanisms`` the AUTH mechanisms it offers."""

    def __init__(self, directory: Path, *, password: str = "right horse battery",
                 mode: str = "starttls", mechanisms: tuple[str, ...] = ("PLAIN", "LOGIN")
                 ) -> None:
        self.cert_file, self.key_file = make_certificate(directory)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert_file, self.key_file)
        self.handler = SmarthostHandler(password)
        self.port = free_port()
        excluded = [m for m in ("PLAIN", "LOGIN") if m not in mechanisms]
        options: dict[str, object] = dict(
            hostname="127.0.0.1", port=self.port, server_hostname="smarthost.test",
            authenticator=self.handler.authenticate, auth_exclude_mechanism=excluded)
        if mode == "starttls":
            options.update(tls_context=context, require_starttls=True, auth_required=True,
                           auth_require_tls=True)
        elif mode == "smtps":
            options.update(ssl_context=context, auth_required=True, auth_require_tls=False)
        else:
            options.update(auth_require_tls=True)  # no TLS, so no AUTH offered either
        self.mode = mode
        self.controller = Controller(self.handler, **options)  # type: ignore[arg-type]

    def start(self) -> Smarthost:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    def url(self, user: str = USER) -> str:
        scheme = "smtps" if self.mode == "smtps" else "smtp"
        return f"{scheme}://{user}@127.0.0.1:{self.port}"

    @property
    def received(self) -> list[Taken]:
        return self.handler.received
