"""A way out of every subscription, without a password (issue 22, DESIGN §2.3).

Subscribed mail (an observer's boards, ``notify`` results, digests, broadcasts) carries
``List-Unsubscribe`` (RFC 2369) with a token address,
``<local>+unsub.<token>@<domain>``, and, when the admin configured a public HTTPS base
URL, ``<public_url>/unsubscribe/<token>`` with ``List-Unsubscribe-Post:
List-Unsubscribe=One-Click`` (RFC 8058). A player's own board mails are transactional
and carry none.

The token says what to stop and for whom, and is signed, so no table holds tokens:
``<kind>.<user id>.<scope>.<signature>`` (ids in base 36, the signature 16 base32
characters, 80 bits, of an HMAC over kind, user id, userid and scope under the
server's key, ``server_key``). Kinds: ``o`` one board watched (its observer row, full
or results only), ``s`` the boards of new games (``subscribe all``) and the one of this
mail, ``n`` the results of every game (``notify`` without boards), ``d`` the daily
digest, ``b`` broadcasts, ``t`` a tournament's standings mails (scope: the tournament's
id; a championship's later editions already open stop too). Acting on a token is idempotent: doing it twice leaves what
doing it once left. A forged token is refused at RCPT by the Postfix policy service
(``token_is_valid``) and answered "not valid" by the worker and the HTTP listener.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import getaddresses

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..config import Settings
from ..db.session import Database
from ..db.models import (
    Game, InboxMail, Observer, ServerCounter, Tournament, TournamentEntry, User,
)
from ..render.templating import render_template
from .server_key import server_key, signature

log = logging.getLogger(__name__)

__all__ = [
    "KINDS", "Unsubscription", "address_of", "apply", "broadcasts_refused", "describe",
    "how_to_stop", "list_unsubscribe", "parse_token", "requested_token", "token_of",
    "token_user", "url_of",
]

#: What each kind stops (for the answer and the confirmation page).
KINDS = {
    "o": "board",
    "s": "new boards",
    "n": "results",
    "d": "digest",
    "b": "broadcasts",
    "t": "tournament standings",
}
#: The plus-address tag of unsubscribe addresses (``abalone+unsub.<token>@...``).
TAG = "unsub."
#: The ``counters`` row of a user who wants no broadcasts (``<prefix><user id>``).
NO_BROADCASTS = "no_broadcasts:"
_SIGNATURE_LENGTH = 16
_TOKEN = re.compile(r"([a-z])\.([0-9a-z]{1,12})\.([0-9a-z]{1,12})\.([a-z2-7]{16})")


@dataclass(frozen=True)
class Unsubscription:
    """What one token stops: ``kind`` (see ``KINDS``) for the user ``user_id`` (whose
    userid is ``userid``), ``scope`` the board number for ``o`` and ``s``, else 0."""

    kind: str
    user_id: int
    userid: str
    scope: int = 0


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, rest = divmod(number, 36)
        text = digits[rest] + text
        if number == 0:
            return text


def _sign(key: bytes, kind: str, user_id: int, userid: str, scope: int) -> str:
    return signature(key, "unsubscribe", kind, user_id, userid.lower(), scope,
                     length=_SIGNATURE_LENGTH)


def token_of(session: Session, settings: Settings, what: Unsubscription) -> str:
    """The signed token of ``what`` (lower-case letters, digits and dots)."""
    key = server_key(session, settings)
    return (f"{what.kind}.{_base36(what.user_id)}.{_base36(what.scope)}."
            f"{_sign(key, what.kind, what.user_id, what.userid, what.scope)}")


def parse_token(text: str) -> tuple[str, int, int, str] | None:
    """(kind, user id, scope, signature) of a token's form; None when it has none."""
    found = _TOKEN.fullmatch(text.strip().lower())
    if found is None or found.group(1) not in KINDS:
        return None
    return (found.group(1), int(found.group(2), 36), int(found.group(3), 36),
            found.group(4))


def token_user(session: Session, settings: Settings, token: str) -> Unsubscription | None:
    """What a valid token stops; None for a forged, damaged or outdated one (its user
    gone, or another userid in the id's place). One read of a user row."""
    parsed = parse_token(token)
    if parsed is None:
        return None
    kind, user_id, scope, given = parsed
    userid = session.scalar(select(User.userid).where(User.id == user_id))
    if userid is None:
        return None
    expected = _sign(server_key(session, settings), kind, user_id, userid, scope)
    if not hmac.compare_digest(expected, given):
        return None
    return Unsubscription(kind, user_id, userid, scope)


def address_of(settings: Settings, token: str) -> str:
    """The unsubscribe address of ``token``."""
    return f"{settings.address_local}+{TAG}{token}@{settings.address_domain}"


def url_of(settings: Settings, token: str) -> str | None:
    """The one-click URL of ``token`` (None when no public URL is configured)."""
    if not settings.public_url:
        return None
    return f"{settings.public_url.rstrip('/')}/unsubscribe/{token}"


def list_unsubscribe(settings: Settings, token: str) -> list[str]:
    """The URIs of the ``List-Unsubscribe`` header, the HTTPS one (one-click) last."""
    uris = [f"mailto:{address_of(settings, token)}?subject=unsubscribe"]
    url = url_of(settings, token)
    if url is not None:
        uris.append(url)
    return uris


def token_in_local_part(local: str, settings: Settings) -> str | None:
    """The token of an unsubscribe address's local part (any case); None for another
    address."""
    prefix = f"{settings.address_local}+{TAG}".lower()
    lowered = local.strip().strip("<>").lower()
    if not lowered.startswith(prefix):
        return None
    return lowered[len(prefix):]


def requested_token(mail: InboxMail, message: EmailMessage, settings: Settings) -> str | None:
    """The token of the unsubscribe address a mail was sent to (the envelope's
    recipients, else the headers of a mail delivered without them); None when it was
    sent to no unsubscribe address."""
    candidates = [a for a in mail.envelope_to.split(",") if a.strip()]
    if not candidates:
        for header in ("Delivered-To", "X-Original-To", "To", "Cc"):
            candidates += [a for _, a in getaddresses(message.get_all(header, []))]
    for address in candidates:
        local, _, domain = address.strip().strip("<>").rpartition("@")
        if domain.lower() != settings.address_domain.lower():
            continue
        token = token_in_local_part(local, settings)
        if token is not None:
            return token
    return None


def describe(what: Unsubscription) -> str:
    """What is stopped, as a sentence's end ("no longer watches board 101")."""
    if what.kind == "o":
        return f"no longer watches board {what.scope}"
    if what.kind == "s":
        return (f"no longer watches board {what.scope} nor the boards of games started "
                "from now on")
    if what.kind == "n":
        return "is no longer told the result of every game"
    if what.kind == "d":
        return "gets no daily digest any more"
    if what.kind == "t":
        return "gets no standings mails of this tournament any more"
    return "gets no broadcasts any more"


def apply(session: Session, what: Unsubscription, now: datetime | None = None) -> None:
    """Stop what the token names; doing it again changes nothing."""
    user = session.get(User, what.user_id)
    if user is None:
        return
    if what.kind in ("o", "s"):
        game_id = session.scalar(select(Game.id).where(Game.number == what.scope))
        if game_id is not None:
            session.execute(delete(Observer).where(Observer.game_id == game_id,
                                                   Observer.user_id == user.id))
        if what.kind == "s":
            user.subscribe_all = False
    elif what.kind == "n":
        user.notify_all = False
    elif what.kind == "d":
        user.digest = False
    elif what.kind == "t":
        for entry in session.scalars(select(TournamentEntry).where(
                TournamentEntry.user_id == user.id,
                TournamentEntry.tournament_id.in_(_tournament_and_later(session, what.scope)))):
            entry.standings_mail = False
    elif what.kind == "b":
        name = f"{NO_BROADCASTS}{user.id}"
        if session.scalar(select(ServerCounter.id).where(ServerCounter.name == name)) is None:
            session.add(ServerCounter(name=name, value=1,
                                      updated_at=now or datetime.now(timezone.utc)))
    session.flush()
    log.info("unsubscribe: %s %s", what.userid, describe(what))


def _tournament_and_later(session: Session, tournament_id: int) -> list[int]:
    """The tournament's id and those of the later editions of its series."""
    found = session.get(Tournament, tournament_id)
    if found is None:
        return []
    if found.series is None:
        return [found.id]
    return list(session.scalars(select(Tournament.id).where(
        Tournament.series == found.series, Tournament.edition >= found.edition)))


def broadcasts_refused(session: Session) -> set[int]:
    """The ids of the users who want no broadcasts (one read of their rows)."""
    names = session.scalars(select(ServerCounter.name)
                            .where(ServerCounter.name.startswith(NO_BROADCASTS)))
    return {int(name[len(NO_BROADCASTS):]) for name in names
            if name[len(NO_BROADCASTS):].isdigit()}


def how_to_stop(settings: Settings, token: str, what: Unsubscription, *,
                html: bool = False) -> str:
    """The lines a subscribed mail ends with: why it came and how to stop it."""
    return render_template(
        "unsubscribe_footer.html" if html else "unsubscribe_footer.txt",
        kind=what.kind, board=what.scope, userid=what.userid,
        address=address_of(settings, token), url=url_of(settings, token),
    )


def make_unsubscribe_check(settings: Settings, database: Database) -> Callable[[str], bool]:
    """The policy service's unsubscribe token check: its signature, under the server's
    key, over what it names (one short read transaction: the user's row, and the key
    once)."""

    def unsubscribe_is_valid(token: str) -> bool:
        with database.read() as session:
            return token_user(session, settings, token) is not None

    return unsubscribe_is_valid
