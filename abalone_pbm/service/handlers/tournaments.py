"""The tournament commands by mail: list, show, join, withdraw, standings, and the
standings mails on or off (DESIGN §2.9)."""

from __future__ import annotations

from ...protocol import tournament_commands as commands
from ...render import answer_mail
from .. import tournaments, views
from ..context import MailContext
from ..queries import authenticate


def list_tournaments(ctx: MailContext, c: commands.TournamentList) -> None:
    ctx.reply("Abalone tournaments", tournaments.list_text(ctx.session))


def show(ctx: MailContext, c: commands.TournamentShow) -> None:
    t = tournaments.require(ctx.session, c.tournament)
    ctx.reply(f"Abalone tournament {t.name}", tournaments.show_text(ctx.session, t))


def standings(ctx: MailContext, c: commands.TournamentStandings) -> None:
    t = tournaments.require(ctx.session, c.tournament)
    ctx.reply(f"Abalone tournament {t.name} standings",
              tournaments.standings_text(ctx.session, t))


def join(ctx: MailContext, c: commands.TournamentJoin) -> None:
    user = authenticate(ctx, c.userid, c.password)
    t = tournaments.require(ctx.session, c.tournament)
    tournaments.join(ctx, t, user, once=c.once)
    count = len(tournaments.entered(ctx.session, t))
    when = (f"Sign-up closes {views.when(t.signup_until)}; the games start then"
            if t.signup_until else "The games start when the director starts the tournament")
    again = ""
    if t.format == "championship":
        again = ("  You are entered in this edition only." if c.once else
                 "  You are entered in the next editions too, until you withdraw.")
    ctx.reply(*answer_mail(
        f"Abalone tournament {t.name} join {user.userid}",
        f"{user.userid}, you are entered in tournament {t.name} "
        f"({tournaments.FORMAT_NAMES[t.format]}), {count} players so far.  {when}; "
        "each game's board comes in a mail of its own, and the standings after each "
        f"round.{again}  To leave: \"abalone tournament withdraw {t.name} <userid> "
        '<password>".',
    ))


def withdraw(ctx: MailContext, c: commands.TournamentWithdraw) -> None:
    user = authenticate(ctx, c.userid, c.password)
    t = tournaments.require(ctx.session, c.tournament)
    running = t.status == "running"
    tournaments.leave(ctx, t, user)
    done = ("Your games still running in it are resigned and you are paired no more."
            if running else "You were not playing any game of it yet.")
    ctx.reply(*answer_mail(f"Abalone tournament {t.name} withdraw {user.userid}",
                           f"{user.userid}, you have left tournament {t.name}.  {done}"))


def mail(ctx: MailContext, c: commands.TournamentMail) -> None:
    user = authenticate(ctx, c.userid, c.password)
    t = tournaments.require(ctx.session, c.tournament)
    entry = tournaments.entry_of(ctx.session, t, user)
    if entry is None:
        raise tournaments.TournamentError(
            f'{user.userid} is not entered in tournament "{t.name}"')
    entry.standings_mail = c.on
    said = ("you get the standings of tournament {name} after each round and at the end"
            if c.on else "you no longer get the standings mails of tournament {name}; "
            '"abalone tournament standings {name}" still shows them')
    ctx.reply(*answer_mail(f"Abalone tournament {t.name} mail {'on' if c.on else 'off'}",
                           f"{user.userid}, " + said.format(name=t.name) + "."))
