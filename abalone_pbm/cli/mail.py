"""``abalone-pbm mail parked|replay``: inbox mail the worker gave up on;
``abalone-pbm mail outbox|retry``: outgoing mail waiting or failed, and sending it again."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import Failure, add_config, run, table, when

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..db.session import Database


def _last_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else "-"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _headers(raw: bytes) -> tuple[str, str]:
    """(From, Subject) of a stored mail, the Subject's passwords masked."""
    import email.policy
    from email.parser import BytesHeaderParser
    from email.utils import parseaddr

    from ..protocol import mask_passwords

    try:
        headers = BytesHeaderParser(policy=email.policy.default).parsebytes(raw)
        author = parseaddr(str(headers.get("From") or ""))[1]
        subject = str(headers.get("Subject") or "")
    except Exception:  # a mail so broken that its headers cannot be read
        return "", "(unreadable headers)"
    return author, mask_passwords(subject)


def _mail_parked(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..db import repository

    with database.read() as session:
        rows = []
        for mail in repository.parked_mails(session):
            author, subject = _headers(bytes(mail.raw))
            rows.append((mail.id, when(mail.received_at), _clip(mail.envelope_from or author, 32),
                         _clip(subject, 40), mail.attempts, _clip(_last_line(mail.last_error), 70)))
    if not rows:
        print("no parked mail")
        return 0
    print(table(("ID", "RECEIVED", "FROM", "SUBJECT", "TRIES", "LAST ERROR"), rows))
    print(f"\n{len(rows)} parked mail(s); `abalone-pbm mail replay ID` queues one again")
    return 0


def _mail_replay(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..db import repository

    with database.write() as session:
        try:
            mail = repository.requeue_inbox(session, args.id, force=args.force)
        except ValueError as error:
            raise Failure(f"{error} (--force)") from None
        if mail is None:
            raise Failure(f"there is no inbox mail {args.id}")
        if not mail.raw:
            raise Failure(f"inbox mail {args.id} was pruned: only a record of it is kept "
                          f"after {settings.inbox_retention_days} days")
        # A fresh start: the worker gives it all its tries again.
        mail.attempts = 0
        session.flush()
    print(f"inbox mail {args.id} is queued again; the worker of `serve` (or "
          "`abalone-pbm work --once`) processes it")
    return 0


def _subject(raw: bytes) -> str:
    import email.policy
    from email.parser import BytesHeaderParser

    try:
        return str(BytesHeaderParser(policy=email.policy.default).parsebytes(raw)
                   .get("Subject") or "")
    except Exception:
        return "(unreadable headers)"


def _mail_outbox(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..db.outbox import unsent_outbox
    # A Subject may carry a one-time code (confirm address <code>): masked like passwords.
    from ..protocol import mask_passwords

    with database.read() as session:
        mails = unsent_outbox(session, limit=args.limit)
        rows = []
        for mail in mails:
            state = "failed" if mail.status == "failed" else (
                "retrying" if mail.attempts else "waiting")
            next_try = "-" if mail.status == "failed" else when(mail.next_attempt_at)
            rows.append((mail.id, when(mail.created_at), _clip(mail.recipient, 32),
                         _clip(mask_passwords(_subject(bytes(mail.raw))), 36), state,
                         mail.attempts,
                         next_try, _clip(_last_line(mail.last_error), 60)))
    if not rows:
        print("no outgoing mail waiting or failed")
        return 0
    print(table(("ID", "QUEUED", "TO", "SUBJECT", "STATE", "TRIES", "NEXT TRY", "LAST ERROR"),
                rows))
    print(f"\n{len(rows)} mail(s) not sent; `abalone-pbm mail retry ID` sends one again now")
    return 0


def _mail_retry(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..db.outbox import failed_outbox_ids, retry_outbox

    now = settings.clock().now()
    with database.write() as session:
        ids = list(args.ids)
        if args.failed:
            ids += failed_outbox_ids(session)
        if not ids:
            raise Failure("name an outgoing mail (`abalone-pbm mail outbox` lists them) "
                          "or give --failed")
        retried = []
        for outbox_id in ids:
            try:
                retried.append(retry_outbox(session, outbox_id, now))
            except (LookupError, ValueError) as error:
                raise Failure(str(error.args[0])) from None
        lines = [f"outgoing mail {row.id} to {row.recipient} is due again now" for row in retried]
    print("\n".join(lines))
    print("the sender of `serve` (or `abalone-pbm send --once`) sends it")
    return 0


def cmd_mail(args: argparse.Namespace) -> int:
    actions = {"parked": _mail_parked, "replay": _mail_replay, "outbox": _mail_outbox,
               "retry": _mail_retry}
    return run(f"mail {args.mail_command}", args, actions[args.mail_command])


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    mail = sub.add_parser("mail", help="parked and outgoing mail: parked, replay, outbox, "
                          "retry",
                          description="Inbox mail the worker gave up on (parked after "
                          "failing three times), and outgoing mail not sent yet.")
    add_config(mail)
    actions = mail.add_subparsers(dest="mail_command", required=True, metavar="ACTION")
    parked = actions.add_parser("parked", help="list the parked mails")
    add_config(parked)
    replay = actions.add_parser("replay", help="queue a parked mail again")
    replay.add_argument("id", type=int, metavar="ID")
    replay.add_argument("--force", action="store_true",
                        help="also a mail that was processed already (its answers were sent)")
    add_config(replay)
    outbox = actions.add_parser("outbox", help="outgoing mail waiting, retrying or failed")
    outbox.add_argument("--limit", type=int, default=200, help="at most this many (200)")
    add_config(outbox)
    retry = actions.add_parser("retry", help="send outgoing mail again now (all its tries "
                                             "again, the same Message-ID)")
    retry.add_argument("ids", type=int, nargs="*", metavar="ID")
    retry.add_argument("--failed", action="store_true", help="every failed mail")
    add_config(retry)
    mail.set_defaults(handler=cmd_mail)
