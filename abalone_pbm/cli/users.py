"""``abalone-pbm users list|show|disable|enable``: the registered users (admin view).

They read the settings like ``serve`` (environment, ``--config``), print plain aligned
text, and never print a password hash, a reset code or a reply-address token.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .common import Failure, add_config, fields, run, table, when

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..db.models import User
    from ..db.session import Database

#: Password hash of an account its owner deleted (see service.handlers.accounts.delete).
_DELETED = "!deleted"


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
    from ..db import repository

    user = repository.get_user(session, userid)
    if user is None:
        raise Failure(f"there is no user {userid.lower()}")
    return user


def _users_list(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from ..db.models import User

    with database.read() as session:
        users = list(session.scalars(select(User).order_by(User.userid)))
        rows = [
            (u.userid, round(u.rating), u.rated_games, u.wins, u.losses, u.draws,
             len(u.addresses), _user_status(u), when(u.created_at))
            for u in users
        ]
    if not rows:
        print("no users")
        return 0
    print(table(("USERID", "RATING", "GAMES", "WON", "LOST", "DRAWN", "ADDRESSES", "STATUS",
                 "SIGNED UP"), rows))
    return 0


def _users_show(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..db import repository
    from ..service.games import load_board

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
            reset = f"a code was mailed, valid until {when(user.reset_code_expires)} UTC"
        pairs = [
            ("userid", user.userid),
            ("status", _user_status(user)),
            ("signed up", f"{when(user.created_at)} UTC"),
            ("addresses", ", ".join(a.address + ("" if a.confirmed else " (unconfirmed)")
                                    for a in user.addresses) or "-"),
            ("rating", f"{round(user.rating)} ({user.rated_games} rated games{provisional})"),
            ("record", f"{user.wins} won, {user.losses} lost, {user.draws} drawn"),
            ("challenges", ("accepted" if user.accepts_challenges else "refused")
             + f", {limit}"),
            ("password reset", reset),
            ("active games", ", ".join(active) or "-"),
            ("finished games", f"{finished}" + (f" (and {aborted} aborted)" if aborted else "")),
        ]
    print(fields(pairs))
    return 0


def _users_set_disabled(disabled: bool) -> Any:
    def action(database: Database, settings: Settings, args: argparse.Namespace) -> int:
        from ..db import repository

        with database.write() as session:
            user = _get_user(session, args.userid)
            if not disabled and user.password_hash == _DELETED:
                raise Failure(f"{user.userid} was deleted by its owner and cannot be enabled")
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
    return run(f"users {args.users_command}", args, actions[args.users_command])


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    users = sub.add_parser("users", help="list, show, disable or enable users",
                           description="The registered users (admin view).")
    add_config(users)
    actions = users.add_subparsers(dest="users_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every user with rating and status")
    add_config(listing)
    for name, text in (("show", "one user in detail"),
                       ("disable", "stop a user: no logins, no challenges"),
                       ("enable", "let a disabled user play again")):
        action = actions.add_parser(name, help=text)
        action.add_argument("userid")
        add_config(action)
    users.set_defaults(handler=cmd_users)
