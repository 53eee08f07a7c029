"""Players and watchers: chat, subscribe, unsubscribe, notify, message, broadcast.

* ``chat`` may be sent by any registered user about any board (also finished ones);
  it goes to the players, the observers who watch every move, and the sender.
* ``notify`` makes you a results-only observer of the boards named; ``subscribe all``
  makes you watch every board created later.
* ``message`` and ``broadcast`` relay a text without showing an address to either side;
  a user may broadcast once a day, and only an established one (see limits).
* Text written by a user reaches only confirmed addresses, within the relay limits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta

from sqlalchemy import select

from ... import protocol, render
from ...db import repository
from ...db.models import Observer, User
from ...render import chat_mail
from .. import limits
from ..context import CommandError, MailContext, Outgoing
from ..counters import read_counter, touch_counter
from ..unsubscribe import Unsubscription, broadcasts_refused
from ..games import load_board, seat_of
from ..mails import answer, text_answer
from ..views import board_page, game_view, page_kind, when
from ..queries import (
    authenticate,
    authenticate_for,
    load_game,
    observer_row,
    observers_of,
    require_active,
    user_addresses,
)

#: One broadcast per user in this span.
BROADCAST_INTERVAL = timedelta(hours=24)


# ---------------------------------------------------------------------------- chat
def chat(ctx: MailContext, c: protocol.Chat) -> None:
    game = load_game(ctx, c.board, for_update=False)
    user = authenticate_for(ctx, game, c.userid, c.password)
    text = ctx.masked(c.text).strip()  # a pasted command keeps its secret
    if not text:
        raise CommandError(
            "Your chat has no text: write the message in the body of the mail",
            board=game.number,
        )
    subject, body = chat_mail(game.number, user.userid, text)
    people = [s.user for s in game.seats]
    watching = [u for u, results_only in observers_of(ctx, game) if not results_only]
    people += watching
    # The others within the relay limits; the author gets the chat as the answer.
    mark = len(ctx.outgoing)
    limits.relay_text(ctx, user, people, subject, body, board=game.number)
    # An observer gets the chat because they watch the board: the board's way out.
    _offer_way_out(ctx, mark, watching,
                   lambda each: Unsubscription("o", each.id, each.userid, game.number))
    ctx.reply(subject, body)


def _offer_way_out(ctx: MailContext, mark: int, users: Iterable[User],
                   make: Callable[[User], Unsubscription]) -> None:
    """Give the mails queued since ``mark`` to an address of ``users`` the way out
    ``make`` names for its user (the relay of a text knows addresses only)."""
    owners = {entry.address.lower(): user for user in users for entry in user.addresses}
    for mail in ctx.outgoing[mark:]:
        owner = owners.get(mail.to.lower())
        if owner is not None:
            mail.unsubscribe = make(owner)


# ---------------------------------------------------------------- watching games
def subscribe(ctx: MailContext, c: protocol.Subscribe) -> None:
    if c.board == "all":
        user = authenticate(ctx, c.userid, c.password)
        user.subscribe_all = True
        answer(
            ctx, "Abalone subscribe all",
            f"{user.userid} now watches every new board: you get a copy of every board "
            "mail of the games started from now on.  \"abalone unsubscribe "
            f'{user.userid} <password> all" stops it.',
        )
        return
    game = load_game(ctx, c.board, for_update=False)
    user = authenticate_for(ctx, game, c.userid, c.password)
    if seat_of(game, user) is not None:
        raise CommandError("You play in this game; you get its boards already",
                           board=game.number)
    require_active(game)
    row = observer_row(ctx, game, user)
    if row is not None and not row.results_only:
        raise CommandError(f"You watch board {game.number} already", board=game.number)
    if row is None:
        ctx.session.add(Observer(game_id=game.id, user_id=user.id, results_only=False))
    else:
        row.results_only = False
    ctx.session.flush()
    view = game_view(ctx, game, notices=[
        f"{user.userid} now watches board {game.number}: you get a copy of every board "
        "mail of this game."
    ])
    board = load_board(game)
    subject, body = render.board_mail(view, board, recipient=user.userid)
    html = board_page(page_kind(render.board_mail, view, board), subject, view, board,
                      recipient=user.userid, game=game)
    ctx.send(Outgoing(ctx.sender, subject, body, html=html))


def unsubscribe(ctx: MailContext, c: protocol.Unsubscribe) -> None:
    if c.board == "all":
        user = authenticate(ctx, c.userid, c.password)
        user.subscribe_all = False
        user.notify_all = False
        watched = list(ctx.session.scalars(select(Observer).where(Observer.user_id == user.id)))
        for each in watched:
            ctx.session.delete(each)
        count = f"{len(watched)} {'board' if len(watched) == 1 else 'boards'}"
        answer(ctx, "Abalone unsubscribe all",
                f"{user.userid} no longer watches any board (you watched {count}), and "
                "neither new boards nor the results of other games are sent to you.")
        return
    game = load_game(ctx, c.board, for_update=False)
    user = authenticate_for(ctx, game, c.userid, c.password)
    row = observer_row(ctx, game, user)
    if row is None:
        raise CommandError(f"You do not watch board {game.number}", board=game.number)
    ctx.session.delete(row)
    answer(ctx, f"Abalone Board {game.number} unsubscribe",
            f"{user.userid} no longer watches board {game.number}.")


def notify(ctx: MailContext, c: protocol.Notify) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if not c.boards:
        # pbmserv: notify without boards means the results of every game.
        user.notify_all = True
        answer(ctx, "Abalone notify",
                f"{user.userid} will be told the result of every game that ends from now on "
                "(one mail per game, none for each move).  "
                f'"abalone unsubscribe {user.userid} <password> all" stops it; '
                f'"abalone notify {user.userid} <password> <board>..." names single boards.')
        return
    for number in dict.fromkeys(c.boards):
        game = load_game(ctx, number, for_update=False)
        if seat_of(game, user) is not None:
            raise CommandError(f"You play in board {number}; you get its result anyway",
                               board=number)
        require_active(game)
        row = observer_row(ctx, game, user)
        if row is None:
            ctx.session.add(Observer(game_id=game.id, user_id=user.id, results_only=True))
        else:
            row.results_only = True
    listed = render.and_list([str(n) for n in dict.fromkeys(c.boards)])
    answer(ctx, "Abalone notify",
            f"{user.userid} will be told the result of board{'s' if len(c.boards) > 1 else ''} "
            f"{listed} (no mail for each move; \"abalone subscribe\" sends every board).")


# ---------------------------------------------------- messages between players
def _recipients(ctx: MailContext, userids: Iterable[str]) -> list[User]:
    """The users named, in order and once each; every problem named in one error."""
    found: list[User] = []
    unknown: list[str] = []
    unreachable: list[str] = []
    for userid in dict.fromkeys(u.lower() for u in userids):
        user = repository.get_user(ctx.session, userid)
        if user is None:
            unknown.append(userid)
        elif user.disabled or user.robot is not None or not user_addresses(user):
            unreachable.append(userid)
        else:
            found.append(user)
    problems = []
    if unknown:
        problems.append(
            f"There is no user {render.and_list(unknown)}" if len(unknown) == 1
            else f"There are no users {render.and_list(unknown)}"
        )
    if unreachable:
        problems.append(
            f"{render.and_list(unreachable)} cannot get messages "
            "(a computer player, or no longer active)"
        )
    if problems:
        raise CommandError("; ".join(problems) + ". Nothing was sent.")
    return found


def _message_body(sender: User, text: str, how_to_answer: str) -> str:
    # Not tidied: the "-- " line (the signature mark) keeps its blank.
    shown = render.shown_text(text.strip())  # no bidi controls, no line wider than 72
    return f"From {sender.userid}:\n\n{shown}\n\n-- \n{render.wrap_text(how_to_answer)}\n"


def message(ctx: MailContext, c: protocol.Message) -> None:
    sender = authenticate(ctx, c.userid, c.password)
    recipients = _recipients(ctx, c.to)
    text = ctx.masked(c.text).strip()  # a pasted command keeps its secret
    if not text:
        raise CommandError(
            "Your message is empty: write it in the body of the mail "
            "(quoted text and your signature are not sent)"
        )
    answer = (
        f'To answer, mail the server a "message <your userid> <password> {sender.userid}" '
        "with your answer in the body.  Addresses are never shown to either side."
    )
    limits.relay_text(
        ctx, sender, recipients, f"Abalone message from {sender.userid}",
        _message_body(sender, text, answer),
    )
    names = render.and_list([u.userid for u in recipients])
    text_answer(ctx, "Abalone message sent", f"Your message was sent to {names}.")


def broadcast(ctx: MailContext, c: protocol.Broadcast) -> None:
    sender = authenticate(ctx, c.userid, c.password)
    text = ctx.masked(c.text).strip()  # a pasted command keeps its secret
    if not text:
        raise CommandError(
            "Your broadcast is empty: write it in the body of the mail "
            "(quoted text and your signature are not sent)"
        )
    limits.check_established(ctx, sender)
    name = f"broadcast:{sender.userid}"
    counter = read_counter(ctx, name)
    if counter is not None and ctx.now - counter.updated_at < BROADCAST_INTERVAL:
        allowed = counter.updated_at + BROADCAST_INTERVAL
        raise CommandError(
            f"You may send one broadcast in {BROADCAST_INTERVAL.total_seconds() / 3600:.0f} "
            f"hours; your last was at {when(counter.updated_at)}, the next is allowed from "
            f"{when(allowed)}"
        )
    touch_counter(ctx, name, counter)
    refused = broadcasts_refused(ctx.session)
    users = [user for user in ctx.session.scalars(
        select(User)
        .where(User.disabled.is_(False), User.robot.is_(None), User.id != sender.id)
        .order_by(User.userid)
    ) if user.id not in refused]
    answer = (
        f'This was sent to every player of the server.  To answer {sender.userid} alone, mail '
        f'the server a "message <your userid> <password> {sender.userid}" with your answer '
        "in the body."
    )
    mark = len(ctx.outgoing)
    count = len(limits.relay_text(
        ctx, sender, users, f"Abalone broadcast from {sender.userid}",
        _message_body(sender, text, answer), allowance=False,
    ))
    _offer_way_out(ctx, mark, users, lambda each: Unsubscription("b", each.id, each.userid))
    text_answer(
        ctx, "Abalone broadcast sent",
        f"Your broadcast was sent to {count} address{'es' if count != 1 else ''}.  "
        f"The next one is allowed from {when(ctx.now + BROADCAST_INTERVAL)}.",
    )
