"""The cost of DKIM-signing one outgoing mail, as the sender does it (``mail.dkim``),
against dkimpy's own signing, for RSA-2048 and Ed25519, on a board mail with its HTML
part (about 12 KB). Prints milliseconds per mail and mails per second of one core.

    .venv/bin/python benchmarks/dkim_signing.py [--mails 300]
"""

from __future__ import annotations

import argparse
import base64
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import dkim as dkimpy
from cryptography.hazmat.primitives import serialization

from abalone_pbm.mail.compose import compose
from abalone_pbm.mail.dkim import DkimSigner, generate_key, load_key


def board_mail() -> bytes:
    rows = "\n".join("   " + " ".join("ox."[(r + c) % 3] for c in range(9)) for r in range(9))
    cells = "".join("<tr>" + "".join(f"<td style='background:#334;color:#eee'>{(r * c) % 3}"
                                     "</td>" for c in range(9)) + "</tr>" for r in range(9))
    message = compose(sender="abalone@example.org", to="fred@example.net",
                      subject="Abalone Board 101 wilma", body=f"Summary\n\n{rows}\n" * 8,
                      html=f"<table>{cells}</table>" * 6, loop_token="abalone@example.org",
                      date=datetime.now(timezone.utc))
    return message.as_bytes()


def per_mail(action: Callable[[], object], mails: int) -> float:
    start = time.perf_counter()
    for _ in range(mails):
        action()
    return (time.perf_counter() - start) / mails


def dkimpy_signing(signer: DkimSigner, raw: bytes) -> Callable[[], object]:
    """dkimpy signing the same mail with the same key (its own pure-Python RSA)."""
    key = signer.key.private_key
    if signer.key.algorithm == "rsa-sha256":
        pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
        return lambda: dkimpy.sign(raw, b"s1", b"example.org", pem)
    seed = base64.b64encode(key.private_bytes(serialization.Encoding.Raw,
                                              serialization.PrivateFormat.Raw,
                                              serialization.NoEncryption()))
    return lambda: dkimpy.sign(raw, b"s1", b"example.org", seed,
                               signature_algorithm=b"ed25519-sha256")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mails", type=int, default=300)
    args = parser.parse_args()
    raw = board_mail()
    print(f"a board mail of {len(raw)} bytes, {args.mails} signatures each")
    with tempfile.TemporaryDirectory() as directory:
        for kind in ("rsa", "ed25519"):
            path = Path(directory) / f"{kind}.pem"
            generate_key(str(path), kind)
            signer = DkimSigner(load_key(str(path), "example.org", "s1"))
            ours = per_mail(lambda: signer.sign(raw), args.mails)
            theirs = per_mail(dkimpy_signing(signer, raw), args.mails)
            print(f"{signer.key.description:9} abalone-pbm {ours * 1000:6.2f} ms/mail "
                  f"({1 / ours:6.0f}/s)   dkimpy {theirs * 1000:6.2f} ms/mail "
                  f"({1 / theirs:6.0f}/s)")


if __name__ == "__main__":
    main()
