"""Mail in -> commands -> results -> replies: the worker's processing function.

The mail is read (its Subject, body, and the reply address it was sent to), parsed into
commands, and each command is handed to its handler (:data:`HANDLERS`: command class ->
handler function).  One stored mail is handled inside the worker's transaction.  Each
command runs in a savepoint of its own, so a command that fails changes nothing and one bad line of a
``multiple`` mail never sinks the others; every answer goes to the outbox in the same
transaction as the change that caused it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime
from email.message import EmailMessage
from typing import Any

from sqlalchemy.orm import Session

from .. import protocol
from ..config import Settings
from ..db import repository
from ..db.models import InboxMail
from ..mail import validation
from ..mail.authresults import authenticated_by
from ..mail.stored_copy import mask_stored_mail
from . import mails, multiple, optin, rates, unsubscribe
from .way_out import answer_by_mail as unsubscribe_by_mail
from .context import CommandError, MailContext
from .mail_secrets import secrets_of_mail, taken_ahead
from .precheck import MailReading, read_mail
from .queries import recipient_userid
from .handlers import (
    accounts, analysis, challenges, lists, moves, preferences, replies, resign, social, votes,
)
from .handlers import tournaments
from ..protocol import tournament_commands

log = logging.getLogger(__name__)

Handler = Callable[[MailContext, Any], None]


def process_mail(
    session: Session, mail: InboxMail, message: EmailMessage, now: datetime, settings: Settings
) -> None:
    """Handle one incoming mail; the worker commits what this writes."""
    reading = read_mail(mail, message, settings)
    # The passwords and the masked stored copy, computed before the transaction when
    # the worker read the mail ahead (still right: see mail_secrets), else here.
    ahead = taken_ahead(session, mail, message)
    ctx = _context(session, mail, message, now, settings, reading,
                   None if ahead is None else set(ahead.secrets))
    target = reading.target
    token = unsubscribe.requested_token(mail, message, settings)
    if token is not None:
        # Sent to an unsubscribe address: its token is the whole request.
        unsubscribe_by_mail(ctx, token)
    elif target is not None:
        _run(ctx, lambda: replies.board_reply(ctx, *target), quote=True)
    else:
        _handle_subject(ctx, reading)
    ctx.flush()
    # The stored copy keeps no password (ctx.secrets does not change while the mail is
    # handled, so a copy masked ahead with the same secrets is this very copy).
    if ahead is not None:
        mail.raw = ahead.stored_copy
    else:
        mask_stored_mail(mail, ctx.secrets, message)


def _context(
    session: Session, mail: InboxMail, message: EmailMessage, now: datetime,
    settings: Settings, reading: MailReading, secrets: set[str] | None,
) -> MailContext:
    # Answers go where the mail came from (a header may not send them to a stranger).
    sender = rates.answer_target(session, message, mail.envelope_from)
    envelope = (mail.envelope_from or "").strip().strip("<>").lower()
    # Only well-formed ids are copied into the answers' In-Reply-To and References.
    message_id = next(iter(validation.message_ids(message.get("Message-ID") or "")), None)
    references = validation.message_ids(message.get("References") or "")
    raw_subject = str(message.get("Subject") or "")
    return MailContext(
        secrets=(secrets if secrets is not None
                 else secrets_of_mail(session, settings, raw_subject, reading.body)),
        session=session,
        settings=settings,
        now=now,
        sender=sender,
        subject=reading.subject,
        body=reading.body,
        message_id=message_id,
        references=references,
        inbox_id=mail.id,
        is_reply=bool(_REPLY_PREFIX.match(raw_subject)),
        envelope_sender=envelope,
        authenticated=authenticated_by(
            message, settings.authserv_id or settings.address_domain, envelope
        ),
    )


# ----------------------------------------------------------------- subject commands
def _handle_subject(ctx: MailContext, reading: MailReading) -> None:
    # Read (Subject, or the body's first line when it is blank) by read_mail.
    subject = reading.command_subject
    if subject is None:
        ctx.reply(*mails.plain_error(ctx, "Your mail has no command in its Subject line. "
                                     "Send \"help\" as the Subject for instructions."))
        return
    command = reading.command
    if command is None:
        if _answer_reply_to_our_mail(ctx, subject):
            return
        ctx.send(mails.error_outgoing(ctx, str(reading.error), None))
        return
    if isinstance(command, protocol.Multiple):
        _handle_multiple(ctx, command)
        return
    _run(ctx, lambda: dispatch(ctx, command), quote=True)


#: A mail program's mark of an answer (English, German, Scandinavian, Dutch).
_REPLY_PREFIX = re.compile(r"^\s*(?:re|aw|sv|antw)\s*(?:\[\d+\])?\s*:", re.IGNORECASE)

#: The Subject of one of the server's own mails, as a mail program quotes it in a reply
#: (``Re:`` is gone already): board mails, reminders, errors, digests, answers.
_OUR_SUBJECT = re.compile(
    r"^(?:new\s+|nag:\s+)?abalone\s+(?:board\s+(?P<board>\d+)\b|[a-z]+)", re.IGNORECASE
)


def _answer_reply_to_our_mail(ctx: MailContext, subject: str) -> bool:
    """A reply sent to the server's own address (not to a board's reply address) to one
    of its mails: say what happened and how to go on, instead of "unknown command".
    Such a reply never moves (only a reply address stands for a player without a
    password), but an error about a board comes from the player's reply address, so
    answering it with the move works."""
    found = _OUR_SUBJECT.match(subject.strip())
    if found is None or not ctx.is_reply:
        return False
    line = protocol.first_reply_line(ctx.body) or ""
    number = int(found.group("board")) if found.group("board") else None
    game = repository.get_game(ctx.session, number) if number is not None else None
    if game is not None and recipient_userid(ctx, game) is not None:
        userid = recipient_userid(ctx, game)
        message = (
            f"Your mail came to {ctx.settings.address}, the server's own address, not to "
            f"your reply address for board {game.number}, so it was not read as a move.  "
            "Reply to this mail instead: it comes from your reply address for board "
            f"{game.number}, and a reply with your move (or resign, propose, undo, accept, "
            "reject, show) on the first line is played without a password.  Or send the "
            f'Subject "abalone move {game.number} {userid} <password> <move>".'
        )
        ctx.send(mails.error_outgoing(ctx, message, game.number))
        return True
    hint = ""
    if protocol.looks_like_move(line):
        hint = (
            "  To move, reply to the latest board mail of that game (it comes from the "
            'board\'s own reply address), or send "abalone move <board> <userid> '
            '<password> <move>"; "abalone games <userid>" lists your boards.'
        )
    shown = protocol.masking.quotable(subject.strip())
    message = (
        f'Your mail looks like a reply to the server\'s mail "{shown}", sent to '
        f"{ctx.settings.address}.  The server reads commands from the Subject line only, "
        f'and "{shown}" is not one.{hint}  Send the Subject "help" for every '
        "command."
    )
    ctx.send(mails.error_outgoing(ctx, message, None))
    return True


def _handle_multiple(ctx: MailContext, command: protocol.Multiple) -> None:
    """At most a fixed number of lines, and one summary answer (see multiple)."""
    _run(ctx, lambda: multiple.handle_multiple(ctx, command, dispatch), quote=True)


def _run(ctx: MailContext, action: Callable[[], None], *, quote: bool,
         line: str | None = None) -> str | None:
    """Run one command in a savepoint; on a CommandError undo it and mail the error."""
    mark = len(ctx.outgoing)
    savepoint = ctx.session.begin_nested()
    try:
        action()
        savepoint.commit()
        ctx.valid_command = True
        return None
    except CommandError as error:
        savepoint.rollback()
        del ctx.outgoing[mark:]
        ctx.session.expire_all()
        ctx.send(mails.error_outgoing(ctx, error.message, error.board, line=line))
        return error.message
    finally:
        # Counted events (wrong passwords) and notices stay when the command failed.
        ctx.write_kept()


def dispatch(ctx: MailContext, command: protocol.Command) -> None:
    handler = HANDLERS.get(type(command))
    if handler is None:
        raise CommandError(
            f"The {command.name} command is not available on this server yet"
        )
    handler(ctx, command)


# ---------------------------------------------------------------- command handlers
HANDLERS: dict[type, Handler] = {
    # accounts
    protocol.Signup: accounts.signup,
    protocol.AddAddress: accounts.add_addresses,
    protocol.ChangePassword: accounts.change_password,
    protocol.ChangeAddress: accounts.change_addresses,
    protocol.Signoff: accounts.signoff,
    protocol.Delete: accounts.delete,
    protocol.PasswordReset: accounts.password_reset,
    protocol.PasswordSet: accounts.password_set,
    protocol.ConfirmAddress: optin.confirm,
    # challenges
    protocol.Challenge: challenges.challenge,
    protocol.Seek: challenges.seek,
    protocol.Limit: challenges.limit,
    protocol.AcceptChallenge: challenges.accept_challenges,
    protocol.RejectChallenge: challenges.reject_challenges,
    protocol.Vacation: challenges.vacation,
    # how mail comes
    protocol.Format: preferences.mail_format,
    protocol.Digest: preferences.digest,
    # moves
    protocol.Move: moves.move,
    protocol.Queue: moves.queue,
    protocol.Submit: moves.submit,
    protocol.Confirm: moves.confirm,
    protocol.Preview: moves.preview,
    protocol.Resign: resign.resign,
    protocol.MoveAction: votes.move_action,
    # players and watchers
    protocol.Chat: social.chat,
    protocol.Subscribe: social.subscribe,
    protocol.Unsubscribe: social.unsubscribe,
    protocol.Notify: social.notify,
    protocol.Message: social.message,
    protocol.Broadcast: social.broadcast,
    # reading
    protocol.Help: lists.send_help,
    protocol.GameHelp: lists.send_help,
    protocol.ShowBoards: lists.show,
    protocol.ShowUser: lists.show_user,
    protocol.ShowAs: lists.show_as,
    protocol.Analyze: analysis.analyze,
    protocol.AllShow: lists.all_show,
    protocol.Games: lists.games,
    protocol.History: lists.history,
    protocol.List: lists.list_users,
    protocol.Ratings: lists.ratings,
    protocol.Standings: lists.standings,
    # tournaments
    tournament_commands.TournamentList: tournaments.list_tournaments,
    tournament_commands.TournamentShow: tournaments.show,
    tournament_commands.TournamentStandings: tournaments.standings,
    tournament_commands.TournamentJoin: tournaments.join,
    tournament_commands.TournamentWithdraw: tournaments.withdraw,
    tournament_commands.TournamentMail: tournaments.mail,
}
