"""Turning mail into commands: the pbmserv mail protocol, pure (no database, no network).

The contract is DESIGN.md section 2.  In short:

* A command is the Subject of a mail: words separated by blanks; command words and
  userids are case-insensitive (userids come out in lower case), passwords are
  case-sensitive.  Any number of leading ``Re:``/``Fwd:``/``Fw:``/``AW:``/``WG:``
  (also ``SV:``, ``Antw:``, ``Re[2]:``) are ignored.  Game commands begin with the game
  word ``abalone``.  :func:`parse_command` turns a Subject (and the body, for the
  commands whose body is their payload) into one of the small frozen dataclasses below,
  or raises :class:`CommandSyntaxError` with the usage line of the nearest command.
* The body of any other command is a comment; :func:`extract_comment` cuts it out of
  the body (up to the quoted part or the signature).
* Moving by reply: :func:`parse_reply_address` reads ``abalone+101.k3x9q7mf2a`` and
  :func:`parse_reply_body` reads the first non-quoted line of the reply.
* :func:`mask_passwords` / :func:`quote_original` hide every password before a mail is
  quoted back or logged.
* :data:`COMMANDS` is the registry (syntax line, summary and description of every
  command) that the help texts are made from; :func:`nearest_command` finds the usage of
  the command a mistyped line was most probably meant to be.

Password fields are left out of the dataclasses' ``repr`` so that they do not end up in
logs by accident.
"""

from __future__ import annotations

import codecs
import difflib
import re
from dataclasses import dataclass, field
import email.message
from html.parser import HTMLParser
from typing import Callable, ClassVar, Iterable, Literal, Sequence

from .rules.layouts import STANDARD_NAMES, layout_names

GAME_WORD = "abalone"
PASSWORD_MASK = "********"
MAX_USERID_LENGTH = 20
MIN_PLAYERS, MAX_PLAYERS = 2, 6
#: Words that select games in ``games``, ``show <userid>`` and ``showas``.
FILTERS = ("all", "active", "inactive", "next")
#: Words ``abalone move`` accepts instead of a move (``resign`` becomes :class:`Resign`).
MOVE_ACTIONS = ("propose", "undo", "accept", "reject", "resign")
#: What the first line of a reply to a board mail may be, besides a move.
REPLY_ACTIONS = ("resign", "propose", "undo", "accept", "reject", "show")

#: Challenge options without a value / with a whole-number value / with a name.
FLAG_OPTIONS = ("bowl", "teams", "ko", "pillar", "princess", "soccer", "thief")
NUMBER_OPTIONS = ("target", "movelimit", "nagtime", "forfeittime", "totaltime")
NAME_OPTIONS = ("layout",)
CHALLENGE_OPTIONS = FLAG_OPTIONS + NUMBER_OPTIONS + NAME_OPTIONS

_USERID_RE = re.compile(r"[a-z][a-z0-9_.\-]*")
_ADDRESS_RE = re.compile(r"[^@\s<>(),;:\"\[\]]+@[^@\s<>(),;:\"\[\]]+\.[^@\s<>(),;:\"\[\]]+")
_PREFIX_RE = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|antw|vs|tr)\s*(?:\[\d+\]|\(\d+\))?\s*:\s*)+", re.IGNORECASE
)
#: A move, compacted (no blanks) and lower case; rows a-z and 1-2 digits so that the
#: rules core can say "j1 is not a cell of the board" instead of "not a move".
_MOVE_RE = re.compile(r"[a-z]\d{1,2}(?:-[a-z]\d{1,2})?,[a-z]\d{1,2}")
_MOVE_NUMBER_RE = re.compile(r"^(?P<move>.*?)\s*#\s*(?P<n>\S*)\s*$", re.DOTALL)
#: A move inside a longer text (``preview``): blanks may appear between the parts.
_MOVE_IN_TEXT_RE = re.compile(
    r"[a-z]\s*\d{1,2}\s*(?:-\s*[a-z]\s*\d{1,2}\s*)?,\s*[a-z]\s*\d{1,2}", re.IGNORECASE
)


# --------------------------------------------------------------------------- errors
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


# ------------------------------------------------------------------------ commands
@dataclass(frozen=True)
class Command:
    """Base class of every command; ``name`` is its key in :data:`COMMANDS`."""

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
    """``text`` is the body of the mail (the message to relay), see :func:`extract_comment`."""

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
class PasswordReset(Command):
    name: ClassVar[str] = "password reset"
    userid: str


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
    filter: str | None = None  # None or one of FILTERS


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
    """``text`` is the body of the mail, see :func:`extract_comment`."""

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


# ------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class CommandSpec:
    """One command of the protocol, for parsing, masking and the help texts.

    ``name`` is the command words (``"change password"``, ``"abalone move"``);
    ``syntax`` the bare usage line; ``secret`` the positions of the password words
    counted from the first word after the command words.
    """

    name: str
    syntax: str
    summary: str
    description: str
    aliases: tuple[str, ...] = ()
    secret: tuple[int, ...] = ()

    @property
    def game(self) -> bool:
        return self.name.startswith(GAME_WORD + " ")

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split())

    @property
    def short_name(self) -> str:
        """The name without the game word (``move`` for ``abalone move``)."""
        return self.name.split(" ", 1)[1] if self.game else self.name


_SPECS = (
    # ---------------------------------------------------------------- server
    CommandSpec(
        "help",
        "help [<topic>...]",
        "get help on the server or on one command",
        "Mails you help.  Without a topic you get the list of all commands; with a "
        "command name (help signup, help move) you get how that command is written and "
        "what it does.  'help abalone' explains the game, its notation and options.",
    ),
    CommandSpec(
        "signup",
        "signup <userid> <password> [<address>...]",
        "register a userid",
        "Registers a new userid with its password.  The userid is 1 to 20 letters, "
        "digits, '_', '-' or '.', starting with a letter; it is not case-sensitive, the "
        "password is.  Mail for the userid goes to the address you write from, or to the "
        "addresses you list.  Pick a password you use nowhere else: it travels in the "
        "Subject of your mails.",
        secret=(1,),
    ),
    CommandSpec(
        "add",
        "add <userid> <password> <address>...",
        "add mail addresses to your userid",
        "Adds one or more mail addresses to your userid.  Board mails go to all of them, "
        "and you may send commands and replies from any of them.",
        secret=(1,),
    ),
    CommandSpec(
        "change password",
        "change password <userid> <old-password> <new-password>",
        "change your password",
        "Replaces your password.  Both the old and the new password are case-sensitive.",
        secret=(1, 2),
    ),
    CommandSpec(
        "change address",
        "change address <userid> <password> <address>...",
        "replace your mail addresses",
        "Replaces all the mail addresses of your userid with the ones you list.",
        secret=(1,),
    ),
    CommandSpec(
        "signoff",
        "signoff <userid> <password>",
        "stop playing for now",
        "Marks your userid as inactive: nobody can challenge you and you get no mail "
        "until you send a command again.  Your games and ratings are kept.",
        secret=(1,),
    ),
    CommandSpec(
        "delete",
        "delete <userid> <password>",
        "delete your userid",
        "Removes your userid and addresses for good.  Games you are still playing are "
        "resigned.  Finished games keep your userid in their records.",
        secret=(1,),
    ),
    CommandSpec(
        "list",
        "list",
        "list the registered userids",
        "Mails you the list of registered userids.",
    ),
    CommandSpec(
        "message",
        "message <userid> <password> <to-userid>...",
        "send a message to other players",
        "Sends the body of your mail to the players you name, signed with your userid. "
        "Their addresses are not shown to you, nor yours to them.",
        secret=(1,),
    ),
    CommandSpec(
        "broadcast",
        "broadcast <userid> <password>",
        "send a message to every player",
        "Sends the body of your mail to every registered player.  Use it sparingly: "
        "the number of broadcasts per user is limited.",
        secret=(1,),
    ),
    CommandSpec(
        "multiple",
        "multiple",
        "several commands in one mail",
        "Each line of the body is read as one full command (as you would write it in a "
        "Subject) and carried out on its own, in order; each gets its own answer.",
    ),
    CommandSpec(
        "all show",
        "all show <userid> [next|active]",
        "the boards of a player in every game",
        "Mails you the boards of all games of a player: those where it is their turn "
        "(next) or all unfinished ones (active, the default).",
    ),
    CommandSpec(
        "vacation",
        "vacation <userid> <password> on|off",
        "pause your clocks while you are away",
        "While on vacation you are neither reminded nor forfeited in any game, and "
        "nobody can challenge you.  Turn it off when you are back.",
        secret=(1,),
    ),
    CommandSpec(
        "password reset",
        "password reset <userid>",
        "forgot your password? get a one-time code",
        "Mails a one-time code to the addresses registered for the userid.  Use it with "
        "'password set' to choose a new password.  The code expires after a day.",
    ),
    CommandSpec(
        "password set",
        "password set <userid> <code> <new-password>",
        "set a new password with a one-time code",
        "Sets a new password with the code that 'password reset' mailed you.",
        secret=(1, 2),
    ),
    # ------------------------------------------------------------------ game
    CommandSpec(
        "abalone help",
        "abalone help [<topic>...]",
        "rules, notation and options of Abalone",
        "Mails you the Abalone help: the rules, how moves are written, the layouts and "
        "the challenge options.  Topics: rules, notation, layouts, variants, robots, or "
        "the name of a command.",
    ),
    CommandSpec(
        "abalone standings",
        "abalone standings",
        "wins and losses of every player",
        "Mails you the table of players with their wins, losses and draws.",
    ),
    CommandSpec(
        "abalone ratings",
        "abalone ratings",
        "the rating list",
        "Mails you the rating list.  Everybody starts at 1600; ratings stay provisional "
        "for the first 20 games.",
    ),
    CommandSpec(
        "abalone history",
        "abalone history [<userid>...]",
        "finished games",
        "Mails you the list of finished games, all of them or those of the players you "
        "name, with their results.",
    ),
    CommandSpec(
        "abalone games",
        "abalone games [<userid>...] [all|active|inactive|next]",
        "list games",
        "Lists games: all of them or those of the players you name; 'active' are the "
        "unfinished games (the default), 'inactive' the finished ones, 'next' those "
        "where the named player is to move.",
    ),
    CommandSpec(
        "abalone show",
        "abalone show <board>[#<n>]...",
        "show a board",
        "Mails you the current board of each game you list.  With #n you get the "
        "position after move n instead (show 101#0 is the starting position).  "
        "'abalone show <userid>... [all|active|inactive|next]' shows the boards of "
        "those players' games.",
    ),
    CommandSpec(
        "abalone showas",
        "abalone showas <userid> <password> [<board>...|all|active|inactive|next]",
        "show boards as a player sees them",
        "Mails you the boards of your games as you would get them after a move, with "
        "your own reply address, so that you can move by replying.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone challenge",
        "abalone challenge [-<option>...] <userid1> <userid2> [... <userid6>]",
        "start a new game",
        "Starts a game between 2 to 6 players; the first userid listed is player 1 and "
        "moves first.  No password is needed and you need not play yourself, but every "
        "player must be registered and accept challenges.  Options: -bowl, "
        "-layout=NAME, -teams (4 or 6 players), -ko, -target=N (marbles to push off), "
        "-movelimit=N, -nagtime=D, -forfeittime=D, -totaltime=D (days), and the "
        "variants -pillar, -princess, -soccer, -thief.",
    ),
    CommandSpec(
        "abalone move",
        "abalone move <board> <userid> <password> <move>",
        "make a move",
        "Plays your move on a board.  A move is written c5,d5 (one marble) or c3-c5,d4 "
        "(a line of two or three); blanks are allowed.  Add #n (c3-c5,d4#7) to make sure "
        "it is only played as move number n.  Instead of a move you may write propose "
        "(offer a draw), undo (ask to take back the last move), accept or reject (answer "
        "such a request), or resign.  Easier: reply to the board mail with your move on "
        "the first line.",
        aliases=("abalone board", "abalone mvoe"),
        secret=(2,),
    ),
    CommandSpec(
        "abalone resign",
        "abalone resign <board> <userid> <password>",
        "give up a game",
        "Resigns from a game.  Before the first round is over this withdraws you and the "
        "game goes on without you; with two players it is then removed.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone queue",
        "abalone queue <board> <userid> <password> <move>",
        "play a move in advance",
        "Stores one move that is played for you as soon as it is your turn, if it is "
        "legal then.  A new queue command replaces the stored move.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone submit",
        "abalone submit <board> <userid> <password> <move>",
        "a move that waits for confirmation",
        "Checks a move and shows you the resulting board without playing it; it is "
        "played when you send 'abalone confirm' for the same board.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone confirm",
        "abalone confirm <board> <userid> <password>",
        "play the submitted move",
        "Plays the move you sent with 'abalone submit'.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone preview",
        "abalone preview <board>[#<n>] <move>...",
        "try moves without playing them",
        "Mails you the board after the moves you list, from the current position of a "
        "board (or after move n with #n) or, with 'abalone preview new <players> "
        "<move>...', from a new game's starting position.  Nothing is played.",
    ),
    CommandSpec(
        "abalone chat",
        "abalone chat <board> <userid> <password>",
        "talk to the players of a game",
        "Sends the body of your mail to the players and observers of a game, without "
        "making a move.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone subscribe",
        "abalone subscribe <board> <userid> <password>",
        "watch a game",
        "Sends you every board of a game you do not play in.  'abalone subscribe "
        "<userid> <password> all' subscribes you to every game started from then on.",
        secret=(2,),
    ),
    CommandSpec(
        "abalone unsubscribe",
        "abalone unsubscribe <board> <userid> <password>",
        "stop watching a game",
        "Stops the board mails of a game you watch ('all' instead of the board number "
        "stops them all, as in subscribe).",
        secret=(2,),
    ),
    CommandSpec(
        "abalone notify",
        "abalone notify <userid> <password> [<board>...]",
        "the result of a game only",
        "With boards, you get only the final result of those games, not every move; "
        "without boards, it lists the games you are notified about.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone limit",
        "abalone limit <userid> <password> [<N>|accept|reject]",
        "limit how many games you play",
        "Sets the number of games you play at most at one time (further challenges are "
        "refused), or accepts or rejects all challenges; without a value it tells you "
        "the current setting.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone accept",
        "abalone accept <userid> <password>",
        "accept challenges",
        "Lets other players challenge you again.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone reject",
        "abalone reject <userid> <password>",
        "refuse challenges",
        "Refuses all challenges until you send 'abalone accept'.",
        secret=(1,),
    ),
    CommandSpec(
        "abalone seek",
        "abalone seek <userid> <password> <N>",
        "look for opponents",
        "Puts you on the list of players looking for an N-player game (2 to 6).  As soon "
        "as enough players are waiting, the game starts.",
        secret=(1,),
    ),
)

#: Every command by name (``"signup"``, ``"abalone move"``), in help order.
COMMANDS: dict[str, CommandSpec] = {spec.name: spec for spec in _SPECS}
#: Command words and aliases (``"abalone mvoe"``) to their spec.
_BY_WORDS: dict[tuple[str, ...], CommandSpec] = {}
for _spec in _SPECS:
    _BY_WORDS[_spec.words] = _spec
    for _alias in _spec.aliases:
        _BY_WORDS[tuple(_alias.split())] = _spec
del _spec, _alias
_GAME_WORDS = {words[1] for words in _BY_WORDS if words[0] == GAME_WORD}
_SERVER_FIRST = {words[0] for words in _BY_WORDS if words[0] != GAME_WORD}


def server_commands() -> list[CommandSpec]:
    return [spec for spec in _SPECS if not spec.game]


def game_commands() -> list[CommandSpec]:
    return [spec for spec in _SPECS if spec.game]


def find_command(topic: str) -> CommandSpec | None:
    """The spec a help topic names: ``move``, ``abalone move``, ``mvoe``, ``change password``."""
    words = tuple(topic.lower().split())
    if not words:
        return None
    if words in _BY_WORDS:
        return _BY_WORDS[words]
    if words[0] != GAME_WORD and (GAME_WORD, *words) in _BY_WORDS:
        return _BY_WORDS[(GAME_WORD, *words)]
    return None


def usage(name: str) -> str:
    """The bare usage line of a command by name."""
    return COMMANDS[name].syntax


def nearest_command(words: Sequence[str]) -> str:
    """The usage line of the command ``words`` (a mistyped command line) most resembles.

    Compares the first one to three words with every command name and alias, also as if
    the game word had been left out; falls back to the usage of ``help``.
    """
    lowered = [w.lower() for w in words]
    if not lowered:
        return COMMANDS["help"].syntax
    best, best_score = COMMANDS["help"], 0.0
    for key, spec in _BY_WORDS.items():
        candidates = [(" ".join(lowered[: len(key)]), " ".join(key), 0.0)]
        if key[0] == GAME_WORD and lowered[0] != GAME_WORD:
            candidates.append((" ".join(lowered[: len(key) - 1]), " ".join(key[1:]), 0.05))
        for typed, name, penalty in candidates:
            score = difflib.SequenceMatcher(None, typed, name).ratio() - penalty
            if typed.split()[:1] == name.split()[:1]:
                score += 0.1  # the first word is right; the rest decides
            if score > best_score:
                best, best_score = spec, score
    return best.syntax if best_score >= 0.6 else COMMANDS["help"].syntax


# ------------------------------------------------------------------- word helpers
def strip_subject_prefixes(subject: str) -> str:
    """The subject without any leading ``Re:``, ``Fwd:``, ``AW:`` ... and outer blanks."""
    return _PREFIX_RE.sub("", subject).strip()


def userid_problem(word: str) -> str | None:
    """Why ``word`` is not a valid userid, or None when it is one."""
    if len(word) > MAX_USERID_LENGTH:
        return f'"{word}" is not a valid userid: it is longer than {MAX_USERID_LENGTH} characters'
    if not word[:1].isascii() or not word[:1].isalpha():
        return f'"{word}" is not a valid userid: a userid must start with a letter'
    if not _USERID_RE.fullmatch(word.lower()):
        return (
            f'"{word}" is not a valid userid: a userid may only contain letters, digits, '
            '"_", "-" and "."'
        )
    return None


def is_valid_userid(word: str) -> bool:
    return userid_problem(word) is None


def looks_like_move(text: str) -> bool:
    """True when ``text`` (blanks allowed, optionally ``#n``) has the shape of a move."""
    compact = re.sub(r"\s+", "", text).lower()
    compact = re.sub(r"#\d+$", "", compact)
    return bool(_MOVE_RE.fullmatch(compact))


def _board_number(word: str) -> int | None:
    return int(word) if word.isascii() and word.isdigit() and int(word) > 0 else None


class _Args:
    """The argument words of one command, read left to right."""

    def __init__(self, spec: CommandSpec, words: Sequence[str]) -> None:
        self.spec = spec
        self.words = list(words)
        self.pos = 0

    def fail(self, message: str) -> CommandSyntaxError:
        return CommandSyntaxError(message, self.spec.syntax)

    @property
    def left(self) -> int:
        return len(self.words) - self.pos

    def peek(self) -> str | None:
        return self.words[self.pos] if self.pos < len(self.words) else None

    def take(self, what: str) -> str:
        if self.pos >= len(self.words):
            raise self.fail(f'Too few words: "{self.spec.name}" needs {what}')
        word = self.words[self.pos]
        self.pos += 1
        return word

    def userid(self, what: str = "a userid") -> str:
        word = self.take(what)
        problem = userid_problem(word)
        if problem:
            raise self.fail(problem)
        return word.lower()

    def password(self, what: str = "a password") -> str:
        return self.take(what)

    def board(self) -> int:
        word = self.take("a board number")
        number = _board_number(word)
        if number is None:
            raise self.fail(f'"{word}" is not a board number (board numbers look like 101)')
        return number

    def rest(self) -> list[str]:
        words = self.words[self.pos :]
        self.pos = len(self.words)
        return words

    def done(self) -> None:
        if self.pos < len(self.words):
            extra = " ".join(self.words[self.pos :])
            raise self.fail(f'Too many words for "{self.spec.name}": {extra}')


def _board_and_ply(args: _Args, word: str) -> tuple[int, int | None]:
    text, _, ply_text = word.partition("#")
    number = _board_number(text)
    if number is None:
        raise args.fail(f'"{word}" is not a board number (board numbers look like 101)')
    if "#" not in word:
        return number, None
    if not ply_text.isascii() or not ply_text.isdigit():
        raise args.fail(f'"#{ply_text}" is not a move number (write {number}#5)')
    return number, int(ply_text)


def _addresses(args: _Args, *, required: bool) -> tuple[str, ...]:
    words = args.rest()
    if required and not words:
        raise args.fail(f'Too few words: "{args.spec.name}" needs at least one mail address')
    out = []
    for word in words:
        address = word.strip("<>,;")
        if not _ADDRESS_RE.fullmatch(address):
            raise args.fail(f'"{word}" is not a mail address')
        out.append(address)
    return tuple(out)


def _userids(args: _Args, words: Iterable[str]) -> tuple[str, ...]:
    out = []
    for word in words:
        problem = userid_problem(word)
        if problem:
            raise args.fail(problem)
        out.append(word.lower())
    return tuple(out)


def _split_filter(words: list[str], allowed: Sequence[str]) -> tuple[list[str], str | None]:
    if words and words[-1].lower() in allowed:
        return words[:-1], words[-1].lower()
    return words, None


def _move_text(args: _Args, words: list[str]) -> tuple[str, int | None]:
    """The move of move/queue/submit: blanks inside allowed, an optional ``#n``."""
    text = " ".join(words).strip()
    if not text:
        raise args.fail(f'Too few words: "{args.spec.name}" needs a move')
    expected = None
    match = _MOVE_NUMBER_RE.match(text)
    if match:
        number = match.group("n")
        if not number.isascii() or not number.isdigit() or int(number) < 1:
            raise args.fail(f'"#{number}" is not a move number; write the move as c3-c5,d4#7')
        text, expected = match.group("move").strip(), int(number)
        if not text:
            raise args.fail(f'Too few words: "{args.spec.name}" needs a move before #{number}')
    compact = re.sub(r"\s+", "", text).lower()
    if _MOVE_RE.fullmatch(compact) or compact in MOVE_ACTIONS:
        return compact, expected
    return text, expected


def _moves_list(args: _Args, words: list[str]) -> tuple[str, ...]:
    text = " ".join(words)
    moves, last = [], 0
    for match in _MOVE_IN_TEXT_RE.finditer(text):
        between = text[last : match.start()]
        if between.strip(" \t;"):
            raise args.fail(f'"{between.strip()}" is not a move (write moves as c3-c5,d4)')
        moves.append(re.sub(r"\s+", "", match.group()).lower())
        last = match.end()
    tail = text[last:]
    if tail.strip(" \t;"):
        raise args.fail(f'"{tail.strip()}" is not a move (write moves as c3-c5,d4)')
    return tuple(moves)


# ------------------------------------------------------------- command handlers
def _help(args: _Args, body: str) -> Command:
    return Help(tuple(w.lower() for w in args.rest()))


def _signup(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    return Signup(userid, password, _addresses(args, required=False))


def _add(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    return AddAddress(userid, password, _addresses(args, required=True))


def _change_password(args: _Args, body: str) -> Command:
    userid = args.userid()
    old = args.password("the old password")
    new = args.password("the new password")
    args.done()
    return ChangePassword(userid, old, new)


def _change_address(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    return ChangeAddress(userid, password, _addresses(args, required=True))


def _userid_password(cls: Callable[[str, str], Command]) -> Callable[[_Args, str], Command]:
    def handler(args: _Args, body: str) -> Command:
        userid = args.userid()
        password = args.password()
        args.done()
        return cls(userid, password)

    return handler


def _list(args: _Args, body: str) -> Command:
    args.done()
    return List()


def _message(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    to = _userids(args, args.rest())
    if not to:
        raise args.fail('Too few words: "message" needs the userids to send the message to')
    return Message(userid, password, to, extract_comment(body))


def _broadcast(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    args.done()
    return Broadcast(userid, password, extract_comment(body))


def _multiple(args: _Args, body: str) -> Command:
    args.done()
    return Multiple(tuple(multiple_lines(body)))


def _all_show(args: _Args, body: str) -> Command:
    userid = args.userid()
    word = args.peek()
    selection = None
    if word is not None:
        if word.lower() not in ("next", "active"):
            raise args.fail(f'"{word}" is neither "next" nor "active"')
        selection = args.take("").lower()
    args.done()
    return AllShow(userid, selection)


def _vacation(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    word = args.take('"on" or "off"')
    if word.lower() not in ("on", "off"):
        raise args.fail(f'"{word}" is neither "on" nor "off"')
    args.done()
    return Vacation(userid, password, word.lower() == "on")


def _password_reset(args: _Args, body: str) -> Command:
    userid = args.userid()
    args.done()
    return PasswordReset(userid)


def _password_set(args: _Args, body: str) -> Command:
    userid = args.userid()
    code = args.password("the code that was mailed to you")
    new = args.password("the new password")
    args.done()
    return PasswordSet(userid, code, new)


def _game_help(args: _Args, body: str) -> Command:
    return GameHelp(tuple(w.lower() for w in args.rest()))


def _no_args(cls: Callable[[], Command]) -> Callable[[_Args, str], Command]:
    def handler(args: _Args, body: str) -> Command:
        args.done()
        return cls()

    return handler


def _history(args: _Args, body: str) -> Command:
    return History(_userids(args, args.rest()))


def _games(args: _Args, body: str) -> Command:
    words, selection = _split_filter(args.rest(), FILTERS)
    return Games(_userids(args, words), selection)


def _show(args: _Args, body: str) -> Command:
    words = args.rest()
    if words and words[0].lower() == "board":
        words = words[1:]
    if not words:
        raise args.fail('Too few words: "abalone show" needs a board number or a userid')
    if words[0][:1].isdigit():
        return ShowBoards(tuple(ShowBoard(*_board_and_ply(args, w)) for w in words))
    userids, selection = _split_filter(words, FILTERS)
    if not userids:
        raise args.fail('Too few words: "abalone show" needs a board number or a userid')
    for word in userids:
        if word[:1].isdigit():
            raise args.fail("Show either boards or userids, not both in one command")
    return ShowUser(_userids(args, userids), selection)


def _showas(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    words, selection = _split_filter(args.rest(), FILTERS)
    boards = []
    for word in words:
        number = _board_number(word)
        if number is None:
            raise args.fail(
                f'"{word}" is not a board number nor one of {", ".join(FILTERS)}'
            )
        boards.append(number)
    if boards and selection:
        raise args.fail(f'Give board numbers or "{selection}", not both')
    return ShowAs(userid, password, tuple(boards), selection)


def _challenge(args: _Args, body: str) -> Command:
    options: dict[str, str | bool] = {}
    userids = []
    for word in args.rest():
        if word.startswith("-"):
            key, value = _challenge_option(args, word)
            options[key] = value
        else:
            problem = userid_problem(word)
            if problem:
                raise args.fail(problem)
            userids.append(word.lower())
    if not MIN_PLAYERS <= len(userids) <= MAX_PLAYERS:
        count = "no userid" if not userids else (
            "one userid" if len(userids) == 1 else f"{len(userids)} userids"
        )
        raise args.fail(f"A challenge names {MIN_PLAYERS} to {MAX_PLAYERS} players, not {count}")
    if options.get("bowl") and options.get("layout") not in (None, "bowl"):
        raise args.fail("-bowl and -layout cannot be used together")
    return Challenge(tuple(userids), options)


def _challenge_option(args: _Args, word: str) -> tuple[str, str | bool]:
    name, has_value, value = word.lstrip("-").partition("=")
    key = name.lower()
    if key not in CHALLENGE_OPTIONS:
        close = difflib.get_close_matches(key, CHALLENGE_OPTIONS, n=1, cutoff=0.7)
        hint = f' (did you mean -{close[0]}?)' if close else ""
        raise args.fail(f'Unknown challenge option "{word}"{hint}')
    if key in FLAG_OPTIONS:
        if has_value:
            raise args.fail(f"-{key} takes no value")
        return key, True
    if not value:
        example = "belgian-daisy" if key == "layout" else "5"
        raise args.fail(f"-{key} needs a value, e.g. -{key}={example}")
    if key in NUMBER_OPTIONS:
        if not value.isascii() or not value.isdigit() or int(value) < 1:
            raise args.fail(f'-{key} needs a positive whole number, not "{value}"')
        return key, str(int(value))
    name = value.strip().lower().replace("_", "-")
    if name not in layout_names() and name not in STANDARD_NAMES:
        raise args.fail(
            f'Unknown layout "{value}"; the layouts are {", ".join(layout_names())}'
        )
    return key, name


def _board_move(cls: type[Move] | type[Queue] | type[Submit]) -> Callable[[_Args, str], Command]:
    def handler(args: _Args, body: str) -> Command:
        board = args.board()
        userid = args.userid()
        password = args.password()
        text, expected = _move_text(args, args.rest())
        if cls is Move and text in MOVE_ACTIONS:
            if expected is not None:
                raise args.fail(f'"{text}" takes no move number')
            if text == "resign":
                return Resign(board, userid, password)
            return MoveAction(board, userid, password, text)
        return cls(board, userid, password, text, expected)

    return handler


def _board_user_password(
    cls: type[Resign] | type[Confirm],
) -> Callable[[_Args, str], Command]:
    def handler(args: _Args, body: str) -> Command:
        board = args.board()
        userid = args.userid()
        password = args.password()
        args.done()
        return cls(board, userid, password)

    return handler


def _preview(args: _Args, body: str) -> Command:
    first = args.take("a board number or new")
    if first.lower() == "new":
        word = args.take("the number of players")
        if not word.isdigit() or not MIN_PLAYERS <= int(word) <= MAX_PLAYERS:
            raise args.fail(f'"{word}" is not a number of players from 2 to 6')
        return Preview(None, None, int(word), _moves_list(args, args.rest()))
    board, ply = _board_and_ply(args, first)
    return Preview(board, ply, None, _moves_list(args, args.rest()))


def _chat(args: _Args, body: str) -> Command:
    board = args.board()
    userid = args.userid()
    password = args.password()
    args.done()
    return Chat(board, userid, password, extract_comment(body))


def _subscribe(cls: type[Subscribe] | type[Unsubscribe]) -> Callable[[_Args, str], Command]:
    def handler(args: _Args, body: str) -> Command:
        first = args.peek()
        if first is not None and not first[:1].isdigit():
            userid = args.userid()
            password = args.password()
            word = args.take('a board number, or "all" after the password')
            if word.lower() != "all":
                raise args.fail(f'"{word}" is not "all"; write the board number first')
            args.done()
            return cls("all", userid, password)
        board = args.board()
        userid = args.userid()
        password = args.password()
        args.done()
        return cls(board, userid, password)

    return handler


def _notify(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    boards = []
    for word in args.rest():
        number = _board_number(word)
        if number is None:
            raise args.fail(f'"{word}" is not a board number (board numbers look like 101)')
        boards.append(number)
    return Notify(userid, password, tuple(boards))


def _limit(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    word = args.peek()
    value: int | str | None = None
    if word is not None:
        args.take("")
        if word.isascii() and word.isdigit():
            value = int(word)
        elif word.lower() in ("accept", "reject"):
            value = word.lower()
        else:
            raise args.fail(f'"{word}" is not a number of games, "accept" or "reject"')
    args.done()
    return Limit(userid, password, value)


def _seek(args: _Args, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    word = args.take("the number of players")
    if not word.isdigit() or not MIN_PLAYERS <= int(word) <= MAX_PLAYERS:
        raise args.fail(f'"{word}" is not a number of players from 2 to 6')
    args.done()
    return Seek(userid, password, int(word))


_HANDLERS: dict[str, Callable[[_Args, str], Command]] = {
    "help": _help,
    "signup": _signup,
    "add": _add,
    "change password": _change_password,
    "change address": _change_address,
    "signoff": _userid_password(Signoff),
    "delete": _userid_password(Delete),
    "list": _list,
    "message": _message,
    "broadcast": _broadcast,
    "multiple": _multiple,
    "all show": _all_show,
    "vacation": _vacation,
    "password reset": _password_reset,
    "password set": _password_set,
    "abalone help": _game_help,
    "abalone standings": _no_args(Standings),
    "abalone ratings": _no_args(Ratings),
    "abalone history": _history,
    "abalone games": _games,
    "abalone show": _show,
    "abalone showas": _showas,
    "abalone challenge": _challenge,
    "abalone move": _board_move(Move),
    "abalone resign": _board_user_password(Resign),
    "abalone queue": _board_move(Queue),
    "abalone submit": _board_move(Submit),
    "abalone confirm": _board_user_password(Confirm),
    "abalone preview": _preview,
    "abalone chat": _chat,
    "abalone subscribe": _subscribe(Subscribe),
    "abalone unsubscribe": _subscribe(Unsubscribe),
    "abalone notify": _notify,
    "abalone limit": _limit,
    "abalone accept": _userid_password(AcceptChallenge),
    "abalone reject": _userid_password(RejectChallenge),
    "abalone seek": _seek,
}
assert set(_HANDLERS) == set(COMMANDS)


def _match_spec(lowered: Sequence[str]) -> CommandSpec | None:
    for length in (3, 2, 1):
        if len(lowered) >= length and tuple(lowered[:length]) in _BY_WORDS:
            return _BY_WORDS[tuple(lowered[:length])]
    return None


def _matched_length(spec: CommandSpec, lowered: Sequence[str]) -> int:
    for words in (spec.words, *(tuple(a.split()) for a in spec.aliases)):
        if tuple(lowered[: len(words)]) == words:
            return len(words)
    return len(spec.words)


def parse_command(subject: str, body: str = "") -> Command:
    """Read the command in a mail's Subject.

    ``body`` is only read by the commands whose body is their payload (``multiple``,
    ``message``, ``broadcast``, ``abalone chat``); for every other command the body is a
    comment, see :func:`extract_comment`.  Raises :class:`CommandSyntaxError`.
    """
    line = strip_subject_prefixes(subject)
    words = line.split()
    if not words:
        raise CommandSyntaxError(
            "The Subject of your mail holds no command", COMMANDS["help"].syntax
        )
    lowered = [w.lower() for w in words]
    spec = _match_spec(lowered)
    if spec is None:
        raise _unknown(words, lowered)
    start = _matched_length(spec, lowered)
    return _HANDLERS[spec.name](_Args(spec, words[start:]), body)


def _unknown(words: Sequence[str], lowered: Sequence[str]) -> CommandSyntaxError:
    first = lowered[0]
    if first == GAME_WORD:
        if len(lowered) == 1:
            return CommandSyntaxError(
                'The word "abalone" must be followed by a command', COMMANDS["abalone help"].syntax
            )
        return CommandSyntaxError(
            f'Unknown command "abalone {words[1]}"', nearest_command(words)
        )
    if first in _GAME_WORDS and first not in _SERVER_FIRST:
        spec = _BY_WORDS[(GAME_WORD, first)]
        return CommandSyntaxError(
            # The words may hold a password: echo them masked.
            "Game commands begin with the word \"abalone\": "
            + mask_passwords(f'abalone {" ".join(words)}'),
            spec.syntax,
        )
    if first in _SERVER_FIRST:  # change/password/all with a wrong second word
        group = [spec for key, spec in _BY_WORDS.items() if key[0] == first]
        second = lowered[1] if len(lowered) > 1 else ""
        names = [spec.words[1] for spec in group]
        close = difflib.get_close_matches(second, names, n=1, cutoff=0.5) if second else []
        chosen = group[names.index(close[0])] if close else group[0]
        what = f'"{first} {words[1]}"' if len(words) > 1 else f'"{first}"'
        options = " or ".join(f'"{spec.name}"' for spec in group)
        return CommandSyntaxError(f"Unknown command {what}; did you mean {options}?", chosen.syntax)
    return CommandSyntaxError(f'Unknown command "{words[0]}"', nearest_command(words))


# ------------------------------------------------------------------------ bodies
_SIGNATURE_RE = re.compile(r"^(?:-- ?|--)$")
_ORIGINAL_RE = re.compile(
    r"^\s*(?:-{2,}\s*(?:original message|ursprüngliche nachricht|forwarded message)\s*-{2,}"
    r"|_{10,})\s*$",
    re.IGNORECASE,
)
_ATTRIBUTION_START_RE = re.compile(
    r"^\s*(?:on|am|le|el|op|il|em|den|dne|w dniu)\s", re.IGNORECASE
)
_ATTRIBUTION_END_RE = re.compile(
    r"(?:wrote|writes|schrieb|a écrit|escribió|schreef|ha scritto|escreveu|skrev|napisał)"
    r"\s*:\s*$",
    re.IGNORECASE,
)


_HEADER_START_RE = re.compile(r"^\s*\*?(?:from|von|de|van|från)\s*:\*?\s", re.IGNORECASE)
_HEADER_NEXT_RE = re.compile(
    r"^\s*\*?(?:sent|date|to|subject|gesendet|datum|an|betreff|envoyé|à|objet|cc)\s*:",
    re.IGNORECASE,
)
#: Lines phones and webmailers add under a text; dropped from the end of a comment.
_GADGET_RE = re.compile(
    r"^\s*(?:sent from my .*|sent from .* for (?:ios|android)|get outlook for .*"
    r"|von meinem .* gesendet\.?|envoyé de mon .*)\s*$",
    re.IGNORECASE,
)


def _is_header_block(lines: Sequence[str], index: int) -> bool:
    """An Outlook-style copy of the old mail: "From: ..." then "Sent:"/"To:"/"Subject:"."""
    if not _HEADER_START_RE.match(lines[index]):
        return False
    return any(_HEADER_NEXT_RE.match(line) for line in lines[index + 1 : index + 5])


def _is_quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _is_end(line: str) -> bool:
    """The signature separator or an "Original Message" line: nothing after it counts."""
    return bool(_SIGNATURE_RE.match(line.rstrip("\r\n")) or _ORIGINAL_RE.match(line))


def _next_content(lines: Sequence[str], index: int) -> int | None:
    for j in range(index, len(lines)):
        if lines[j].strip():
            return j
    return None


def _attribution_length(lines: Sequence[str], index: int) -> int:
    """How many lines from ``index`` form an "On ... wrote:" line before a quote (0 if none).

    One line ending with ":" that quoted lines follow (or that ends with "wrote:" and
    only the end of the mail follows), or two such lines that a mail reader wrapped:
    "On Mon, ... Fred <" / "fred@example.org> wrote:".
    """
    for length in (1, 2):
        chunk = lines[index : index + length]
        if len(chunk) < length or any(not line.strip() for line in chunk):
            return 0
        last = chunk[-1].rstrip()
        if not last.endswith(":"):
            continue
        if length == 2 and not _ATTRIBUTION_START_RE.match(chunk[0]):
            continue
        after = _next_content(lines, index + length)
        if after is not None and _is_quoted(lines[after]):
            return length
        if _ATTRIBUTION_END_RE.search(last) and (after is None or _is_end(lines[after])):
            return length
    return 0


def _split_lines(body: str) -> list[str]:
    return body.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _first_content(lines: Sequence[str]) -> int | None:
    """Index of the first line that is not blank, quoted or an attribution, before the
    signature; None if there is none."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_end(line):
            return None
        if not line.strip() or _is_quoted(line):
            i += 1
            continue
        skip = _attribution_length(lines, i)
        if skip:
            i += skip
            continue
        return i
    return None


def _comment_from(lines: Sequence[str], start: int) -> str:
    """Lines from ``start`` up to the next quoted part, the signature or the old mail."""
    out: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if _is_end(line) or _is_quoted(line) or _is_header_block(lines, i):
            break
        if _attribution_length(lines, i):
            break
        out.append(line.rstrip())
        i += 1
    while out and (not out[-1].strip() or _GADGET_RE.match(out[-1])):
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return "\n".join(out)


def extract_comment(body: str) -> str:
    """The comment in the body of a command mail.

    The first block of text that is not quoted (``>``), up to the next quoted part, an
    "On ... wrote:" line, the signature (``-- ``), an "Original Message" line or an
    Outlook-style "From:/Sent:/To:" copy of the old mail; blank lines around it and a
    final "Sent from my phone" line removed.  Empty when there is none.
    """
    lines = _split_lines(body)
    start = _first_content(lines)
    return "" if start is None else _comment_from(lines, start)


def multiple_lines(body: str) -> list[str]:
    """The command lines of a ``multiple`` body: non-blank, not quoted, not an
    "On ... wrote:" line, before the signature; blanks around them removed."""
    lines = _split_lines(body)
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_end(line) or _is_header_block(lines, i):
            break
        skip = _attribution_length(lines, i) if line.strip() else 0
        if skip:
            i += skip
            continue
        if line.strip() and not _is_quoted(line):
            out.append(line.strip())
        i += 1
    return out


# ------------------------------------------------------------------ moving by reply
@dataclass(frozen=True)
class ReplyAction:
    """What a reply to a board mail asks for.

    ``action`` is ``"move"`` (then ``move_text`` is the move, lower case and without
    blanks, and ``expected_ply`` the ``#n`` if given) or one of :data:`REPLY_ACTIONS`.
    ``comment`` is the text after the first line, up to the quoted part or signature.
    """

    action: str
    move_text: str | None = None
    expected_ply: int | None = None
    comment: str = ""


def first_reply_line(body: str) -> str | None:
    """The line of a reply that :func:`parse_reply_body` reads (stripped), or None."""
    lines = _split_lines(body)
    index = _first_content(lines)
    return None if index is None else lines[index].strip()


def parse_reply_body(body: str) -> ReplyAction | None:
    """Read a reply to a board mail (DESIGN 2.2).

    The first non-blank line that is neither quoted (``>``) nor an "On ... wrote:" line
    before a quote must be a move (``c3-c5,d4``, blanks allowed, optionally ``#n``) or
    one of resign, propose, undo, accept, reject, show (any case, a trailing ``.`` or
    ``!`` allowed); otherwise None.  Nothing after the signature is read.
    """
    lines = _split_lines(body)
    index = _first_content(lines)
    if index is None:
        return None
    text = lines[index].strip()
    comment = _comment_from(lines, index + 1)
    word = text.rstrip(".!").strip().lower()
    if word in REPLY_ACTIONS:
        return ReplyAction(word, None, None, comment)
    compact = re.sub(r"\s+", "", text).lower().rstrip(".")
    expected = None
    match = re.fullmatch(r"(.*)#(\d+)", compact)
    if match:
        compact, expected = match.group(1), int(match.group(2))
    if not _MOVE_RE.fullmatch(compact):
        return None
    return ReplyAction("move", compact, expected, comment)


_TOKEN_RE = re.compile(r"[a-z0-9]{4,64}")


def reply_local_part(base: str, board: int, token: str) -> str:
    """``abalone+101.k3x9q7mf2a``: the local part of a player's reply address."""
    return f"{base}+{board}.{token}"


def parse_reply_address(local_part: str, base: str = GAME_WORD) -> tuple[int, str] | None:
    """``(board, token)`` from a reply address's local part (``abalone+101.k3x9q7mf2a``).

    ``base`` is the server address's local part (``abalone``); a whole address
    (``...@host``) is accepted too.  Comparison is case-insensitive and the token comes
    back in lower case (some mail systems change the case of local parts), so tokens
    must be made of lower-case letters and digits (4 to 64 of them).  None if the
    address is not a reply address.
    """
    local = local_part.strip().strip("<>")
    if "@" in local:
        local = local.rsplit("@", 1)[0]
    local = local.lower()
    prefix = base.lower() + "+"
    if not local.startswith(prefix):
        return None
    number, dot, token = local[len(prefix) :].partition(".")
    if not dot or not number.isascii() or not number.isdigit() or not _TOKEN_RE.fullmatch(token):
        return None
    return int(number), token


# ------------------------------------------------------------------------ masking
_SUBJECT_LABEL_RE = re.compile(r"subject\s*:\s*", re.IGNORECASE)
_BOARD_SECRET_COMMANDS = {
    name for name, spec in COMMANDS.items() if spec.syntax.split()[2:3] == ["<board>"]
}
_MOVE_COMMANDS = {"abalone move", "abalone queue", "abalone submit"}


def _recognise(words: list[str]) -> tuple[CommandSpec, int] | None:
    """The command a line of words begins with, also when slightly misspelt or when the
    game word is missing before a board command; (spec, number of command words)."""
    lowered = [w.lower() for w in words]
    if not lowered:
        return None
    spec = _match_spec(lowered)
    if spec is not None:
        return spec, _matched_length(spec, lowered)
    first = lowered[0]
    game_first = first == GAME_WORD or bool(
        len(first) >= 5 and difflib.get_close_matches(first, [GAME_WORD], n=1, cutoff=0.75)
    )
    if game_first and len(lowered) > 1:
        close = difflib.get_close_matches(lowered[1], sorted(_GAME_WORDS), n=1, cutoff=0.75)
        if close:
            return _BY_WORDS[(GAME_WORD, close[0])], 2
        return None
    if first in _GAME_WORDS:
        spec = _BY_WORDS[(GAME_WORD, first)]
        if spec.name in _BOARD_SECRET_COMMANDS and len(lowered) > 1 and lowered[1][:1].isdigit():
            return spec, 1
        return None
    if len(first) >= 5:
        names = sorted(w for w in _SERVER_FIRST if len(w) >= 5)
        close = difflib.get_close_matches(first, names, n=1, cutoff=0.8)
        if close:
            key = (close[0],)
            if key in _BY_WORDS:
                return _BY_WORDS[key], 1
    return None


def _secret_positions(spec: CommandSpec, args: list[str]) -> list[int]:
    """Positions (in ``args``) of the password words of one command line."""
    if not spec.secret:
        return []
    positions = list(spec.secret)
    if spec.name in ("abalone subscribe", "abalone unsubscribe"):
        positions = [2] if args[:1] and args[0][:1].isdigit() else [1]
    elif spec.name in _BOARD_SECRET_COMMANDS:
        if args and not args[0][:1].isdigit():
            positions = [1]  # the board number is missing: "move fred secret c3-c5,d4"
        pos = positions[0]
        if (
            spec.name in _MOVE_COMMANDS
            and pos < len(args)
            and pos > 0
            and (looks_like_move(" ".join(args[pos:])) or args[pos].lower() in MOVE_ACTIONS)
            and (pos - 1 > 0 or not args[0][:1].isdigit())
        ):
            positions = [pos - 1]  # a word is missing before the move: mask the one before
    return [p for p in positions if p < len(args)]


def _mask_line(line: str) -> str:
    # Where the command may begin: after quote marks, "Subject:" and Re:/Fwd: prefixes.
    start = 0
    while True:
        before = start
        while start < len(line) and (line[start] in " \t>"):
            start += 1
        label = _SUBJECT_LABEL_RE.match(line, start)
        if label:
            start = label.end()
        prefix = _PREFIX_RE.match(line[start:])
        if prefix and prefix.end():
            start += prefix.end()
        if start == before:
            break
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", line[start:])]
    spans = [(a + start, b + start) for a, b in spans]
    words = [line[a:b] for a, b in spans]
    found = _recognise(words)
    if found is None:
        return line
    spec, used = found
    positions = _secret_positions(spec, words[used:])
    out = line
    for pos in sorted(positions, reverse=True):
        a, b = spans[used + pos]
        out = out[:a] + PASSWORD_MASK + out[b:]
    return out


def mask_passwords(text: str) -> str:
    """``text`` (a Subject, a body, or both) with every password replaced by ``********``.

    Every line that begins with a recognisable command is masked at that command's
    password positions (both passwords of ``change password``, the code and the new
    password of ``password set``), whether or not the line is otherwise correct, and
    also behind quote marks, ``Subject:`` and ``Re:``.  So the lines of a ``multiple``
    body are masked as well.  Line ends are kept.
    """
    return "".join(_mask_line_keep_end(line) for line in text.splitlines(keepends=True))


def _mask_line_keep_end(line: str) -> str:
    body = line.rstrip("\r\n")
    return _mask_line(body) + line[len(body) :]


def quote_original(subject: str, body: str, *, max_lines: int = 200) -> str:
    """The original mail quoted with ``> `` and passwords masked, for an answer.

    The first line quotes the Subject (``> Subject: ...``), then the body follows after
    a quoted blank line.  Blank lines become a bare ``>``; bodies longer than
    ``max_lines`` lines are cut with a note.
    """
    lines = [f"Subject: {subject.strip()}"]
    body_lines = body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    if any(l.strip() for l in body_lines):
        lines.append("")
        cut = len(body_lines) - max_lines
        lines.extend(body_lines[:max_lines])
        if cut > 0:
            lines.append(f"[... {cut} more line{'s' if cut != 1 else ''} not quoted]")
    masked = [mask_passwords(line) for line in lines]
    return "\n".join(f"> {line}".rstrip() if line.strip() else ">" for line in masked)


# ----------------------------------------------------------------- mail bodies
class _HTMLText(HTMLParser):
    """A crude HTML-to-text converter: blocks become lines, blockquotes ``>`` quotes."""

    _BLOCK = {
        "p", "div", "br", "tr", "li", "ul", "ol", "table", "h1", "h2", "h3", "h4", "h5",
        "h6", "pre", "hr", "blockquote", "section", "article", "header", "footer",
    }
    _SKIP = {"script", "style", "head", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[tuple[int, str]] = []
        self.current: list[str] = []
        self.depth = 0
        self.skip = 0
        self.pre = 0

    def _flush(self) -> None:
        text = "".join(self.current)
        if not self.pre:
            text = re.sub(r"[ \t\r\n\f\v]+", " ", text).strip()
        for part in text.split("\n"):
            self.lines.append((self.depth, part.rstrip()))
        self.current = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self.skip += 1
        elif tag == "br":
            self._flush()
        elif tag in self._BLOCK:
            if self.current:
                self._flush()
            if tag == "blockquote":
                self.depth += 1
            elif tag == "pre":
                self.pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in self._BLOCK:
            if self.current:
                self._flush()
            if tag == "blockquote":
                self.depth = max(0, self.depth - 1)
            elif tag == "pre":
                self.pre = max(0, self.pre - 1)
            if tag in ("p", "div", "blockquote", "table", "pre"):
                self.lines.append((self.depth, ""))

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.current.append(data.replace("\xa0", " "))

    def text(self) -> str:
        if self.current:
            self._flush()
        out: list[str] = []
        for depth, line in self.lines:
            text = ("> " * depth + line).rstrip() if depth else line
            if not text and out and not out[-1]:
                continue
            out.append(text)
        return "\n".join(out).strip("\n") + "\n"


def html_to_text(markup: str) -> str:
    """Crude HTML to plain text: block elements end lines, ``<blockquote>`` becomes
    ``>`` quoting (so quoted HTML is never read as a command), entities decoded."""
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    return parser.text()


def _decode_part(part: email.message.Message) -> str:
    payload = part.get_payload(decode=True)
    if payload is None:
        raw = part.get_payload()
        text = raw if isinstance(raw, str) else ""
    else:
        assert isinstance(payload, bytes)
        charset = part.get_content_charset() or "utf-8"
        try:
            codecs.lookup(charset)
        except LookupError:
            charset = "utf-8"
        try:
            text = payload.decode(charset)
        except UnicodeDecodeError:
            text = payload.decode("latin-1" if charset.lower() in ("utf-8", "us-ascii", "ascii")
                                  else charset, errors="replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if (part.get_param("format") or "").lower() == "flowed":  # type: ignore[union-attr]
        delsp = (part.get_param("delsp") or "").lower() == "yes"  # type: ignore[union-attr]
        text = _unflow(text, delsp)
    return text


def _unflow(text: str, delsp: bool) -> str:
    """Undo format=flowed (RFC 3676): join soft line breaks, remove space-stuffing."""
    out: list[str] = []
    pending: str | None = None
    pending_depth = -1
    for raw in text.split("\n"):
        depth = len(raw) - len(raw.lstrip(">"))
        content = raw[depth:]
        if content.startswith(" "):
            content = content[1:]
        is_signature = content == "-- "
        soft = content.endswith(" ") and not is_signature
        if pending is not None and depth == pending_depth:
            content = pending + content
        elif pending is not None:
            out.append(">" * pending_depth + (" " if pending_depth else "") + pending)
        pending = None
        if soft:
            pending, pending_depth = (content[:-1] if delsp else content), depth
            continue
        out.append(">" * depth + (" " if depth and content else "") + content)
    if pending is not None:
        out.append(">" * pending_depth + (" " if pending_depth else "") + pending)
    return "\n".join(out)


def extract_body_text(msg: email.message.Message) -> str:
    """The text of a mail: its first text/plain part that is not an attachment, decoded;
    when there is only HTML, that converted with :func:`html_to_text`; else ``""``.

    Works with ``email.message.EmailMessage`` and the older ``Message``; line ends come
    back as ``\\n``; ``format=flowed`` is undone.
    """
    plain: str | None = None
    markup: str | None = None
    for part in msg.walk():
        if part.is_multipart():
            continue
        if part.get_content_disposition() == "attachment":
            continue
        ctype = part.get_content_type()
        if ctype == "text/plain" and plain is None:
            plain = _decode_part(part)
        elif ctype == "text/html" and markup is None:
            markup = _decode_part(part)
    if plain is not None:
        return plain
    if markup is not None:
        return html_to_text(markup)
    return ""


__all__ = [
    "AcceptChallenge",
    "AddAddress",
    "AllShow",
    "Broadcast",
    "COMMANDS",
    "Challenge",
    "ChangeAddress",
    "ChangePassword",
    "Chat",
    "Command",
    "CommandSpec",
    "CommandSyntaxError",
    "Confirm",
    "Delete",
    "GameHelp",
    "Games",
    "Help",
    "History",
    "Limit",
    "List",
    "Message",
    "Move",
    "MoveAction",
    "Multiple",
    "Notify",
    "PASSWORD_MASK",
    "PasswordReset",
    "PasswordSet",
    "Preview",
    "Queue",
    "Ratings",
    "RejectChallenge",
    "ReplyAction",
    "Resign",
    "Seek",
    "ShowAs",
    "ShowBoard",
    "ShowBoards",
    "ShowUser",
    "Signoff",
    "Signup",
    "Standings",
    "Submit",
    "Subscribe",
    "Unsubscribe",
    "Vacation",
    "extract_body_text",
    "extract_comment",
    "find_command",
    "first_reply_line",
    "game_commands",
    "html_to_text",
    "is_valid_userid",
    "looks_like_move",
    "mask_passwords",
    "multiple_lines",
    "nearest_command",
    "parse_command",
    "parse_reply_address",
    "parse_reply_body",
    "quote_original",
    "reply_local_part",
    "server_commands",
    "strip_subject_prefixes",
    "usage",
    "userid_problem",
]
