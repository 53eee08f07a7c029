"""The command grammar: :func:`parse_command` turns a mail's Subject into a command.

A command is the Subject of a mail: words separated by blanks; command words and userids
are case-insensitive (userids come out in lower case), passwords are case-sensitive.
Any number of leading ``Re:``/``Fwd:``/``Fw:``/``AW:``/``WG:`` (also ``SV:``, ``Antw:``,
``Re[2]:``) are ignored; so is a head of the prefixes and tags other mail programs and
systems put first (``Odp:``, ``Vá:``, ``回复：``, ``[EXTERNAL]``, ``*SPAM*``), where a
command follows it and the line names none as it stands (:func:`command_line`).  Game
commands begin with the game word ``abalone``.  The
result is one of the dataclasses of :mod:`.commands`; a line that cannot be read raises
:class:`~.commands.CommandSyntaxError` with the usage line of the nearest command.
The body is only read by the commands whose body is their payload.
"""

from __future__ import annotations

import difflib
from typing import Callable, Sequence

from ..rules.layouts import STANDARD_NAMES, layout_names
from .arguments import ArgumentReader, split_filter
from .commands import (
    AcceptChallenge,
    AddAddress,
    AllShow,
    Analyze,
    Broadcast,
    Challenge,
    ChangeAddress,
    ChangePassword,
    Chat,
    Command,
    CommandSyntaxError,
    Confirm,
    ConfirmAddress,
    Delete,
    Digest,
    Format,
    GameHelp,
    Games,
    Help,
    History,
    Limit,
    List,
    Message,
    Move,
    MoveAction,
    Multiple,
    Notify,
    PasswordReset,
    PasswordSet,
    Preview,
    Queue,
    Ratings,
    RejectChallenge,
    Resign,
    Seek,
    ShowAs,
    ShowBoard,
    ShowBoards,
    ShowUser,
    Signoff,
    Signup,
    Standings,
    Submit,
    Subscribe,
    Unsubscribe,
    Vacation,
)
from .comments import extract_comment, multiple_lines
from . import tournament_commands as tournament
from .masking import quotable
from .registry import (
    COMMAND_WORDS,
    COMMANDS,
    CommandSpec,
    GAME_COMMAND_WORDS,
    SERVER_FIRST_WORDS,
    match_spec,
    matched_length,
    nearest_command,
)
from .words import (
    BARE_GAME_COMMANDS,
    GAME_WORD,
    MAX_PLAYERS,
    MIN_PLAYERS,
    MOVE_ACTIONS,
    SUBJECT_HEAD_RE,
    board_number,
    strip_subject_prefixes,
    userid_problem,
    whole_number,
)

#: Words that select games in ``games``, ``show <userid>`` and ``showas``.
FILTERS = ("all", "active", "inactive", "next")
#: Challenge options without a value / with a whole-number value / with a name.
FLAG_OPTIONS = ("bowl", "teams", "ko", "pillar", "princess", "soccer", "thief")
NUMBER_OPTIONS = ("target", "movelimit", "nagtime", "forfeittime", "totaltime", "think")
NAME_OPTIONS = ("layout",)
CHALLENGE_OPTIONS = FLAG_OPTIONS + NUMBER_OPTIONS + NAME_OPTIONS

#: How one command reads its argument words (and the mail's body).
Handler = Callable[[ArgumentReader, str], Command]


def _help(args: ArgumentReader, body: str) -> Command:
    return Help(tuple(w.lower() for w in args.rest()))


def _signup(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    return Signup(userid, password, args.addresses(required=False))


def _add(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    return AddAddress(userid, password, args.addresses(required=True))


def _change_password(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    old = args.password("the old password")
    new = args.password("the new password")
    args.done()
    return ChangePassword(userid, old, new)


def _change_address(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    return ChangeAddress(userid, password, args.addresses(required=True))


def _userid_password(cls: Callable[[str, str], Command]) -> Handler:
    def handler(args: ArgumentReader, body: str) -> Command:
        userid = args.userid()
        password = args.password()
        args.done()
        return cls(userid, password)

    return handler


def _challenges_or_vote(cls: Callable[[str, str], Command], word: str) -> Handler:
    """``accept <userid> <password>`` is about challenges; with a board number first
    (``accept 101 fred pw``) it answers the draw or undo request on that board, as
    ``abalone move 101 fred pw accept`` does."""

    def handler(args: ArgumentReader, body: str) -> Command:
        first = args.peek()
        if first is not None and first.isdigit():
            board = args.board()
            userid = args.userid()
            password = args.password()
            args.done()
            return MoveAction(board, userid, password, word)
        return _userid_password(cls)(args, body)

    return handler


def _list(args: ArgumentReader, body: str) -> Command:
    args.done()
    return List()


def _message(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    to = args.userids(args.rest())
    if not to:
        raise args.fail('Too few words: "message" needs the userids to send the message to')
    return Message(userid, password, to, extract_comment(body))


def _broadcast(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    args.done()
    return Broadcast(userid, password, extract_comment(body))


def _multiple(args: ArgumentReader, body: str) -> Command:
    args.done()
    return Multiple(tuple(multiple_lines(body)))


def _all_show(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    word = args.peek()
    selection = None
    if word is not None:
        if word.lower() not in ("next", "active"):
            raise args.fail(f'"{word}" is neither "next" nor "active"')
        selection = args.take("").lower()
    args.done()
    return AllShow(userid, selection)


def _vacation(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    chosen = args.either("on", "off")
    args.done()
    return Vacation(userid, password, chosen)


def _format(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    html = not args.either("text", "html")
    args.done()
    return Format(userid, password, html)


def _digest(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    chosen = args.either("on", "off")
    args.done()
    return Digest(userid, password, chosen)


def _password_reset(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    args.done()
    return PasswordReset(userid)


def _confirm_address(args: ArgumentReader, body: str) -> Command:
    code = args.password("the code that was mailed to the address")
    args.done()
    return ConfirmAddress(code)


def _password_set(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    code = args.password("the code that was mailed to you")
    new = args.password("the new password")
    args.done()
    return PasswordSet(userid, code, new)


def _game_help(args: ArgumentReader, body: str) -> Command:
    return GameHelp(tuple(w.lower() for w in args.rest()))


def _no_args(cls: Callable[[], Command]) -> Handler:
    def handler(args: ArgumentReader, body: str) -> Command:
        args.done()
        return cls()

    return handler


def _history(args: ArgumentReader, body: str) -> Command:
    return History(args.userids(args.rest()))


def _games(args: ArgumentReader, body: str) -> Command:
    words, selection = split_filter(args.rest(), FILTERS)
    return Games(args.userids(words), selection)


def _show(args: ArgumentReader, body: str) -> Command:
    words = args.rest()
    if words and words[0].lower() == "board":
        words = words[1:]
    if not words:
        raise args.fail('Too few words: "abalone show" needs a board number or a userid')
    if words[0][:1].isdigit():
        return ShowBoards(tuple(ShowBoard(*args.board_and_ply(w)) for w in words))
    userids, selection = split_filter(words, FILTERS)
    if not userids:
        raise args.fail('Too few words: "abalone show" needs a board number or a userid')
    for word in userids:
        if word[:1].isdigit():
            raise args.fail("Show either boards or userids, not both in one command")
    return ShowUser(args.userids(userids), selection)


def _analyze(args: ArgumentReader, body: str) -> Command:
    word = args.take("a board number")
    board, ply = args.board_and_ply(word)
    args.done()
    return Analyze(board, ply)


def _showas(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    words, selection = split_filter(args.rest(), FILTERS)
    boards = []
    for word in words:
        number = board_number(word)
        if number is None:
            raise args.fail(
                f'"{word}" is not a board number nor one of {", ".join(FILTERS)}'
            )
        boards.append(number)
    if boards and selection:
        raise args.fail(f'Give board numbers or "{selection}", not both')
    return ShowAs(userid, password, tuple(boards), selection)


def _challenge(args: ArgumentReader, body: str) -> Command:
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


def _challenge_option(args: ArgumentReader, word: str) -> tuple[str, str | bool]:
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
        number = whole_number(value)
        if number is None:
            raise args.fail(f'-{key} needs a positive whole number, not "{value[:20]}"')
        return key, str(number)
    name = value.strip().lower().replace("_", "-")
    if name not in layout_names() and name not in STANDARD_NAMES:
        raise args.fail(
            f'Unknown layout "{value}"; the layouts are {", ".join(layout_names())}'
        )
    return key, name


def _board_move(cls: type[Move] | type[Queue] | type[Submit]) -> Handler:
    def handler(args: ArgumentReader, body: str) -> Command:
        board = args.board()
        userid = args.userid()
        password = args.password()
        text, expected = args.move_text(args.rest())
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
) -> Handler:
    def handler(args: ArgumentReader, body: str) -> Command:
        board = args.board()
        userid = args.userid()
        password = args.password()
        args.done()
        return cls(board, userid, password)

    return handler


def _preview(args: ArgumentReader, body: str) -> Command:
    first = args.take("a board number or new")
    if first.lower() == "new":
        word = args.take("the number of players")
        if whole_number(word, MIN_PLAYERS, MAX_PLAYERS) is None:
            raise args.fail(f'"{word}" is not a number of players from 2 to 6')
        return Preview(None, None, int(word), args.moves_list(args.rest()))
    board, ply = args.board_and_ply(first)
    return Preview(board, ply, None, args.moves_list(args.rest()))


def _chat(args: ArgumentReader, body: str) -> Command:
    board = args.board()
    userid = args.userid()
    password = args.password()
    args.done()
    return Chat(board, userid, password, extract_comment(body))


def _subscribe(cls: type[Subscribe] | type[Unsubscribe]) -> Handler:
    def handler(args: ArgumentReader, body: str) -> Command:
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


def _notify(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    boards = []
    for word in args.rest():
        number = board_number(word)
        if number is None:
            raise args.fail(f'"{word}" is not a board number (board numbers look like 101)')
        boards.append(number)
    return Notify(userid, password, tuple(boards))


def _limit(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    word = args.peek()
    value: int | str | None = None
    if word is not None:
        args.take("")
        if word.isascii() and word.isdigit():
            value = whole_number(word, low=0)
            if value is None:
                raise args.fail(f'"{word[:20]}" is too large a number of games')
        elif word.lower() in ("accept", "reject"):
            value = word.lower()
        else:
            raise args.fail(f'"{word}" is not a number of games, "accept" or "reject"')
    args.done()
    return Limit(userid, password, value)


def _seek(args: ArgumentReader, body: str) -> Command:
    userid = args.userid()
    password = args.password()
    word = args.take("the number of players")
    if whole_number(word, MIN_PLAYERS, MAX_PLAYERS) is None:
        raise args.fail(f'"{word}" is not a number of players from 2 to 6')
    args.done()
    return Seek(userid, password, int(word))


_HANDLERS: dict[str, Handler] = {
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
    "format": _format,
    "digest": _digest,
    "password reset": _password_reset,
    "password set": _password_set,
    "confirm address": _confirm_address,
    "abalone help": _game_help,
    "abalone standings": _no_args(Standings),
    "abalone ratings": _no_args(Ratings),
    "abalone history": _history,
    "abalone games": _games,
    "abalone show": _show,
    "abalone showas": _showas,
    "abalone analyze": _analyze,
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
    "abalone accept": _challenges_or_vote(AcceptChallenge, "accept"),
    "abalone reject": _challenges_or_vote(RejectChallenge, "reject"),
    "abalone seek": _seek,
    "abalone tournaments": tournament.parse_list,
    "abalone tournament show": tournament.parse_show,
    "abalone tournament join": tournament.parse_join,
    "abalone tournament withdraw": tournament.parse_withdraw,
    "abalone tournament standings": tournament.parse_standings,
    "abalone tournament mail": tournament.parse_mail,
}
assert set(_HANDLERS) == set(COMMANDS)


def parse_command(subject: str, body: str = "") -> Command:
    """Read the command in a mail's Subject.

    ``body`` is only read by the commands whose body is their payload (``multiple``,
    ``message``, ``broadcast``, ``abalone chat``); for every other command the body is a
    comment, see :func:`extract_comment`.  Raises :class:`CommandSyntaxError`.
    """
    words, lowered, spec = _words_as_they_stand(command_line(subject))
    if not words:
        raise CommandSyntaxError(
            "The Subject of your mail holds no command", COMMANDS["help"].syntax
        )
    if spec is None:
        raise _unknown(words, lowered)
    start = matched_length(spec, lowered)
    return _HANDLERS[spec.name](ArgumentReader(spec, words[start:]), body)


def command_line(subject: str) -> str:
    """The line of a Subject that :func:`parse_command` reads as the command: without
    its ``Re:``/``Fwd:`` prefixes, and without a head of other prefixes and tags
    (``Odp:``, ``回复：``, ``[EXTERNAL]``, see :func:`_behind_head`) where a command
    follows it."""
    return _reading(strip_subject_prefixes(subject))


def _reading(line: str) -> str:
    """The line as it stands when it names a command; else what follows a head in front
    of a command (or of a command's first word); else the line as it stands."""
    if _words_as_they_stand(" ".join(line.split(maxsplit=3)[:3]))[2] is not None:
        return line
    behind = _behind_head(line)
    return line if behind is None else behind


def _words_as_they_stand(line: str) -> tuple[list[str], list[str], CommandSpec | None]:
    """The words of a line, lower-cased, and the command they name (None: none)."""
    words = line.split()
    lowered = [word.lower() for word in words]
    spec = match_spec(lowered)
    if spec is None and lowered[:1] and lowered[0] in BARE_GAME_COMMANDS:
        # A player's own settings need no board: "limit fred pw 0" is read as
        # "abalone limit fred pw 0" (the server has one game).
        words, lowered = [GAME_WORD, *words], [GAME_WORD, *lowered]
        spec = match_spec(lowered)
    return words, lowered, spec


#: The first words of commands: one glued to a colon ("abalone: ...", "move: ...",
#: "help: ...") is the command written with a slip, never a head to pass over.
_FIRST_WORDS = frozenset({GAME_WORD, *SERVER_FIRST_WORDS, *GAME_COMMAND_WORDS,
                          *BARE_GAME_COMMANDS})


def _behind_head(line: str) -> str | None:
    """What follows a head a mail program or system put before a command (reply and
    forward prefixes in any language, a gateway's tags: ``words.SUBJECT_HEAD_RE``),
    when it names a command or begins with a command's first word; None when the line
    has no head, its first word is a command word with a colon, or what follows is no
    command ("Note: I will be away" stays the line it is)."""
    head = SUBJECT_HEAD_RE.match(line)
    if head is None:
        return None
    first = line[: head.end()].split(maxsplit=1)[0].rstrip(":：").lower()
    if first in _FIRST_WORDS:
        return None
    rest = line[head.end():].strip()
    # Every command begins with one of these words; what begins with one that names no
    # command is read too, so that a slip behind a head gets its own answer
    # ("abalone signup ..." is told what is wrong with it).
    first_after = rest.split(maxsplit=1)[:1]
    if not first_after or first_after[0].lower() not in _FIRST_WORDS:
        return None
    return rest


def _unknown(words: Sequence[str], lowered: Sequence[str]) -> CommandSyntaxError:
    """The error for a line that names no command. Its words are quoted only when
    they can be read: a word no charset made readable may hide a password glued to
    it (``change\ufffdfred\ufffd<password>``)."""
    words = [quotable(word) for word in words[:2]] + list(words[2:])
    first = lowered[0]
    if first == GAME_WORD:
        if len(lowered) == 1:
            return CommandSyntaxError(
                'The word "abalone" must be followed by a command', COMMANDS["abalone help"].syntax
            )
        return CommandSyntaxError(
            f'Unknown command "abalone {words[1]}"', nearest_command(words)
        )
    board_follows = len(lowered) > 1 and lowered[1][:1].isdigit()
    if first in GAME_COMMAND_WORDS and (first not in SERVER_FIRST_WORDS or board_follows):
        spec = COMMAND_WORDS[(GAME_WORD, first)]
        return CommandSyntaxError(
            # Only the command word: the words after it may hold a password (the mail
            # itself is quoted below the answer, masked).
            f'Game commands begin with the word "abalone": "abalone {words[0][:40]} ..."',
            spec.syntax,
        )
    if first in SERVER_FIRST_WORDS:  # change/password/all with a wrong second word
        group = [spec for key, spec in COMMAND_WORDS.items() if key[0] == first]
        second = lowered[1] if len(lowered) > 1 else ""
        names = [spec.words[1] for spec in group]
        close = difflib.get_close_matches(second, names, n=1, cutoff=0.5) if second else []
        chosen = group[names.index(close[0])] if close else group[0]
        what = f'"{first} {words[1]}"' if len(words) > 1 else f'"{first}"'
        options = " or ".join(f'"{spec.name}"' for spec in group)
        return CommandSyntaxError(f"Unknown command {what}; did you mean {options}?", chosen.syntax)
    return CommandSyntaxError(f'Unknown command "{words[0]}"', nearest_command(words))
