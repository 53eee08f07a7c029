"""The site MTA's Authentication-Results: only its own (topmost) verdict, only a pass, only
for the domain the mail came from."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from abalone_pbm.mail.authresults import authenticated_by


def _mail(*headers: str) -> EmailMessage:
    message = EmailMessage()
    for value in headers:
        message["Authentication-Results"] = value
    return message


@pytest.mark.parametrize(
    ("headers", "method"),
    [
        (["mx.example.org; dmarc=pass header.from=players.test"], "dmarc"),
        (["mx.example.org; spf=pass smtp.mailfrom=fred@players.test"], "spf"),
        (["mx.example.org; dkim=pass header.d=players.test header.s=sel"], "dkim"),
        (["MX.example.org (our mta); dkim=fail; spf=pass smtp.mailfrom=players.test"], "spf"),
        (["mx.example.org; dmarc=fail header.from=players.test; spf=softfail"], None),
        (["mx.evil.test; dmarc=pass header.from=players.test"], None),
        (["mx.example.org; dkim=pass header.d=evil.test"], None),
        ([], None),
        # Only our MTA's topmost verdict counts: a pass written below it is someone else's.
        (["mx.example.org; dmarc=fail header.from=players.test",
          "mx.example.org; dmarc=pass header.from=players.test"], None),
    ],
)
def test_authenticated_by(headers: list[str], method: str | None) -> None:
    assert authenticated_by(_mail(*headers), "mx.example.org", "fred@players.test") == method
