"""How a user wants their mail: ``format`` (board mails with a picture, or text only)
and ``digest`` (one mail a day listing the boards awaiting their move)."""

from __future__ import annotations

from ... import protocol, render
from ..context import MailContext
from ..queries import authenticate


def _answer(ctx: MailContext, subject: str, text: str) -> None:
    ctx.reply(*render.text_mail(subject, render.wrap_text(text)))


def mail_format(ctx: MailContext, c: protocol.Format) -> None:
    user = authenticate(ctx, c.userid, c.password)
    user.mail_format = "html" if c.html else "text"
    if c.html:
        text = (
            f"Board mails to {user.userid} now show the board as a picture as well as "
            "the text diagram; mail programs that cannot show the picture show the text.  "
            f'Send "format {user.userid} <password> text" for the text only.'
        )
    else:
        text = (
            f"Board mails to {user.userid} are now text only, with the ASCII board.  "
            f'Send "format {user.userid} <password> html" to get the picture again.'
        )
    _answer(ctx, "Abalone format", text)


def digest(ctx: MailContext, c: protocol.Digest) -> None:
    user = authenticate(ctx, c.userid, c.password)
    if c.on:
        already = user.digest
        user.digest = True
        text = (
            f"The daily digest is {'still' if already else 'now'} on for {user.userid}: "
            "once a day you get one mail that lists every board awaiting your move, each "
            "with its diagram and its reply address (none on a day without such a "
            "board).  The first comes within a few minutes.  The board mail of every "
            f'move still comes as before.  Send "digest {user.userid} <password> off" to '
            "stop it."
        )
    else:
        user.digest = False
        text = (
            f"The daily digest is off for {user.userid}.  The board mail of every move "
            "still comes as before."
        )
    _answer(ctx, "Abalone digest", text)

