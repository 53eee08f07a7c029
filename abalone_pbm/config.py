"""Server settings: environment variables, optionally a TOML file, then the defaults.

| variable                        | default                                |
|---------------------------------|----------------------------------------|
| ABALONE_PBM_DATABASE_URL        | sqlite:///var/abalone-pbm.sqlite3      |
| ABALONE_PBM_LISTEN              | 127.0.0.1:8025                         |
| ABALONE_PBM_LMTP                | off                                    |
| ABALONE_PBM_ADDRESS             | abalone@localhost                      |
| ABALONE_PBM_RELAY               | unset (mail goes to var/outgoing/)     |
| ABALONE_PBM_RELAY_STARTTLS      | opportunistic (required, off)          |
| ABALONE_PBM_RELAY_USER          | unset (no AUTH)                        |
| ABALONE_PBM_RELAY_PASSWORD_FILE | unset (or ABALONE_PBM_RELAY_PASSWORD)  |
| ABALONE_PBM_DKIM_KEY_FILE       | unset (mail is not DKIM-signed)        |
| ABALONE_PBM_MAX_MESSAGE_BYTES   | 262144                                 |
| ABALONE_PBM_POLICY_LISTEN       | off (host:port: Postfix policy service) |
| ABALONE_PBM_HTTP_LISTEN         | off (host:port: one-click unsubscribe)  |
| ABALONE_PBM_PUBLIC_URL          | unset (https base of the HTTP listener) |
| ABALONE_PBM_SECRET              | unset (one kept in the database)        |
| ABALONE_PBM_CLOCK_OFFSET        | unset (8d: run as if 8 days later)      |

The limits that keep the server from being a tool against others (DESIGN §2.6; the
README's "Security" section explains them) are settings too, e.g.
``ABALONE_PBM_DAILY_REPLY_CAP`` or ``ABALONE_PBM_MULTIPLE_MAX_LINES``: every field of
:class:`Settings` is ``ABALONE_PBM_`` + its name in upper case.

A TOML file given with ``--config`` may set the same keys in lower case without the
prefix (``database_url = "..."``); the environment wins over the file.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import quote, unquote

from .clock import Clock, parse_offset, site_clock

PREFIX = "ABALONE_PBM_"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Settings:
    database_url: str = "sqlite:///var/abalone-pbm.sqlite3"
    listen: str = "127.0.0.1:8025"
    lmtp: bool = False
    address: str = "abalone@localhost"
    relay: str | None = None
    #: SMTP connections kept open to the relay, used side by side; every recipient's
    #: mail goes over one of them, so it arrives in the order it was written.
    relay_connections: int = 2
    #: TLS to the relay (a smarthost): ``required`` (STARTTLS, or TLS from the start
    #: with ``smtps://``, and a certificate that verifies for the relay's name),
    #: ``opportunistic`` (STARTTLS when offered, certificate not checked, as Postfix's
    #: "may"; the password is never sent without TLS) or ``off``.
    relay_starttls: str = "opportunistic"
    #: AUTH at the relay: the user (or ``smtp://user@host:587``) and its password,
    #: given here or, better, in a file only the server's user can read. Never logged.
    relay_user: str = ""
    relay_password: str = field(default="", repr=False)
    relay_password_file: str = ""
    #: CA certificates (PEM) the relay's certificate is checked against, instead of
    #: the system's (a relay with a certificate of a private CA, or self-signed).
    relay_ca_file: str = ""
    #: DKIM signing of outgoing mail (``mail.dkim``): the PEM private key, the selector
    #: (its public key is published at ``<selector>._domainkey.<domain>``) and the
    #: domain (``d=``; default: the domain of ABALONE_PBM_ADDRESS). No key: unsigned.
    dkim_key_file: str = ""
    dkim_selector: str = "abalone"
    dkim_domain: str = ""
    #: ``serve`` runs its worker in a process of its own, beside the listener and the
    #: sender (another core); off: a thread of the one process.
    worker_process: bool = True
    max_message_bytes: int = 262144
    #: Where the clock reports a tournament round held up past its forfeit time (the
    #: boards and who is to move); empty: the log only.
    tournament_admin: str = ""
    #: host:port of the Postfix policy service that checks game recipients at RCPT
    #: time (see ``mail.policy`` and ``deploy/``); None: not started.
    policy_listen: str | None = None
    #: Connections the SMTP/LMTP listener holds at once, in all and from one client
    #: (an IPv4 address or an IPv6 /64); more are answered 421 and closed. Behind
    #: Postfix every session comes from 127.0.0.1: keep the per-client cap above its
    #: lmtp_destination_concurrency_limit (20 by default).
    smtp_max_sessions: int = 200
    smtp_max_sessions_per_client: int = 30
    #: Seconds the listener waits for a client's next command, and for the whole of a
    #: mail's DATA (storing it does not count); then the session is closed.
    smtp_idle_timeout: float = 60.0
    smtp_data_timeout: float = 120.0
    #: Connections the policy service holds at once (a thread each), in all and from
    #: one client: Postfix opens one per smtpd process (default_process_limit 100) and
    #: policy entry, all from one address. Idle ones are closed after the timeout,
    #: longer than Postfix's own smtpd_policy_service_max_idle (300 s).
    policy_max_connections: int = 300
    policy_max_connections_per_client: int = 220
    policy_idle_timeout: float = 330.0
    #: host:port of the HTTP listener answering one-click unsubscribe (RFC 8058) behind
    #: the admin's HTTPS reverse proxy; None: not started.
    http_listen: str | None = None
    #: The public https base URL the reverse proxy serves the HTTP listener at
    #: (``https://pbm.example.org/abalone``); unset: mails offer the unsubscribe
    #: address only, without List-Unsubscribe-Post.
    public_url: str = ""
    #: Connections the HTTP listener holds at once, in all and from one client, and
    #: seconds it gives a client for its whole request.
    http_max_connections: int = 64
    http_max_connections_per_client: int = 16
    http_request_timeout: float = 10.0
    #: The key of unsubscribe tokens and thread ids (any long random text, the same for
    #: every serve process of one database); empty: one is made once and kept in the
    #: database's ``counters`` table.
    secret: str = ""
    #: Seconds over which refused connections are counted, then logged in one line
    #: per client (not one line per connection).
    refused_log_interval: float = 60.0
    #: Where outgoing mail is written when no relay is set.
    maildir: str = "var/outgoing"
    #: Most answers per day to one address for its own mails (mail-loop protection).
    #: Letter case and a ``+tag`` do not make a new address; board mails caused by
    #: other players' moves are not counted.
    daily_reply_cap: int = 300
    #: Most mails from one sender (envelope address, normalised) processed per day.
    sender_daily_mails: int = 500
    #: Most mails one incoming mail may cause to its own sender (e.g. `show` of many
    #: boards; a `multiple` may have one per line); the rest are not sent and the
    #: answer says so.
    answers_per_mail: int = 20
    #: Most command lines a `multiple` mail runs; it is answered in one summary mail.
    multiple_max_lines: int = 50
    #: Bounces (DESIGN §2.8, ``service.bounces``): an address whose mail failed for good
    #: on this many days (one bounce counted a day) is no longer mailed; a score with no
    #: bounce for ``bounce_stale_days`` days starts again from nothing.
    bounce_threshold: int = 5
    bounce_stale_days: int = 7
    #: Most addresses a `signup` may name, and a user may have.
    signup_max_addresses: int = 3
    max_addresses: int = 5
    #: Days a confirmation code for a new address stays valid.
    confirmation_days: int = 7
    #: Days a received mail is kept whole once processed; then only a small record of
    #: it stays (``db.retention``). Parked mail is kept until the admin replays it.
    inbox_retention_days: int = 28
    #: Most confirmation requests mailed to one address per day (all users together).
    confirmations_per_address_daily: int = 3
    #: Text written by users (message, chat): most mails one user makes others get per
    #: day, and most such mails one address gets per day (broadcasts included).
    relay_per_user_daily: int = 50
    relay_per_recipient_daily: int = 30
    #: `broadcast` is for established users: this many rated games, an account this old.
    broadcast_min_games: int = 5
    broadcast_min_age_days: int = 7
    #: Challenges one sender may issue per day, and challenges by others that name one
    #: player per day (a challenge needs no consent; the player gets its board mails).
    challenges_per_sender_daily: int = 30
    challenges_per_player_daily: int = 20
    #: Analyses one sender may ask for per day: each holds the worker for a search.
    analyses_per_sender_daily: int = 20
    #: New users one sender address may sign up per day, and new users the whole server
    #: takes per hour (a signup storm from many addresses); 0 turns a limit off.
    signups_per_sender_daily: int = 5
    signups_per_hour: int = 300
    #: Wrong passwords allowed per user (from strangers) and per sender before the next
    #: try must wait: 1 minute, doubling with every further failure, at most this long.
    password_free_failures: int = 3
    password_max_delay_minutes: int = 60
    #: Moving by reply only from one of the player's confirmed addresses (envelope sender).
    reply_requires_registered_sender: bool = True
    #: Also require the site MTA's Authentication-Results (dmarc, dkim or spf = pass)
    #: for moving by reply; ``authserv_id`` names the MTA (default: our mail domain).
    reply_requires_authentication: bool = False
    authserv_id: str = ""
    #: The most seconds any robot may think per move (each level has its own
    #: default below this, see ``robot_budgets``).
    robot_budget: float = 60.0
    #: Seconds per move by robot, overriding the levels' defaults: "boulder:10,avalanche:60".
    robot_budgets: str = ""
    #: Threads the robots think in side by side (at least 2): long thinks (a -think
    #: above the level's own time) and analyses take one each at most, so ordinary
    #: robot moves always find one free.
    robot_lanes: int = 3
    #: CPU seconds the robots may spend a day on the games of one user (charged to
    #: each human player of the game); past it they think at most
    #: ``robot_budget_past_allowance`` seconds (and never above their level's own).
    robot_seconds_per_user_daily: int = 3600
    robot_budget_past_allowance: float = 5.0
    #: Seconds between two looks of the robots at every game (games started from the
    #: admin's command line are picked up then).
    robot_sweep_seconds: float = 30.0
    #: Run as if it were this much later ("8d", "1d12h", "90m"): for trying time limits
    #: and tournaments on a trial site, never on a live one. Every process of one site
    #: (serve, work, send, tick, the admin commands) must run with the same offset,
    #: since each dates what it writes by its own clock.
    clock_offset: str = ""

    def clock(self) -> Clock:
        """The site's clock: the system's time, moved by ``clock_offset``."""
        return site_clock(self.clock_offset)

    def robot_budget_for(self, robot: str, default: float) -> float:
        """Seconds ``robot`` thinks per move: ``robot_budgets`` or its level's
        ``default``, never more than ``robot_budget``."""
        chosen = parse_robot_budgets(self.robot_budgets).get(robot, default)
        return min(chosen, self.robot_budget)

    @property
    def listen_host(self) -> str:
        return self.listen.rsplit(":", 1)[0] or "127.0.0.1"

    @property
    def listen_port(self) -> int:
        return int(self.listen.rsplit(":", 1)[1])

    @property
    def address_local(self) -> str:
        return self.address.split("@", 1)[0]

    @property
    def address_domain(self) -> str:
        return self.address.split("@", 1)[1] if "@" in self.address else "localhost"

    @property
    def relay_host_port(self) -> tuple[str, int] | None:
        if not self.relay:
            return None
        target = parse_relay(self.relay)
        return target.host, target.port

    @property
    def relay_target(self) -> RelayTarget | None:
        """The relay's URL taken apart, the user of ABALONE_PBM_RELAY_USER included."""
        if not self.relay:
            return None
        target = parse_relay(self.relay)
        return replace(target, user=self.relay_user or target.user)

    @property
    def dkim_signing_domain(self) -> str:
        return (self.dkim_domain or self.address_domain).lower()


@dataclass(frozen=True)
class RelayTarget:
    """``smtp://[user@]host[:port]`` (port 25) or ``smtps://...`` (TLS at once, 465)."""

    scheme: str
    host: str
    port: int
    user: str = ""

    @property
    def implicit_tls(self) -> bool:
        return self.scheme == "smtps"

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{quote(self.user, safe='')}@" if self.user else ""
        return f"{self.scheme}://{user}{host}:{self.port}"


RELAY_STARTTLS = ("required", "opportunistic", "off")


def parse_relay(url: str) -> RelayTarget:
    """ABALONE_PBM_RELAY taken apart; ValueError naming the variable when it is wrong."""
    scheme, separator, rest = url.partition("://")
    example = ("smtp://host:25, smtp://user@smtp.example.net:587 or "
               "smtps://user@smtp.example.net:465")
    if not separator or scheme not in ("smtp", "smtps"):
        raise ValueError(f"{PREFIX}RELAY must be {example}, not {url!r}")
    rest = rest.rstrip("/")
    userinfo, at, hostport = rest.rpartition("@")
    if ":" in userinfo:
        raise ValueError(f"{PREFIX}RELAY holds no password: give it in "
                         f"{PREFIX}RELAY_PASSWORD_FILE or {PREFIX}RELAY_PASSWORD")
    if hostport.startswith("["):  # an IPv6 address: [::1]:587
        host, _, after = hostport[1:].partition("]")
        port = after.removeprefix(":")
    else:
        host, colon, port = hostport.partition(":")
    if not host or (port and not port.isdigit()) or (port and not 0 < int(port) <= 65535):
        raise ValueError(f"{PREFIX}RELAY must be {example}, not {url!r}")
    default = 465 if scheme == "smtps" else 25
    return RelayTarget(scheme, host, int(port) if port else default, unquote(userinfo))


def _convert(name: str, raw: Any, default: Any) -> Any:
    if isinstance(default, bool) or name == "lmtp":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError(f"{PREFIX}{name.upper()} must be on or off, not {raw!r}")
    if isinstance(default, int):
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{PREFIX}{name.upper()} must be a whole number, not {raw!r}") from None
    if isinstance(default, float):
        return float(raw)
    if name == "relay":
        return str(raw) or None
    if name in ("policy_listen", "http_listen"):
        text = str(raw).strip()
        return None if text.lower() in _FALSE else text
    return str(raw)


def settings_environment(settings: Settings) -> dict[str, str]:
    """The environment variables that make ``load_settings`` give ``settings`` back (for
    a process that must run on exactly these settings, whatever file they came from)."""
    environment = {}
    for setting in fields(Settings):
        value = getattr(settings, setting.name)
        if value is None:
            text = ""
        elif isinstance(value, bool):
            text = "on" if value else "off"
        else:
            text = str(value)
        environment[PREFIX + setting.name.upper()] = text
    return environment


def load_settings(
    config_file: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Build the settings from the defaults, a TOML file and the environment."""
    environ = os.environ if environ is None else environ
    settings = Settings()
    values: dict[str, Any] = {}
    if config_file:
        with open(config_file, "rb") as handle:
            data = tomllib.load(handle)
        known = {f.name for f in fields(Settings)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown settings in {config_file}: {', '.join(sorted(unknown))}")
        values.update(data)
    for f in fields(Settings):
        key = PREFIX + f.name.upper()
        if key in environ:
            values[f.name] = environ[key]
    converted = {
        name: _convert(name, raw, getattr(settings, name)) for name, raw in values.items()
    }
    result = replace(settings, **converted)
    _check(result)
    return result


def parse_robot_budgets(text: str) -> dict[str, float]:
    """``"boulder:10, avalanche:60"`` as ``{"boulder": 10.0, "avalanche": 60.0}``."""
    budgets: dict[str, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, colon, seconds = item.partition(":")
        try:
            value = float(seconds)
        except ValueError:
            value = -1.0
        if not colon or not name.strip() or not 0 < value <= 60:
            raise ValueError(
                f"{PREFIX}ROBOT_BUDGETS must be robot:seconds pairs separated by commas, "
                f"seconds from 0 to 60 (boulder:10,avalanche:60), not {text!r}"
            )
        budgets[name.strip().lower()] = value
    return budgets


def _check(settings: Settings) -> None:
    """Refuse settings the server could not use, naming the variable, before anything
    starts (rather than a traceback from deep inside)."""
    host, colon, port = settings.listen.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(
            f"{PREFIX}LISTEN must be host:port, e.g. 127.0.0.1:8025, not {settings.listen!r}"
        )
    local, at, domain = settings.address.partition("@")
    if not at or not local or not domain or "+" in local:
        raise ValueError(
            f"{PREFIX}ADDRESS must be a plain mail address such as abalone@example.org, "
            f"not {settings.address!r}"
        )
    if settings.relay is not None:
        target = parse_relay(settings.relay)
        if settings.relay_starttls not in RELAY_STARTTLS:
            raise ValueError(f"{PREFIX}RELAY_STARTTLS must be required, opportunistic or "
                             f"off, not {settings.relay_starttls!r}")
        if target.implicit_tls and settings.relay_starttls == "off":
            raise ValueError(f"{PREFIX}RELAY smtps:// is TLS from the start: "
                             f"{PREFIX}RELAY_STARTTLS cannot be off")
        if settings.relay_password and settings.relay_password_file:
            raise ValueError(f"give {PREFIX}RELAY_PASSWORD or {PREFIX}RELAY_PASSWORD_FILE, "
                             "not both")
        if (settings.relay_password or settings.relay_password_file) and not (
                settings.relay_user or target.user):
            raise ValueError(f"a relay password needs a user: {PREFIX}RELAY_USER or "
                             "smtp://user@host:587")
    if settings.dkim_key_file and not settings.dkim_selector:
        raise ValueError(f"{PREFIX}DKIM_SELECTOR must name the key's selector")
    for name, example in (("policy_listen", "127.0.0.1:8026"),
                          ("http_listen", "127.0.0.1:8027")):
        listen = getattr(settings, name)
        if listen is None:
            continue
        host, colon, port = listen.rpartition(":")
        if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(
                f"{PREFIX}{name.upper()} must be host:port, e.g. {example}, or off, "
                f"not {listen!r}"
            )
    if settings.public_url and not settings.public_url.startswith("https://"):
        raise ValueError(
            f"{PREFIX}PUBLIC_URL must be an https:// address (RFC 8058 one-click "
            f"unsubscribe needs HTTPS), not {settings.public_url!r}"
        )
    if settings.secret and len(settings.secret) < 16:
        raise ValueError(f"{PREFIX}SECRET must be at least 16 characters of random text")
    parse_robot_budgets(settings.robot_budgets)
    try:
        parse_offset(settings.clock_offset)
    except ValueError as error:
        raise ValueError(f"{PREFIX}CLOCK_OFFSET is {error}") from None
    if not 2 <= settings.robot_lanes <= 16:
        raise ValueError(f"{PREFIX}ROBOT_LANES must be between 2 and 16")
    for name in ("robot_budget", "robot_budget_past_allowance", "robot_sweep_seconds",
                 "smtp_idle_timeout", "smtp_data_timeout", "policy_idle_timeout",
                 "refused_log_interval", "http_request_timeout"):
        if not 0 < getattr(settings, name):
            raise ValueError(f"{PREFIX}{name.upper()} must be a positive number of seconds")
    if settings.max_message_bytes < 1:
        raise ValueError(f"{PREFIX}MAX_MESSAGE_BYTES must be a positive number of bytes")
    if not 1 <= settings.relay_connections <= 64:
        raise ValueError(f"{PREFIX}RELAY_CONNECTIONS must be between 1 and 64")
    for name in ("multiple_max_lines", "signup_max_addresses", "max_addresses",
                 "confirmation_days", "answers_per_mail", "password_max_delay_minutes",
                 "inbox_retention_days", "bounce_threshold", "bounce_stale_days",
                 "smtp_max_sessions", "smtp_max_sessions_per_client",
                 "policy_max_connections", "policy_max_connections_per_client",
                 "http_max_connections", "http_max_connections_per_client"):
        if getattr(settings, name) < 1:
            raise ValueError(f"{PREFIX}{name.upper()} must be at least 1")
    for name in ("daily_reply_cap", "sender_daily_mails", "confirmations_per_address_daily",
                 "relay_per_user_daily", "relay_per_recipient_daily", "broadcast_min_games",
                 "broadcast_min_age_days", "challenges_per_sender_daily",
                 "challenges_per_player_daily", "analyses_per_sender_daily",
                 "robot_seconds_per_user_daily",
                 "signups_per_sender_daily", "signups_per_hour",
                 "password_free_failures"):
        if getattr(settings, name) < 0:
            raise ValueError(f"{PREFIX}{name.upper()} must not be negative")
    if settings.signup_max_addresses > settings.max_addresses:
        raise ValueError(f"{PREFIX}SIGNUP_MAX_ADDRESSES must not exceed {PREFIX}MAX_ADDRESSES")
