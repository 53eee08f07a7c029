"""Rate limits and throttles on a mail being processed: what any one address or user can
make the server do (DESIGN §2.6). The counting itself is in :mod:`.rates`.

Events that must outlive a failed command (a wrong password fails its command, whose
savepoint is rolled back) are kept on the context (:meth:`MailContext.keep`) and
written after the savepoint; counting sees them before they are written.

The password throttle is two steps around the (costly) argon2 check, so that the check
itself may run anywhere, e.g. outside the write transaction:
:func:`password_refusal` before it (cheap, reads only) and :func:`password_checked`
after it with its outcome.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta


from sqlalchemy import bindparam, delete, func, insert, select
from sqlalchemy.orm import Session

from .. import render
from ..config import Settings
from ..db import repository
from ..db.models import RobotUsage, User
from ..db.repository import read_core
from ..robots import ROBOTS
from . import rates
from .context import CommandError, MailContext, Outgoing

log = logging.getLogger(__name__)
HOUR = timedelta(hours=1)

_USAGE = RobotUsage.__table__
# Read before every robot move: built once.
_ROBOT_SECONDS = select(func.sum(_USAGE.c.seconds)).where(
    _USAGE.c.userid == bindparam("userid"), _USAGE.c.at > bindparam("since"))

#: The first wait of the password throttle; it doubles with each further failure.
FIRST_PASSWORD_DELAY = timedelta(minutes=1)


def _sender(ctx: MailContext) -> str:
    return rates.normalise_address(ctx.envelope_sender or ctx.sender)


# ------------------------------------------------------------------ relayed text
def relay_text(ctx: MailContext, author: User, users: Iterable[User], subject: str, body: str,
               *, board: int | None = None, allowance: bool = True) -> list[str]:
    """Mail text written by ``author`` (message, chat, broadcast) to the confirmed
    addresses of ``users``, each once and none of the author's own.

    Within the author's daily allowance (else the command fails and nothing is sent; a
    broadcast, ``allowance=False``, has its own) and each recipient's (a recipient who
    had enough today is left out). Returns the addresses written to.
    """
    own = {a.address for a in author.addresses}
    addresses: list[str] = []
    for user in users:
        for entry in user.addresses:
            if entry.confirmed and entry.address not in own and entry.address not in addresses:
                addresses.append(entry.address)
    since = ctx.now - rates.DAY
    per_user = ctx.settings.relay_per_user_daily if allowance else 0
    if per_user:
        used = rates.count(ctx.session, rates.RELAY_FROM, author.userid, since)
        if used + len(addresses) > per_user:
            left = max(per_user - used, 0)
            raise CommandError(
                f"{author.userid} may have text mailed to at most {per_user} addresses a day "
                f"(messages and chats together); {left} more today, and this would go to "
                f"{len(addresses)}.  Nothing was sent.",
                board=board,
            )
    per_address = ctx.settings.relay_per_recipient_daily
    sent: list[str] = []
    for address in addresses:
        target = rates.normalise_address(address)
        if per_address and rates.count(ctx.session, rates.RELAY_TO, target, since) >= per_address:
            log.info("relay to %s left out: it had %d relayed mails today", target, per_address)
            continue
        rates.record(ctx.session, rates.RELAY_TO, target, ctx.now)
        rates.record(ctx.session, rates.RELAY_FROM, author.userid, ctx.now)
        ctx.send(Outgoing(address, subject, body))
        sent.append(address)
    return sent


def established(settings: Settings, user: User, now: datetime) -> bool:
    """Whether ``user`` is established: enough rated games and an old enough account
    (``broadcast`` and long robot thinks are for established users only)."""
    return (user.rated_games >= settings.broadcast_min_games
            and now - user.created_at >= timedelta(days=settings.broadcast_min_age_days))


def _established_terms(settings: Settings, user: User, now: datetime) -> str:
    return (f"at least {settings.broadcast_min_games} rated games and an account at least "
            f"{settings.broadcast_min_age_days} days old ({user.userid} has "
            f"{user.rated_games} and is {(now - user.created_at).days} days old)")


def check_established(ctx: MailContext, user: User) -> None:
    """``broadcast`` is for established users: enough rated games, an old enough account."""
    if not established(ctx.settings, user, ctx.now):
        raise CommandError(
            f"broadcast is for established players: "
            f"{_established_terms(ctx.settings, user, ctx.now)}.  Use message to write to "
            "players you know."
        )


# ------------------------------------------------------------------ confirmations
def confirmation_allowed(ctx: MailContext, address: str) -> bool:
    """Whether one more confirmation request may go to ``address`` today; counts it."""
    target = rates.normalise_address(address)
    cap = ctx.settings.confirmations_per_address_daily
    if cap and rates.count(ctx.session, rates.CONFIRM, target, ctx.now - rates.DAY,
                           ctx.kept_events) >= cap:
        return False
    ctx.keep(rates.CONFIRM, target)
    return True


def _daily_per_sender(ctx: MailContext, kind: str, cap: int, what: str) -> None:
    """Refuse the sender's ``cap``-plus-first ``kind`` of the day (0: no cap), else
    count this one; ``what`` ends "A sender may ..." with ``{cap}`` in it."""
    sender = _sender(ctx)
    if cap and rates.count(ctx.session, kind, sender, ctx.now - rates.DAY) >= cap:
        raise CommandError(f"A sender may {what.format(cap=cap)} a day; please try "
                           "again tomorrow")
    rates.record(ctx.session, kind, sender, ctx.now)


# ------------------------------------------------------------------ challenges
def check_challenge_allowed(ctx: MailContext) -> None:
    """A sender issues at most ``challenges_per_sender_daily`` challenges a day."""
    _daily_per_sender(ctx, rates.CHALLENGE, ctx.settings.challenges_per_sender_daily,
                      "issue at most {cap} challenges")


def check_challenged(ctx: MailContext, players: Iterable[User], challenger: str | None) -> None:
    """A player is named in at most ``challenges_per_player_daily`` challenges of others
    a day (their own challenges and computer players do not count)."""
    cap = ctx.settings.challenges_per_player_daily
    named = [u for u in players if u.robot is None and u.userid != challenger]
    if not cap:
        return
    for user in named:
        if rates.count(ctx.session, rates.CHALLENGED, user.userid, ctx.now - rates.DAY) >= cap:
            raise CommandError(
                f"{user.userid} has been challenged by others {cap} times today, the most a "
                "day; please try again tomorrow"
            )
    for user in named:
        rates.record(ctx.session, rates.CHALLENGED, user.userid, ctx.now)


# ------------------------------------------------------------------ computer players
def sender_account(ctx: MailContext) -> User | None:
    """The user one of whose confirmed addresses the mail came from (its envelope
    sender), when exactly one user has that address confirmed."""
    address = (ctx.envelope_sender or "").strip().strip("<>").lower()
    if not address:
        return None
    owners = [u for u in repository.find_user_by_address(ctx.session, address)
              if any(a.confirmed and a.address == address for a in u.addresses)]
    return owners[0] if len(owners) == 1 else None


def level_budget(settings: Settings, robot: str) -> float:
    """Seconds ``robot`` thinks per move by its level (or the admin's setting)."""
    return settings.robot_budget_for(robot, ROBOTS[robot].budget)


def think_budget(settings: Settings, robot: str, think: int | None) -> float:
    """Seconds ``robot`` thinks per move in a game of ``-think`` seconds (None: its
    level's own time); a -think never above the server's cap."""
    if think is not None:
        return min(float(think), settings.robot_budget)
    return level_budget(settings, robot)


def check_robot_challenge(ctx: MailContext, players: list[User], think: int | None) -> None:
    """A challenge by mail that names a computer player: never computer players only
    (the admin starts those from the command line), only from a sender with an
    account, and a ``-think`` above a robot's own time only for a game the sender plays
    as an established player (each such move holds a robot lane that long)."""
    robots = [u for u in players if u.robot is not None]
    if not robots:
        return
    people = [u for u in players if u.robot is None]
    if not people:
        raise CommandError(
            "A game between computer players only is not started by mail (the server's "
            "admin can start one).  Challenge one of them yourself, e.g. "
            f'"abalone challenge <your userid> {robots[0].userid}"'
        )
    account = sender_account(ctx)
    if account is None:
        raise CommandError(
            "Challenging a computer player needs an account: send the challenge from a "
            "confirmed address of your userid (sign up with \"signup <userid> "
            "<password>\" first)"
        )
    if think is None:
        return
    # The server's cap applies to every -think: only what is left of it counts.
    seconds = min(float(think), ctx.settings.robot_budget)
    longer = [u for u in robots if seconds > level_budget(ctx.settings, u.robot or "")]
    if not longer:
        return
    robot = longer[0]
    own = level_budget(ctx.settings, robot.robot or "")
    instead = "leave -think out" + (f" or give at most -think={int(own)}" if own >= 1 else "")
    if account.id not in {u.id for u in people}:
        raise CommandError(
            f"-think={think} is more than {robot.userid}'s own {own:g} seconds a move: "
            f"that is only for a game you play yourself.  To challenge for others, "
            f"{instead}"
        )
    if not established(ctx.settings, account, ctx.now):
        raise CommandError(
            f"-think={think} is more than {robot.userid}'s own {own:g} seconds a move, "
            f"which is for established players: "
            f"{_established_terms(ctx.settings, account, ctx.now)}.  To play "
            f"{robot.userid} now, {instead}"
        )


def robot_seconds_today(session: Session, userids: Iterable[str], now: datetime) -> float:
    """The most CPU seconds the robots spent in the last day on the games of any one
    of ``userids``."""
    most = 0.0
    for userid in userids:
        spent = read_core(session, _ROBOT_SECONDS,
                          {"userid": userid, "since": now - rates.DAY}).scalar()
        most = max(most, float(spent or 0.0))
    return most


def robot_budget(session: Session, settings: Settings, robot: str, think: int | None,
                 people: list[str], now: datetime) -> float:
    """Seconds ``robot`` thinks for its next move in a game of ``people``: the game's
    -think, else its level's; once the robots spent a day's allowance on the games of
    one of those people, at most ``robot_budget_past_allowance`` and never more than
    its level's own time."""
    own = level_budget(settings, robot)
    budget = think_budget(settings, robot, think)
    allowance = settings.robot_seconds_per_user_daily
    if allowance and people and robot_seconds_today(session, people, now) >= allowance:
        return min(budget, own, settings.robot_budget_past_allowance)
    return budget


def record_robot_seconds(session: Session, people: Iterable[str], seconds: float,
                         now: datetime) -> None:
    """Charge ``seconds`` of robot CPU to each of ``people`` (a robot's move in their
    game); rows older than the longest window go at the same time."""
    rows = [{"userid": userid, "at": now, "seconds": seconds} for userid in people]
    if rows:
        session.execute(insert(RobotUsage), rows)
    session.execute(delete(RobotUsage).where(RobotUsage.at < now - rates.KEEP))


# ------------------------------------------------------------------ signups
def check_signup_allowed(ctx: MailContext) -> None:
    """A sender signs up at most ``signups_per_sender_daily`` new users a day, and the
    server takes at most ``signups_per_hour`` new users an hour from everybody: a storm
    of signups fills neither the database nor the outbox."""
    sender = _sender(ctx)
    cap = ctx.settings.signups_per_sender_daily
    if cap and rates.count(ctx.session, rates.SIGNUP, sender, ctx.now - rates.DAY) >= cap:
        raise CommandError(
            f"One address may sign up at most {cap} users a day; please try again tomorrow"
        )
    hourly = ctx.settings.signups_per_hour
    if hourly and rates.count(ctx.session, rates.SIGNUP_ANY, "", ctx.now - HOUR) >= hourly:
        raise CommandError(
            "The server has taken as many new users as it takes in an hour; please try "
            "again in an hour"
        )
    rates.record(ctx.session, rates.SIGNUP, sender, ctx.now)
    rates.record(ctx.session, rates.SIGNUP_ANY, "", ctx.now)


# ------------------------------------------------------------------ analyses
def check_analysis_allowed(ctx: MailContext) -> None:
    """A sender asks for at most ``analyses_per_sender_daily`` analyses a day: each one
    holds the worker for a search, so a flood of them would delay everyone's mail."""
    if ctx.searches:
        raise CommandError("One mail may ask for one analysis; send the others in mails "
                           "of their own")
    _daily_per_sender(ctx, rates.ANALYSIS, ctx.settings.analyses_per_sender_daily,
                      "ask for at most {cap} analyses")
    ctx.searches += 1


# ------------------------------------------------------------------ passwords
def password_delay(settings: Settings, failures: int) -> timedelta:
    """How long after the last failure the next try must wait, after ``failures``."""
    over = failures - settings.password_free_failures
    if over < 0:
        return timedelta(0)
    longest = timedelta(minutes=settings.password_max_delay_minutes)
    delay: timedelta = FIRST_PASSWORD_DELAY * 2 ** min(over, 20)
    return min(delay, longest)


def _failures(ctx: MailContext, fail_scope: str, ok_scope: str,
              subject: str) -> tuple[int, datetime | None]:
    """Failures since the last success (within a day), and the time of the last one."""
    return rates.run_since_ok(ctx.session, fail_scope, ok_scope, subject,
                              ctx.now - rates.DAY, ctx.kept_events)


def _from_owner(ctx: MailContext, owner_addresses: list[str]) -> bool:
    sender = (ctx.envelope_sender or "").strip().strip("<>").lower()
    return bool(sender) and sender in {a.lower() for a in owner_addresses}


def password_refusal(ctx: MailContext, user: User, owner_addresses: list[str]) -> str | None:
    """Why no password may be checked for ``user`` from this sender now, or None.

    Strangers' wrong passwords slow down the checks for that user, but never for the
    owner's own confirmed addresses (so nobody can lock a player out); each sender's
    own wrong passwords slow down that sender, for every user.
    """
    checks = [(rates.PW_SENDER, rates.PW_OK_SENDER, _sender(ctx), "from your address")]
    if not _from_owner(ctx, owner_addresses):
        checks.insert(0, (rates.PW_USER, rates.PW_OK_USER, user.userid, f"for {user.userid}"))
    for fail_scope, ok_scope, subject, what in checks:
        failures, last = _failures(ctx, fail_scope, ok_scope, subject)
        if last is None:
            continue
        until = last + password_delay(ctx.settings, failures)
        if ctx.now < until:
            return (f"Too many wrong passwords {what} ({failures} in a row): the password "
                    f"was not checked.  The next try is possible from {rates.when(until)}; "
                    "each further wrong password doubles the wait.")
    return None


def password_checked(ctx: MailContext, user: User, right: bool,
                     owner_addresses: list[str]) -> None:
    """Count the outcome of a password check (kept even when the command fails). The
    owner is told, once a day, when strangers' wrong passwords start the throttle."""
    sender = _sender(ctx)
    owner = _from_owner(ctx, owner_addresses)
    if right:
        # Only a success that ends a run of failures needs a row.
        if _failures(ctx, rates.PW_SENDER, rates.PW_OK_SENDER, sender)[0]:
            ctx.keep(rates.PW_OK_SENDER, sender)
        if owner and _failures(ctx, rates.PW_USER, rates.PW_OK_USER, user.userid)[0]:
            ctx.keep(rates.PW_OK_USER, user.userid)
        return
    ctx.keep(rates.PW_SENDER, sender)
    if owner:
        return
    ctx.keep(rates.PW_USER, user.userid)
    failures, _ = _failures(ctx, rates.PW_USER, rates.PW_OK_USER, user.userid)
    if failures < max(ctx.settings.password_free_failures, 1) or not owner_addresses:
        return
    if rates.count(ctx.session, rates.PW_NOTICE, user.userid, ctx.now - rates.DAY,
                   ctx.kept_events) == 0:
        ctx.keep(rates.PW_NOTICE, user.userid)
        _notify_owner(ctx, user, failures, owner_addresses)


def _notify_owner(ctx: MailContext, user: User, failures: int,
                  owner_addresses: list[str]) -> None:
    body = render.tidy(render.wrap_text(
        f"{failures} wrong passwords for the Abalone userid {user.userid} have reached "
        f"the server, the last one at {rates.when(ctx.now)}, from an address that is not "
        "one of yours.\n\n"
        "Your password was not revealed, and further tries from other addresses are now "
        "slowed down (each wrong one doubles the wait).  Your own addresses are not "
        "slowed down: you can go on playing as before.\n\n"
        "If you think someone knows or guesses your password, choose a new one:\n\n"
        f"    change password {user.userid} <old-password> <new-password>\n\n"
        f"or, if you forgot it, send \"password reset {user.userid}\" to "
        f"{ctx.settings.address}.  You get this notice at most once a day.\n"
    ))
    for address in owner_addresses:
        ctx.kept_mail.append(
            Outgoing(address, f"Abalone: wrong passwords for {user.userid}", body,
                     auto_submitted="auto-generated")
        )
