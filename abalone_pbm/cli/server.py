"""The server's sub-commands: ``serve`` (everything in one process), and its parts
one at a time: ``process`` (store one mail from an MTA pipe), ``work`` (the worker),
``send`` (the outbox) and ``tick`` (the clock, once)."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import TYPE_CHECKING, Any

from ..redact import mask_database_url
from .common import add_common, add_config, load, run, setup_logging

if TYPE_CHECKING:  # pragma: no cover
    from ..clock import Clock
    from ..config import Settings
    from ..db.session import Database
    from ..worker import Handle, Worker

log = logging.getLogger(__name__)

#: sysexits.h: the MTA keeps the mail and tries again later.
EX_TEMPFAIL = 75
#: sysexits.h: the input is not acceptable (the MTA bounces it).
EX_DATAERR = 65


# -- serve -------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    """Listener + worker + sender + clock until SIGINT/SIGTERM."""
    from ..server import serve

    setup_logging(args)
    try:
        settings = load(args)
    except (OSError, ValueError) as error:
        print(f"abalone-pbm serve: {mask_database_url(str(error))}", file=sys.stderr)
        return 2
    try:
        return serve(settings)
    except Exception as error:
        # A traceback would quote the database URL (its password) as given.
        print(f"abalone-pbm serve: {error.__class__.__name__}: "
              f"{mask_database_url(str(error))}", file=sys.stderr)
        return 1


# -- process -----------------------------------------------------------------------


def cmd_process(args: argparse.Namespace) -> int:
    """Store one message from FILE or stdin in the inbox (exit 0), or exit 75."""
    from ..mail.intake import (
        envelope_sender_from_headers,
        first_from_address,
        split_from_line,
        store_mail,
    )

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="abalone-pbm process: %(levelname)s %(message)s")
    from ..log_format import install_one_line_logging

    install_one_line_logging()
    try:
        if args.file and args.file != "-":
            with open(args.file, "rb") as handle:
                raw = handle.read()
        else:
            raw = sys.stdin.buffer.read()
        settings = load(args)
        raw, from_line_sender = split_from_line(raw)
        if settings.max_message_bytes and len(raw) > settings.max_message_bytes:
            print(f"abalone-pbm process: message too big ({len(raw)} bytes, the limit is "
                  f"{settings.max_message_bytes})", file=sys.stderr)
            return EX_DATAERR
        sender = args.sender
        if sender is None:
            sender = from_line_sender
        if sender is None:
            sender = envelope_sender_from_headers(raw)
        if sender is None:
            # No envelope information at all: the author is the best we know.
            sender = first_from_address(raw)
        if sender.strip() == "<>":
            sender = ""
        # Unknown recipients stay empty: the service layer then reads Delivered-To/To.
        recipients = args.recipient or []
        from ..db.session import Database

        database = Database(settings.database_url)
        try:
            database.ensure_schema()
            mail_id, created = store_mail(database, raw, sender, recipients, settings.clock())
        finally:
            database.dispose()
    except Exception as error:
        print(f"abalone-pbm process: could not store the message: "
              f"{error.__class__.__name__}: {mask_database_url(str(error))}", file=sys.stderr)
        return EX_TEMPFAIL
    if not args.quiet:
        state = "stored" if created else "already stored"
        print(f"abalone-pbm process: {state} as inbox mail {mail_id}", file=sys.stderr)
    return 0


# -- work --------------------------------------------------------------------------


def cmd_work(args: argparse.Namespace) -> int:
    """Process stored inbox mail without a listener."""
    from ..server import _service_hooks, install_stop_signals, open_database

    setup_logging(args)
    if args.linked:
        return _work_linked(args)
    try:
        settings = load(args)
        database = open_database(settings)
        handle, _tick = _service_hooks(settings, database)
    except Exception as error:
        print(f"abalone-pbm work: {error.__class__.__name__}: "
              f"{mask_database_url(str(error))}", file=sys.stderr)
        return 1
    worker = _service_worker(settings, database, handle, settings.clock())
    if args.once:
        count = worker.run_pending()
        print(f"abalone-pbm work: processed {count} mail(s)")
        return 0
    stop = threading.Event()
    install_stop_signals(stop)
    print(f"abalone-pbm work: processing mail in {database.describe()}")
    worker.run_forever(stop)
    return 0


def _service_worker(settings: Settings, database: Database, handle: Handle, clock: Clock,
                    **options: Any) -> Worker:
    """A worker on the service layer's ``handle``, with its password checks."""
    from ..server import password_hook
    from ..worker import Worker

    return Worker(database, settings, clock, handle, passwords=password_hook(settings),
                  **options)


def _work_linked(args: argparse.Namespace) -> int:
    """``work --linked R,W,I,OWNER``: the worker process a ``serve`` started (see
    ``abalone_pbm.worker_process``; R and W are its pipes, I the socket of
    ``serve``'s requests, OWNER its sender's name)."""
    from ..server import SWITCH_INTERVAL, _service_hooks, open_database
    from ..worker import group_most_for
    from ..worker_process import Link, PipeHandoff, ServeRequests

    wake_fd, news_fd, requests_fd, owner = (args.linked.split(",", 3) + ["", "", ""])[:4]
    if not (wake_fd.isdigit() and news_fd.isdigit() and requests_fd.isdigit() and owner):
        print("abalone-pbm work: --linked is for the worker process that serve starts "
              "(R,W,I,OWNER: its two pipes, its socket and its sender's name)",
              file=sys.stderr)
        return 2
    stop, wake = threading.Event(), threading.Event()
    link = Link(int(wake_fd), int(news_fd), stop, wake, int(requests_fd))
    link.install_signals()
    sys.setswitchinterval(SWITCH_INTERVAL)
    settings = load(args)
    database = open_database(settings, upgrade=False)  # serve has upgraded it
    handle, _tick = _service_hooks(settings, database)
    clock = settings.clock()
    worker = _service_worker(settings, database, handle, clock,
                             handoff=PipeHandoff(link, owner, clock.now),
                             robot_turns=link.robot_turns, group_most=group_most_for(database),
                             # On SQLite the one writer also stores what serve received
                             # and records what it sent (worker_process).
                             ride_along=ServeRequests(link) if database.is_sqlite else None)
    link.start()
    try:
        worker.run_forever(stop, wake)
    finally:
        database.dispose()
    return 0


# -- send --------------------------------------------------------------------------


def cmd_send(args: argparse.Namespace) -> int:
    """Drain the outbox (once, or until stopped)."""
    from ..server import install_stop_signals, open_database
    from ..mail.sender import Sender
    from ..service.bounces import record_refusal

    setup_logging(args)
    try:
        settings = load(args)
        database = open_database(settings)
    except Exception as error:
        print(f"abalone-pbm send: {error.__class__.__name__}: "
              f"{mask_database_url(str(error))}", file=sys.stderr)
        return 1
    sender = Sender(database, settings, settings.clock(), refused=record_refusal)
    if args.once:
        sent, failed = sender.drain()
        print(f"abalone-pbm send: sent {sent} mail(s) to {sender.destination}"
              + (f"; {failed} not sent (see the log)" if failed else ""))
        return 0
    stop = threading.Event()
    install_stop_signals(stop)
    print(f"abalone-pbm send: sending the outbox of {database.describe()} "
          f"to {sender.destination}")
    sender.run_forever(stop)
    return 0


# -- tick --------------------------------------------------------------------------


def _tick(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service import timeouts

    summary = timeouts.tick(database, settings.clock().now(), settings)
    print(f"abalone-pbm tick: {summary}")
    return 1 if getattr(summary, "failed", 0) else 0


def cmd_tick(args: argparse.Namespace) -> int:
    """Reminders, forfeits and time limits, once."""
    return run("tick", args, _tick)


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    serve = sub.add_parser(
        "serve", help="run the mail server (listener, worker, sender, clock)",
        description="Run the listener, the worker, the sender and the timeout clock in one "
        "process until SIGINT/SIGTERM. Creates or upgrades the database first.",
    )
    add_common(serve)
    serve.set_defaults(handler=cmd_serve)

    process = sub.add_parser(
        "process", help="store one message from FILE or stdin (an MTA pipe transport)",
        description="Store one message in the inbox for the worker of `serve` (or `work`). "
        "Exit 0 when stored (or already stored), 75 (EX_TEMPFAIL) when it could not be "
        "stored and must be retried, 65 when it is larger than the size limit.",
    )
    process.add_argument("file", nargs="?", metavar="FILE", help="the message (default: stdin)")
    process.add_argument("-f", "--sender", metavar="ADDRESS", default=None,
                         help="the envelope sender (default: an mbox From_ line, the "
                         "Return-Path header, else the From address); '' or <> for a bounce")
    process.add_argument("-r", "--recipient", metavar="ADDRESS", action="append",
                         help="an envelope recipient, repeatable (default: none given; the "
                         "recipient is then read from Delivered-To/X-Original-To/To)")
    process.add_argument("-q", "--quiet", action="store_true", help="say nothing on success")
    add_common(process)
    process.set_defaults(handler=cmd_process)

    work = sub.add_parser(
        "work", help="process stored inbox mail (without a listener)",
        description="Process the mail stored in the inbox, one transaction per mail.",
    )
    work.add_argument("--once", action="store_true",
                      help="process what is waiting, then exit")
    work.add_argument("--linked", metavar="R,W,I,OWNER", help=argparse.SUPPRESS)
    add_common(work)
    work.set_defaults(handler=cmd_work)

    send = sub.add_parser(
        "send", help="drain the outbox",
        description="Send the outbox to the relay (ABALONE_PBM_RELAY) or the Maildir.",
    )
    send.add_argument("--once", action="store_true", help="send what is due, then exit")
    add_common(send)
    send.set_defaults(handler=cmd_send)

    tick = sub.add_parser(
        "tick", help="send due reminders and apply forfeits and time limits, once",
        description="Reminders (after a game's nagtime), forfeits (after its forfeittime), "
        "unanswered draw proposals and total times, once; `serve` does this every minute. "
        "Prints a one-line summary.",
    )
    add_config(tick)
    tick.set_defaults(handler=cmd_tick)
