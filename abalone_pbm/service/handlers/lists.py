"""What the user reads: help, boards (show, showas, all show), lists of games (games,
history) and of players (list, ratings, standings).  Nothing here changes a game.

``games``, ``show <userid>`` and ``showas`` without a selection show active games (as
the help says); ``history`` lists finished games; ``ratings`` sorts the rating list by
rating, ``standings`` by wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from ... import protocol, render
from ...db import repository
from ...db.models import Game, Seat, Seek, User
from ...render import PlayerLine, player_table
from ..context import CommandError, MailContext, Outgoing
from ..games import load_board, seat_number, winners_of
from ..mails import answer, games_list, help_mail, show_mail, text_answer
from ..views import board_page, game_view, page_kind
from ..queries import authenticate, find_user, load_game, on_turn, player_seat
from ..ratings import PROVISIONAL_GAMES

#: Most boards one show/showas mail answers with, and most lines of a history.
MAX_BOARDS = 50
MAX_HISTORY = 200


# ------------------------------------------------------------------------- help
def send_help(ctx: MailContext, c: protocol.Help | protocol.GameHelp) -> None:
    ctx.reply(*help_mail(ctx, list(c.topics), game=isinstance(c, protocol.GameHelp)))


# ----------------------------------------------------------------------- boards
def show(ctx: MailContext, c: protocol.ShowBoards) -> None:
    for item in c.boards:
        show_board(ctx, item.board, item.ply)


def show_board(ctx: MailContext, number: int, ply: int | None) -> None:
    """One board as it is, or after ``ply`` moves, to the sender."""
    game = load_game(ctx, number, for_update=False)
    if ply is not None and not 0 <= ply <= game.ply:
        raise CommandError(
            f"Board {number} has {game.ply} moves; show {number}#0 to #{game.ply}",
            board=number,
        )
    ctx.send(show_mail(ctx, game, ply))


def show_user(ctx: MailContext, c: protocol.ShowUser) -> None:
    users = [find_user(ctx, u) for u in c.userids]
    selection = c.filter or "active"
    found = _select_games(ctx, users, selection)
    names = render.and_list([u.userid for u in users])
    if not found:
        answer(ctx, "Abalone show", f"{names} {'has' if len(users) == 1 else 'have'} no "
                f"{'' if selection == 'all' else selection + ' '}games.")
        return
    for game in found[:MAX_BOARDS]:
        ctx.send(show_mail(ctx, game, None))
    if len(found) > MAX_BOARDS:
        answer(ctx, "Abalone show", f"Only the first {MAX_BOARDS} of {len(found)} boards "
                "were sent; name board numbers to see the others.")


def all_show(ctx: MailContext, c: protocol.AllShow) -> None:
    user = find_user(ctx, c.userid)
    selection = c.filter or "active"
    games = repository.games_of_user(ctx.session, user, "active")
    if selection == "next":
        games = [g for g in games if on_turn(g, user)]
    if not games:
        what = "no game where it is their turn" if selection == "next" else "no active games"
        text_answer(ctx, "Abalone boards", f"{user.userid} has {what}.")
        return
    for game in games:
        ctx.send(show_mail(ctx, game, None))


def show_as(ctx: MailContext, c: protocol.ShowAs) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if c.boards:
        found = []
        for number in dict.fromkeys(c.boards):
            game = load_game(ctx, number, for_update=False)
            player_seat(game, user)
            found.append(game)
    else:
        selection = c.filter or "active"
        found = _select_games(ctx, [user], selection)
        if not found:
            answer(ctx, "Abalone showas", f"{user.userid} has no "
                    f"{'' if selection == 'all' else selection + ' '}games.")
            return
    for game in found[:MAX_BOARDS]:
        seat = player_seat(game, user)
        view = game_view(ctx, game)
        board = load_board(game)
        subject, body = render.board_mail(view, board, recipient=user.userid)
        html = board_page(page_kind(render.board_mail, view, board), subject, view, board,
                          recipient=user.userid, game=game)
        reply_to = None
        if game.status == "active" and not seat.resigned:
            reply_to = ctx.reply_address(game.number, seat.reply_token)
        ctx.send(Outgoing(ctx.sender, subject, body, reply_to=reply_to, html=html))


# ------------------------------------------------------------------ lists of games
def games(ctx: MailContext, c: protocol.Games) -> None:
    users = [find_user(ctx, u) for u in c.userids]
    selection = c.filter or "active"
    query = select(Game).order_by(Game.number)
    if selection in ("active", "next"):
        query = query.where(Game.status == "active")
    elif selection == "inactive":
        query = query.where(Game.status != "active")
    if users:
        # The seat that matters: any seat of theirs, or for "next" the seat to move.
        on_seat = Seat.game_id == Game.id
        if selection == "next":
            on_seat = on_seat & (Seat.seat == Game.to_move)
        query = query.where(
            select(Seat.id).where(on_seat, Seat.user_id.in_([u.id for u in users])).exists()
        )
    found = list(ctx.session.scalars(query))
    # Who is looking for a game (`seek`) is shown with the games, as pbmserv does.
    seeks = select(Seek).order_by(Seek.players, Seek.created_at, Seek.id)
    if users:
        seeks = seeks.where(Seek.user_id.in_([u.id for u in users]))
    seeking = [(s.user.userid, s.players) for s in ctx.session.scalars(seeks)]
    ctx.send(games_list(ctx, found, users, selection, seeking=seeking))


def _select_games(ctx: MailContext, users: Sequence[User], selection: str) -> list[Game]:
    query = select(Game).order_by(Game.number)
    if users:
        query = query.where(Game.id.in_(
            select(Seat.game_id).where(Seat.user_id.in_([u.id for u in users]))
        ))
    if selection in ("active", "next"):
        query = query.where(Game.status == "active")
    elif selection == "inactive":
        query = query.where(Game.status != "active")
    found = list(ctx.session.scalars(query))
    if selection == "next":
        ids = {u.id for u in users}
        found = [g for g in found if _to_move(g) is not None
                 and (not ids or _to_move(g) in ids)]
    return found


def _to_move(game: Game) -> int | None:
    """The user id of the player to move in an active game."""
    board = load_board(game)
    try:
        return seat_number(game, board.turn).user_id
    except LookupError:
        return None


def history(ctx: MailContext, c: protocol.History) -> None:
    users = [find_user(ctx, u) for u in c.userids]
    query = select(Game).where(Game.status == "finished")
    if users:
        query = query.where(Game.id.in_(
            select(Seat.game_id).where(Seat.user_id.in_([u.id for u in users]))
        ))
    found = list(ctx.session.scalars(
        query.order_by(Game.finished_at.desc(), Game.number.desc()).limit(MAX_HISTORY + 1)
    ))
    whose = render.and_list([u.userid for u in users]) if users else "all players"
    lines = [f"Finished Abalone games of {whose}, the latest first:", ""]
    if not found:
        lines.append("  none")
    for game in found[:MAX_HISTORY]:
        winners = winners_of(game)
        names = ", ".join(s.user.userid for s in game.seats)
        won = [s.user.userid for s in game.seats if s.seat in winners]
        result = f"{render.and_list(won)} won" if won else "drawn"
        if game.result_reason:
            result += f" ({game.result_reason})"
        ended = game.finished_at.date().isoformat() if game.finished_at else "?"
        lines.append(f"  {game.number:>5}  {ended}  {names}: {result}, {game.ply} moves")
        changes = [
            f"{s.user.userid} {round(s.rating_before)} -> {round(s.rating_after)}"
            for s in game.seats if s.rating_before is not None and s.rating_after is not None
        ]
        if changes:
            lines.append(" " * 20 + "ratings: " + ", ".join(changes))
    if len(found) > MAX_HISTORY:
        lines += ["", f"(only the latest {MAX_HISTORY} games are listed)"]
    answer(ctx, "Abalone history", "\n".join(lines))


# ------------------------------------------------------------- lists of players
def list_users(ctx: MailContext, _command: protocol.List | None = None) -> None:
    users = list(
        ctx.session.scalars(select(User).where(User.disabled.is_(False)).order_by(User.userid))
    )
    lines = [f"The registered players of this Abalone server ({len(users)}):", ""]
    if users:
        lines.append(f"  {'userid':<20} {'rating':>7} {'games':>5}  {'won':>4} {'lost':>4} "
                     f"{'drawn':>5}  notes")
    seeking: dict[int, list[int]] = {}
    for seek in ctx.session.scalars(select(Seek).order_by(Seek.players)):
        seeking.setdefault(seek.user_id, []).append(seek.players)
    for user in users:
        notes = []
        if user.robot is not None:
            notes.append("computer player")
        if user.vacation:
            notes.append("on vacation")
        for players in seeking.get(user.id, []):
            notes.append(f"seeks a {players}-player game")
        provisional = "*" if user.rated_games < 20 else " "
        lines.append(
            f"  {user.userid:<20} {round(user.rating):>6}{provisional} {user.rated_games:>5}  "
            f"{user.wins:>4} {user.losses:>4} {user.draws:>5}  {', '.join(notes)}".rstrip()
        )
    if not users:
        lines.append("  nobody yet")
    else:
        lines += [
            "",
            "* provisional rating (fewer than 20 rated games).",
            render.wrap_text(
                "Players on vacation cannot be challenged until they are back; "
                '"help robots" describes the computer players.  A player who seeks a '
                'game starts one with the next who sends "abalone seek <userid> '
                '<password> <N>" for the same number of players.'
            ),
        ]
    text_answer(ctx, "Abalone players", "\n".join(lines))


def _player_lines(ctx: MailContext) -> list[PlayerLine]:
    users = ctx.session.scalars(
        select(User).where((User.rated_games > 0) | User.robot.is_not(None))
    )
    return [
        PlayerLine(u.userid, u.rating, u.rated_games, u.wins, u.draws, u.losses,
                   u.rated_games < PROVISIONAL_GAMES, u.robot is not None)
        for u in users
    ]


def ratings(ctx: MailContext, c: protocol.Ratings) -> None:
    players = sorted(_player_lines(ctx), key=lambda p: (-p.rating, p.userid))
    ctx.reply(*player_table("Abalone ratings", "Abalone rating list, highest first:",
                            players))


def standings(ctx: MailContext, c: protocol.Standings) -> None:
    players = sorted(_player_lines(ctx),
                     key=lambda p: (-p.wins, p.losses, -p.draws, -p.rating, p.userid))
    ctx.reply(*player_table("Abalone standings", "Abalone standings, most wins first:",
                            players))
