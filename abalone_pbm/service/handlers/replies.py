"""A reply to a board mail: the move (or resign, propose, undo, accept, reject, show)
on its first line, for the player whose reply address it was sent to."""

from __future__ import annotations

from dataclasses import replace

from ... import protocol
from ...db import repository
from ..context import CommandError, MailContext
from ..queries import user_addresses
from .lists import show_board
from .moves import MoveRequest, play_move
from .resign import resign_player
from .votes import vote

#: The reply words that vote on a draw offer or an undo request.
VOTES = ("propose", "undo", "accept", "reject")


def board_reply(ctx: MailContext, board_number: int, token: str) -> None:
    # The board with its seats in one read; the token must be one of its seats'.
    game = repository.get_game(ctx.session, board_number, for_update=True)
    seat = next((s for s in game.seats if s.reply_token == token), None) if game else None
    if game is None or seat is None:
        raise CommandError(
            f"This reply address is not valid for board {board_number}; "
            "reply to the latest mail of the board, or use the abalone move command"
        )
    user = seat.user
    # The envelope sender decides, not a header (anybody can write From: or Reply-To:),
    # and only a confirmed address is the player's.
    if (ctx.settings.reply_requires_registered_sender
            and ctx.envelope_sender not in user_addresses(user)):
        raise CommandError(
            f"Replies for {user.userid} must come from one of {user.userid}'s registered "
            "addresses (a confirmed one, as the sender of the mail); use the abalone move "
            "command with your password instead",
            board=board_number,
        )
    if ctx.settings.reply_requires_authentication and ctx.authenticated is None:
        authserv_id = ctx.settings.authserv_id or ctx.settings.address_domain
        raise CommandError(
            "This server moves by reply only for mail that its mail server "
            f"({authserv_id}) has authenticated (Authentication-Results with a DMARC, DKIM "
            "or SPF pass for your domain); use the abalone move command with your password "
            "instead",
            board=board_number,
        )
    reading = protocol.reply.read_reply(ctx.body)
    action = reading.action
    if action is None and not reading.attempted:
        # No command in the new text: the player may have typed it in the Subject.
        typed = protocol.reply.subject_action(
            ctx.subject, board_number, (s.user.userid for s in game.seats))
        if typed is not None:
            action = replace(typed, comment=reading.comment)
    if action is None:
        raise CommandError(_no_command_found(ctx, reading), board=board_number)
    if action.action == "move":
        request = MoveRequest(
            board=board_number,
            text=action.move_text or "",
            expected_ply=action.expected_ply,
            comment=action.comment,
            source="reply",
        )
        play_move(ctx, game, user, request)
    elif action.action == "resign":
        resign_player(ctx, game, user, action.comment)
    elif action.action == "show":
        show_board(ctx, board_number, None)
    elif action.action in VOTES:
        vote(ctx, game, user, action.action, action.comment)
    else:
        raise CommandError(f"{action.action} is not available on this server yet",
                           board=board_number)


def _no_command_found(ctx: MailContext, reading: protocol.reply.ReplyReading) -> str:
    """What the reader found instead of a command, and how to reply."""
    how = ("Put your move (for example c3-c5,d4) or one of resign, propose, undo, accept, "
           "reject, show on the first line of your reply, above the quoted mail (a "
           "greeting line such as \"Hi Fred,\" may stand above it), or write it as the "
           "Subject of your reply.")
    if reading.found is not None:
        shown = protocol.masking.quotable(ctx.masked(reading.found))
        if len(shown) > 80:
            shown = shown[:77] + "..."
        what = "is not a move" if reading.attempted else "is not a move or one of those words"
        return f'The first line of the text you wrote, "{shown}", {what}.  {how}'
    if reading.new_text.had_old_mail:
        return ("Your reply holds no text of your own, only the mail you replied to "
                f"(quoted, or copied by your mail program).  {how}")
    return f"Your reply is empty.  {how}"
