"""A misspelt command's password is in nothing a person can read, whatever mail program
wrote the mail (DESIGN §2.3: the original is quoted back "with every password replaced
by ``********``"; §2.6: "including ... a misspelt command"; §2.8: mail as the world
writes it).

tests/mail/test_misspelt_command_answers.py sends the slips (tests/protocol/
misspelt_commands.py: a letter left out, changed, swapped or put in, the userid left
out) in plain one-part text mails. Here the same lines stand in the shapes real clients
write (tests/mail/client_mail_parts.py builds them byte by byte): HTML only,
multipart/alternative, quoted-printable and base64, ISO-8859-1, windows-1252,
Shift_JIS (also with the ideographic space a Japanese input method types), UTF-8 with
non-Latin text, the line followed by a signature, a reply quoting our earlier answer
below it, a Subject behind ``Re:``/``AW:``/``回复:``/``Odp:``/``Vá:``/``[EXTERNAL]``.
Each mail goes through the service harness (inbox, worker, outbox); a few through a
real ``serve`` that writes its answers to the Maildir ``var/outgoing``. In neither the
answer (every part decoded, the HTML as it is shown), the stored inbox row nor the log
stands a password; the answer is the unknown command's error, and nothing was run.
"""

from __future__ import annotations

import email
import email.policy
import functools
import html
import logging
import os
import smtplib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.header import Header
from itertools import count
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from abalone_pbm.db.models import Game, InboxMail, User
from abalone_pbm.protocol import CommandSyntaxError, parse_command
from abalone_pbm.protocol.registry import COMMAND_WORDS
from tests.e2e.conftest import _start_serve, _stop, _wait_listening, free_port
from tests.mail.client_mail_parts import Part, multipart, text_part, whole_mail
from tests.protocol.misspelt_commands import misspelt_commands, misspelt_without_userid, put_in
from tests.mail.readable import last_stored_copy, outgoing, readable
from tests.service.harness import Harness, make_harness

_numbers = count(1)




# ------------------------------------------------------------------- the shapes
@dataclass(frozen=True)
class Written:
    """What one mail carries: the misspelt line, and who sends it."""

    line: str
    sender: str
    message_id: str


Build = Callable[[Written], bytes]

#: Our earlier answer as a mail program quotes it (the password already masked there).
_EARLIER = ('Unknown command "signnup"\nSyntax is "signup <userid> <password> '
            '[<address>...]"\n\nYour mail was:\n\n> Subject: signnup bar ********\n')
_ATTRIBUTION = "On Fri, Nov 27, 2026 at 12:19 PM Abalone <abalone@localhost> wrote:"


def _headers(written: Written, subject: str, client: tuple[tuple[str, str], ...] = (),
             charset: str = "utf-8") -> list[tuple[str, str]]:
    """A client's headers; a Subject that is not ASCII as an encoded word in
    ``charset`` (as the client encodes it)."""
    encoded = subject if subject.isascii() else Header(subject, charset).encode()
    return [("From", f"Fred <{written.sender}>"), ("To", "Abalone <abalone@localhost>"),
            ("Subject", encoded), ("Date", "Fri, 27 Nov 2026 12:31:07 +0100"),
            ("Message-ID", written.message_id), *client]


def _plain(template: str, *, subject: str = "", charset: str = "utf-8",
           transfer: str = "quoted-printable", params: str = "", blank: str = " ",
           client: tuple[tuple[str, str], ...] = ()) -> Build:
    """A text/plain mail: ``template`` with {line} (its blanks written as ``blank``)."""
    def build(written: Written) -> bytes:
        line = written.line.replace(" ", blank)
        body = text_part("plain", template.replace("{line}", line), charset, transfer, params)
        return whole_mail(_headers(written, subject.replace("{line}", line), client,
                                   charset), body)
    return build


def _html_only(markup: str, *, subject: str = "", charset: str = "utf-8",
               transfer: str = "quoted-printable",
               client: tuple[tuple[str, str], ...] = ()) -> Build:
    def build(written: Written) -> bytes:
        body = text_part("html", markup.replace("{line}", html.escape(written.line)),
                         charset, transfer)
        return whole_mail(_headers(written, subject.replace("{line}", written.line),
                                   client, charset), body)
    return build


def _alternative(text: str, markup: str, *, subject: str = "", charset: str = "utf-8",
                 transfer: str = "quoted-printable", html_blank: str = " ",
                 client: tuple[tuple[str, str], ...] = ()) -> Build:
    """multipart/alternative: the text part, then the HTML part (its blanks between the
    line's words written as ``html_blank``, as some editors do)."""
    def build(written: Written) -> bytes:
        marked = html.escape(written.line).replace(" ", html_blank)
        body: Part = multipart(
            "alternative", f"=_alt_{written.message_id.strip('<>').split('@')[0]}",
            text_part("plain", text.replace("{line}", written.line), charset, transfer),
            text_part("html", markup.replace("{line}", marked), charset, transfer))
        return whole_mail(_headers(written, subject.replace("{line}", written.line),
                                   client, charset), body)
    return build


_GMAIL_SIGNATURE = '<div><br></div>-- <br><div dir="ltr" class="gmail_signature">Fred</div>'
_QUOTED_TEXT = "\n".join(f"> {line}".rstrip() for line in _EARLIER.splitlines())
_QUOTED_HTML = ('<div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
                f"{html.escape(_ATTRIBUTION)}<br></div><blockquote class=\"gmail_quote\" "
                'style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);'
                'padding-left:1ex">' + html.escape(_EARLIER).replace("\n", "<br>\n")
                + "</blockquote></div>")
_OUTLOOK = (("X-Mailer", "Microsoft Outlook 16.0"), ("Thread-Index", "AQHZ0abc1234"))
_APPLE = (("X-Mailer", "Apple Mail (2.3774.200.91.1.1)"),)
_IPHONE = (("X-Mailer", "iPhone Mail (22B91)"),)
_OUTLOOK_HTML = ('<html><head><meta http-equiv="Content-Type" content="text/html; '
                 'charset=windows-1252"><style><!-- p.MsoNormal {margin:0cm;} --></style>'
                 '</head><body lang="FR"><div class="WordSection1"><p class="MsoNormal">'
                 '{line}<o:p></o:p></p><p class="MsoNormal"><o:p>&nbsp;</o:p></p>'
                 '<p class="MsoNormal">Cordialement,<o:p></o:p></p><p class="MsoNormal">'
                 'Fran\u00e7ois<o:p></o:p></p></div></body></html>\n')

#: Each client shape: where the line stands (the Subject, or the body's first line
#: under a blank Subject or under ``multiple``) and how the mail is written.
SHAPES: dict[str, Build] = {
    "gmail HTML only, signature": _html_only(
        f'<div dir="ltr">{{line}}{_GMAIL_SIGNATURE}</div>\n'),
    "gmail alternative, quoted-printable": _alternative(
        "{line}\n\n-- \nFred\n", f'<div dir="ltr">{{line}}{_GMAIL_SIGNATURE}</div>\n'),
    "outlook alternative, windows-1252 base64, &nbsp; between words": _alternative(
        "{line}\n\nCordialement,\nFran\u00e7ois\n", _OUTLOOK_HTML, charset="windows-1252",
        transfer="base64", html_blank="&nbsp;", client=_OUTLOOK),
    "apple HTML only, base64": _html_only(
        '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8">'
        '</head><body style="overflow-wrap: break-word;"><div>{line}</div><br><div>'
        '<div>Fred</div></div></body></html>', transfer="base64", client=_APPLE),
    "plain ISO-8859-1, quoted-printable": _plain(
        "{line}\nMerci, \u00e0 bient\u00f4t !\n", charset="iso-8859-1"),
    "plain windows-1252, 8bit, curly quotes": _plain(
        "{line}\n\u201cThanks\u201d \u2013 Fred\n", charset="windows-1252", transfer="8bit"),
    "plain Shift_JIS, base64": _plain(
        "{line}\n\u3088\u308d\u3057\u304f\u304a\u9858\u3044\u3057\u307e\u3059\n",
        charset="shift_jis", transfer="base64"),
    "plain Shift_JIS, ideographic spaces": _plain(
        "{line}\n\u3088\u308d\u3057\u304f\n", charset="shift_jis", transfer="base64",
        blank="\u3000"),
    "plain UTF-8 base64, Cyrillic and Chinese": _plain(
        "{line}\n\u0421\u043f\u0430\u0441\u0438\u0431\u043e! \u8c22\u8c22\n",
        transfer="base64"),
    "plain, line then signature": _plain(
        "{line}\n\n-- \nFred Flintstone\nSent from my iPhone\n", client=_IPHONE),
    "plain flowed, line then our earlier answer quoted": _plain(
        f"{{line}}\n\n{_ATTRIBUTION}\n\n{_QUOTED_TEXT}\n", params="; format=flowed"),
    "gmail alternative, our earlier answer quoted, Re: Subject": _alternative(
        f"my comment\n\n{_ATTRIBUTION}\n\n{_QUOTED_TEXT}\n",
        f'<div dir="ltr">my comment</div><br>{_QUOTED_HTML}\n', subject="Re: {line}"),
    "Subject behind Re:, HTML-only comment": _html_only(
        '<div dir="ltr">sorry, typo<br></div>\n', subject="Re: {line}"),
    "Subject behind AW:, quoted-printable": _plain(
        "Gr\u00fc\u00dfe\nFred\n", subject="AW: {line}"),
    "Subject behind RE: AW:, Outlook": _plain("\n", subject="RE: AW: {line}",
                                              client=_OUTLOOK),
    "Subject behind 回复:, GBK": _plain(
        "\u8c22\u8c22\n", subject="\u56de\u590d: {line}", charset="gbk", transfer="base64"),
    "Subject behind 回复： (full-width colon), UTF-8": _plain(
        "\u8c22\u8c22\n", subject="\u56de\u590d\uff1a{line}"),
    "Subject behind Odp: (Polish Outlook)": _plain(
        "Pozdrawiam\n", subject="Odp: {line}", charset="iso-8859-2"),
    "Subject behind Vá: (Hungarian Outlook)": _plain(
        "\u00dcdv\n", subject="V\u00e1: {line}", charset="iso-8859-2"),
    "Subject behind [EXTERNAL] RE:": _plain(
        "\n", subject="[EXTERNAL] RE: {line}", client=_OUTLOOK),
    "multiple, HTML only": _html_only(
        '<div dir="ltr"><div>help</div><div>{line}</div><div><br></div></div>\n',
        subject="multiple"),
}


# ------------------------------------------------------------------- the lines
def _unknown_command(line: str) -> bool:
    """Whether the server answers ``line`` (as a Subject) with its unknown command error:
    a misspelt command, not one written right (an alias, the other form)."""
    try:
        parse_command(line)
    except CommandSyntaxError as error:
        return error.message.startswith("Unknown command")
    return False


#: Lines a shape is written with: enough for each kind of slip to meet each shape in
#: some line, few enough for the file to run in seconds.
_LINES_A_SHAPE = 7


def _candidates() -> list[tuple[str, tuple[str, ...]]]:
    """Every misspelt line the server answers as an unknown command, with its passwords:
    the lines with their userid, then those without it, taken in turns."""
    with_userid = [(line, secrets) for line, secrets, _, _ in misspelt_commands()]
    without = [(line, secrets) for line, secrets, _ in misspelt_without_userid()]
    # (every 53rd: the unknown-command check parses each line taken)
    taken = [pair for pair in with_userid[::53] if _unknown_command(pair[0])]
    taken_without = [pair for pair in without[::53] if _unknown_command(pair[0])]
    return [pair for both in zip(taken, taken_without) for pair in both]


@functools.cache
def _sample() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(shape, line, passwords): each shape with ``_LINES_A_SHAPE`` lines spread over the
    candidates, a different set for each shape; the line of the report first."""
    candidates = _candidates()
    wanted = len(SHAPES) * _LINES_A_SHAPE
    chosen = candidates[::max(1, len(candidates) // wanted)][:wanted]
    reported = ("abalone singup bar Secr3tPw", ("Secr3tPw",))
    sample = []
    for number, shape in enumerate(SHAPES):
        lines = [reported, *chosen[number::len(SHAPES)]]
        sample += [(shape, line, secrets) for line, secrets in lines]
    return tuple(sample)


def test_the_sample_holds_every_shape_and_each_kind_of_slip() -> None:
    sample = _sample()
    assert {shape for shape, _, _ in sample} == set(SHAPES)
    lines = [line for _, line, _ in sample]
    assert len(set(lines)) > 100
    put_in_words = {slip for key in COMMAND_WORDS for word in key for slip in put_in(word)}
    assert sum(bool(put_in_words & set(line.split())) for line in lines) >= 20
    without = {line for line, _, _ in misspelt_without_userid()}
    assert sum(line in without for line in lines) >= 40
    assert all(_unknown_command(line) for line in lines)


# ------------------------------------------------------------------ the service
@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    folder = tmp_path_factory.mktemp("client_slips")
    made = make_harness(f"sqlite:///{folder / 'abalone.sqlite3'}", folder)
    yield made
    made.database.dispose()


#: The userids the lines name (tests/protocol/misspelt_commands.py fills them in).
_LINE_USERIDS = ("bar", "wilma")


def _expected_error(raw: bytes, line: str) -> str:
    """The start of the error the server answers the mail with: for the command in its
    Subject (after a prefix the server skips, or behind one it does not), else for
    the line in the body."""
    subject = str(email.message_from_bytes(raw, policy=email.policy.default)["Subject"])
    try:
        parse_command(subject if subject.strip() not in ("", "multiple") else line)
    except CommandSyntaxError as error:
        return error.message.split(";")[0]
    raise AssertionError(f"{subject!r} / {line!r} is a command the server runs")


@pytest.mark.parametrize("shape", list(SHAPES))
def test_no_client_shape_shows_the_password_of_a_misspelt_command(
        harness: Harness, shape: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    shown: list[str] = []
    for _, line, secrets in [entry for entry in _sample() if entry[0] == shape]:
        sender = f"stranger{next(_numbers)}@example.org"
        raw = SHAPES[shape](Written(line, sender, f"<slip{next(_numbers)}@players.test>"))
        answers = harness.deliver(sender, harness.settings.address, raw)
        assert [answer.to for answer in answers] == [sender], (line, answers)
        (answer,) = answers
        text = readable(answer.message.as_bytes())
        # (``multiple`` answers in one summary, the line among the failed.)
        assert answer.subject == ("Abalone multiple" if "multiple" in shape
                                  else "Abalone error"), (line, answer.body)
        # The unknown command's error; under a Subject with a reply prefix from a
        # stranger, the server's note that a reply's Subject holds no command.
        said = " ".join(answer.body.split())
        assert _expected_error(raw, line) in said or (
            "looks like a reply to the server's mail" in said
            and "is not one" in said), (line, answer.body)
        if any(secret in text for secret in secrets):
            shown.append(f"answer: {line!r}")
        stored = last_stored_copy(harness)
        if any(secret in stored for secret in secrets):
            shown.append(f"stored copy: {line!r}")
        logged = "\n".join(record.getMessage() for record in caplog.records)
        if any(secret in logged for secret in secrets):
            shown.append(f"log: {line!r}")
    assert not shown, f"{shape}: {len(shown)} shown\n" + "\n".join(shown)
    # Nothing was run: no mail of the sample signed up a userid of its lines or made a
    # game (the robots are the only users).
    with harness.database.read() as session:
        assert not session.scalars(select(User.userid).where(
            User.userid.in_(_LINE_USERIDS))).all()
        assert session.scalar(select(func.count()).select_from(Game)) == 0


def test_the_answer_quotes_the_line_with_its_password_masked(harness: Harness) -> None:
    """The quote shows the slip the user made, its password as ``********``."""
    for shape in ("gmail HTML only, signature", "Subject behind Odp: (Polish Outlook)",
                  "plain Shift_JIS, base64", "Subject behind [EXTERNAL] RE:"):
        sender = f"stranger{next(_numbers)}@example.org"
        raw = SHAPES[shape](Written("signnup bar hunter", sender,
                                    f"<slip{next(_numbers)}@players.test>"))
        (answer,) = harness.deliver(sender, harness.settings.address, raw)
        assert 'Unknown command "' in answer.body, (shape, answer.body)
        assert "signnup bar ********" in answer.body, (shape, answer.body)
        assert "hunter" not in readable(answer.message.as_bytes()), shape


# ------------------------------------------------------------------ a real serve


#: The shapes sent to a real ``serve``, each with a line of its own.
_SERVED = {
    "outlook alternative, windows-1252 base64, &nbsp; between words": "signnup bar hunter",
    "apple HTML only, base64": "abalone singup bar Secr3tPw",
    "plain Shift_JIS, ideographic spaces": "liit Secr3tPw",
    "Subject behind 回复:, GBK": "abalone passwword set bar k3x9q7mf2a hunter",
    "Subject behind Vá: (Hungarian Outlook)": "sigup Secr3tPw",
    "Subject behind [EXTERNAL] RE:": "chnage password bar Old1Pw hunter",
    "plain flowed, line then our earlier answer quoted": "resgn 101 Secr3tPw",
}


def test_serve_writes_stores_and_logs_no_password(tmp_path: Path, db_url: str) -> None:
    """The mails through SMTP to a real ``serve``: no mail in var/outgoing, no stored
    copy and no line of its log holds a password; each answer is the unknown command's
    error, its line quoted with the password masked."""
    env = {key: value for key, value in os.environ.items() if key != "ABALONE_PBM_RELAY"}
    port = free_port()
    env.update(ABALONE_PBM_LISTEN=f"127.0.0.1:{port}", ABALONE_PBM_DATABASE_URL=db_url)
    secrets = ("Secr3tPw", "hunter", "k3x9q7mf2a", "Old1Pw")
    process = _start_serve(tmp_path, env)
    try:
        _wait_listening("127.0.0.1", port, process, timeout=30)
        for number, (shape, line) in enumerate(_SERVED.items()):
            sender = f"stranger{number}@players.test"
            raw = SHAPES[shape](Written(line, sender, f"<served{number}.{time.time_ns()}"
                                                      "@players.test>"))
            with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
                client.sendmail(sender, ["abalone@localhost"], raw)
        deadline = time.monotonic() + 60
        while len(outgoing(tmp_path)) < len(_SERVED) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        _stop(process)
    log = process.stdout.read() if process.stdout is not None else ""
    # (Blanks as one space: the Shift_JIS mail's line is quoted with its own blanks.)
    written = [" ".join(readable(raw).split()) for raw in outgoing(tmp_path)]
    assert len(written) == len(_SERVED), log
    assert not [text for text in written if any(secret in text for secret in secrets)]
    assert all("Unknown command" in text for text in written)
    for line in _SERVED.values():
        masked = " ".join("********" if word in secrets or word.startswith(secrets) else word
                          for word in line.split())
        assert any(masked in text for text in written), masked
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            stored = [bytes(raw) for raw in connection.scalars(select(InboxMail.raw))]
            users = connection.scalar(select(func.count()).select_from(User).where(
                User.userid.in_(_LINE_USERIDS)))
    finally:
        engine.dispose()
    assert len(stored) == len(_SERVED) and users == 0
    assert not [raw for raw in stored if any(secret in readable(raw) for secret in secrets)]
    assert not [secret for secret in secrets if secret in log]
