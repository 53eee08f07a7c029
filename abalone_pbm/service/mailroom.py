"""Mail in -> commands -> results -> replies: the worker's processing function.

One stored mail is handled inside the worker's transaction.  Each command runs in a
savepoint of its own, so a command that fails changes nothing and one bad line of a
``multiple`` mail never sinks the others; every answer goes to the outbox in the same
transaction as the change that caused it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from email.message import EmailMessage
from email.utils import getaddresses
from typing import Any

from sqlalchemy.orm import Session

from .. import protocol
from ..config import Settings
from ..db import repository
from ..db.models import InboxMail
from ..mail.decoding import extract_body_text
from ..mail.guards import answer_address
from . import accounts, mails, play
from .context import CommandError, MailContext

log = logging.getLogger(__name__)

Handler = Callable[[MailContext, Any], None]


def process_mail(
    session: Session, mail: InboxMail, message: EmailMessage, now: datetime, settings: Settings
) -> None:
    """Handle one incoming mail; the worker commits what this writes."""
    ctx = _context(session, mail, message, now, settings)
    reply_target = _reply_target(mail, message, settings)
    if reply_target is not None:
        _run(ctx, lambda: _handle_reply(ctx, *reply_target), quote=True)
    else:
        _handle_subject(ctx)
    ctx.flush()


def _context(
    session: Session, mail: InboxMail, message: EmailMessage, now: datetime, settings: Settings
) -> MailContext:
    sender = answer_address(message, mail.envelope_from)
    message_id = (message.get("Message-ID") or "").strip() or None
    references = (message.get("References") or "").split()
    subject = protocol.strip_subject_prefixes(str(message.get("Subject") or ""))
    body = extract_body_text(message)
    return MailContext(
        session=session,
        settings=settings,
        now=now,
        sender=sender,
        subject=subject,
        body=body,
        message_id=message_id,
        references=references,
        inbox_id=mail.id,
    )


def _reply_target(
    mail: InboxMail, message: EmailMessage, settings: Settings
) -> tuple[int, str] | None:
    """(board, token) when the mail was sent to a player's reply address."""
    candidates = [a for a in mail.envelope_to.split(",") if a.strip()]
    if not candidates:
        # Delivered through a pipe without the envelope: fall back to the headers.
        for header in ("Delivered-To", "X-Original-To", "To", "Cc"):
            for _, address in getaddresses(message.get_all(header, [])):
                candidates.append(address)
    for address in candidates:
        local, _, domain = address.strip().strip("<>").rpartition("@")
        if domain.lower() != settings.address_domain.lower():
            continue
        found = protocol.parse_reply_address(local, settings.address_local)
        if found is not None:
            return found
    return None


# ----------------------------------------------------------------- subject commands
def _handle_subject(ctx: MailContext) -> None:
    subject, body = ctx.subject, ctx.body
    if not subject.strip():
        lines = protocol.multiple_lines(body)
        if not lines:
            ctx.reply(*mails.plain_error(ctx, "Your mail has no command in its Subject line. "
                                         "Send \"help\" as the Subject for instructions."))
            return
        subject, body = lines[0], ""
    try:
        command = protocol.parse_command(subject, body)
    except protocol.CommandSyntaxError as error:
        ctx.reply(*mails.error_mail(ctx, str(error), None))
        return
    if isinstance(command, protocol.Multiple):
        _handle_multiple(ctx, command)
        return
    _run(ctx, lambda: dispatch(ctx, command), quote=True)


def _handle_multiple(ctx: MailContext, command: protocol.Multiple) -> None:
    if not command.lines:
        ctx.reply(*mails.error_mail(ctx, "A multiple mail holds one command per line of "
                                         "its body, and this one has none.", None))
        return
    results: list[str] = []
    for line in command.lines:
        masked = protocol.mask_passwords(line)
        try:
            inner = protocol.parse_command(line, "")
        except protocol.CommandSyntaxError as error:
            results.append(f"{masked}\n  -> {error}".replace("\n", "\n     "))
            continue
        if isinstance(inner, protocol.Multiple):
            results.append(f"{masked}\n  -> a multiple cannot hold another multiple")
            continue
        error_text = _run(ctx, lambda: dispatch(ctx, inner), quote=False, line=line)
        results.append(f"{masked}\n  -> {'done' if error_text is None else error_text}")
    ctx.reply(*mails.multiple_summary(ctx, results))


def _run(ctx: MailContext, action: Callable[[], None], *, quote: bool,
         line: str | None = None) -> str | None:
    """Run one command in a savepoint; on a CommandError undo it and mail the error."""
    mark = len(ctx.outgoing)
    savepoint = ctx.session.begin_nested()
    try:
        action()
        savepoint.commit()
        return None
    except CommandError as error:
        savepoint.rollback()
        del ctx.outgoing[mark:]
        ctx.session.expire_all()
        ctx.reply(*mails.error_mail(ctx, error.message, error.board, line=line))
        return error.message


def dispatch(ctx: MailContext, command: protocol.Command) -> None:
    handler = HANDLERS.get(type(command))
    if handler is None:
        raise CommandError(
            f"The {command.name} command is not available on this server yet"
        )
    handler(ctx, command)


# ---------------------------------------------------------------- moving by reply
def _handle_reply(ctx: MailContext, board_number: int, token: str) -> None:
    seat = repository.seat_by_token(ctx.session, token)
    if seat is None or seat.game.number != board_number:
        raise CommandError(
            f"This reply address is not valid for board {board_number}; "
            "reply to the latest mail of the board, or use the abalone move command"
        )
    game = play.load_game(ctx, board_number)
    user = seat.user
    addresses = accounts.user_addresses(user)
    if ctx.settings.reply_requires_registered_sender and ctx.sender.lower() not in addresses:
        raise CommandError(
            f"Replies for {user.userid} must come from one of {user.userid}'s registered "
            "addresses; use the abalone move command with your password instead",
            board=board_number,
        )
    action = protocol.parse_reply_body(ctx.body)
    if action is None:
        first = protocol.first_reply_line(ctx.body)
        found = f' (found "{first}")' if first else ""
        raise CommandError(
            "Put your move (for example c3-c5,d4) or one of resign, propose, undo, "
            f"accept, reject, show on the first line of your reply{found}",
            board=board_number,
        )
    if action.action == "move":
        request = play.MoveRequest(
            board=board_number,
            text=action.move_text or "",
            expected_ply=action.expected_ply,
            comment=action.comment,
            source="reply",
        )
        play.play_move(ctx, game, user, request)
    elif action.action == "resign":
        play.resign_player(ctx, game, user, action.comment)
    elif action.action == "show":
        play.show(ctx, board_number, None)
    else:
        handler = REPLY_ACTIONS.get(action.action)
        if handler is None:
            raise CommandError(f"{action.action} is not available on this server yet",
                               board=board_number)
        handler(ctx, game, user, action.action, action.comment)


#: Extra reply words (propose, undo, accept, reject) registered by other modules.
REPLY_ACTIONS: dict[str, Callable[..., None]] = {}


# ---------------------------------------------------------------- command handlers
def _comment(ctx: MailContext) -> str:
    return protocol.extract_comment(ctx.body)


def _signup(ctx: MailContext, c: protocol.Signup) -> None:
    accounts.signup(ctx, c.userid, c.password, list(c.addresses))


def _add(ctx: MailContext, c: protocol.AddAddress) -> None:
    accounts.add_addresses(ctx, c.userid, c.password, list(c.addresses))


def _change_password(ctx: MailContext, c: protocol.ChangePassword) -> None:
    accounts.change_password(ctx, c.userid, c.old, c.new)


def _change_address(ctx: MailContext, c: protocol.ChangeAddress) -> None:
    accounts.change_addresses(ctx, c.userid, c.password, list(c.addresses))


def _signoff(ctx: MailContext, c: protocol.Signoff) -> None:
    accounts.signoff(ctx, c.userid, c.password)


def _delete(ctx: MailContext, c: protocol.Delete) -> None:
    accounts.delete(ctx, c.userid, c.password)


def _help(ctx: MailContext, c: protocol.Help | protocol.GameHelp) -> None:
    ctx.reply(*mails.help_mail(ctx, list(c.topics), game=isinstance(c, protocol.GameHelp)))


def _challenge(ctx: MailContext, c: protocol.Challenge) -> None:
    play.challenge(ctx, dict(c.options), list(c.userids))


def _move(ctx: MailContext, c: protocol.Move) -> None:
    request = play.MoveRequest(c.board, c.move_text, c.expected_ply, _comment(ctx))
    play.move_by_command(ctx, c.userid, c.password, request)


def _resign(ctx: MailContext, c: protocol.Resign) -> None:
    play.resign(ctx, c.board, c.userid, c.password, _comment(ctx))


def _show(ctx: MailContext, c: protocol.ShowBoards) -> None:
    for item in c.boards:
        play.show(ctx, item.board, item.ply)


def _games(ctx: MailContext, c: protocol.Games) -> None:
    play.games(ctx, list(c.userids), c.filter or "all")


HANDLERS: dict[type, Handler] = {
    protocol.Help: _help,
    protocol.GameHelp: _help,
    protocol.Signup: _signup,
    protocol.AddAddress: _add,
    protocol.ChangePassword: _change_password,
    protocol.ChangeAddress: _change_address,
    protocol.Signoff: _signoff,
    protocol.Delete: _delete,
    protocol.Challenge: _challenge,
    protocol.Move: _move,
    protocol.Resign: _resign,
    protocol.ShowBoards: _show,
    protocol.Games: _games,
}


def _register_extensions() -> None:
    """The commands of the game_commands and server_commands modules join the tables."""
    from . import game_commands, server_commands

    for module in (game_commands, server_commands):
        HANDLERS.update(module.HANDLERS)
        REPLY_ACTIONS.update(getattr(module, "REPLY_ACTIONS", {}))


_register_extensions()


def tick(database: Any, now: datetime, settings: Settings) -> Any:
    """The clock: reminders, forfeits and time limits (``serve`` calls it every minute)."""
    from . import timeouts

    return timeouts.tick(database, now, settings)
