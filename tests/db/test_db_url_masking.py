"""Database passwords are masked wherever a URL or a connection string shows them: the
helper on every form, and `status`, `db current` and the log formatter on real URLs
(a PostgreSQL that does not answer, a connection string SQLAlchemy cannot read)."""

from __future__ import annotations

import logging

import pytest

from abalone_pbm.cli.main import main
from abalone_pbm.db.session import Database
from abalone_pbm.log_format import OneLineFormatter
from abalone_pbm.mail.sender import mail_kind
from abalone_pbm.redact import mask_database_url, mask_log_text, mask_reply_tokens

SECRET = "S3cr3t-pw"


@pytest.mark.parametrize("url, shown", [
    (f"postgresql://fred:{SECRET}@db.example/abalone",
     "postgresql://fred:***@db.example/abalone"),
    (f"postgresql+psycopg://fred:{SECRET}%40x@db:5432/abalone?sslmode=require",
     "postgresql+psycopg://fred:***@db:5432/abalone?sslmode=require"),
    (f"postgresql://:{SECRET}@db/abalone", "postgresql://:***@db/abalone"),
    (f"postgresql://fred@db/abalone?password={SECRET}",
     "postgresql://fred@db/abalone?password=***"),
    (f"postgresql://db/abalone?sslmode=require&password={SECRET}&connect_timeout=5",
     "postgresql://db/abalone?sslmode=require&password=***&connect_timeout=5"),
    (f"postgresql://db/abalone?PassWord={SECRET}", "postgresql://db/abalone?PassWord=***"),
    (f"postgresql://db/abalone?pass%77ord={SECRET}", "postgresql://db/abalone?pass%77ord=***"),
    (f"postgresql://db/abalone?sslpassword={SECRET}", "postgresql://db/abalone?sslpassword=***"),
    (f"host=db password={SECRET} dbname=abalone", "host=db password=*** dbname=abalone"),
    (f"host=db password = '{SECRET} with blanks \\' quote' dbname=abalone",
     "host=db password = *** dbname=abalone"),
    (f"password={SECRET}", "password=***"),
    ("sqlite:///var/abalone-pbm.sqlite3", "sqlite:///var/abalone-pbm.sqlite3"),
    ("host=db user=fred dbname=abalone", "host=db user=fred dbname=abalone"),
])
def test_every_form_of_the_password_is_masked(url: str, shown: str) -> None:
    assert mask_database_url(url) == shown
    assert mask_database_url(f"could not connect to '{url}': refused").count("***") \
        == shown.count("***")


def test_reply_tokens_are_masked_and_other_addresses_kept() -> None:
    line = "stored a mail from 'fred+games@x.org' to ['abalone+101.k3x9q7mf2a55@localhost']"
    assert mask_reply_tokens(line) == ("stored a mail from 'fred+games@x.org' to "
                                       "['abalone+101.****@localhost']")
    assert mask_log_text("Abalone Board 101 fred: c3-c5,d4") == "Abalone Board 101 fred: c3-c5,d4"


def test_the_log_formatter_masks_every_line() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%s then %s",
                               (f"postgresql://fred:{SECRET}@db/a", "abalone+7.abcdef123456@h"),
                               None)
    line = OneLineFormatter("%(message)s").format(record)
    assert line == "postgresql://fred:***@db/a then abalone+7.****@h"


def test_the_sender_logs_a_kind_never_the_subject() -> None:
    def raw(subject: str) -> bytes:
        return f"From: a@b\r\nSubject: {subject}\r\n\r\nYour one-time code is: zz9\r\n".encode()

    assert mail_kind(raw("confirm address k3x9q7mf")) == "address confirmation"
    assert mail_kind(raw("Abalone password reset for fred")) == "password reset"
    assert mail_kind(raw("New Abalone Board 101 fred")) == "new board 101"
    assert mail_kind(raw("Abalone Board 101 wilma **")) == "board 101"
    assert mail_kind(raw("Nag: Abalone Board 7 fred")) == "reminder for board 7"
    assert mail_kind(raw("Abalone Board 7 Error")) == "error on board 7"
    assert mail_kind(raw("Abalone signup fred")) == "answer"
    assert mail_kind(b"no header at all") == "answer"


def test_database_display_url_hides_a_query_password() -> None:
    database = Database(f"postgresql://fred@127.0.0.1:1/abalone?password={SECRET}")
    try:
        assert SECRET not in database.display_url and SECRET not in database.describe()
        assert SECRET not in repr(database)
    finally:
        database.dispose()


@pytest.mark.parametrize("url", [
    f"postgresql://fred:{SECRET}@127.0.0.1:1/abalone?password={SECRET}&connect_timeout=2",
    f"host=127.0.0.1 port=1 password={SECRET}",
])
def test_status_and_db_current_never_print_the_password(
        url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ABALONE_PBM_DATABASE_URL", url)
    status = main(["status", "--no-listener"])
    assert status == 2  # CRITICAL: the database cannot be reached or its URL is unusable
    current = main(["db", "current"])
    assert current != 0
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "CRITICAL" in printed and "abalone-pbm db current:" in printed
    assert SECRET not in printed
