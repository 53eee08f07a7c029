"""What a command handler works with: the session, the mail it answers, the mails it sends."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from ..config import Settings
from ..db import repository
from ..db.models import User
from ..mail.compose import ComposedMail, compose_mail


#: The name the server's mails come from.
DISPLAY_NAME = "Abalone"


class CommandError(Exception):
    """A command that cannot be carried out; nothing it did is kept.

    ``board`` is the game number when a board is involved, so the error mail can show
    the unchanged board.
    """

    def __init__(self, message: str, *, board: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.board = board


@dataclass
class Outgoing:
    to: str
    subject: str
    body: str
    reply_to: str | None = None
    auto_submitted: str = "auto-replied"
    #: The HTML part (a board picture); dropped for recipients who chose text only.
    html: str | None = None


@dataclass
class MailContext:
    """One incoming mail being processed, and everything it will send."""

    session: Session
    settings: Settings
    now: datetime
    #: The address answers go to (the envelope sender, or From when they differ? see mailroom).
    sender: str
    subject: str = ""
    body: str = ""
    message_id: str | None = None
    references: list[str] = field(default_factory=list)
    inbox_id: int | None = None
    #: The Subject began with a reply prefix (Re:, AW:, ...): an answer to some mail.
    is_reply: bool = False
    outgoing: list[Outgoing] = field(default_factory=list)
    #: Whether an address gets HTML parts, looked up once per mail processed.
    _html_wanted: dict[str, bool] = field(default_factory=dict)

    def send(self, mail: Outgoing) -> None:
        self.outgoing.append(mail)

    def reply(self, subject: str, body: str) -> None:
        self.send(Outgoing(self.sender, subject, body))

    def send_to(self, address: str, subject: str, body: str) -> None:
        self.send(Outgoing(address, subject, body))

    def send_to_users(
        self,
        users: Iterable[User],
        subject: str,
        body: str,
        *,
        skip: Iterable[str] = (),
        auto_submitted: str = "auto-replied",
        html: str | None = None,
    ) -> set[str]:
        """One mail to every address of the users, each address once (none to those in
        ``skip``; robots have no address); returns the addresses written to."""
        done = {a.lower() for a in skip}
        sent: set[str] = set()
        for user in users:
            for entry in user.addresses:
                if entry.address in done:
                    continue
                done.add(entry.address)
                sent.add(entry.address)
                self.send(Outgoing(entry.address, subject, body,
                                   auto_submitted=auto_submitted, html=html))
        return sent

    def reply_address(self, board: int, token: str) -> str:
        settings = self.settings
        return f"{settings.address_local}+{board}.{token}@{settings.address_domain}"

    def flush(self) -> int:
        """Turn the collected mails into outbox rows in the current transaction."""
        count = 0
        answering = self.message_id
        references = [*self.references, answering] if answering else list(self.references)
        for mail in self.outgoing:
            composed = self._compose(mail, answering, references)
            repository.enqueue_composed(self.session, composed, self.now, inbox_id=self.inbox_id)
            count += 1
        self.outgoing.clear()
        return count

    def wants_html(self, address: str) -> bool:
        """Whether mail to ``address`` may carry an HTML part: no when any user with that
        address chose ``format ... text``."""
        key = address.strip().lower()
        if key not in self._html_wanted:
            users = repository.find_user_by_address(self.session, key)
            self._html_wanted[key] = all(u.mail_format != "text" for u in users)
        return self._html_wanted[key]

    def _compose(
        self, mail: Outgoing, answering: str | None, references: list[str]
    ) -> ComposedMail:
        # Only mail that answers the sender carries In-Reply-To; board mails to the
        # other players are new threads for them.
        is_answer = answering is not None and mail.to.lower() == self.sender.lower()
        return compose_mail(
            # A display name, so that mail programs list the server as "Abalone".
            sender=f'"{DISPLAY_NAME}" <{self.settings.address}>',
            to=mail.to,
            subject=mail.subject,
            body=mail.body,
            reply_to=mail.reply_to,
            in_reply_to=answering if is_answer else None,
            references=references if is_answer else None,
            auto_submitted=mail.auto_submitted,
            loop_token=self.settings.address,
            date=self.now,
            html=mail.html if mail.html and self.wants_html(mail.to) else None,
        )
