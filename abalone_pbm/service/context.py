"""What a command handler works with: the session, the mail it answers, the mails it sends."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from ..config import Settings
from ..db import repository
from ..db.models import User
from ..mail.compose import ComposedMail, compose_mail
from ..protocol.masking import hide_passwords, hide_passwords_in_html, mask_passwords
from . import bounce_scores, rates, threads
from .unsubscribe import Unsubscription, how_to_stop, list_unsubscribe, token_of

log = logging.getLogger(__name__)


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
    #: A request to confirm an address: the one mail an unconfirmed address may get.
    confirmation: bool = False
    #: Subscribed mail: what its List-Unsubscribe token stops (``service.unsubscribe``);
    #: None for transactional mail (a player's own boards, answers).
    unsubscribe: Unsubscription | None = None
    #: The board the mail is about, when its Subject does not name it the server's way
    #: (``Abalone Board <n>``): its References lead to the board's first mail.
    board: int | None = None


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
    #: The SMTP envelope sender (lower case): the address the mail came from, as far
    #: as the server can tell; replies and opt-in are checked against it, not headers.
    envelope_sender: str = ""
    #: The method (dmarc, dkim, spf) of the site MTA's Authentication-Results pass for
    #: the envelope sender's domain, or None (see mail.authresults).
    authenticated: str | None = None
    #: Rate-limit events and mails that stay even when the command fails (see limits).
    kept_events: list[tuple[str, str, datetime]] = field(default_factory=list)
    kept_mail: list[Outgoing] = field(default_factory=list)
    #: Answers this mail may have when more than ``answers_per_mail`` (a multiple).
    answer_allowance: int = 0
    #: Robot searches (analyses) this mail has run: one a mail, so that a ``multiple``
    #: cannot hold the worker for many searches in a row.
    searches: int = 0
    #: Every password written in this mail (read by its commands, or standing where a
    #: password stands: protocol.masking): taken out of everything the mail causes the
    #: server to write, whatever quotes it (an error, a comment, a summary).
    secrets: set[str] = field(default_factory=set)
    #: A command of this mail ran without error: the addresses it came from no longer
    #: count as bouncing (``service.bounces.clear_after_command``).
    valid_command: bool = False

    def masked(self, text: str) -> str:
        """``text`` from this mail (a comment, a chat line) fit to show and keep:
        passwords masked by the masking rule and this mail's own passwords hidden."""
        return hide_passwords(mask_passwords(text), self.hidden_forms())

    def hidden_forms(self) -> set[str]:
        """This mail's passwords as they stand, and in lower case: a word read as a
        userid comes back so ("there is no user pw1zq")."""
        return self.secrets | {secret.lower() for secret in self.secrets}

    def _hide_secrets(self, mail: Outgoing, *, to_writer: bool) -> None:
        """This mail's passwords out of ``mail``: all of them in an answer to the
        writer, the long ones in mail to others (hiding a short ordinary word there
        would tell them what the password was)."""
        if not self.secrets:
            return
        hidden = self.hidden_forms()
        mail.subject = hide_passwords(mail.subject, hidden, short_too=to_writer)
        mail.body = hide_passwords(mail.body, hidden, short_too=to_writer)
        if mail.html:
            mail.html = hide_passwords_in_html(mail.html, hidden, short_too=to_writer)

    def keep(self, scope: str, subject: str) -> None:
        """Count one rate-limit event that stays counted even when the command fails."""
        self.kept_events.append((scope, subject[: rates.SUBJECT_LENGTH], self.now))

    def write_kept(self) -> None:
        """Write the kept events and mails; called outside a command's savepoint."""
        for scope, subject, at in self.kept_events:
            rates.record(self.session, scope, subject, at)
        self.kept_events.clear()
        self.outgoing.extend(self.kept_mail)
        self.kept_mail.clear()
        self.session.flush()

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
        unsubscribe: Callable[[User], Unsubscription] | None = None,
    ) -> set[str]:
        """One mail to every address of the users, each address once (none to those in
        ``skip``; robots have no address); returns the addresses written to.
        ``unsubscribe``: what a user's mail lets them stop, for subscribed mail."""
        done = {a.lower() for a in skip}
        sent: set[str] = set()
        for user in users:
            for entry in user.addresses:
                if not entry.confirmed or entry.address in done:
                    continue
                done.add(entry.address)
                sent.add(entry.address)
                self.send(Outgoing(entry.address, subject, body,
                                   auto_submitted=auto_submitted, html=html,
                                   unsubscribe=unsubscribe(user) if unsubscribe else None))
        return sent

    def reply_address(self, board: int, token: str) -> str:
        settings = self.settings
        return f"{settings.address_local}+{board}.{token}@{settings.address_domain}"

    def flush(self) -> int:
        """Turn the collected mails into outbox rows in the current transaction.

        This is the one gate every mail passes (DESIGN §2.6): a mail to anybody but the
        sender of this mail goes only to a confirmed address (or is the one
        confirmation request an address gets); answers to the sender count against the
        daily cap of its address, and at most ``answers_per_mail`` of them go out for
        one mail.
        """
        self.write_kept()
        # A valid command clears its sender's bounces; an address whose mail bounces
        # gets nothing (DESIGN §2.8): both known in one read.
        suppressed = bounce_scores.before_sending(
            self.session, (self.envelope_sender, self.sender),
            (m.to for m in self.outgoing), valid_command=self.valid_command)
        answering = self.message_id
        references = [*self.references, answering] if answering else list(self.references)
        sender = rates.normalise_address(self.sender)
        envelope = rates.normalise_address(self.envelope_sender) if self.envelope_sender else ""
        self._bound_answers(sender, envelope)
        answers = {id(m) for m in self.outgoing
                   if rates.normalise_address(m.to) in {sender, envelope} - {""}}
        others = [m for m in self.outgoing if id(m) not in answers and not m.confirmation]
        consented = rates.confirmed_among(self.session, (m.to for m in others))
        admitted: dict[str, int] = {}
        # Who wants HTML, for every address with a picture to send, in one read.
        self._learn_formats([m.to for m in self.outgoing if m.html])
        composed: list[ComposedMail] = []
        # Each board's thread: the first mail about it to an address opens it.
        roots = threads.Roots(self.session, self.settings, self.outgoing)
        for mail in self.outgoing:
            self._hide_secrets(mail, to_writer=id(mail) in answers)
            if mail.to.strip().lower() in suppressed:
                log.info("mail to %s not sent: its mail bounces", mail.to)
                continue
            if id(mail) in answers:
                target = rates.normalise_address(mail.to)
                if not rates.answer_room(self.session, self.settings, target,
                                         admitted.get(target, 0), self.now):
                    log.info("answer to %s not sent: daily reply cap reached", mail.to)
                    continue
                admitted[target] = admitted.get(target, 0) + 1
            elif not mail.confirmation and mail.to.lower() not in consented:
                log.warning("mail to %s not sent: not a confirmed address", mail.to)
                continue
            composed.append(self._compose(mail, answering, references, roots))
        repository.enqueue_composed_many(self.session, composed, self.now,
                                         inbox_id=self.inbox_id)
        self.outgoing.clear()
        return len(composed)

    def _learn_formats(self, addresses: Iterable[str]) -> None:
        keys = {a.strip().lower() for a in addresses} - self._html_wanted.keys()
        if keys:
            self._html_wanted.update(repository.html_wanted(self.session, keys))

    def _bound_answers(self, sender: str, envelope: str) -> None:
        """At most ``answers_per_mail`` answers to the sender (``answer_allowance`` when
        more, e.g. a ``multiple`` of many moves): the rest become one short note."""
        most = max(self.settings.answers_per_mail, self.answer_allowance)
        plain = [m for m in self.outgoing if not m.confirmation
                 and rates.normalise_address(m.to) in {sender, envelope} - {""}]
        if len(plain) <= most:
            return
        dropped = plain[most - 1:]
        kept = [m for m in self.outgoing if not any(m is d for d in dropped)]
        note = (f"Your mail asked for {len(plain)} answers; one mail gets at most {most}.  "
                f"{len(dropped)} were not sent: {', '.join(m.subject for m in dropped[:10])}"
                f"{' ...' if len(dropped) > 10 else ''}.\n")
        self.outgoing = [*kept, Outgoing(self.sender, "Abalone: answers not sent", note)]

    def wants_html(self, address: str) -> bool:
        """Whether mail to ``address`` may carry an HTML part: no when any user with that
        address chose ``format ... text``."""
        key = address.strip().lower()
        if key not in self._html_wanted:
            users = repository.find_user_by_address(self.session, key)
            self._html_wanted[key] = all(u.mail_format != "text" for u in users)
        return self._html_wanted[key]

    def _compose(
        self, mail: Outgoing, answering: str | None, references: list[str],
        roots: threads.Roots,
    ) -> ComposedMail:
        # Only mail that answers the sender carries In-Reply-To; board mails to the
        # other players start no thread of their own but join their board's.
        is_answer = answering is not None and mail.to.lower() == self.sender.lower()
        message_id, root = roots.place(mail)
        chain = references if is_answer else []
        if root is not None:
            chain = [root, *chain]
        body, html, uris = mail.body, mail.html, []
        if mail.unsubscribe is not None:
            token = token_of(self.session, self.settings, mail.unsubscribe)
            uris = list_unsubscribe(self.settings, token)
            body = body.rstrip("\n") + "\n" + how_to_stop(self.settings, token,
                                                           mail.unsubscribe) + "\n"
            if html:
                html = _before_end_of_body(html, how_to_stop(
                    self.settings, token, mail.unsubscribe, html=True))
        return compose_mail(
            # A display name, so that mail programs list the server as "Abalone".
            sender=f'"{DISPLAY_NAME}" <{self.settings.address}>',
            to=mail.to,
            subject=mail.subject,
            body=body,
            reply_to=mail.reply_to,
            in_reply_to=answering if is_answer else None,
            references=chain or None,
            auto_submitted=mail.auto_submitted,
            loop_token=self.settings.address,
            date=self.now,
            message_id=message_id,
            html=html if html and self.wants_html(mail.to) else None,
            list_unsubscribe=uris,
        )


def _before_end_of_body(html: str, addition: str) -> str:
    """``addition`` placed at the end of an HTML page's content (before its closing
    container and ``</body>``; at the end of a page without them)."""
    end = html.rfind("</body>")
    if end < 0:
        return html + addition
    container = html.rfind("</div>", 0, end)
    if container >= 0 and not html[container + len("</div>"):end].strip():
        end = container
    return html[:end] + addition + "\n" + html[end:]
