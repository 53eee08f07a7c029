"""The game commands beyond challenge, move, resign and show (pbmserv semantics).

Each handler loads what it needs, checks, acts and queues its mails; the worker commits
(a :class:`CommandError` undoes everything the command did).  ``mailroom`` merges
:data:`HANDLERS` (command type -> handler) and :data:`REPLY_ACTIONS` (the words
``propose``, ``undo``, ``accept``, ``reject`` in a reply to a board mail).

Decisions where pbmserv leaves room:

* ``queue`` when it is already your move plays the move at once (the board mail says
  so): the mail crossed the previous player's move, and playing it is exactly what the
  queue would have done a moment later.  ``queue ... none`` cancels a queued move.  A
  queued ``#n`` must still be the move number when the move is played, else it is
  dropped.  The comment of a queue mail is not kept.
* ``submit`` needs your turn and remembers the move number; ``confirm`` plays it only
  if the board has not changed meanwhile (and checks it again).
* Draw offers and undo requests: the proposer counts as accepting; every player still
  in the game (not resigned) must accept; one reject cancels (the proposer's reject
  withdraws it).  Computer players reject at once.  An undo also cancels every queued
  and submitted move (they were meant for another position).
* ``chat`` may be sent by any registered user about any board (also finished ones);
  it goes to the players, the observers who watch every move, and the sender.
* ``notify`` makes you a results-only observer of the boards named; ``subscribe all``
  makes you watch every board created later.
* ``limit N`` caps your active games at N; ``limit 0`` removes the cap (``reject``
  refuses all challenges).
* ``seek`` also checks that you could be challenged (active, accepting, under your
  limit); the players who sought first move first, the one who completes the game last.
* ``games``, ``show <userid>`` and ``showas`` without a selection show active games
  (as the help says); ``history`` lists finished games; ``ratings`` sorts the rating
  list by rating, ``standings`` by wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import select

from .. import protocol, render
from ..db.models import Game, Observer, Seat, Seek, User
from ..render import PlayerLine, answer_mail, chat_mail, player_table, preview_mail
from ..rules import Board, MoveError, Outcome, Rules
from ..rules.notation import read_cells
from . import mails, play
from .accounts import authenticate, find_user
from .context import CommandError, MailContext, Outgoing
from .games import (
    GameOptions,
    board_at,
    finish,
    load_board,
    recent_moves,
    seat_number,
    seat_of,
    winners_of,
)
from .ratings import PROVISIONAL_GAMES

#: Words that cancel a queued move instead of queueing one.
CANCEL_WORDS = ("none", "cancel", "clear", "nothing")
#: Most boards one show/showas mail answers with, and most lines of a history.
MAX_BOARDS = 50
MAX_HISTORY = 200


def _comment(ctx: MailContext) -> str:
    return protocol.extract_comment(ctx.body).strip()


def _answer(ctx: MailContext, subject: str, text: str) -> None:
    ctx.reply(*answer_mail(subject, text))


def _playing_seat(game: Game, user: User) -> Seat:
    """The user's seat in an active game that they still play."""
    play.require_active(game)
    seat = play.player_seat(game, user)
    if seat.resigned or seat.resign_pending:
        raise CommandError("You have resigned from this game", board=game.number)
    return seat


def _check_number(game: Game, text: str, expected: int | None) -> None:
    if expected is not None and expected != game.ply + 1:
        raise CommandError(
            f"Move {text} received as move #{expected}, "
            f"but the next move of board {game.number} is #{game.ply + 1}",
            board=game.number,
        )


def _parse(board: Board, game: Game, text: str) -> Any:
    try:
        return board.parse_move(text)
    except MoveError as error:
        raise CommandError(f"Illegal move {text.strip()}: {error}", board=game.number) from None


# --------------------------------------------------------------------------- queue
def queue(ctx: MailContext, c: protocol.Queue) -> None:
    game = play.load_game(ctx, c.board)
    user = play.authenticate_for(ctx, game, c.userid, c.password)
    seat = _playing_seat(game, user)
    text = c.move_text.strip()
    if text.lower() in CANCEL_WORDS:
        if seat.queued_move is None:
            raise CommandError(f"You have no queued move on board {game.number}",
                               board=game.number)
        old, seat.queued_move = seat.queued_move, None
        _answer(ctx, f"Abalone Board {game.number} queue",
                f"Your queued move {old} on board {game.number} is cancelled.")
        return
    board = load_board(game)
    if board.turn == seat.seat:
        request = play.MoveRequest(
            game.number, text, c.expected_ply, _comment(ctx),
            notices=(f"It was already {user.userid}'s move when their queue command "
                     "arrived, so the move was played at once.",),
        )
        play.play_move(ctx, game, user, request)
        return
    try:
        read_cells(text)
    except MoveError as error:
        raise CommandError(f"Cannot queue it: {error}", board=game.number) from None
    if c.expected_ply is not None and c.expected_ply <= game.ply + 1:
        raise CommandError(
            f"Move {text} queued as move #{c.expected_ply}, but board {game.number} has "
            f"{game.ply} moves and move #{game.ply + 1} is not yours",
            board=game.number,
        )
    stored = "".join(text.split()).lower()
    if c.expected_ply is not None:
        stored += f"#{c.expected_ply}"
    replaced = seat.queued_move
    seat.queued_move = stored
    game.updated_at = ctx.now
    lines = [
        f"Your move {stored} is queued on board {game.number}.  It is played for you as "
        "soon as it is your turn, if it is legal then; if it is not, it is dropped and "
        "you are told why.",
    ]
    if replaced:
        lines.append(f"It replaces your queued move {replaced}.")
    lines.append(
        f'A new queue command replaces it; "abalone queue {game.number} {user.userid} '
        '<password> none" cancels it.  (A queue command that arrives when it is already '
        "your move is played at once.)"
    )
    _answer(ctx, f"Abalone Board {game.number} queue", "\n\n".join(lines))


# ----------------------------------------------------------------- submit, confirm
def submit(ctx: MailContext, c: protocol.Submit) -> None:
    game = play.load_game(ctx, c.board)
    user = play.authenticate_for(ctx, game, c.userid, c.password)
    seat = _playing_seat(game, user)
    board = load_board(game)
    if board.turn != seat.seat:
        raise CommandError(
            "It is not your move (to have a move played when your turn comes, use "
            "abalone queue)",
            board=game.number,
        )
    _check_number(game, c.move_text, c.expected_ply)
    move = _parse(board, game, c.move_text)
    ply = game.ply + 1
    seat.submitted_move = f"{move}#{ply}"
    game.updated_at = ctx.now
    board.push(move)
    base = mails.game_view(ctx, game)
    view = _with_moves(base, [(ply, seat.seat, str(move))])
    title = (
        f"Preview of Abalone board {game.number}: the board after {user.userid}'s move "
        f"{move} (move #{ply}).  Nothing has been played yet."
    )
    footer = (
        f'To play this move, send the Subject "abalone confirm {game.number} {user.userid} '
        '<password>"; a comment in the body of that mail goes with the move.  A new '
        "submit replaces this one."
    )
    ctx.reply(*preview_mail(f"Abalone Board {game.number} submitted", title, view, board,
                            footer))


def confirm(ctx: MailContext, c: protocol.Confirm) -> None:
    game = play.load_game(ctx, c.board)
    user = play.authenticate_for(ctx, game, c.userid, c.password)
    seat = _playing_seat(game, user)
    if not seat.submitted_move:
        raise CommandError(
            f"You have no submitted move on board {game.number}; send "
            f'"abalone submit {game.number} {user.userid} <password> <move>" first',
            board=game.number,
        )
    text, _, number = seat.submitted_move.partition("#")
    seat.submitted_move = None
    request = play.MoveRequest(game.number, text, int(number) if number else None,
                               _comment(ctx))
    play.play_move(ctx, game, user, request)


# ------------------------------------------------------------------------- preview
def preview(ctx: MailContext, c: protocol.Preview) -> None:
    number = c.board
    if number is None:
        players = c.players or 2
        board = Board.from_layout("standard", Rules(players=players))
        view = render.GameView(
            number=0, players=tuple(f"player {s}" for s in range(1, players + 1))
        )
        subject = "Abalone preview"
        title = f"Preview of a new {players}-player game (standard layout)"
        shown = 0
    else:
        game = play.load_game(ctx, number, for_update=False)
        if c.ply is not None and not 0 <= c.ply <= game.ply:
            raise CommandError(
                f"Board {number} has {game.ply} moves; preview {number}#0 to #{game.ply}",
                board=number,
            )
        if c.ply is not None and c.ply != game.ply:
            board = board_at(game, c.ply)
            view = _replace(mails.game_view(ctx, game, ply=c.ply), ply=None, result=None)
        else:
            board = load_board(game)
            view = mails.game_view(ctx, game)
        shown = game.ply if c.ply is None else c.ply
        subject = f"Abalone Board {number} preview"
        title = f"Preview of Abalone board {number}, from the position after move #{shown}"
    played: list[tuple[int, int, str]] = []
    for index, text in enumerate(c.moves, start=1):
        try:
            move = board.parse_move(text)
        except MoveError as error:
            raise CommandError(
                f"Preview move {index} ({text}) cannot be played: {error}", board=number
            ) from None
        played.append((shown + index, board.turn, str(move)))
        board.push(move)
    if played:
        title += " and the moves " + ", ".join(m for _, _, m in played)
    title += ".  Nothing is played."
    view = _with_moves(view, played)
    footer = 'To try other moves, send another "abalone preview".'
    ctx.reply(*preview_mail(subject, title, view, board, footer))


def _with_moves(view: render.GameView, moves: Sequence[tuple[int, int, str]]) -> render.GameView:
    return _replace(view, moves=tuple(view.moves) + tuple(moves), vote=None, comment=None)


def _replace(view: render.GameView, **changes: Any) -> render.GameView:
    return replace(view, **changes)


# ------------------------------------------------------- draw offers and undo requests
def move_action(ctx: MailContext, c: protocol.MoveAction) -> None:
    game = play.load_game(ctx, c.board)
    user = play.authenticate_for(ctx, game, c.userid, c.password)
    vote(ctx, game, user, c.action, _comment(ctx))


def vote(ctx: MailContext, game: Game, user: User, action: str, comment: str = "") -> None:
    """propose (a draw), undo (take back the last move), accept or reject.

    A player whose resignation waits for their turn is still in the game and votes."""
    play.require_active(game)
    seat = play.player_seat(game, user)
    if seat.resigned:
        raise CommandError("You have resigned from this game", board=game.number)
    if action in ("propose", "undo"):
        _propose(ctx, game, seat, "draw" if action == "propose" else "undo", comment)
    elif action == "accept":
        _accept(ctx, game, seat, comment)
    elif action == "reject":
        _reject(ctx, game, seat, comment)
    else:  # pragma: no cover - the parser only gives the four words
        raise CommandError(f"Unknown action {action}", board=game.number)


def _what(kind: str | None) -> str:
    return "draw offer" if kind == "draw" else "undo request"


def _voters(game: Game) -> list[Seat]:
    return [s for s in game.seats if not s.resigned]


def _votes(game: Game) -> set[int]:
    return {int(s) for s in (game.proposal_votes or "").split(",") if s.strip()}


def _clear_proposal(game: Game) -> None:
    game.proposal, game.proposal_seat, game.proposal_votes = None, None, ""


def _proposer(game: Game) -> str:
    try:
        return seat_number(game, game.proposal_seat or 0).user.userid
    except LookupError:
        return "?"


def _board_mails(ctx: MailContext, game: Game, user: User, comment: str,
                 notices: Sequence[str]) -> None:
    mails.board_mails(ctx, game, load_board(game), mover=user, comment=comment,
                      notices=notices)


def _propose(ctx: MailContext, game: Game, seat: Seat, kind: str, comment: str) -> None:
    if game.proposal:
        raise CommandError(
            f"{_proposer(game)}'s {_what(game.proposal)} is still waiting for answers; "
            "accept or reject it first",
            board=game.number,
        )
    if kind == "undo" and game.ply == 0:
        raise CommandError("There is no move to take back yet", board=game.number)
    user = seat.user
    game.updated_at = ctx.now
    robots = [s.user.userid for s in _voters(game) if s.user.robot and s is not seat]
    if robots:
        asked = "offered a draw" if kind == "draw" else "asked to take back the last move"
        notice = (f"{user.userid} {asked}; {render.and_list(robots)} "
                  f"(computer {'player' if len(robots) == 1 else 'players'}) rejected it.")
        _board_mails(ctx, game, user, comment, [notice])
        return
    game.proposal, game.proposal_seat, game.proposal_votes = kind, seat.seat, str(seat.seat)
    _board_mails(ctx, game, user, comment, [])


def _accept(ctx: MailContext, game: Game, seat: Seat, comment: str) -> None:
    if not game.proposal:
        raise CommandError(
            f"There is no draw offer or undo request to accept on board {game.number}",
            board=game.number,
        )
    user = seat.user
    votes = _votes(game)
    if seat.seat == game.proposal_seat:
        raise CommandError(
            f"The {_what(game.proposal)} is your own; the other players must accept it",
            board=game.number,
        )
    if seat.seat in votes:
        raise CommandError(f"You have accepted the {_what(game.proposal)} already",
                           board=game.number)
    votes.add(seat.seat)
    game.proposal_votes = ",".join(str(s) for s in sorted(votes))
    game.updated_at = ctx.now
    if not {s.seat for s in _voters(game)} <= votes:
        _board_mails(ctx, game, user, comment,
                     [f"{user.userid} accepts {_proposer(game)}'s {_what(game.proposal)}."])
        return
    kind = game.proposal
    _clear_proposal(game)
    if kind == "draw":
        board = load_board(game)
        finish(game, Outcome((), "draw agreed"), ctx.now)
        changes = play.apply_ratings(game)
        mails.game_over_mails(ctx, game, board, changes, mover=user, comment=comment,
                              notices=["All players agreed to a draw."])
        return
    last = recent_moves(game, 1)[0]
    mover = seat_number(game, last.seat).user.userid
    cancelled = undo_last_move(ctx, game)
    notices = [f"Move #{last.ply} ({mover}: {last.text}) was taken back; all players agreed."]
    if cancelled:
        notices.append("Queued and submitted moves were cancelled.")
    play.after_move(ctx, game, load_board(game), mover=user, comment=comment, notices=notices)


def _reject(ctx: MailContext, game: Game, seat: Seat, comment: str) -> None:
    if not game.proposal:
        raise CommandError(
            f"There is no draw offer or undo request to reject on board {game.number}",
            board=game.number,
        )
    user = seat.user
    what, proposer = _what(game.proposal), _proposer(game)
    if seat.seat == game.proposal_seat:
        notice = f"{user.userid} withdrew their {what}."
    else:
        notice = f"{user.userid} rejected {proposer}'s {what}."
    _clear_proposal(game)
    game.updated_at = ctx.now
    _board_mails(ctx, game, user, comment, [notice])


def undo_last_move(ctx: MailContext, game: Game) -> bool:
    """Take back the last move: the position is recomputed from the start by replaying
    every move but the last; the turn goes back to the player who made it.  Returns
    whether queued or submitted moves were cancelled."""
    options = GameOptions.from_json(game.options)
    rules = options.rules(game.players)
    records = recent_moves(game, None)
    last = records[-1]
    board = Board(game.start_position, rules)
    for record in records[:-1]:
        if board.turn != record.seat:  # someone resigned in between
            board = Board(_with_turn(board.position(), record.seat), rules, ply=board.ply)
        board.push(board.parse_move(record.text))
    ctx.session.delete(last)
    ctx.session.flush()  # the ply number is free again before a later move takes it
    game.position = _with_turn(board.position(), last.seat)
    game.ply = last.ply - 1
    game.turn_started_at = ctx.now
    game.last_nag_at = None
    game.updated_at = ctx.now
    cancelled = False
    for seat in game.seats:
        if seat.queued_move or seat.submitted_move:
            cancelled = True
        seat.queued_move = None
        seat.submitted_move = None
    return cancelled


def _with_turn(position: str, seat: int) -> str:
    rows, _turn, ejected = position.split(" ")
    return f"{rows} {seat} {ejected}"


def _reply_action(ctx: MailContext, game: Game, user: User, action: str, comment: str) -> None:
    vote(ctx, game, user, action, comment)


# ---------------------------------------------------------------------------- chat
def chat(ctx: MailContext, c: protocol.Chat) -> None:
    game = play.load_game(ctx, c.board, for_update=False)
    user = play.authenticate_for(ctx, game, c.userid, c.password)
    text = c.text.strip()
    if not text:
        raise CommandError(
            "Your chat has no text: write the message in the body of the mail",
            board=game.number,
        )
    subject, body = chat_mail(game.number, user.userid, text)
    people = [s.user for s in game.seats]
    people += [u for u, results_only in mails.observers_of(ctx, game) if not results_only]
    sent = ctx.send_to_users([*people, user], subject, body)
    if ctx.sender.lower() not in sent:
        ctx.reply(subject, body)


# --------------------------------------------------------------- watching games
def _observer(ctx: MailContext, game: Game, user: User) -> Observer | None:
    return ctx.session.scalars(
        select(Observer).where(Observer.game_id == game.id, Observer.user_id == user.id)
    ).first()


def subscribe(ctx: MailContext, c: protocol.Subscribe) -> None:
    if c.board == "all":
        user = authenticate(ctx, c.userid, c.password)
        user.subscribe_all = True
        _answer(
            ctx, "Abalone subscribe all",
            f"{user.userid} now watches every new board: you get a copy of every board "
            "mail of the games started from now on.  \"abalone unsubscribe "
            f'{user.userid} <password> all" stops it.',
        )
        return
    game = play.load_game(ctx, c.board, for_update=False)
    user = play.authenticate_for(ctx, game, c.userid, c.password)
    if seat_of(game, user) is not None:
        raise CommandError("You play in this game; you get its boards already",
                           board=game.number)
    play.require_active(game)
    row = _observer(ctx, game, user)
    if row is not None and not row.results_only:
        raise CommandError(f"You watch board {game.number} already", board=game.number)
    if row is None:
        ctx.session.add(Observer(game_id=game.id, user_id=user.id, results_only=False))
    else:
        row.results_only = False
    ctx.session.flush()
    view = mails.game_view(ctx, game, notices=[
        f"{user.userid} now watches board {game.number}: you get a copy of every board "
        "mail of this game."
    ])
    ctx.reply(*render.board_mail(view, load_board(game), recipient=user.userid))


def unsubscribe(ctx: MailContext, c: protocol.Unsubscribe) -> None:
    if c.board == "all":
        user = authenticate(ctx, c.userid, c.password)
        user.subscribe_all = False
        watched = list(ctx.session.scalars(select(Observer).where(Observer.user_id == user.id)))
        for each in watched:
            ctx.session.delete(each)
        count = f"{len(watched)} {'board' if len(watched) == 1 else 'boards'}"
        _answer(ctx, "Abalone unsubscribe all",
                f"{user.userid} no longer watches any board (you watched {count}), and "
                "new boards are no longer sent to you.")
        return
    game = play.load_game(ctx, c.board, for_update=False)
    user = play.authenticate_for(ctx, game, c.userid, c.password)
    row = _observer(ctx, game, user)
    if row is None:
        raise CommandError(f"You do not watch board {game.number}", board=game.number)
    ctx.session.delete(row)
    _answer(ctx, f"Abalone Board {game.number} unsubscribe",
            f"{user.userid} no longer watches board {game.number}.")


def notify(ctx: MailContext, c: protocol.Notify) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if not c.boards:
        numbers = list(ctx.session.scalars(
            select(Game.number)
            .join(Observer, Observer.game_id == Game.id)
            .where(Observer.user_id == user.id, Observer.results_only.is_(True))
            .order_by(Game.number)
        ))
        listed = ", ".join(str(n) for n in numbers) if numbers else "none"
        _answer(ctx, "Abalone notify",
                f"{user.userid} is told the results of these boards: {listed}.\n\n"
                f'"abalone notify {user.userid} <password> <board>..." adds boards.')
        return
    for number in dict.fromkeys(c.boards):
        game = play.load_game(ctx, number, for_update=False)
        if seat_of(game, user) is not None:
            raise CommandError(f"You play in board {number}; you get its result anyway",
                               board=number)
        play.require_active(game)
        row = _observer(ctx, game, user)
        if row is None:
            ctx.session.add(Observer(game_id=game.id, user_id=user.id, results_only=True))
        else:
            row.results_only = True
    listed = render.and_list([str(n) for n in dict.fromkeys(c.boards)])
    _answer(ctx, "Abalone notify",
            f"{user.userid} will be told the result of board{'s' if len(c.boards) > 1 else ''} "
            f"{listed} (no mail for each move; \"abalone subscribe\" sends every board).")


# ------------------------------------------------------------------- challenges
def _active_count(ctx: MailContext, user: User) -> int:
    return len(list(ctx.session.scalars(
        select(Seat.id).join(Game, Game.id == Seat.game_id)
        .where(Seat.user_id == user.id, Game.status == "active")
    )))


def _settings_text(ctx: MailContext, user: User) -> str:
    limit = (f"at most {user.game_limit} active games" if user.game_limit is not None
             else "no limit on the number of games")
    accepts = "accepts challenges" if user.accepts_challenges else "refuses all challenges"
    return (f"{user.userid} {accepts}, with {limit}; {user.userid} plays "
            f"{_active_count(ctx, user)} active games now.")


def limit(ctx: MailContext, c: protocol.Limit) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if c.value == "accept":
        user.accepts_challenges = True
    elif c.value == "reject":
        user.accepts_challenges = False
    elif isinstance(c.value, int):
        user.game_limit = c.value or None
    text = _settings_text(ctx, user)
    if c.value is None:
        text += (f'\n\n"abalone limit {user.userid} <password> N" sets a limit (0: none), '
                 '"... accept" or "... reject" accepts or refuses challenges.')
    _answer(ctx, "Abalone limit", text)


def accept_challenges(ctx: MailContext, c: protocol.AcceptChallenge) -> None:
    user = authenticate(ctx, c.userid, c.password)
    user.accepts_challenges = True
    _answer(ctx, "Abalone accept", _settings_text(ctx, user))


def reject_challenges(ctx: MailContext, c: protocol.RejectChallenge) -> None:
    user = authenticate(ctx, c.userid, c.password)
    user.accepts_challenges = False
    _answer(ctx, "Abalone reject", _settings_text(ctx, user)
            + f'\n\n"abalone accept {user.userid} <password>" accepts challenges again.')


def seek(ctx: MailContext, c: protocol.Seek) -> None:
    user = authenticate(ctx, c.userid, c.password)
    wanted = c.n
    try:
        play._check_accepts_challenges(ctx, user)
    except CommandError as error:
        raise CommandError(f"You cannot seek a game: {error.message}") from None
    seeks = list(ctx.session.scalars(
        select(Seek).where(Seek.players == wanted).order_by(Seek.created_at, Seek.id)
    ))
    mine = next((s for s in seeks if s.user_id == user.id), None)
    others = [s for s in seeks if s.user_id != user.id and _can_play(ctx, s.user)]
    if len(others) + 1 >= wanted:
        chosen = others[: wanted - 1]
        for row in [*chosen, *([mine] if mine else [])]:
            ctx.session.delete(row)
        ctx.session.flush()
        play.challenge(ctx, {}, [s.user.userid for s in chosen] + [user.userid])
        return
    if mine is None:
        ctx.session.add(Seek(user_id=user.id, players=wanted, created_at=ctx.now))
        first = f"Your seek for a {wanted}-player game is registered."
    else:
        first = f"Your seek for a {wanted}-player game is still waiting."
    waiting = [s.user.userid for s in others]
    who = (f"Also waiting: {render.and_list(waiting)}." if waiting
           else "Nobody else is waiting yet.")
    _answer(ctx, "Abalone seek",
            f"{first}  {who}  The game starts as soon as {wanted} players seek one; "
            "those who sought first move first.")


def _can_play(ctx: MailContext, user: User) -> bool:
    try:
        play._check_accepts_challenges(ctx, user)
    except CommandError:
        return False
    return True


# ------------------------------------------------------------------ lists of games
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


def games(ctx: MailContext, c: protocol.Games) -> None:
    play.games(ctx, list(c.userids), c.filter or "active")


def show_user(ctx: MailContext, c: protocol.ShowUser) -> None:
    users = [find_user(ctx, u) for u in c.userids]
    selection = c.filter or "active"
    found = _select_games(ctx, users, selection)
    names = render.and_list([u.userid for u in users])
    if not found:
        _answer(ctx, "Abalone show", f"{names} {'has' if len(users) == 1 else 'have'} no "
                f"{'' if selection == 'all' else selection + ' '}games.")
        return
    for game in found[:MAX_BOARDS]:
        ctx.send(mails.show_mail(ctx, game, None))
    if len(found) > MAX_BOARDS:
        _answer(ctx, "Abalone show", f"Only the first {MAX_BOARDS} of {len(found)} boards "
                "were sent; name board numbers to see the others.")


def show_as(ctx: MailContext, c: protocol.ShowAs) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if c.boards:
        found = []
        for number in dict.fromkeys(c.boards):
            game = play.load_game(ctx, number, for_update=False)
            play.player_seat(game, user)
            found.append(game)
    else:
        selection = c.filter or "active"
        found = _select_games(ctx, [user], selection)
        if not found:
            _answer(ctx, "Abalone showas", f"{user.userid} has no "
                    f"{'' if selection == 'all' else selection + ' '}games.")
            return
    for game in found[:MAX_BOARDS]:
        seat = play.player_seat(game, user)
        view = mails.game_view(ctx, game)
        subject, body = render.board_mail(view, load_board(game), recipient=user.userid)
        reply_to = None
        if game.status == "active" and not seat.resigned:
            reply_to = ctx.reply_address(game.number, seat.reply_token)
        ctx.send(Outgoing(ctx.sender, subject, body, reply_to=reply_to))


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
    _answer(ctx, "Abalone history", "\n".join(lines))


# --------------------------------------------------------------- the rating list
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


Handler = Callable[[MailContext, Any], None]

HANDLERS: dict[type, Handler] = {
    protocol.Queue: queue,
    protocol.Submit: submit,
    protocol.Confirm: confirm,
    protocol.Preview: preview,
    protocol.MoveAction: move_action,
    protocol.Chat: chat,
    protocol.Subscribe: subscribe,
    protocol.Unsubscribe: unsubscribe,
    protocol.Notify: notify,
    protocol.Limit: limit,
    protocol.AcceptChallenge: accept_challenges,
    protocol.RejectChallenge: reject_challenges,
    protocol.Seek: seek,
    protocol.Games: games,
    protocol.ShowUser: show_user,
    protocol.ShowAs: show_as,
    protocol.History: history,
    protocol.Standings: standings,
    protocol.Ratings: ratings,
}

REPLY_ACTIONS: dict[str, Callable[..., None]] = {
    word: _reply_action for word in ("propose", "undo", "accept", "reject")
}

__all__ = ["HANDLERS", "REPLY_ACTIONS", "undo_last_move", "vote"]
