"""``abalone-pbm games list|show|abort|start``: the games (admin view)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .common import Failure, add_config, fields, run, table, when

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..db.models import Game
    from ..db.session import Database


def _game_state(game: Game) -> str:
    from ..service.games import load_board, winners_of

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
    from ..db import repository

    game = repository.get_game(session, number, for_update=for_update)
    if game is None:
        raise Failure(f"there is no board {number}")
    return game


def _games_list(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from ..db.models import Game

    query = select(Game).order_by(Game.number)
    if args.status:
        query = query.where(Game.status == args.status)
    with database.read() as session:
        rows = [
            (g.number, g.status, " ".join(s.user.userid for s in g.seats), g.ply,
             _game_state(g), when(g.created_at), when(g.updated_at))
            for g in session.scalars(query)
        ]
    if not rows:
        print("no games" + (f" with status {args.status}" if args.status else ""))
        return 0
    print(table(("BOARD", "STATUS", "PLAYERS", "MOVES", "STATE", "STARTED", "LAST CHANGE"), rows))
    return 0


def _games_show(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from .. import render
    from ..service.games import GameOptions, load_board, options_mapping

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
            ("started", f"{when(game.created_at)} UTC"),
            ("last change", f"{when(game.updated_at)} UTC"),
        ]
        if game.status == "active":
            pairs.append(("turn since", f"{when(game.turn_started_at)} UTC"))
            pairs.append(("last reminder", when(game.last_nag_at)))
            if game.proposal:
                votes = game.proposal_votes or "-"
                pairs.append(("proposal", f"{game.proposal} by seat {game.proposal_seat}, "
                                          f"accepted by seats {votes}"))
        else:
            pairs.append(("ended", f"{when(game.finished_at)} UTC"))
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
    print(fields(pairs))
    print()
    print(table(("SEAT", "MARK", "PLAYER", "", "PUSHED OFF", "RATING"), seat_rows))
    print()
    print("moves: " + ("  ".join(moves) if moves else "none yet"))
    print()
    print(diagram.rstrip("\n"))
    return 0


def _games_abort(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from .. import render
    from ..service.context import MailContext
    from ..service.games import load_board
    from ..service.queries import observers_of

    now = settings.clock().now()
    reason = " ".join((args.reason or "").split())
    with database.write() as session:
        game = _get_game(session, args.number, for_update=True)
        if game.status != "active":
            raise Failure(f"board {game.number} is {game.status}, not active")
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


def _games_start(database: Database, settings: Settings, args: argparse.Namespace) -> int:
    from ..service.admin_games import start_admin_game
    from ..service.context import CommandError

    try:
        number, count = start_admin_game(database, settings, settings.clock(), args.words)
    except CommandError as error:
        raise Failure(error.message) from None
    print(f"board {number} started; {count} mail(s) queued for its players (a running "
          f"`serve` sends them, and its robots move within "
          f"{settings.robot_sweep_seconds:g} s)")
    return 0


def cmd_games(args: argparse.Namespace) -> int:
    actions = {"list": _games_list, "show": _games_show, "abort": _games_abort,
               "start": _games_start}
    return run(f"games {args.games_command}", args, actions[args.games_command])


def _board_number(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a board number")
    return int(text)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    games = sub.add_parser("games", help="list, show, abort or start games",
                           description="The games (admin view).")
    add_config(games)
    actions = games.add_subparsers(dest="games_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every game, or those of one status")
    listing.add_argument("--status", choices=("active", "finished", "aborted"))
    add_config(listing)
    show = actions.add_parser("show", help="one game in detail, with its board")
    show.add_argument("number", type=_board_number, metavar="NUMBER")
    add_config(show)
    abort = actions.add_parser("abort", help="end an active game without a result; "
                                             "everyone in it is mailed")
    abort.add_argument("number", type=_board_number, metavar="NUMBER")
    abort.add_argument("--reason", help="a sentence for the players' mail")
    add_config(abort)
    start = actions.add_parser(
        "start", help="start a game, of computer players only too (mail may not): the "
                      "words after `abalone challenge`, behind -- when they begin with "
                      "options (games start -- -think=60 avalanche boulder)")
    start.add_argument("words", nargs="+", metavar="WORD")
    add_config(start)
    games.set_defaults(handler=cmd_games)
