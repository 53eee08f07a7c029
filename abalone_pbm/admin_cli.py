"""Admin sub-commands: ``tick``, ``users …``, ``games …`` and ``mail parked|replay``.

Registered in ``abalone_pbm.server_cli.REGISTRARS`` when this module is imported.  They
read the settings like ``serve`` (environment, ``--config``), print plain aligned text,
and never print a password hash, a reset code or a reply-address token.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .server_cli import REGISTRARS

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings
    from .db.models import Game, User
    from .db.session import Database

#: Password hash of an account its owner deleted (see service.accounts.delete).
_DELETED = "!deleted"


class _Failure(Exception):
    """A problem to print on stderr (exit status 1), without a traceback."""


# ---------------------------------------------------------------------------- helpers
def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment is not None else "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns separated by two blanks; numbers right-aligned, the rest left-aligned."""
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in r] for r in rows]
    numeric = [
        bool(rows) and all(isinstance(r[i], (int, float)) for r in rows if r[i] is not None)
        for i in range(len(headers))
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            row[i].rjust(widths[i]) if numeric[i] else row[i].ljust(widths[i])
            for i in range(len(headers))
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _fields(pairs: Sequence[tuple[str, Any]]) -> str:
    width = max(len(name) for name, _ in pairs) + 1
    return "\n".join(f"{(name + ':').ljust(width)}  {value}".rstrip() for name, value in pairs)


def _settings(args: argparse.Namespace) -> Settings:
    from .config import load_settings

    return load_settings(getattr(args, "config", None))


def _database(settings: Settings) -> Database:
    """The settings' database, brought up to date; an SQLite file must exist already."""
    from .db.session import Database

    database = Database(settings.database_url)
    path = database.sqlite_path
    if path is not None and not path.exists():
        raise _Failure(f"database {database.describe()} does not exist yet; "
                       "`abalone-pbm db upgrade` (or `serve`) creates it")
    database.ensure_schema()
    return database


def _run(name: str, args: argparse.Namespace, action: Any) -> int:
    """Open the database, run ``action(database, settings, args)``, report failures."""
    database = None
    try:
        settings = _settings(args)
        database = _database(settings)
        result = action(database, settings, args)
        return int(result or 0)
    except _Failure as failure:
        print(f"abalone-pbm {name}: {failure}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"abalone-pbm {name}: {error}", file=sys.stderr)
        return 2
    finally:
        if database is not None:
            database.dispose()


# ------------------------------------------------------------------------------- tick
def _tick(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from .clock import SystemClock
    from .service import timeouts

    summary = timeouts.tick(database, SystemClock().now(), settings)
    print(f"abalone-pbm tick: {summary}")
    return 1 if getattr(summary, "failed", 0) else 0


def cmd_tick(args: argparse.Namespace) -> int:
    """Reminders, forfeits and time limits, once."""
    return _run("tick", args, _tick)


# ------------------------------------------------------------------------------ users
def _user_status(user: User) -> str:
    if user.password_hash == _DELETED:
        return "deleted"
    notes = []
    if user.disabled:
        notes.append("disabled")
    if user.robot is not None:
        notes.append(f"robot ({user.robot})")
    if user.vacation:
        notes.append("vacation")
    return ", ".join(notes) or "active"


def _get_user(session: Any, userid: str) -> User:
    from .db import repository

    user = repository.get_user(session, userid)
    if user is None:
        raise _Failure(f"there is no user {userid.lower()}")
    return user


def _users_list(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from .db.models import User

    with database.read() as session:
        users = list(session.scalars(select(User).order_by(User.userid)))
        rows = [
            (u.userid, round(u.rating), u.rated_games, u.wins, u.losses, u.draws,
             len(u.addresses), _user_status(u), _when(u.created_at))
            for u in users
        ]
    if not rows:
        print("no users")
        return 0
    print(table(("USERID", "RATING", "GAMES", "WON", "LOST", "DRAWN", "ADDRESSES", "STATUS",
                 "SIGNED UP"), rows))
    return 0


def _users_show(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from .db import repository
    from .service.games import load_board

    with database.read() as session:
        user = _get_user(session, args.userid)
        games = repository.games_of_user(session, user)
        active = []
        for game in games:
            if game.status != "active":
                continue
            board = load_board(game)
            turn = any(s.seat == board.turn and s.user_id == user.id for s in game.seats)
            active.append(f"{game.number}{' (to move)' if turn else ''}")
        finished = sum(1 for g in games if g.status == "finished")
        aborted = sum(1 for g in games if g.status == "aborted")
        provisional = ", provisional" if user.rated_games < 20 else ""
        if user.game_limit is None:
            limit = "no limit"
        else:
            limit = f"at most {user.game_limit} active games"
        reset = "none"
        if user.reset_code_hash:
            reset = f"a code was mailed, valid until {_when(user.reset_code_expires)} UTC"
        pairs = [
            ("userid", user.userid),
            ("status", _user_status(user)),
            ("signed up", f"{_when(user.created_at)} UTC"),
            ("addresses", ", ".join(a.address for a in user.addresses) or "-"),
            ("rating", f"{round(user.rating)} ({user.rated_games} rated games{provisional})"),
            ("record", f"{user.wins} won, {user.losses} lost, {user.draws} drawn"),
            ("challenges", ("accepted" if user.accepts_challenges else "refused")
             + f", {limit}"),
            ("password reset", reset),
            ("active games", ", ".join(active) or "-"),
            ("finished games", f"{finished}" + (f" (and {aborted} aborted)" if aborted else "")),
        ]
    print(_fields(pairs))
    return 0


def _users_set_disabled(disabled: bool) -> Any:
    def action(database: Database, settings: Settings, args: argparse.Namespace) -> int:
        from .db import repository

        with database.write() as session:
            user = _get_user(session, args.userid)
            if not disabled and user.password_hash == _DELETED:
                raise _Failure(f"{user.userid} was deleted by its owner and cannot be enabled")
            if user.disabled == disabled:
                print(f"{user.userid} is {'disabled' if disabled else 'enabled'} already")
                return 0
            user.disabled = disabled
            active = [g.number for g in repository.games_of_user(session, user, "active")]
            userid = user.userid
        if disabled:
            print(f"{userid} is disabled: their password no longer works and nobody can "
                  "challenge them")
            if active:
                numbers = ", ".join(str(n) for n in active)
                print(f"their active games ({numbers}) go on until they time out; "
                      "`abalone-pbm games abort NUMBER` ends one at once")
        else:
            print(f"{userid} is enabled again")
        return 0

    return action


def cmd_users(args: argparse.Namespace) -> int:
    actions = {
        "list": _users_list,
        "show": _users_show,
        "disable": _users_set_disabled(True),
        "enable": _users_set_disabled(False),
    }
    return _run(f"users {args.users_command}", args, actions[args.users_command])


# ------------------------------------------------------------------------------ games
def _game_state(game: Game) -> str:
    from .service.games import load_board, winners_of

    if game.status == "active":
        board = load_board(game)
        mover = next((s.user.userid for s in game.seats if s.seat == board.turn), "?")
        return f"{mover} to move"
    if game.status == "finished":
        winners = winners_of(game)
        won = [s.user.userid for s in game.seats if s.seat in winners]
        return f"won by {' and '.join(won)}" if won else "drawn"
    return game.status


def _get_game(session: Any, number: int, *, for_update: bool = False) -> Game:
    from .db import repository

    game = repository.get_game(session, number, for_update=for_update)
    if game is None:
        raise _Failure(f"there is no board {number}")
    return game


def _games_list(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from .db.models import Game

    query = select(Game).order_by(Game.number)
    if args.status:
        query = query.where(Game.status == args.status)
    with database.read() as session:
        rows = [
            (g.number, g.status, " ".join(s.user.userid for s in g.seats), g.ply,
             _game_state(g), _when(g.created_at), _when(g.updated_at))
            for g in session.scalars(query)
        ]
    if not rows:
        print("no games" + (f" with status {args.status}" if args.status else ""))
        return 0
    print(table(("BOARD", "STATUS", "PLAYERS", "MOVES", "STATE", "STARTED", "LAST CHANGE"), rows))
    return 0


def _games_show(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from . import render
    from .service.games import GameOptions, load_board, options_mapping

    with database.read() as session:
        game = _get_game(session, args.number)
        board = load_board(game)
        options = GameOptions.from_json(game.options)
        marks = render.marble_marks(game.players)
        pairs: list[tuple[str, Any]] = [
            ("board", game.number),
            ("status", game.status + (f" ({_game_state(game)})" if game.status != "aborted"
                                      else "")),
            ("options", "; ".join(render.describe_options(options_mapping(options),
                                                          game.players))),
            ("times", f"reminder after {options.nagtime} days, forfeit after "
                      f"{options.forfeittime} days"
                      + (f", total time {options.totaltime} days" if options.totaltime else "")),
            ("challenger", game.challenger or "-"),
            ("started", f"{_when(game.created_at)} UTC"),
            ("last change", f"{_when(game.updated_at)} UTC"),
        ]
        if game.status == "active":
            pairs.append(("turn since", f"{_when(game.turn_started_at)} UTC"))
            pairs.append(("last reminder", _when(game.last_nag_at)))
            if game.proposal:
                votes = game.proposal_votes or "-"
                pairs.append(("proposal", f"{game.proposal} by seat {game.proposal_seat}, "
                                          f"accepted by seats {votes}"))
        else:
            pairs.append(("ended", f"{_when(game.finished_at)} UTC"))
            pairs.append(("result", game.result_reason or "-"))
        pairs.append(("position", game.position))
        seat_rows = []
        for seat in game.seats:
            rating = "-"
            if seat.rating_before is not None and seat.rating_after is not None:
                rating = f"{round(seat.rating_before)} -> {round(seat.rating_after)}"
            seat_rows.append((seat.seat, marks[seat.seat - 1], seat.user.userid,
                              "resigned" if seat.resigned else "", board.ejected(seat.seat),
                              rating))
        moves = [f"{m.ply}. {m.text}{'*' if m.automatic else ''}" for m in game.moves]
        diagram = render.render_board(board, marks=marks)
    print(_fields(pairs))
    print()
    print(table(("SEAT", "MARK", "PLAYER", "", "PUSHED OFF", "RATING"), seat_rows))
    print()
    print("moves: " + ("  ".join(moves) if moves else "none yet"))
    print()
    print(diagram.rstrip("\n"))
    return 0


def _games_abort(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from . import render
    from .clock import SystemClock
    from .service.context import MailContext
    from .service.games import load_board
    from .service.queries import observers_of

    now = SystemClock().now()
    reason = " ".join((args.reason or "").split())
    with database.write() as session:
        game = _get_game(session, args.number, for_update=True)
        if game.status != "active":
            raise _Failure(f"board {game.number} is {game.status}, not active")
        game.status = "aborted"
        game.finished_at = now
        game.updated_at = now
        game.winners = ""
        game.result_reason = "aborted by the server admin" + (f": {reason}" if reason else "")
        game.proposal, game.proposal_seat, game.proposal_votes = None, None, ""
        ctx = MailContext(session=session, settings=settings, now=now, sender=settings.address)
        board = load_board(game)
        players = [s.user.userid for s in game.seats]
        text = (
            f"Abalone board {game.number} ({render.and_list(players)}) has been aborted by "
            "the administrator of the server" + (f": {reason}" if reason else "") + ".\n\n"
            "The game is over without a result and is not rated.  This was the last "
            "position:\n\n" + render.render_board(board).rstrip("\n") + "\n"
        )
        subject, body = render.text_mail(f"Abalone Board {game.number} aborted", text)
        recipients = [s.user for s in game.seats if s.user.robot is None]
        recipients += [user for user, _results_only in observers_of(ctx, game)]
        ctx.send_to_users(recipients, subject, body, auto_submitted="auto-generated")
        count = ctx.flush()
        number = game.number
    print(f"board {number} aborted; {count} mail(s) queued for the players and observers "
          "(`serve`, or `abalone-pbm send --once`, sends them)")
    return 0


def cmd_games(args: argparse.Namespace) -> int:
    actions = {"list": _games_list, "show": _games_show, "abort": _games_abort}
    return _run(f"games {args.games_command}", args, actions[args.games_command])


# ------------------------------------------------------------------------------- mail
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

    from .protocol import mask_passwords

    try:
        headers = BytesHeaderParser(policy=email.policy.default).parsebytes(raw)
        author = parseaddr(str(headers.get("From") or ""))[1]
        subject = str(headers.get("Subject") or "")
    except Exception:  # a mail so broken that its headers cannot be read
        return "", "(unreadable headers)"
    return author, mask_passwords(subject)


def _mail_parked(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from .db import repository

    with database.read() as session:
        rows = []
        for mail in repository.parked_mails(session):
            author, subject = _headers(bytes(mail.raw))
            rows.append((mail.id, _when(mail.received_at), _clip(mail.envelope_from or author, 32),
                         _clip(subject, 40), mail.attempts, _clip(_last_line(mail.last_error), 70)))
    if not rows:
        print("no parked mail")
        return 0
    print(table(("ID", "RECEIVED", "FROM", "SUBJECT", "TRIES", "LAST ERROR"), rows))
    print(f"\n{len(rows)} parked mail(s); `abalone-pbm mail replay ID` queues one again")
    return 0


def _mail_replay(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from .db import repository

    with database.write() as session:
        try:
            mail = repository.requeue_inbox(session, args.id, force=args.force)
        except ValueError as error:
            raise _Failure(f"{error} (--force)") from None
        if mail is None:
            raise _Failure(f"there is no inbox mail {args.id}")
        # A fresh start: the worker gives it all its tries again.
        mail.attempts = 0
        session.flush()
    print(f"inbox mail {args.id} is queued again; the worker of `serve` (or "
          "`abalone-pbm work --once`) processes it")
    return 0


def cmd_mail(args: argparse.Namespace) -> int:
    actions = {"parked": _mail_parked, "replay": _mail_replay}
    return _run(f"mail {args.mail_command}", args, actions[args.mail_command])


# ------------------------------------------------------------------------ registering
def _add_config(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a --config given before the sub-command is not overwritten.
    parser.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                        help="a TOML settings file (the environment wins over it)")


def _board_number(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a board number")
    return int(text)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    tick = sub.add_parser(
        "tick", help="send due reminders and apply forfeits and time limits, once",
        description="Reminders (after a game's nagtime), forfeits (after its forfeittime), "
        "unanswered draw proposals and total times, once; `serve` does this every minute. "
        "Prints a one-line summary.",
    )
    _add_config(tick)
    tick.set_defaults(handler=cmd_tick)

    users = sub.add_parser("users", help="list, show, disable or enable users",
                           description="The registered users (admin view).")
    _add_config(users)
    actions = users.add_subparsers(dest="users_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every user with rating and status")
    _add_config(listing)
    for name, text in (("show", "one user in detail"),
                       ("disable", "stop a user: no logins, no challenges"),
                       ("enable", "let a disabled user play again")):
        action = actions.add_parser(name, help=text)
        action.add_argument("userid")
        _add_config(action)
    users.set_defaults(handler=cmd_users)

    games = sub.add_parser("games", help="list, show or abort games",
                           description="The games (admin view).")
    _add_config(games)
    actions = games.add_subparsers(dest="games_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every game, or those of one status")
    listing.add_argument("--status", choices=("active", "finished", "aborted"))
    _add_config(listing)
    show = actions.add_parser("show", help="one game in detail, with its board")
    show.add_argument("number", type=_board_number, metavar="NUMBER")
    _add_config(show)
    abort = actions.add_parser("abort", help="end an active game without a result; "
                                             "everyone in it is mailed")
    abort.add_argument("number", type=_board_number, metavar="NUMBER")
    abort.add_argument("--reason", help="a sentence for the players' mail")
    _add_config(abort)
    games.set_defaults(handler=cmd_games)

    mail = sub.add_parser("mail", help="parked inbox mail: list, replay",
                          description="Inbox mail the worker gave up on (parked after "
                          "failing three times).")
    _add_config(mail)
    actions = mail.add_subparsers(dest="mail_command", required=True, metavar="ACTION")
    parked = actions.add_parser("parked", help="list the parked mails")
    _add_config(parked)
    replay = actions.add_parser("replay", help="queue a parked mail again")
    replay.add_argument("id", type=int, metavar="ID")
    replay.add_argument("--force", action="store_true",
                        help="also a mail that was processed already (its answers were sent)")
    _add_config(replay)
    mail.set_defaults(handler=cmd_mail)


REGISTRARS.append(register)
