"""`abalone-pbm status`: the server's health at a glance, and a verdict for monitoring.

The verdict follows the monitoring-plugin convention (Nagios, Icinga, Zabbix, ...):
exit 0 ``OK``, 1 ``WARNING`` (someone should look: parked mail, a mail given up on,
outgoing mail retrying), 2 ``CRITICAL`` (mail is not flowing: the database cannot be
read, the listener does not answer, incoming mail waits unprocessed, outgoing mail has
been failing for a while). The first line of the report says it all.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from .config import Settings
from .redact import mask_database_url

if TYPE_CHECKING:  # pragma: no cover
    from .mail.dkim import TxtLookup
    from .db.health import DatabaseHealth
    from .db.session import Database

__all__ = ["OK", "WARNING", "CRITICAL", "Thresholds", "Report", "check", "probe"]

OK, WARNING, CRITICAL = 0, 1, 2
_NAMES = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL"}


@dataclass(frozen=True)
class Thresholds:
    #: Incoming mail unprocessed for longer than this: the worker is stuck.
    inbox_stuck: timedelta = timedelta(minutes=10)
    #: Outgoing mail failing for longer than this: the relay is down or refusing.
    outbox_failing: timedelta = timedelta(minutes=30)


@dataclass
class Report:
    lines: list[tuple[str, str]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)

    def add(self, name: str, text: str) -> None:
        self.lines.append((name, text))

    def problem(self, level: int, text: str) -> None:
        self.problems.append((level, text))

    @property
    def level(self) -> int:
        return max((level for level, _ in self.problems), default=OK)

    def render(self) -> str:
        worst = sorted(self.problems, key=lambda p: -p[0])
        summary = "; ".join(text for _, text in worst) or "mail is flowing"
        width = max((len(name) for name, _ in self.lines), default=0) + 1
        body = [f"{(name + ':').ljust(width)} {text}" for name, text in self.lines]
        return "\n".join([f"abalone-pbm status: {_NAMES[self.level]} - {summary}", *body])


def probe(host_port: str, *, greeting: bool = True, timeout: float = 3.0) -> str | None:
    """None when host:port accepts a connection and (``greeting``) greets with 220 as
    SMTP and LMTP do; else why not."""
    host, _, port = host_port.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
            if not greeting:
                return None
            sock.settimeout(timeout)
            first = sock.recv(512)
    except OSError as error:
        return error.strerror or str(error)
    return None if first.startswith(b"220") else f"no SMTP greeting ({first[:40]!r})"


def _age(moment: datetime | None, now: datetime) -> timedelta | None:
    return None if moment is None else max(now - moment, timedelta(0))


def _minutes(delta: timedelta | None) -> str:
    if delta is None:
        return "-"
    minutes = int(delta.total_seconds() // 60)
    if minutes < 1:
        return f"{int(delta.total_seconds())} s"
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def check(settings: Settings, database: Database | None, now: datetime,
          thresholds: Thresholds = Thresholds(), *, probe_listener: bool = True,
          txt_lookup: TxtLookup | None = None) -> Report:
    """Everything ``status`` shows, with its problems; ``database`` None: cannot open."""
    report = Report()
    if probe_listener:
        protocol = "LMTP" if settings.lmtp else "SMTP"
        why = probe(settings.listen)
        if why is None:
            report.add("listener", f"{protocol} on {settings.listen} answering")
        else:
            report.add("listener", f"{protocol} on {settings.listen}: {why}")
            report.problem(CRITICAL, f"no server listening on {settings.listen} ({why})")
        if settings.policy_listen is not None:
            why = probe(settings.policy_listen, greeting=False)
            if why is None:
                report.add("policy", f"Postfix recipient checks on {settings.policy_listen} "
                                     "answering")
            else:
                report.add("policy", f"{settings.policy_listen}: {why}")
                report.problem(CRITICAL, f"no policy service on {settings.policy_listen} "
                                         f"(Postfix refuses reply addresses with 4xx)")
    _transport(report, settings, probe_relay_too=probe_listener, txt_lookup=txt_lookup)
    if database is None:
        report.problem(CRITICAL, "no database")
        return report
    from .db.health import read_health

    try:
        health = read_health(database, now)
    except Exception as error:
        text = mask_database_url(f"{error.__class__.__name__}: {error}")
        reason = " ".join(text.split())[:300]
        report.add("database", f"{database.describe()}: {reason}")
        report.problem(CRITICAL, f"database unreachable ({reason})")
        return report
    _judge(report, database, health, now, thresholds)
    _retention(report, settings, database, health, now)
    _bounces(report, settings, database, now)
    return report


def _transport(report: Report, settings: Settings, *, probe_relay_too: bool,
               txt_lookup: TxtLookup | None) -> None:
    """Where mail goes and whether the relay takes it (connected, TLS and login as the
    sender does them); the DKIM key and whether DNS publishes it."""
    from .mail.dkim import verify_published
    from .mail.sender import probe_relay, signer_of

    if settings.relay is None:
        report.add("relay", f"none: outgoing mail is written to the Maildir {settings.maildir}")
    elif probe_relay_too:
        state, text = probe_relay(settings, timeout=10)
        report.add("relay", text)
        # A relay that refuses our TLS or login never takes the mail until the admin
        # acts; one that is away may be back soon: the outbox's age judges that.
        if state == "refused":
            report.problem(CRITICAL, f"outgoing mail cannot be sent: {text}")
    else:
        report.add("relay", f"{settings.relay_target} (not checked)")
    try:
        signer = signer_of(settings)
    except ValueError as error:
        report.add("dkim", str(error))
        report.problem(CRITICAL, f"DKIM key unusable, the sender cannot start: {error}")
        return
    if signer is None:
        report.add("dkim", "off: mail is not signed (`abalone-pbm dkim keygen`, then "
                           "ABALONE_PBM_DKIM_KEY_FILE)")
        return
    key = signer.key
    verified, text = verify_published(signer, txt_lookup)
    report.add("dkim", f"signing for {key.domain} with selector {key.selector} "
                       f"({key.description}); {text}")
    if not verified and "lookup" not in text:
        report.problem(WARNING, f"DKIM: {text}")


def _retention(report: Report, settings: Settings, database: Database,
               health: DatabaseHealth, now: datetime) -> None:
    """How long received mail is kept whole, and what still waits for pruning."""
    from .db.retention import BATCH, read_retention

    days = settings.inbox_retention_days
    with database.read() as session:
        state = read_retention(session, now, timedelta(days=days))
    overdue = f"{state.overdue}+" if state.overdue >= BATCH else str(state.overdue)
    report.add("pruning", f"processed mail kept whole {days} days, then pruned "
                          f"({overdue} due now); {health.inbox_parked} parked kept until "
                          "replayed")


def _judge(report: Report, database: Database, health: DatabaseHealth, now: datetime,
           thresholds: Thresholds) -> None:
    schema = f"revision {health.revision or 'none'}"
    if health.schema_current:
        schema += " (current)"
    else:
        schema += f", the code wants {health.head}"
        report.problem(WARNING, f"database schema at {health.revision or 'nothing'}, not "
                                f"{health.head} (`abalone-pbm db upgrade`, or restart serve)")
    report.add("database", f"{database.describe()}, {schema}")

    waited = _age(health.oldest_waiting, now)
    report.add("inbox", f"{health.inbox_waiting} waiting (oldest {_minutes(waited)}), "
                        f"{health.inbox_parked} parked ({health.inbox_parked_recent} in 24 h)")
    if waited is not None and waited > thresholds.inbox_stuck:
        report.problem(CRITICAL, f"inbox stuck: {health.inbox_waiting} mail(s) unprocessed, "
                                 f"the oldest for {_minutes(waited)}")
    if health.inbox_parked_recent:
        report.problem(WARNING, f"{health.inbox_parked_recent} incoming mail(s) parked in "
                                "24 h (`abalone-pbm mail parked`)")

    retrying_for = _age(health.oldest_retrying, now)
    report.add("outbox", f"{health.outbox_waiting} waiting (oldest "
                         f"{_minutes(_age(health.oldest_outbox_waiting, now))}), "
                         f"{health.outbox_retrying} of them retrying, "
                         f"{health.outbox_failed} failed ({health.outbox_failed_recent} in 24 h)")
    if retrying_for is not None and retrying_for > thresholds.outbox_failing:
        report.problem(CRITICAL, f"outbox failing: {health.outbox_retrying} mail(s) not "
                                 f"delivered, retrying for {_minutes(retrying_for)}")
    elif health.outbox_retrying:
        report.problem(WARNING, f"{health.outbox_retrying} outgoing mail(s) retrying")
    if health.outbox_failed_recent:
        report.problem(WARNING, f"{health.outbox_failed_recent} outgoing mail(s) given up "
                                "in 24 h (`abalone-pbm mail outbox`)")
    if health.last_error is not None:
        last = health.last_error
        error = " ".join(last.error.split())[:200]
        report.add("last error", f"outbox {last.outbox_id} to {last.recipient} "
                                 f"({last.status}): {error}")


def _bounces(report: Report, settings: Settings, database: Database, now: datetime) -> None:
    """Addresses whose mail bounces: a warning while any is no longer mailed."""
    from sqlalchemy import func, select

    from .db.models import BounceScore

    with database.read() as session:
        scored, stopped, recent = session.execute(select(
            func.count(BounceScore.id),
            func.count(BounceScore.suppressed_at),
            func.count(BounceScore.id).filter(BounceScore.last_at > now - timedelta(days=1)),
        )).one()
    report.add("bounces", f"{stopped} address(es) no longer mailed, {scored - stopped} more "
                          f"with bounces ({recent} bounced in 24 h; stopped at "
                          f"{settings.bounce_threshold} days of bounces)")
    if stopped:
        report.problem(WARNING, f"{stopped} address(es) no longer mailed: their mail bounces "
                                "(`abalone-pbm bounces`)")
