"""Games the server's admin starts from the command line (``abalone-pbm games
start``): any players, computer players only too, which a challenge by mail may not
(``limits.check_robot_challenge``).  The game is an ordinary one; the admin's own
address gets no mail, the players get their new board as after a challenge."""

from __future__ import annotations

from .. import protocol
from ..clock import Clock
from ..config import Settings
from ..db.session import Database
from .context import CommandError, MailContext
from .handlers.challenges import start_game
from .robots import ensure_robot_users


def start_admin_game(database: Database, settings: Settings, clock: Clock,
                     words: list[str]) -> tuple[int, int]:
    """Start a game of ``words`` (challenge options then userids, as after
    ``abalone challenge``); returns the board number and the mails queued.  Raises
    ``CommandError`` with the reason a challenge would be refused for."""
    try:
        command = protocol.parse_command("abalone challenge " + " ".join(words))
    except protocol.CommandSyntaxError as error:
        raise CommandError(str(error).splitlines()[0]) from None
    if not isinstance(command, protocol.Challenge):
        raise CommandError("give challenge options and 2 to 6 userids")
    with database.write() as session:
        ensure_robot_users(session, clock)
        ctx = MailContext(session=session, settings=settings, now=clock.now(),
                          sender=settings.address)
        game = start_game(ctx, dict(command.options), list(command.userids), automatic=True)
        number = game.number
        mails = ctx.flush()
    return number, mails
