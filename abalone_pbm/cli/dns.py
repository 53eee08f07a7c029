"""``abalone-pbm dkim keygen`` (a signing key) and ``abalone-pbm dns`` (the records to
publish for the configured domain: SPF, DKIM, DMARC, reverse DNS, and what TLS needs)."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from typing import TYPE_CHECKING

from .common import add_config, load

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings


def _quoted(value: str) -> str:
    from ..mail.dkim import txt_record_strings

    return " ".join(f'"{piece}"' for piece in txt_record_strings(value))


def records(settings: Settings, ips: list[str], host: str, includes: list[str]) -> list[str]:
    """The zone-file lines (and comments) to publish for ``settings``' domains."""
    from ..mail.sender import signer_of

    domain = settings.address_domain.lower()
    lines = [f"; DNS records for mail from {settings.address}"]
    mechanisms = [f"ip{ipaddress.ip_address(ip).version}:{ip}" for ip in ips]
    mechanisms += [f"include:{name}" for name in includes]
    if not mechanisms:
        mechanisms = ["mx", "a"]
        lines.append("; SPF: no --ip given; this allows the domain's MX and A hosts. With a "
                     "smarthost, give the provider's --include instead.")
    lines.append(f'{domain}. IN TXT "v=spf1 {" ".join(mechanisms)} ~all"')
    signer = signer_of(settings)
    if signer is None:
        lines.append("; DKIM: no ABALONE_PBM_DKIM_KEY_FILE set (`abalone-pbm dkim keygen` "
                     "makes a key); without it mail is not signed.")
    else:
        key = signer.key
        lines.append(f"; DKIM: {key.description} key {key.path}, selector {key.selector}")
        lines.append(f"{key.record_name}. IN TXT {_quoted(key.record_value)}")
    lines.append("; DMARC: p=none first; read the aggregate reports, then quarantine or reject.")
    lines.append(f'_dmarc.{domain}. IN TXT "v=DMARC1; p=none; rua=mailto:postmaster@{domain}; '
                 'adkim=r; aspf=r"')
    for ip in ips:
        reverse = ipaddress.ip_address(ip).reverse_pointer
        lines.append(f"{reverse}. IN PTR {host}.   ; set by whoever owns {ip} "
                     "(the hosting provider)")
        kind = "A" if ipaddress.ip_address(ip).version == 4 else "AAAA"
        lines.append(f"{host}. IN {kind} {ip}   ; the name the PTR gives must lead back")
    if not ips:
        lines.append(f"; Reverse DNS: the sending address's PTR must name a host ({host}) "
                     "whose A/AAAA record gives that address again (--ip prints both).")
    lines.append(f"; TLS: the MX host {host} needs a certificate for its name (Postfix "
                 "smtpd_tls_cert_file, smtpd_tls_security_level = may; "
                 "smtp_tls_security_level = may for mail going out).")
    return lines


def cmd_dns(args: argparse.Namespace) -> int:
    try:
        settings = load(args)
        lines = records(settings, args.ip, args.host or settings.address_domain, args.include)
    except (OSError, ValueError) as error:
        print(f"abalone-pbm dns: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    if args.check:
        return _check_published(settings)
    return 0


def _check_published(settings: Settings) -> int:
    """Sign a sample mail and verify it with dkimpy against the published record."""
    from ..mail.dkim import verify_published
    from ..mail.sender import signer_of

    signer = signer_of(settings)
    if signer is None:
        print("; check: no DKIM key set", file=sys.stderr)
        return 1
    healthy, text = verify_published(signer)
    print(f"; check: {text}")
    return 0 if healthy else 1


def cmd_keygen(args: argparse.Namespace) -> int:
    from ..mail.dkim import DkimError, generate_key

    try:
        settings = load(args)
        path = args.file or settings.dkim_key_file
        if not path:
            raise DkimError("name the key file (or set ABALONE_PBM_DKIM_KEY_FILE)")
        generate_key(path, "ed25519" if args.ed25519 else "rsa", args.bits)
    except (OSError, ValueError) as error:
        print(f"abalone-pbm dkim keygen: {error}", file=sys.stderr)
        return 2
    print(f"abalone-pbm dkim keygen: wrote {path} (mode 0600); set "
          f"ABALONE_PBM_DKIM_KEY_FILE={path}, publish the record `abalone-pbm dns` prints, "
          "then restart serve")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    dns = sub.add_parser(
        "dns", help="the DNS records to publish: SPF, DKIM, DMARC, reverse DNS",
        description="Prints, in zone-file form, the SPF, DKIM (from the configured key), "
        "DMARC (p=none to start) and reverse-DNS records for the domain of "
        "ABALONE_PBM_ADDRESS, and what TLS needs.")
    dns.add_argument("--ip", action="append", default=[], metavar="ADDRESS",
                     help="an address the server's mail leaves from (repeatable)")
    dns.add_argument("--host", metavar="NAME",
                     help="the sending host's name, for PTR and TLS (default: the domain)")
    dns.add_argument("--include", action="append", default=[], metavar="DOMAIN",
                     help="a smarthost provider's SPF domain (repeatable)")
    dns.add_argument("--check", action="store_true",
                     help="also look up the published DKIM record and verify a signed "
                          "sample mail with it (exit 1 when it fails)")
    add_config(dns)
    dns.set_defaults(handler=cmd_dns)

    dkim = sub.add_parser("dkim", help="DKIM signing key")
    actions = dkim.add_subparsers(dest="dkim_command", required=True, metavar="ACTION")
    keygen = actions.add_parser("keygen", help="write a new private key",
                                description="Writes a new DKIM private key (PEM, mode "
                                "0600); never overwrites a file.")
    keygen.add_argument("file", nargs="?", metavar="FILE",
                        help="where (default: ABALONE_PBM_DKIM_KEY_FILE)")
    keygen.add_argument("--ed25519", action="store_true",
                        help="an Ed25519 key (RFC 8463; not every receiver checks it: "
                             "RSA is the safe choice)")
    keygen.add_argument("--bits", type=int, default=2048, help="RSA key size (default 2048)")
    add_config(keygen)
    keygen.set_defaults(handler=cmd_keygen)
