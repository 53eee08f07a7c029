"""`status` shows the smarthost (TLS and login tried as the sender does) and DKIM
(the key, and whether DNS publishes it)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from tls_relay import Smarthost

from abalone_pbm.config import Settings
from abalone_pbm.mail.dkim import generate_key, load_key
from abalone_pbm.status import CRITICAL, WARNING, check

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PASSWORD = "right horse battery"


def _line(report, name: str) -> str:  # type: ignore[no-untyped-def]
    return dict(report.lines)[name]


@pytest.fixture
def smarthost(tmp_path: Path):  # type: ignore[no-untyped-def]
    host = Smarthost(tmp_path, password=PASSWORD).start()
    yield host
    host.stop()


def test_a_wrong_password_is_critical_and_a_right_one_shows_how(smarthost, tmp_path) -> None:
    common = dict(address="abalone@example.org", relay=smarthost.url(),
                  relay_starttls="required", relay_ca_file=str(smarthost.cert_file),
                  listen="127.0.0.1:1")
    wrong = check(Settings(relay_password="nope", **common), None, NOW)  # type: ignore[arg-type]
    assert "refused the login of 'game-sender'" in _line(wrong, "relay")
    assert any(level == CRITICAL and "cannot be sent" in text
               for level, text in wrong.problems)
    assert "nope" not in wrong.render()
    right = check(Settings(relay_password=PASSWORD, **common), None, NOW)  # type: ignore[arg-type]
    assert "STARTTLS, certificate verified, AUTH as game-sender" in _line(right, "relay")
    assert not any("cannot be sent" in text for _level, text in right.problems)


def test_dkim_line_says_whether_the_published_key_is_ours(tmp_path: Path) -> None:
    key_file, other_file = tmp_path / "k.pem", tmp_path / "other.pem"
    generate_key(str(key_file))
    generate_key(str(other_file), "ed25519")
    settings = Settings(address="abalone@example.org", dkim_key_file=str(key_file),
                        dkim_selector="s1")
    ours = load_key(str(key_file), "example.org", "s1").record_value.encode()
    theirs = load_key(str(other_file), "example.org", "s1").record_value.encode()

    def published(record: bytes | None):  # type: ignore[no-untyped-def]
        # dkimpy asks with a final dot, our look-up without.
        return lambda name, timeout=3: \
            record if name.rstrip(b".") == b"s1._domainkey.example.org" else None

    good = check(settings, None, NOW, probe_listener=False, txt_lookup=published(ours))
    assert "verifies signed mail" in _line(good, "dkim") and "RSA-2048" in _line(good, "dkim")
    assert not any("DKIM" in text for _level, text in good.problems)
    for record, says in ((None, "no DKIM record"), (theirs, "holds another key")):
        bad = check(settings, None, NOW, probe_listener=False, txt_lookup=published(record))
        assert says in _line(bad, "dkim")
        assert any(level == WARNING and says in text for level, text in bad.problems)
    unusable = check(Settings(address="abalone@example.org",
                              dkim_key_file=str(tmp_path / "missing.pem")), None, NOW,
                     probe_listener=False)
    assert any(level == CRITICAL and "DKIM key unusable" in text
               for level, text in unusable.problems)
    off = check(Settings(address="abalone@example.org"), None, NOW, probe_listener=False)
    assert _line(off, "dkim").startswith("off: mail is not signed")
