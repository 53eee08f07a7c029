"""The commands of the mail protocol as small frozen dataclasses, and the error raised
when a command line cannot be read.

Password fields are left out of the dataclasses' ``repr`` so that they do not end up in
logs by accident.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal


class CommandSyntaxError(ValueError):
    """A command line that cannot be read.

    ``message`` says what is wrong in a player's words; ``usage`` is the bare usage of
    the nearest command (``abalone move <board> <userid> <password> <move>``) and
    ``syntax`` the full line for the mail: ``Syntax is "abalone move ..."``.
    ``str(error)`` is both lines.
    """

    def __init__(self, message: str, syntax: str) -> None:
        usage = syntax
        match = re.fullmatch(r'Syntax is "(.*)"', syntax)
        if match:
            usage = match.group(1)
        super().__init__(message)
        self.message = message
        self.usage = usage
        self.syntax = f'Syntax is "{usage}"'

    def __str__(self) -> str:
        return f"{self.message}\n{self.syntax}" if self.message else self.syntax


@dataclass(frozen=True)
class Command:
    """Base class of every command; ``name`` is its key in :data:`.registry.COMMANDS`."""

    name: ClassVar[str] = ""


# Server commands ------------------------------------------------------------------
@dataclass(frozen=True)
class Help(Command):
    name: ClassVar[str] = "help"
    topics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signup(Command):
    name: ClassVar[str] = "signup"
    userid: str
    password: str = field(repr=False)
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class AddAddress(Command):
    name: ClassVar[str] = "add"
    userid: str
    password: str = field(repr=False)
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangePassword(Command):
    name: ClassVar[str] = "change password"
    userid: str
    old: str = field(repr=False)
    new: str = field(repr=False)


@dataclass(frozen=True)
class ChangeAddress(Command):
    name: ClassVar[str] = "change address"
    userid: str
    password: str = field(repr=False)
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signoff(Command):
    name: ClassVar[str] = "signoff"
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Delete(Command):
    name: ClassVar[str] = "delete"
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class List(Command):
    name: ClassVar[str] = "list"


@dataclass(frozen=True)
class Message(Command):
    """``text`` is the body of the mail (the message to relay), see
    :func:`.comments.extract_comment`."""

    name: ClassVar[str] = "message"
    userid: str
    password: str = field(repr=False)
    to: tuple[str, ...] = ()
    text: str = ""


@dataclass(frozen=True)
class Broadcast(Command):
    name: ClassVar[str] = "broadcast"
    userid: str
    password: str = field(repr=False)
    text: str = ""


@dataclass(frozen=True)
class Multiple(Command):
    """The body's command lines (blank and quoted lines and the signature left out).

    Each line is one full command, to be given to ``parse_command(line, "")`` on its own;
    a ``multiple`` inside a ``multiple`` should be refused by the caller.
    """

    name: ClassVar[str] = "multiple"
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class AllShow(Command):
    name: ClassVar[str] = "all show"
    userid: str
    filter: str | None = None  # None, "next" or "active"


@dataclass(frozen=True)
class Vacation(Command):
    name: ClassVar[str] = "vacation"
    userid: str
    password: str = field(repr=False)
    on: bool = True


@dataclass(frozen=True)
class Format(Command):
    """``format userid password text|html``: board mails with a picture, or text only."""

    name: ClassVar[str] = "format"
    userid: str
    password: str = field(repr=False)
    html: bool = True


@dataclass(frozen=True)
class Digest(Command):
    """``digest userid password on|off``: a daily mail of the boards awaiting a move."""

    name: ClassVar[str] = "digest"
    userid: str
    password: str = field(repr=False)
    on: bool = True


@dataclass(frozen=True)
class PasswordReset(Command):
    name: ClassVar[str] = "password reset"
    userid: str


@dataclass(frozen=True)
class ConfirmAddress(Command):
    """``confirm address <code>``: the owner of an address agrees to get mail (opt-in)."""

    name: ClassVar[str] = "confirm address"
    code: str = field(repr=False)


@dataclass(frozen=True)
class PasswordSet(Command):
    name: ClassVar[str] = "password set"
    userid: str
    code: str = field(repr=False)
    new_password: str = field(repr=False)


# Game commands --------------------------------------------------------------------
@dataclass(frozen=True)
class GameHelp(Command):
    name: ClassVar[str] = "abalone help"
    topics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Standings(Command):
    name: ClassVar[str] = "abalone standings"


@dataclass(frozen=True)
class Ratings(Command):
    name: ClassVar[str] = "abalone ratings"


@dataclass(frozen=True)
class History(Command):
    name: ClassVar[str] = "abalone history"
    userids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Games(Command):
    name: ClassVar[str] = "abalone games"
    userids: tuple[str, ...] = ()
    filter: str | None = None  # None or one of grammar.FILTERS


@dataclass(frozen=True)
class ShowBoard:
    """One board of ``abalone show``: ``ply`` is the ``#n`` (position after move n)."""

    board: int
    ply: int | None = None


@dataclass(frozen=True)
class ShowBoards(Command):
    """``abalone show 101 102#5``: always this class, even for a single board."""

    name: ClassVar[str] = "abalone show"
    boards: tuple[ShowBoard, ...] = ()


@dataclass(frozen=True)
class Analyze(Command):
    """``abalone analyze 101#12``: the strongest robot's view of a position."""

    name: ClassVar[str] = "abalone analyze"
    board: int
    ply: int | None = None


@dataclass(frozen=True)
class ShowUser(Command):
    name: ClassVar[str] = "abalone show"
    userids: tuple[str, ...] = ()
    filter: str | None = None


@dataclass(frozen=True)
class ShowAs(Command):
    """Boards as ``userid`` sees them; both ``boards`` and ``filter`` empty: the default."""

    name: ClassVar[str] = "abalone showas"
    userid: str
    password: str = field(repr=False)
    boards: tuple[int, ...] = ()
    filter: str | None = None


@dataclass(frozen=True)
class Challenge(Command):
    """``options`` maps option names without the dash to ``True`` (flags such as
    ``bowl``, ``teams``, ``ko``, ``pillar``) or to the value as written, a string
    (``{"layout": "belgian-daisy", "target": "5"}``): numbers are checked to be positive
    whole numbers and layout names to exist (lower case, ``_`` and blanks as ``-``); the
    service checks what depends on the number of players.  ``userids`` in seat order."""

    name: ClassVar[str] = "abalone challenge"
    userids: tuple[str, ...]
    options: dict[str, str | bool] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Move(Command):
    """``move_text`` is the move in lower case without blanks when it looks like a move
    (``c3-c5,d4``), otherwise the words as written (the rules core explains why it is not
    a move); ``expected_ply`` is the ``#n``."""

    name: ClassVar[str] = "abalone move"
    board: int
    userid: str
    password: str = field(repr=False)
    move_text: str = ""
    expected_ply: int | None = None


@dataclass(frozen=True)
class MoveAction(Command):
    """``abalone move <board> <userid> <password> propose|undo|accept|reject``."""

    name: ClassVar[str] = "abalone move"
    board: int
    userid: str
    password: str = field(repr=False)
    action: str = ""  # "propose" | "undo" | "accept" | "reject"


@dataclass(frozen=True)
class Resign(Command):
    """``abalone resign ...`` and ``abalone move ... resign``."""

    name: ClassVar[str] = "abalone resign"
    board: int
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Queue(Command):
    name: ClassVar[str] = "abalone queue"
    board: int
    userid: str
    password: str = field(repr=False)
    move_text: str = ""
    expected_ply: int | None = None


@dataclass(frozen=True)
class Submit(Command):
    name: ClassVar[str] = "abalone submit"
    board: int
    userid: str
    password: str = field(repr=False)
    move_text: str = ""
    expected_ply: int | None = None


@dataclass(frozen=True)
class Confirm(Command):
    name: ClassVar[str] = "abalone confirm"
    board: int
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Preview(Command):
    """``preview 101#5 m1 m2``: board 101, ply 5; ``preview new 3 m1``: players 3."""

    name: ClassVar[str] = "abalone preview"
    board: int | None = None
    ply: int | None = None
    players: int | None = None
    moves: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chat(Command):
    """``text`` is the body of the mail, see :func:`.comments.extract_comment`."""

    name: ClassVar[str] = "abalone chat"
    board: int
    userid: str
    password: str = field(repr=False)
    text: str = ""


@dataclass(frozen=True)
class Subscribe(Command):
    """``board`` is a board number or ``"all"``."""

    name: ClassVar[str] = "abalone subscribe"
    board: int | Literal["all"]
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Unsubscribe(Command):
    name: ClassVar[str] = "abalone unsubscribe"
    board: int | Literal["all"]
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Notify(Command):
    name: ClassVar[str] = "abalone notify"
    userid: str
    password: str = field(repr=False)
    boards: tuple[int, ...] = ()


@dataclass(frozen=True)
class Limit(Command):
    """``value``: None (show the limit), a whole number, ``"accept"`` or ``"reject"``."""

    name: ClassVar[str] = "abalone limit"
    userid: str
    password: str = field(repr=False)
    value: int | str | None = None


@dataclass(frozen=True)
class AcceptChallenge(Command):
    name: ClassVar[str] = "abalone accept"
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class RejectChallenge(Command):
    name: ClassVar[str] = "abalone reject"
    userid: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Seek(Command):
    name: ClassVar[str] = "abalone seek"
    userid: str
    password: str = field(repr=False)
    n: int = 2

