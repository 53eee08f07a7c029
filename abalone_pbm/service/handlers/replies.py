"""A reply to a board mail: the move (or resign, propose, undo, accept, reject, show)
on its first line, for the player whose reply address it was sent to."""

from __future__ import annotations

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
