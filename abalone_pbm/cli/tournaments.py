"""``abalone-pbm tournament create|start|pair|adjudicate|disqualify|enter|list|show``:
the admin runs tournaments (DESIGN §2.9).  Every bad argument is one line on stderr and
exit status 2."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NoReturn

from .common import add_config, run, table, when

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..db.session import Database

#: Exit status of a bad argument (as argparse's own).
BAD_ARGUMENT = 2


class BadArgument(Exception):
    """An argument the command cannot use: one line, exit 2."""


def _one_line(parser: argparse.ArgumentParser) -> None:
    """argparse prints its usage and exits 2; here the error alone, on one line.  Words
    left over are refused here too (else the top parser reports them, with its usage)."""

    def error(message: str) -> NoReturn:
        print(f"{parser.prog}: {message}", file=sys.stderr)
        sys.exit(BAD_ARGUMENT)

    parse_known_args = parser.parse_known_args

    def parse_all(args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = parse_known_args(args, namespace)
        if extras:
            error(f"unrecognized arguments: {' '.join(extras)[:200]}")
        return parsed, extras

    parser.error = error  # type: ignore[method-assign]
    parser.parse_known_args = parse_all  # type: ignore[method-assign,assignment]


def _guarded(name: str, args: argparse.Namespace, action: Any) -> int:
    def wrapped(database: Database, settings: Settings, a: argparse.Namespace) -> int:
        from ..service.context import CommandError

        try:
            return int(action(database, settings, a) or 0)
        except (BadArgument, CommandError) as error:
            text = error.message if isinstance(error, CommandError) else str(error)
            print(f"abalone-pbm tournament {name}: {text}", file=sys.stderr)
            return BAD_ARGUMENT

    return run(f"tournament {name}", args, wrapped)


def _date(text: str) -> datetime:
    """``2026-12-31`` (midnight UTC) or ``2026-12-31T18:00`` (UTC unless a zone is given)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (2026-12-31 or 2026-12-31T18:00)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1 or int(text) > 10_000:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number from 1 "
                                         "to 10000")
    return int(text)


def _board(text: str) -> int:
    """A board number: digits, at most nine (as the mail commands read them)."""
    if not text.isdigit() or len(text) > 9 or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a board number")
    return int(text)


def _context(session: Any, settings: Settings) -> Any:
    from ..service.context import MailContext

    return MailContext(session=session, settings=settings, now=settings.clock().now(), sender=settings.address)


def _create(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service import tournaments

    options: dict[str, str | bool] = {}
    if args.layout:
        options["layout"] = args.layout
    for name in ("nagtime", "forfeittime", "totaltime", "target", "movelimit"):
        value = getattr(args, name)
        if value is not None:
            options[name] = str(value)
    for variant in args.variant or ():
        options[variant] = True
    plan = tournaments.Plan(
        name=args.name, format=args.format, rounds=args.rounds, games_per_pairing=args.games,
        options=options, min_players=args.min, max_players=args.max,
        signup_until=args.signup_until, division_size=args.division_size,
        interval_days=args.interval)
    with database.write() as session:
        t = tournaments.create(session, plan, settings.clock().now())
        name, status = t.name, t.status
    print(f"tournament {name} created ({args.format}), {status}; players join with "
          f"\"abalone tournament join {name} <userid> <password>\"")
    return 0


def _start(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service import tournaments

    with database.write() as session:
        ctx = _context(session, settings)
        t = tournaments.require(session, args.name)
        boards = tournaments.start(ctx, t)
        count = ctx.flush()
    print(f"tournament {args.name} started: {len(boards)} games, {count} mail(s) queued")
    return 0


def _pair(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service import tournaments

    with database.write() as session:
        ctx = _context(session, settings)
        t = tournaments.require(session, args.name)
        if t.format not in ("swiss", "knockout") or t.status != "running":
            raise BadArgument(f"{t.name} is a {t.format} tournament, {t.status}: only a "
                              "running Swiss or knockout is paired round by round")
        before = t.current_round
        open_games = [r.board for r in tournaments.games_of(session, t)
                      if r.score_first is None]
        if open_games:
            raise BadArgument(f"round {t.current_round} still has {len(open_games)} games "
                              f"running (boards {', '.join(str(b) for b in open_games[:10])}); "
                              "adjudicate them first")
        tournaments.advance(ctx, t)
        after, status = t.current_round, t.status
        ctx.flush()
    print(f"tournament {args.name}: round {after} paired" if after > before
          else f"tournament {args.name}: {status}")
    return 0


def _adjudicate(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service import tournaments

    with database.write() as session:
        ctx = _context(session, settings)
        t = tournaments.require(session, args.name)
        tournaments.adjudicate(ctx, t, args.board, args.result)
        ctx.flush()
    print(f"board {args.board} of tournament {args.name} decided: {args.result}")
    return 0


def _disqualify(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..db import repository
    from ..service import tournaments

    with database.write() as session:
        ctx = _context(session, settings)
        t = tournaments.require(session, args.name)
        user = repository.get_user(session, args.userid.lower())
        if user is None:
            raise BadArgument(f"there is no user {args.userid}")
        tournaments.leave(ctx, t, user, status="disqualified")
        ctx.flush()
    print(f"{args.userid} disqualified from tournament {args.name}; their running games "
          "are resigned")
    return 0


def _enter(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..db import repository
    from ..service import tournaments

    with database.write() as session:
        ctx = _context(session, settings)
        t = tournaments.require(session, args.name)
        for userid in args.userids:
            user = repository.get_user(session, userid.lower())
            if user is None:
                raise BadArgument(f"there is no user {userid}")
            tournaments.join(ctx, t, user, once=args.once)
        ctx.flush()
    print(f"entered in tournament {args.name}: {', '.join(u.lower() for u in args.userids)}")
    return 0


def _list(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from ..db.models import Tournament
    from ..service import tournaments

    with database.read() as session:
        rows = []
        for t in session.scalars(select(Tournament).order_by(Tournament.created_at, Tournament.id)):
            entered = len(tournaments.entered(session, t))
            stalled = ""
            if t.status == "running":
                stuck = tournaments.stalled_games(session, t, settings.clock().now())
                stalled = ", ".join(str(g.number) for g, _, _ in stuck) or "-"
            rows.append((t.name, t.format, t.status, entered,
                         t.current_round if t.status != "signup" else "-",
                         when(t.signup_until), stalled or "-"))
    if not rows:
        print("no tournaments")
        return 0
    print(table(("NAME", "FORMAT", "STATUS", "PLAYERS", "ROUND", "SIGN-UP UNTIL",
                 "STALLED BOARDS"), rows))
    return 0


def _show(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service import tournaments

    with database.read() as session:
        t = tournaments.require(session, args.name)
        print(tournaments.show_text(session, t).rstrip("\n"))
        print()
        print(tournaments.standings_text(session, t).rstrip("\n"))
    return 0


ACTIONS = {"create": _create, "start": _start, "pair": _pair, "adjudicate": _adjudicate,
           "disqualify": _disqualify, "enter": _enter, "list": _list, "show": _show}


def cmd_tournament(args: argparse.Namespace) -> int:
    name = args.tournament_command
    return _guarded(name, args, ACTIONS[name])


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from ..tournaments import FORMATS

    top = sub.add_parser("tournament", help="create and steer tournaments",
                         description="Tournaments (admin): create, start, pair, "
                                     "adjudicate, disqualify, enter, list, show.")
    _one_line(top)
    add_config(top)
    actions = top.add_subparsers(dest="tournament_command", required=True, metavar="ACTION")

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
        _one_line(parser)
        add_config(parser)
        return parser

    create = action("create", "a new tournament, open for sign-up")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--format", required=True, choices=FORMATS)
    create.add_argument("--rounds", type=_count, help="rounds of a Swiss")
    create.add_argument("--games", type=_count,
                        help="games a pairing plays (default 2; a Swiss 1)")
    create.add_argument("--layout", help="the games' layout (as -layout= of a challenge)")
    create.add_argument("--variant", action="append",
                        choices=("pillar", "princess", "soccer", "thief"))
    create.add_argument("--nagtime", type=_count, help="days before a reminder (default 1)")
    create.add_argument("--forfeittime", type=_count, help="days before a forfeit (default 7)")
    create.add_argument("--totaltime", type=_count)
    create.add_argument("--target", type=_count)
    create.add_argument("--movelimit", type=_count)
    create.add_argument("--signup-until", type=_date, metavar="DATE")
    create.add_argument("--min", type=_count, default=2)
    create.add_argument("--max", type=_count, default=64)
    create.add_argument("--division-size", type=_count, default=10)
    create.add_argument("--interval", type=_count, default=7,
                        help="days between a championship edition and the next")
    for name, help_text in (("start", "close the sign-up and start the games"),
                            ("pair", "pair the next round of a Swiss or knockout"),
                            ("show", "a tournament with its standings")):
        action(name, help_text).add_argument("name", metavar="NAME")
    adjudicate = action("adjudicate", "decide a stalled game: 1-0, 0-1 or draw")
    adjudicate.add_argument("name", metavar="NAME")
    adjudicate.add_argument("board", type=_board, metavar="BOARD")
    adjudicate.add_argument("result", metavar="RESULT")
    disqualify = action("disqualify", "take a player out; their games are resigned")
    disqualify.add_argument("name", metavar="NAME")
    disqualify.add_argument("userid", metavar="USERID")
    enter = action("enter", "enter players (computer players too) while sign-up is open")
    enter.add_argument("name", metavar="NAME")
    enter.add_argument("userids", nargs="+", metavar="USERID")
    enter.add_argument("--once", action="store_true",
                       help="a championship's this edition only")
    action("list", "every tournament")
    top.set_defaults(handler=cmd_tournament)
