"""Hiding passwords: :func:`mask_passwords` / :func:`quote_original` replace every
password by ``********`` before a mail is quoted back, logged or shown;
:func:`find_passwords` names the passwords of a text and :func:`hide_passwords` takes
them out of any other text (what the server writes in answer to that mail).

Masking is exact in both directions (DESIGN §2.6). The rule:

1. **Words.** A line's words are split at blanks of every kind, also invisible ones
   (zero-width space, byte order mark, C0/C1 controls), at blanks that a wrong charset
   turned into mojibake (``â\\x80\\x83``), and at HTML tags; a second reading also
   splits at ``?`` and ``_`` (an encoded word left undecoded, blanks lost to a
   charset: ``signup?fred?pw``, ``=?utf-8?Q?signup_fred_pw``) and reads a "word" of
   punctuation alone (``=``, ``--``) as a blank, and a third runs a
   line that ends in ``=`` (a quoted-printable soft line break, an encoded word cut
   by a line break) on into the next one. Quote marks,
   ``Subject:``, ``Re:``/``Fwd:``, junk without letters before the first word
   (left-over quoted-printable such as ``=E9=0``), and a head a mail program or
   system put first (reply prefixes in any language and script, ``Odp:``, ``Vá:``,
   ``回复：``; tags, ``[EXTERNAL]``) are skipped: rules 2 and 3 read a command from
   each of these places as at a line's start (the server reads none behind a head
   it does not know, and quotes it back).
2. **Command lines with a password.** A line whose first words are a command's words,
   exactly or with one slip of the keyboard in a word of four letters or more
   (``change pasword``, ``singup``), a server command after the game word
   (``abalone signup fred pw``, ``abalone singup fred pw``), or a board command
   without the game word (``move 101 fred secret c3-c5,d4``), is masked at that
   command's password positions when the words around them are what the command has
   there (a board number, a userid; after the password nothing that contradicts the
   command): so "signup for the tournament now" stays as it is. Words that may be
   several commands (a slip of more than one: ``liit`` is ``limit`` or ``list``) are
   masked at the password positions of every one of them that fits. A word of a
   command with a password with one letter put in (doubled or any other:
   ``signnup``, ``abalone passwword set``) is read for masking only (the command is
   not run, and rule 3 does not read it): hiding a word of prose costs little,
   showing a password is a leak. Where that letter is an English ending ("s", or
   "d"/"r" after the word's "e": ``messages``, ``deleted``), a word of prose in a
   password's place is the sentence going on ("deleted fred yesterday") and stays.
   A command cut over two or three lines is masked across them. Where a word is
   missing before the password, the word in its place that is what the command has
   after it (``digest Pw on``, ``add Pw a@b.org``, ``notify Pw 101``; for the server
   also a known userid: ``message Pw wilma``) moves the password to the word before.
   Every
   password-shaped word after such a command's words (a capital after a small letter
   or a digit, or capitals with digits: ``FredPw77``, ``Secret1``; never a number,
   board, move, address or word of the protocol) is masked too, but the userid before
   the password of a command that names a known user (or signs one up): so a misspelt
   or incomplete command (``signoff FredPw77``, ``signup fr ed Secret99``, ``change
   passwd fred Old1 New2``, ``resgn 101 Secret99``) shows no password its positions
   cannot place. After a slip of a word under six letters (often another word:
   "see", "week") only such a word up to the password's place is, and not before a
   sentence: ``liit Secr3tPw``, ``sigup Secr3tPw`` are masked, "see McDonald at the
   club" is not. A second command with a password on the same line (``signup fred
   pw1 signoff fred pw2``) is read up to the next one, for its own passwords.
3. **A word after a userid.** A line that begins with any command word (also one
   without a password: ``games``, ``history``, ``all``, ``chat``, ``ratings`` ...), then
   at most one board number, then a userid, then one more word, reads as that command
   written with a password: the word after the userid is masked when it ends the line
   or is followed by something that is not prose (a number, a move, an address, a
   word longer than any word). It is not masked when ordinary words follow it ("all
   fred wants is a draw", "Board 101 is great fun"), when it is a word of the protocol
   (a command, a help topic, ``all``, ``on``, a move), or when the "userid" is one of
   the common English words no userid may be (``me``, ``the``, ``it`` ... — signup
   refuses them). Where the command takes more userids there (``games``, ``history``,
   ``challenge``), the word is a userid: masked only when it names no user (which only
   the server knows, ``is_userid``) and is password-shaped (see rule 2), so that an
   answer names the unknown userid the user typed ("there is no user ghost"). After
   a slip of a command without a password the word is masked only when it is
   password-shaped: "Held og lykke" (Danish for good luck, "help" with one slip) is
   prose.
4. **Once found, everywhere.** A password found in a text is masked wherever else it
   stands in that text, also run together with other words (a Subject repeated
   without blanks, ``PWsignup``, a second command on the same line as a move's
   comment).
5. Placeholders (``<password>``) and the server's own Subjects (``Abalone Board 101
   fred **``) are never masked.

The trade-off: a short line that begins with a command word and then has two words
("help fred please", "Board 101 is great") has its last word masked; a line of prose
("fred played well, nice game", "move your marbles to the centre") never does.

Cost: linear in the text. A line whose first word (in every reading) is no command
word, slip (a letter put in too) or beheaded command word cannot begin a command and is passed by after one
look (cached per distinct line); what a command found on some lines depends only on
them and the few after (cached per window, across calls for text read without
``is_userid``: the server's own mails come back quoted); rule 4 hides all passwords
found in one pass of one pattern. A text reads at most ``_EXACT_LINES`` command lines
exactly; past them (a flood of commands) every word after a command word that is no
word of the protocol, number, move or address is masked: more, never less.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Sequence

from .registry import COMMAND_WORDS, COMMANDS, GAME_COMMAND_WORDS, CommandSpec
from .words import (
    BARE_GAME_COMMANDS, GAME_WORD, MOVE_ACTIONS, SUBJECT_HEAD_RE, SUBJECT_PREFIX_RE,
    is_valid_userid, looks_like_move,
)

PASSWORD_MASK = "********"
#: Whether a word names a user (the server's database); None where nobody can tell.
UseridCheck = Callable[[str], bool] | None
_SUBJECT_LABEL_RE = re.compile(r"subject\s*:\s*", re.IGNORECASE)
_BOARD_SECRET_COMMANDS = {
    name for name, spec in COMMANDS.items() if spec.syntax.split()[2:3] == ["<board>"]
}
_MOVE_COMMANDS = {"abalone move", "abalone queue", "abalone submit"}
#: A board number as a player may write it, also a wrong one ("board#99999", "-1",
#: "101#x"): the password stands after it whether or not the number is valid.
_BOARD_RE = re.compile(r"(?:board)?#?[-+]?\d\S*", re.IGNORECASE)
#: Characters only an address has: where a command expects an address after the
#: password, a rest without any of them is an ordinary sentence.
_ADDRESS_MARKS = frozenset("@<>;:\"")
#: The Subjects of the server's own board mails, quoted back in replies.
_OWN_SUBJECT_RE = re.compile(
    r"(?:new )?abalone board \d+(?: [a-z][a-z0-9_.\-]*)?(?: \*\*)?|abalone board \d+ error",
    re.IGNORECASE,
)
#: How many following lines may continue a command cut by the mail client.
_CONTINUATION_LINES = 4
#: Words after the last password a command line may have beyond its syntax (a slip).
_SLACK = 2


# ------------------------------------------------------------------- recognising
def _slips(word: str, target: str) -> int:
    """Edits (insert, delete, change, swap of neighbours) from ``word`` to ``target``."""
    if word == target:
        return 0
    previous2: list[int] = []
    previous = list(range(len(target) + 1))
    for i, a in enumerate(word, 1):
        current = [i]
        for j, b in enumerate(target, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b))
            if i > 1 and j > 1 and a == target[j - 2] and word[i - 2] == b:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


@functools.lru_cache(maxsize=1 << 16)
def _close(word: str, target: str) -> bool:
    """The same command word, or one slip away from a word of four letters or more: a
    letter left out, mistyped or swapped with its neighbour (a longer word is another
    word: "messages", "deleted")."""
    if word == target:
        return True
    return len(target) >= 4 and len(target) - 1 <= len(word) <= len(target) and (
        _slips(word, target) <= 1)


def _put_in(word: str, target: str) -> bool:
    """Whether ``word`` is ``target`` (four letters or more) with one letter put in: a
    letter doubled or any other ("signnup", "passwword", "signupp"; a mark is no
    letter: "board," is the word before a comma)."""
    if len(word) != len(target) + 1 or len(target) < 4:
        return False
    differs = next((i for i, (a, b) in enumerate(zip(word, target)) if a != b), len(target))
    return word[differs].isalpha() and word[differs + 1:] == target[differs:]


@functools.lru_cache(maxsize=1 << 16)
def _close_for_masking(word: str, target: str) -> bool:
    """``_close``, or one letter put in (see ``_put_in``): how near a word must be to a
    word of a command with a password for that command's password places to be hidden
    (hiding is not running: the command itself is read with ``_close``)."""
    return _close(word, target) or _put_in(word, target)


#: How near a written word must be to a command's word (``_close`` or
#: ``_close_for_masking``).
Nearness = Callable[[str, str], bool]


@functools.lru_cache(maxsize=1 << 14)
def _keys_beginning_like(first: str, near: Nearness = _close
                         ) -> tuple[tuple[tuple[str, ...], CommandSpec], ...]:
    """The commands whose first word ``first`` is, exactly or ``near`` it."""
    return tuple((key, spec) for key, spec in COMMAND_WORDS.items() if near(first, key[0]))


@functools.lru_cache(maxsize=1 << 14)
def _keys_beginning_like_two(first: str, second: str, near: Nearness = _close
                             ) -> tuple[tuple[tuple[str, ...], CommandSpec], ...]:
    """Those of ``_keys_beginning_like(first)`` of one word, or whose second word
    ``second`` is, exactly or ``near`` it (the game word begins some hundred)."""
    return tuple((key, spec) for key, spec in _keys_beginning_like(first, near)
                 if len(key) < 2 or near(second, key[1]))


#: A command a line's words may begin with, and how many of its words the command's
#: words took.
Reading = tuple[CommandSpec, int]


def _recognise(lowered: Sequence[str]) -> Reading | None:
    """The command the words most likely begin with (the first of ``_readings``)."""
    readings = _readings(lowered)
    return readings[0] if readings else None


def _secret_reading(lowered: Sequence[str]) -> Reading | None:
    """The first of ``_readings`` whose command has a password."""
    return next((found for found in _readings(lowered) if found[0].secret), None)


def _readings(lowered: Sequence[str], letter_put_in: bool = False) -> list[Reading]:
    """Every command the words may begin with, exactly or with one slip in a word, best
    first (exact before slipped, more command words before fewer): a word may be a slip
    of several commands ("liit": "limit" or "list"), and each of them may have a
    password where the others have none. Also a server command after the game word
    ("abalone signup fred pw", "abalone singup ..."), and a game command without it
    ("limit fred pw 0", "move 101 fred pw c3-c5,d4"). With ``letter_put_in`` (for
    masking only) a letter put in a word is a slip too, and every game command may be
    written without the game word."""
    if not lowered:
        return []
    near = _close_for_masking if letter_put_in else _close
    ranked = _keyed_readings(lowered, 0, near)
    if len(lowered) > 1 and near(lowered[0], GAME_WORD):
        # The game word before a server command: pbmserv's users write it before every
        # command. (Its own readings of the words after it stand above: "abalone add"
        # is no game command, "abalone accept" is.)
        ranked += [(rank, spec, used + 1) for rank, spec, used
                   in _keyed_readings(lowered[1:], 2, near) if spec.words[0] != GAME_WORD]
    if len(lowered) > 1:
        for word in GAME_COMMAND_WORDS:
            if not near(lowered[0], word):
                continue
            spec = COMMAND_WORDS[(GAME_WORD, word)]
            if word in BARE_GAME_COMMANDS and (is_valid_userid(lowered[1]) or lowered[1].isdigit()):
                ranked.append(((4, -1), spec, 1))  # without the game word ("limit fred pw 0")
            elif spec.name in _BOARD_SECRET_COMMANDS and _without_game_word(spec, lowered[1:]):
                ranked.append(((4, -1), spec, 1))
            elif letter_put_in and word not in BARE_GAME_COMMANDS \
                    and spec.name not in _BOARD_SECRET_COMMANDS:
                # For masking, the others too ("ashowas fred pw": rule 3 reads
                # "showas fred pw" and its slips, but no word with a letter put in).
                ranked.append(((4, -1), spec, 1))
    readings: dict[tuple[str, int], Reading] = {}
    for _, spec, used in sorted(ranked, key=lambda found: found[0]):
        readings.setdefault((spec.name, used), (spec, used))
    return list(readings.values())


def _keyed_readings(lowered: Sequence[str], rank: int, near: Nearness
                    ) -> list[tuple[tuple[int, int], CommandSpec, int]]:
    """The commands whose words (a name or an alias) the words begin with, exactly or
    each ``near`` it: ranked ``rank`` when exact, ``rank + 1`` when slipped, longer
    names first."""
    # (A key of two words or more fits only when the second words are near.)
    keys = (_keys_beginning_like(lowered[0], near) if len(lowered) < 2
            else _keys_beginning_like_two(lowered[0], lowered[1], near))
    found: list[tuple[tuple[int, int], CommandSpec, int]] = []
    for key, spec in keys:
        if len(lowered) < len(key) or not all(near(w, k) for w, k in zip(lowered, key)):
            continue
        exact = tuple(lowered[: len(key)]) == key
        found.append(((rank if exact else rank + 1, -len(key)), spec, len(key)))
    return found


def _put_in_readings(lowered: Sequence[str], readings: Sequence[Reading]) -> list[Reading]:
    """The readings with a password that only a letter put in a command word gives
    ("signnup bar pw", "abalone passwword set ..."), beyond ``readings`` (those of
    ``_readings(lowered)``): for hiding the password places only. Such a word is read
    as no command (the answer to "signnup" is what it was), nor by rule 3."""
    if not lowered or not any(_put_in_like(word) for word in lowered[:_LONGEST_COMMAND]):
        return []
    known = {(spec.name, used) for spec, used in readings}
    return [(spec, used) for spec, used in _readings(lowered, letter_put_in=True)
            if spec.secret and (spec.name, used) not in known]


def _english_ending(word: str) -> bool:
    """Whether ``word`` is a command word with an English ending put at its end: an
    "s" (plural, third person: "messages", "signups"), a "d" or "r" after its "e"
    (past, doer: "deleted", "mover")."""
    stem, last = word[:-1], word[-1:]
    return stem in _COMMAND_WORDS_ANY and (last == "s" or (last in "dr" and stem[-1:] == "e"))


def _without_game_word(spec: CommandSpec, args: Sequence[str]) -> bool:
    """Whether words after a board command's word left without "abalone" have its
    shape: a move where it takes one ("move 101 fred secret c3-c5,d4", also without
    the board), else exactly board, userid and password ("resign 101 fred secret")."""
    if spec.name in _MOVE_COMMANDS:
        return any(_is_move_word(w) or w in MOVE_ACTIONS or looks_like_move(" ".join(args[i:]))
                   for i, w in enumerate(args[1:], 1))
    return len(args) == 3 and bool(_BOARD_RE.fullmatch(args[0])) and is_valid_userid(args[1])


def _syntax_after(spec: CommandSpec) -> list[str]:
    """The syntax tokens after the command words (``<userid>``, ``on|off`` ...)."""
    return spec.syntax.split()[len(spec.words):]


def _secret_positions(spec: CommandSpec, args: Sequence[str],
                      is_userid: UseridCheck = None) -> list[int]:
    """Where the passwords stand among ``args``, also when a word is missing."""
    positions = list(spec.secret)
    pos = positions[0] if positions else 0
    if 0 < pos < len(args) and len(positions) == 1 and (
            _follows_password(spec, args[pos])
            or (is_userid is not None and _may_be_userid(args[pos]) and is_userid(args[pos])
                and not is_userid(args[pos - 1]))):
        # A word is missing before the password ("digest Pw on", "add Pw a@b.org",
        # "message Pw wilma"): what stands in its place is what the command has after
        # it, so the password is the word before.
        positions = [pos - 1]
    if spec.name in ("abalone accept", "abalone reject") and args[:1] and args[0].isdigit():
        positions = [2]  # a vote written with its board: "accept 101 fred pw"
    if spec.name in ("abalone subscribe", "abalone unsubscribe"):
        positions = [2] if args[:1] and _BOARD_RE.fullmatch(args[0]) else [1]
    elif spec.name in _BOARD_SECRET_COMMANDS:
        if args and not _BOARD_RE.fullmatch(args[0]):
            positions = [1]  # the board number is missing: "move fred secret c3-c5,d4"
        pos = positions[0]
        if (
            spec.name in _MOVE_COMMANDS
            and 0 < pos < len(args)
            and (_is_move_word(args[pos]) or looks_like_move(" ".join(args[pos:]))
                 or args[pos].lower() in MOVE_ACTIONS)
            and (pos - 1 > 0 or not _BOARD_RE.fullmatch(args[0]))
        ):
            positions = [pos - 1]  # a word is missing before the move: mask the one before
    return positions


def _may_be_userid(word: str) -> bool:
    """Whether ``word`` may name a user at all (else nobody need look it up)."""
    return is_valid_userid(word) and word.lower() not in NOT_USERIDS


def _follows_password(spec: CommandSpec, word: str) -> bool:
    """Whether ``word`` is what the command's syntax has right after its password: one
    of its choices (on|off, text|html, once, a number for <N>), an address or a board."""
    tokens = _syntax_after(spec)
    if not spec.secret or max(spec.secret) + 1 >= len(tokens):
        return False
    token = tokens[max(spec.secret) + 1].strip("[]").removesuffix("...").removesuffix("]")
    lowered = word.lower()
    if "<board>" in token:
        return bool(_BOARD_RE.fullmatch(word))
    if token == "<address>":
        return "@" in word
    choices = token.split("|")
    return any(lowered.isdigit() if choice == "<N>" else lowered == choice
               for choice in choices if choice == "<N>" or not choice.startswith("<"))


def _is_move_word(word: str) -> bool:
    """A word written like a move, also a wrong one (c3c5, c3-c5d4, c3-c5,d4#7)."""
    return bool(_MOVE_WORD_RE.fullmatch(word.lower()))


_MOVE_WORD_RE = re.compile(r"[a-i]\d[-,]?(?:[a-i]\d)?[-,]?(?:[a-i]\d)?(?:#\d*)?")


def _is_placeholder(word: str) -> bool:
    """``<password>``, also as HTML writes it (``&lt;password&gt;``: the reply
    instructions of a board mail's HTML part, quoted back in an HTML reply)."""
    return (word.startswith("<") and word.endswith(">")) or (
        word[:4].lower() == "&lt;" and word[-4:].lower() == "&gt;")


def _fits(spec: CommandSpec, args: Sequence[str], positions: Sequence[int]) -> bool:
    """Whether the words around the passwords are what the command has there."""
    first = min(positions)
    for word in args[:first]:
        if _is_placeholder(word) or not (_BOARD_RE.fullmatch(word) or is_valid_userid(word)):
            return False
    tokens = _syntax_after(spec)
    secret_tokens = max(spec.secret) + 1
    expected = [t for t in tokens[secret_tokens:]]
    rest = list(args[max(positions) + 1:])
    if rest and args[min(positions)].lower() in NOT_USERIDS:
        return False  # "delete fred from the list": a sentence, not a password
    if not expected or not rest:
        return len(rest) <= _SLACK
    token = expected[0].strip("[]")
    word = rest[0].lower()
    if token == "<move>" and looks_like_move(" ".join(rest)):
        return True  # a move written with blanks: "c3 - c5 , d4"
    if "|" in token:  # on|off, <N>|accept|reject: one of these (or a slip) ...
        choices = token.split("|")
        fitting = any(
            word.isdigit() if choice.startswith("<") else _slips(word, choice) <= 1
            for choice in choices
        )
        if not fitting and len(rest) > 1:
            return False  # ... or a wrong word alone where it stands ("format fred pw big")
    elif "<address>" in token and not any(_ADDRESS_MARKS & set(w) for w in rest):
        return False
    open_ended = any(t.endswith("...") or t.endswith("...]") for t in expected)
    return open_ended or len(rest) <= len(expected) + _SLACK


# ------------------------------------------------------------------------ words
#: Characters that separate words although ``str.split`` keeps them inside a word:
#: controls and the invisible format characters (zero-width space, byte order mark ...).
_INVISIBLE = (
    "\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5"
    "\\u180b-\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164"
    "\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffc"
)
_SEPARATOR_RE = re.compile(f"[\\s{_INVISIBLE}]+")
#: Every character of _SEPARATOR_RE as a blank (all of them are in the first plane).
_SEPARATOR_TABLE = dict.fromkeys(
    map(ord, "".join(_SEPARATOR_RE.findall("".join(map(chr, range(0x10000)))))), " ")
#: Blanks written in UTF-8 and read as Latin-1 or Windows-1252 (``â\x80\x83``).
_UNICODE_BLANKS = (
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u202f\u205f\u2060\u3000\ufeff"
)


#: The 8-bit charsets a mail may name (or a reader may guess) for text that was UTF-8.
_EIGHT_BIT_CHARSETS = (
    "latin-1", "cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1257", "koi8-r",
    "koi8-u", "iso-8859-2", "iso-8859-5", "iso-8859-7", "iso-8859-9", "iso-8859-15",
    "cp437", "cp850", "cp866", "mac-roman",
)


def _trie_pattern(words: set[str]) -> str:
    """One alternation for ``words``, grouped by first character: a regular
    expression tries its alternatives one by one, so hundreds of them side by side
    would cost that many tries at every character of a line."""
    by_first: dict[str, set[str]] = {}
    for word in words:
        if word:
            by_first.setdefault(word[0], set()).add(word[1:])
    branches = []
    for first in sorted(by_first):
        rests = by_first[first]
        if rests == {""}:
            branches.append(re.escape(first))
            continue
        inner = _trie_pattern(rests - {""})
        optional = "?" if "" in rests else ""
        branches.append(f"{re.escape(first)}(?:{inner}){optional}")
    return "|".join(branches)


def _mojibake_blanks(shortest: int = 1) -> re.Pattern[str]:
    """Blanks written in UTF-8 and read in an 8-bit charset (``â\x80\x83`` in Latin-1,
    ``Ц──`` in KOI8-R), in every charset of ``_EIGHT_BIT_CHARSETS``; with
    ``shortest=3`` only those of three characters (a two-character one such as
    ``В\xa0`` is also ordinary Russian before a no-break space)."""
    seen: set[str] = set()
    for blank in _UNICODE_BLANKS:
        for charset in _EIGHT_BIT_CHARSETS:
            misread = blank.encode("utf-8").decode(charset, "replace")
            if len(misread) >= shortest:
                seen.add(misread)
    # ... and read with a charset that has no letter for the bytes after the first.
    return re.compile(f"(?:{_trie_pattern(seen)})|[\u00c2\u00e2\u00e3\u00ef]\ufffd{{1,2}}")


_MOJIBAKE_RE = _mojibake_blanks()
_LONG_MOJIBAKE_RE = _mojibake_blanks(shortest=3)
#: HTML tags around a command in an HTML-only mail (``<p>signup fred pw</p>``); a
#: placeholder such as ``<password>`` is no tag.
_HTML_TAG_RE = re.compile(
    r"<(script|style)\b[^<>]*>.*?(?:</\1\s*>|$)"
    r"|</?(?:p|br|div|span|html|body|head|b|i|u|em|strong|font|a|pre|tt|code|blockquote"
    r"|table|tr|td|th|ul|ol|li|h[1-6]|script|style|title|meta|hr|center|small|big)\b[^<>]*>"
    r"|<!--|-->|&nbsp;",
    re.IGNORECASE | re.DOTALL,
)
#: An encoded word left undecoded by a broken header: its frame is no word.
_ENCODED_FRAME_RE = re.compile(r"=\?[^?\s]{0,40}\?[QqBb]\?|\?=")
#: The second reading keeps printable ASCII only: blanks a charset turned into ``?``
#: or into replacement characters and mojibake, an encoded word's ``_``.
_FINE_SEPARATOR_RE = re.compile(r"[^\x21-\x3e\x40-\x5e\x60-\x7e]+")
#: Tokens of one line's analysis (separators are blanks there).
_TOKEN_RE = re.compile(r"\S+")
#: Quoted-printable escapes of an encoded word left undecoded (``=E2=80=83``).
_QP_ESCAPE_RE = re.compile(r"(?:=[0-9A-F]{2})+")
#: UTF-7 of a blank left undecoded (``+IAs-`` is a zero-width space).
_UTF7_SHIFT_RE = re.compile(r"\+[A-Za-z0-9/]{2,8}-")
#: A "word" of punctuation alone (``=``, ``--``, ``:``) stands between words in the
#: second reading (the first reads it as a word, in case it is a password).
_PUNCTUATION_WORD_RE = re.compile(r"(?<!\S)[^\sA-Za-z0-9]+(?!\S)")
#: Such a word of one character (each ``>`` of a quote written ``> > >``, a lone ``-``):
#: blanked by a plain replacement, at C speed, before the longer ones.
_PUNCTUATION_CHAR_RE = re.compile(r"(?<!\S)[^\sA-Za-z0-9](?!\S)")
#: Quote marks and blanks at the start of an analysed line (blanks are spaces there).
_LEADING_MARKS_RE = re.compile(r"[ >]*")
#: A line the second reading would read as the first does.
_PLAIN_RE = re.compile(r"[\x20-\x3e\x40-\x5e\x60-\x7e]*")
#: The words of a line looked at for a command; more are only counted as "many".
_MAX_WORDS = 40


def _blanked(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda found: " " * len(found.group()), text)


def _analysis(line: str, fine: bool) -> str:
    """``line`` with every separator turned into blanks, same length (so that a word's
    place in the analysis is its place in the line)."""
    # (Each pattern only where a character it begins with stands: most lines are
    # plain ASCII without tags or escapes.)
    text = line if line.isascii() else _blanked(_MOJIBAKE_RE, line)
    if "<" in text or "&" in text or "-->" in text:
        text = _blanked(_HTML_TAG_RE, text)
    if "?" in text:
        text = _blanked(_ENCODED_FRAME_RE, text)
    text = text.translate(_SEPARATOR_TABLE)  # (_SEPARATOR_RE's characters, at C speed)
    if fine:
        if "+" in text:
            text = _blanked(_UTF7_SHIFT_RE, text)
        if "=" in text:
            text = _blanked(_QP_ESCAPE_RE, text)
        if not _PLAIN_RE.fullmatch(text):
            text = _blanked(_FINE_SEPARATOR_RE, text)
        text = _punctuation_blanked(text)
    return text


def _punctuation_blanked(text: str) -> str:
    """``_blanked(_PUNCTUATION_WORD_RE, text)``, with a call into Python only for each
    word of two characters or more (a deep quote has hundreds of one-character ones):
    each word between blanks is blanked or not by itself, so the order is free. The
    quote marks that begin a line up to its last blank among them ("> > > ") are such
    words, and blanked at once: a quote 200 deep is not searched mark by mark."""
    marks = _LEADING_MARKS_RE.match(text).end()  # type: ignore[union-attr]
    quoted = text.rfind(" ", 0, marks) + 1
    if quoted:
        return " " * quoted + _punctuation_blanked(text[quoted:])
    text = _PUNCTUATION_CHAR_RE.sub(" ", text)
    return _blanked(_PUNCTUATION_WORD_RE, text) if _PUNCTUATION_WORD_RE.search(text) else text


def _junk_end(text: str, start: int) -> list[int]:
    """Where the first word may begin after junk without letters (left-over
    quoted-printable ``=E9=0``, quote marks): the place after the junk, and one letter
    earlier when the junk ends in an escape that took a letter of the word."""
    position = start
    escape_took_letter = False
    while position < len(text):
        char = text[position]
        if char == "=" and position + 1 < len(text) and text[position + 1].isascii() \
                and text[position + 1].isalnum():
            width = 3 if position + 2 < len(text) and text[position + 2].isascii() \
                and text[position + 2].isalnum() else 2
            escape_took_letter = width == 3 and text[position + 2].isalpha()
            position += width
        elif char.isspace() or not (char.isascii() and char.isalnum()):
            escape_took_letter = False
            position += 1
        else:
            break
    starts = [position]
    if escape_took_letter and position > start:
        starts.append(position - 1)
    return starts


#: Blanks and quote marks before a command (skipped at C speed: an analysed line of
#: markup is mostly blanks where its tags stood).
_QUOTE_MARKS_RE = re.compile(r"[ \t>]*")
#: ``SUBJECT_PREFIX_RE`` matched where a position says (its "^" only holds at 0).
_PREFIX_AT_RE = re.compile(SUBJECT_PREFIX_RE.pattern.removeprefix("^"), SUBJECT_PREFIX_RE.flags)


def _command_start(line: str) -> int:
    """Where a command may begin: after quote marks, "Subject:" and Re:/Fwd: prefixes."""
    start = 0
    while True:
        before = start
        start = _QUOTE_MARKS_RE.match(line, start).end()  # type: ignore[union-attr]
        label = _SUBJECT_LABEL_RE.match(line, start)
        if label:
            start = label.end()
        prefix = _PREFIX_AT_RE.match(line, start)  # (no copy of the rest of the line)
        if prefix and prefix.end() > start:
            start = prefix.end()
        if start == before:
            return start


def _spans(line: str, start: int, most: int = _MAX_WORDS) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for found in _TOKEN_RE.finditer(line, start):
        spans.append((found.start(), found.end()))
        if len(spans) >= most:
            break
    return spans


# ------------------------------------------------------- a word after a userid (rule 3)
#: Every word of every command, and the game word: what a command line begins with.
_COMMAND_WORDS_ANY = frozenset(
    word for key in COMMAND_WORDS for word in key) | {GAME_WORD}
#: Words of the protocol that are never a password where rule 3 looks for one.
_PROTOCOL_WORDS = _COMMAND_WORDS_ANY | set(MOVE_ACTIONS) | {
    "all", "active", "inactive", "next", "on", "off", "text", "html", "rules", "notation",
    "reply", "votes", "marks", "limits", "topics", "commands", "new",
}
#: Common English words that are no userid (signup refuses them): after a command word
#: they begin a sentence ("help me please", "move your marbles"), not a command.
NOT_USERIDS = frozenset("""
    a about above after again all also am an and any are as at be because been before
    being both but by can could did do does doing done each even every few for from had
    has have having he her here hers him his how i if in into is it its just let many me
    mine more most much my no nor not now of off ok okay on once only or other our ours
    out over own please same she should so some such than thank thanks that the their
    them then there these they this those through to too under until up us very was we
    well were what when where which while who whom whose why will with would yes yet you
    your yours
""".split())
#: A word of prose: letters only, as long as ordinary words are.
_PROSE_RE = re.compile(r"(?:[A-Za-z][a-z'’\-]{1,19}|[aAI])[.,;!?)]*")


def _takes_userids(spec: CommandSpec | None) -> bool:
    """Whether the command has more userids after the first (games, history, challenge)."""
    if spec is None:
        return False
    syntax = spec.syntax
    return "<userid>..." in syntax or "<userid2>" in syntax


def _named_before_userid(spec: CommandSpec | None) -> int:
    """How many words other than a board stand before the userid in the command's
    syntax (a tournament's name: "abalone tournament join <name> <userid> ...")."""
    tokens = _syntax_after(spec) if spec is not None else []
    if "<userid>" not in tokens:
        return 0
    before = tokens[:tokens.index("<userid>")]
    return 0 if any("<board>" in token for token in before) else len(before)


def _word_after_userid(spec: CommandSpec | None, args: Sequence[str],
                       is_userid: UseridCheck) -> int | None:
    """Rule 3: where the word after the userid stands among ``args``, if it is one."""
    index = 1 if args and _BOARD_RE.fullmatch(args[0]) else _named_before_userid(spec)
    if len(args) < index + 2:
        return None
    userid, word = args[index], args[index + 1]
    lowered = word.lower()
    if (not is_valid_userid(userid) or userid.lower() in NOT_USERIDS
            or userid.lower() in _PROTOCOL_WORDS):
        return None  # "preview new 3 ...", "help me please"
    if _is_placeholder(word) or lowered in _PROTOCOL_WORDS or _is_move_word(word):
        return None
    if word.isdigit() and not (spec is not None and spec.secret):
        return None  # a number ("preview new 3 ..."), unless a code stands there
    rest = args[index + 2:]
    repeated = any(rest[j] == userid and rest[j + 1] == word for j in range(len(rest) - 1))
    if lowered in NOT_USERIDS:
        return None  # "delete fred from the list": no password is such a word
    # A command with a password of its own needs two ordinary words after it to read
    # as a sentence ("change address fred pw Barney" is a display name cut off).
    enough = 2 if spec is not None and spec.secret else 1
    # (Where the command takes more userids, a known user's name after the word is the
    # command going on, not prose: "challenge fred Secret1 wilma", pbmserv's way.)
    known = is_userid if is_userid is not None and _takes_userids(spec) else None
    if (len(rest) >= enough
            and all(_PROSE_RE.fullmatch(w) and not (known is not None and known(w))
                    for w in rest[:2])
            and rest[0].lower() not in _COMMAND_WORDS_ANY and not repeated):
        # A sentence goes on ("all fred wants is a draw", "Board 101 is great fun");
        # but the same userid and word again is the command written twice (a Subject
        # repeated without blanks), and a command word begins the next command.
        return None
    if (_takes_userids(spec) and is_valid_userid(word) and not repeated
            and (is_userid is None or is_userid(word) or not password_shaped(word))):
        # Another userid ("games fred wilma"), or nobody can tell, or a name that is
        # none: the answer names it ("there is no user ghost"); a password-shaped word
        # that names nobody ("games fred Secret1") is read as a password.
        return None
    return index + 1


#: A command with a password that begins with each such first word (any one of them).
COMMANDS_BY_FIRST_WORD = {
    key[0] if key[0] != GAME_WORD else key[1]: spec
    for key, spec in sorted(COMMAND_WORDS.items()) if spec.secret}
#: The most words a command's words are (before its arguments).
_LONGEST_COMMAND = max(len(key) for key in COMMAND_WORDS)
#: First words of the commands that have a password.
_SECRET_FIRST_WORDS = frozenset(
    key[0] if key[0] != GAME_WORD else key[1] for key, spec in COMMAND_WORDS.items()
    if spec.secret) | {GAME_WORD}


def _bare_game_command(word: str) -> CommandSpec | None:
    """The game command a line begins with when it leaves out the game word."""
    return COMMAND_WORDS.get((GAME_WORD, word)) if word in GAME_COMMAND_WORDS else None


def _first_command_word(lowered: Sequence[str]) -> bool:
    """Whether the line begins with a command word: exactly, or with one slip in a word
    of six letters or more (a slip of a shorter one is often another word: "that" and
    "chat", "more" and "move")."""
    return bool(lowered) and (lowered[0] in _COMMAND_WORDS_ANY or lowered[0] in _BEHEADED
                              or any(len(word) >= 6 and _close(lowered[0], word)
                                     for word in _COMMAND_WORDS_ANY))


#: Command words without their first letter: what is left when a broken
#: quoted-printable escape ("=0a", a line feed) took it ("dd fred pw" was "add ...").
#: (Not those that are English words themselves: "how", "hat", "et", "review".)
_BEHEADED = frozenset(word[1:] for word in _COMMAND_WORDS_ANY if len(word) >= 3) - {
    "how", "hat", "et", "review", "ove"}


# --------------------------------------------------------------------- masking
Span = tuple[int, int, int]  # (row, start, end)
Place = tuple[int, int]  # (row, column)


def _line_passwords(analysed: Sequence[str], index: int, start: int,
                    is_userid: UseridCheck, originals: Sequence[str],
                    garbled: bool = False) -> list[Span]:
    """The passwords of the command that begins at ``start`` of line ``index``."""
    line = analysed[index]
    spans = [(index, a, b) for a, b in _spans(line, start)]
    words = [line[a:b] for _, a, b in spans]
    lowered = [w.lower() for w in words]
    if not lowered or _OWN_SUBJECT_RE.fullmatch(" ".join(lowered)):
        return []
    readings = _readings(lowered)
    found = readings[0] if readings else None
    if found is None and len(spans) < 2:
        # "abalone" alone on a line, the command in the next ones (a folded Subject):
        # the lines are taken one by one until the command's words fit.
        more = list(spans)
        folded = True  # every further line begins with a blank, as a folded header's
        for following in range(index + 1, min(len(analysed), index + 1 + _CONTINUATION_LINES)):
            if not originals[following]:
                break
            if not originals[following].strip():
                continue  # a folded header's blank continuation line (" ")
            folded = folded and originals[following][:1] in " \t"
            more += [(following, a, b) for a, b in
                     _spans(analysed[following], _command_start(analysed[following]))]
            words_so_far = [analysed[r][a:b] for r, a, b in more]
            lowered_so_far = [w.lower() for w in words_so_far]
            joined_readings = _readings(lowered_so_far)
            joined = joined_readings[0] if joined_readings else None
            joined_put_in = _put_in_readings(lowered_so_far, joined_readings)
            if not any(spec.secret for spec, _ in joined_readings):
                if folded and _first_command_word(lowered_so_far):
                    # Rule 3 over a folded Subject ("challenge" / " fred" / " pw").
                    spec_of = joined[0] if joined else _bare_game_command(lowered_so_far[0])
                    used = joined[1] if joined else 1
                    position = _word_after_userid(spec_of, words_so_far[used:], is_userid)
                    if position is not None and used + position == len(more) - 1:
                        return [more[used + position]]
                if not joined_put_in:
                    continue
            placed = _placed_by_readings(analysed, joined_readings, more, is_userid,
                                         put_in=joined_put_in)
            if placed:
                return placed
        return []
    # Every command the words may be (a slip of several), each masked where it has its
    # passwords: what one reading takes for a userid another may take for a password.
    placed = _placed_by_readings(analysed, readings, spans, is_userid,
                                 continue_from=(index, originals),
                                 put_in=_put_in_readings(lowered, readings))
    if placed:
        return placed
    if found is not None and found[0].secret:
        # A command cut by the mail client goes on in the next lines (read by rule 3
        # below too, when the command's words do not fit).
        spans = _continued(analysed, originals, index, spans, found[1] + max(found[0].secret))
    if garbled and not _PLAIN_RE.fullmatch(originals[index], start) and len(spans) >= 2 and (
            (found is not None and found[0].secret) or lowered[0] in _SECRET_FIRST_WORDS):
        # A command read through junk (a wrong charset ate the userid or "set"; not a
        # head before it, "回复："): the command's words do not fit, and its last word
        # may be the password.
        last = words[-1]
        if not (_is_placeholder(last) or "|" in last or last.lower() in _PROTOCOL_WORDS
                or last.isdigit() or last.lower() in NOT_USERIDS or _is_move_word(last)
                or looks_like_move(last)):
            return [spans[-1]]
    if found is None and not _first_command_word(lowered):
        return []
    # Rule 3, also for a command with a password whose words do not fit it (the
    # second password of "change password" and "password set" follows the first).
    spec_or_none, used = found if found is not None else (_bare_game_command(lowered[0]), 1)
    position = _word_after_userid(spec_or_none, words[used:], is_userid)
    if position is None:
        return []
    if (found is not None and not found[0].secret
            and tuple(lowered[:used]) != tuple(found[0].words[-used:])
            and not password_shaped(words[used + position])):
        # A slip of a command that takes no password ("Held og lykke", Danish for good
        # luck, read as "help"): twice unlikely to carry one, so only a word written
        # as passwords are is masked. (A line whose first words are no command the
        # rule recognises, "change passwd fred old new", keeps rule 3 as it stands.)
        return []
    count = len(spec_or_none.secret) if spec_or_none is not None and spec_or_none.secret else 1
    return [spans[used + p] for p in range(position, position + count)
            if used + p < len(spans)]


def _continued(analysed: Sequence[str], originals: Sequence[str], index: int,
               spans: list[Span], last: int) -> list[Span]:
    """``spans`` (the words of line ``index``) and those of the next lines, as a command
    cut by the mail client goes on in them, until word number ``last`` stands."""
    spans = list(spans)
    following = index + 1
    while (len(spans) <= last and following < len(analysed)
           and following <= index + _CONTINUATION_LINES and originals[following]):
        if not originals[following].strip():
            following += 1  # a folded header's blank continuation line (" ")
            continue
        next_line = analysed[following]
        spans += [(following, a, b) for a, b in _spans(next_line, _command_start(next_line))]
        following += 1
    return spans


def _placed_by_readings(analysed: Sequence[str], readings: Sequence[Reading],
                        spans: list[Span], is_userid: UseridCheck,
                        continue_from: tuple[int, Sequence[str]] | None = None,
                        put_in: Sequence[Reading] = ()) -> list[Span]:
    """The passwords of every reading with a password whose words around them are what
    it has there (rule 2), all of them; ``continue_from`` (the line's number and the
    lines): a reading may go on in the next lines where the line ends too soon.
    ``put_in``: readings only a letter put in a command word gives (see
    ``_put_in_readings``); where that letter is an English ending ("deleted fred
    yesterday", "Messages from fred are nice") a word of prose in a password's place
    is the sentence going on, and stays."""
    placed: dict[Span, None] = {}
    for number, (spec, used) in enumerate([*readings, *put_in]):
        if not spec.secret:
            continue
        words = spans
        if continue_from is not None:
            words = _continued(analysed, continue_from[1], continue_from[0], spans,
                               used + max(spec.secret))
        args = [analysed[r][a:b] for r, a, b in words[used:]]
        positions = [p for p in _secret_positions(spec, args, is_userid)
                     if p < len(args) and not _is_placeholder(args[p])]
        if not positions or not _fits(spec, args, positions):
            continue
        if number >= len(readings) and any(
                _english_ending(analysed[r][a:b].lower()) for r, a, b in words[:used]):
            positions = [p for p in positions if not _PROSE_RE.fullmatch(args[p])]
        placed.update(dict.fromkeys(words[used + p] for p in positions))
    return list(placed)


#: Invisible characters that are no blank: a third reading reads words without them
#: ("wilm\x15a" is "wilma").
_JOINING_RE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u200b-\u200d"
                         "\u2060\ufeff]")
#: _JOINING_RE's characters below 128, and the UTF-8 of the others (each of the
#: C1 controls and the soft hyphen is \xc2 and one more byte).
_ASCII_JOINING = bytes([*range(0x00, 0x09), *range(0x0e, 0x1c), 0x7f])
_C2_JOINING_RE = re.compile(rb"\xc2[\x80-\x84\x86-\x9f\xad]")
_WIDE_JOINING = tuple(char.encode() for char in "\u200b\u200c\u200d\u2060\ufeff")


def _has_joining(text: str) -> bool:
    """``_JOINING_RE.search(text)``, at C speed on the text's UTF-8 (the matcher tests a
    character class at each character of a 200 KB text in a loop of its own)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data.translate(None, _ASCII_JOINING)) != len(data):
        return True
    if text.isascii():
        return False
    return (b"\xc2" in data and _C2_JOINING_RE.search(data) is not None) or any(
        wide in data for wide in _WIDE_JOINING)


def _joined(lines: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    """The lines without the characters of _JOINING_RE, and where each kept character
    stood in its line."""
    texts: list[str] = []
    places: list[list[int]] = []
    for line in lines:
        kept = [i for i, char in enumerate(line) if not _JOINING_RE.match(char)]
        texts.append("".join(line[i] for i in kept))
        places.append(kept)
    return texts, places


def _soft_joined(lines: Sequence[str]) -> tuple[list[str], list[list[Place]]] | None:
    """The lines with each one that ends in ``=`` (a quoted-printable soft line break,
    or an encoded word cut by a line break) run together with the next, without the
    ``=``, and where each character stood; None when no line (but the last) ends so."""
    joined = "\n".join(lines)
    # (No line but the last ends in "="; "=" looked for first: one character is found
    # at memchr's speed, a pair at a third of it.)
    if "=" not in joined or "=\n" not in joined:
        return None
    texts: list[str] = []
    places: list[list[Place]] = []
    text, place = "", []
    for row, line in enumerate(lines):
        if line.endswith("=") and row < len(lines) - 1:
            text += line[:-1]
            place += [(row, column) for column in range(len(line) - 1)]
            continue
        texts.append(text + line)
        places.append(place + [(row, column) for column in range(len(line))])
        text, place = "", []
    return texts, places


def _find_spans(lines: Sequence[str], is_userid: UseridCheck) -> tuple[list[Span], set[str]]:
    """Where the passwords of ``lines`` stand, and the passwords that a soft line break
    cut in two (found whole in the reading that runs such lines together)."""
    budget = [_EXACT_LINES]
    found = _find_plain_spans(lines, is_userid, budget)
    whole: set[str] = set()
    soft = _soft_joined(lines)
    if soft is not None:
        texts, places = soft
        # Both readings count: a line ending in "=" may be prose, or a command of its
        # own ("signup fred pw =") that the run-on reading no longer sees.
        for row, a, b in _find_plain_spans(texts, is_userid, budget, run_on=True):
            whole.add(texts[row][a:b])
            pieces: dict[int, list[int]] = {}
            for line_row, column in places[row][a:b]:
                pieces.setdefault(line_row, []).append(column)
            found += [(line_row, columns[0], columns[-1] + 1)
                      for line_row, columns in pieces.items()]
    return found, whole


def _find_plain_spans(lines: Sequence[str], is_userid: UseridCheck,
                      budget: list[int], run_on: bool = False) -> list[Span]:
    found = _find_spans_in(lines, is_userid, budget, fine_too=True, run_on=run_on)
    if _has_joining("\n".join(lines)):  # (no line feed is one of them)
        texts, places = _joined(lines)
        found += [(row, places[row][a], places[row][b - 1] + 1)
                  for row, a, b in _find_spans_in(texts, is_userid, budget, fine_too=False,
                                                  run_on=run_on)]
    return found


def _find_spans_in(lines: Sequence[str], is_userid: UseridCheck, budget: list[int],
                   fine_too: bool, run_on: bool) -> list[Span]:
    found: list[Span] = []
    for fine in (False, True) if fine_too else (False,):
        analysed = _Analysed(lines, fine)
        # What a command found on a line depends only on the line and the few after it
        # (a command cut over lines): the same lines again (a quoted mail quoted
        # again) are looked up, not read again.
        seen: dict[tuple[str, ...], list[tuple[int, int, int]]] = {}
        # Only lines a command may begin on are read (rules 1-3 pass the others by),
        # each distinct line looked at once (a quoted thread repeats its lines).
        beginning = _lines_beginning_commands(lines, fine)
        for index in [i for i, line in enumerate(lines) if line in beginning]:
            window = tuple(lines[index:index + 1 + _CONTINUATION_LINES])
            relative = seen.get(window)
            key = (lines[index], fine, run_on, is_userid is not None, len(window))
            if relative is None:
                relative = _known_window(key, window)
            if relative is None and budget[0] <= 0:
                # A mail of thousands of command lines: the rest are read the quick way
                # (in the first reading only, for a line the second splits no further).
                relative = [] if fine and _PLAIN_RE.fullmatch(lines[index]) else [
                    (0, a, b) for _, a, b in _after_command_word(analysed[index])]
            elif relative is None:
                budget[0] -= 1
                asked = _Asked(is_userid)
                read_analysed, read_lines = _Reads(analysed), _Reads(lines)
                relative = [(row - index, a, b) for row, a, b in _passwords_at(
                    read_analysed, index, asked.check, read_lines, fine, run_on)]
                # Kept for later texts when no user was looked up: then any lookup
                # gives the same reading. (The reading depends on the lines it read.)
                read = window[:max(read_analysed.furthest, read_lines.furthest, index)
                              - index + 1]
                if not asked.asked and sum(map(len, read)) <= _CACHED_LINE * 2:
                    _remember_window(key, read[1:], relative)
            seen[window] = relative
            found += [(index + row, a, b) for row, a, b in relative]
    return found


class _Asked:
    """A userid check that notes whether it was asked at all."""

    def __init__(self, is_userid: UseridCheck) -> None:
        self._is_userid = is_userid
        self.asked = False
        self.check: UseridCheck = None if is_userid is None else self._ask

    def _ask(self, word: str) -> bool:
        self.asked = True
        assert self._is_userid is not None
        return self._is_userid(word)


class _Reads(Sequence[str]):
    """Lines (or their analyses) that note the furthest one read."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._lines = lines
        self.furthest = -1

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if index < 0:
            index += len(self._lines)
        self.furthest = max(self.furthest, index)
        return self._lines[index]


#: The key of a command line's reading: the line, the reading (fine, run on, with a
#: userid check), and how many lines its window has (it and the few after it).
WindowKey = tuple[str, bool, bool, bool, int]
#: Passwords found (relative spans) on a line whose reading asked no userid check (by
#: whether there was one), across calls, with the lines after it that the reading read
#: (most read none: a command cut over lines reads on): the lines of the server's own
#: mails come back quoted in every reply, their neighbours changed with each move.
_KNOWN_WINDOWS: dict[WindowKey, list[tuple[tuple[str, ...], list[tuple[int, int, int]]]]] = {}
_KNOWN_WINDOWS_MOST = 4096
#: Readings kept for one line (each after other lines it read).
_READINGS_A_LINE = 4


def _known_window(key: WindowKey, window: tuple[str, ...]) -> list[tuple[int, int, int]] | None:
    """The reading kept for ``key`` whose lines read after the first are ``window``'s."""
    for after, relative in _KNOWN_WINDOWS.get(key, ()):
        if window[1:1 + len(after)] == after:
            return relative
    return None


def _remember_window(key: WindowKey, after: tuple[str, ...],
                     relative: list[tuple[int, int, int]]) -> None:
    try:
        if key not in _KNOWN_WINDOWS and len(_KNOWN_WINDOWS) >= _KNOWN_WINDOWS_MOST:
            _KNOWN_WINDOWS.pop(next(iter(_KNOWN_WINDOWS)), None)  # the oldest first
        kept = _KNOWN_WINDOWS.setdefault(key, [])
        kept.insert(0, (after, relative))
        del kept[_READINGS_A_LINE:]
    except (RuntimeError, StopIteration):  # another thread changed it meanwhile
        _KNOWN_WINDOWS.clear()


#: How many lines that begin with a command word one text has read exactly (rules
#: 1-3, some 40 µs a line); after them, a line that begins with one has every word
#: after the command word masked that is no word of the protocol, number, move,
#: address or common English word: more than a password, never less, at a few µs a
#: line (a mail of 256 KiB of "signup fred pwN" lines).
_EXACT_LINES = 1000


def _after_command_word(line: str) -> list[Span]:
    """The quick reading of a line past _EXACT_LINES (see there)."""
    spans: list[Span] = []
    for found in list(_TOKEN_RE.finditer(line, _starts(line)[0]))[1:]:
        word = found.group()
        lowered = word.lower()
        if not (lowered in _PROTOCOL_WORDS or lowered in NOT_USERIDS
                or _BOARD_RE.fullmatch(word) or _is_placeholder(word)
                or _ADDRESS_MARKS & set(word) or _MOVE_WORD_RE.fullmatch(lowered)):
            spans.append((0, found.start(), found.end()))
    return spans


def _passwords_at(analysed: Sequence[str], index: int, is_userid: UseridCheck,
                  lines: Sequence[str], fine: bool, run_on: bool) -> list[Span]:
    """The passwords of the commands beginning on line ``index`` (in one reading; the
    reading that runs lines together at soft line breaks looks for the first only)."""
    if fine and all(_PLAIN_RE.fullmatch(lines[row])
                    and not _PUNCTUATION_WORD_RE.search(lines[row]) for row in
                    range(index, min(len(lines), index + 1 + _CONTINUATION_LINES))):
        return []  # nothing to split further: the first reading saw it all
    line = analysed[index]
    starts = _starts(line)
    # A second command on the line ("signup fred pw1 signoff fred pw2") begins at a
    # first word of a command with a password; each is read up to the next one.
    # (Every reading looks from each place a command may begin, first choice first:
    # after a prefix or tag it does not know, a command is read as at a line's start.)
    begins: list[int] = []
    for start in ([] if run_on else starts):
        begins = _later_commands(line, start)
        if begins:
            break
    found: list[Span] = []
    for start in starts:
        found = _line_passwords(analysed, index, start, is_userid, lines, fine)
        if found:
            break
    if not run_on:  # (words run together at a soft line break are no words)
        after = min((a for row, a, _ in found if row == index), default=0)
        for start in starts:
            shaped = _shaped_passwords(line[:begins[0]] if begins else line, index, start,
                                       after=after, is_userid=is_userid)
            if shaped:
                found += shaped
                break
    for begin, end in zip(begins, [*begins[1:], len(line)]):
        spans = _line_passwords([line[begin:end]], 0, 0, is_userid,
                                [lines[index][begin:end]], fine)
        spans += _shaped_passwords(line[begin:end], 0, 0,
                                   after=min((a for _, a, _ in spans), default=0),
                                   is_userid=is_userid)
        found += [(index, begin + a, begin + b) for _, a, b in spans]
    return found


def _later_commands(line: str, start: int) -> list[int]:
    """Where commands with a password begin on a command line after its first word."""
    if _recognise(_first_lowered(line, start)) is None:
        return []
    begins: list[int] = []
    after_game_word = False
    for found in _TOKEN_RE.finditer(line, start):
        word = found.group().lower()
        if (found.start() > start and word in _SECRET_FIRST_WORDS and not after_game_word
                and _secret_command_at(line, found.start(), userid_next=True)):
            begins.append(found.start())
        after_game_word = word == GAME_WORD
    return begins


def password_shaped(word: str) -> bool:
    """Whether ``word`` is written as passwords are and names are not: a capital after a
    small letter or a digit ("FredPw77", "secretPW"), or capitals and digits together
    ("Secret1", "PW2024"); never a number, a board, a move, an address or a
    placeholder."""
    bare = word.rstrip("=")  # (a soft line break's mark)
    shaped = _CAPITAL_AFTER_RE.search(bare) or (
        _CAPITAL_RE.search(bare) and _DIGIT_RE.search(bare))
    if (not shaped or _BOARD_RE.fullmatch(bare) or _is_placeholder(bare)
            or _ADDRESS_MARKS & set(bare) or _is_move_word(bare) or looks_like_move(bare)
            or bare.lower().split("#")[0] in _PROTOCOL_WORDS or _CELLS_RE.fullmatch(bare)):
        return False
    return True


#: A capital after a small letter or a digit; and a capital and a digit anywhere (each
#: looked for alone: one pattern "[A-Z].*\d|\d.*[A-Z]" is quadratic in a long word).
_CAPITAL_AFTER_RE = re.compile(r"[a-z0-9][A-Z]")
_CAPITAL_RE = re.compile(r"[A-Z]")
_DIGIT_RE = re.compile(r"\d")
#: Cells and move marks only, a wrong move too ("A1B2C3-D4#9").
_CELLS_RE = re.compile(r"(?:[a-z]\d{1,2}[-,]?)+(?:#\d*)?", re.IGNORECASE)


def _first_lowered(line: str, start: int, more: int = 1) -> list[str]:
    """The first words from ``start`` (as many as a command's words and ``more``), lower
    case."""
    return [found.group().lower() for _, found in
            zip(range(_LONGEST_COMMAND + more), _TOKEN_RE.finditer(line, start))]


def _secret_command_at(line: str, start: int, *, userid_next: bool = False) -> bool:
    """Whether the words from ``start`` begin a command that has a password; with
    ``userid_next``, also followed by a userid (after a board number, if any), as a
    command written after another on its line is (not a list of command words)."""
    lowered = _first_lowered(line, start, more=3)
    found = _secret_reading(lowered)
    if found is None:
        return False
    if not userid_next:
        return True
    args = lowered[found[1]:]
    if args and _BOARD_RE.fullmatch(args[0]):
        args = args[1:]
    return bool(args) and is_valid_userid(args[0]) and not (
        args[0] in _PROTOCOL_WORDS or args[0] in NOT_USERIDS)


def _shaped_passwords(line: str, index: int, start: int, after: int,
                      is_userid: UseridCheck = None) -> list[Span]:
    """The password-shaped words (see password_shaped) after the words of a command
    with a password, and after column ``after`` (where the rule of its positions put
    its first password: the userid before it is no password): a misspelt or
    incomplete command ("signoff FredPw77", "signup fr ed Secret99", "change passwd
    fred OldPw1 NewPw2") does not show a password its positions cannot place."""
    tokens = [(found.start(), found.end()) for found in _TOKEN_RE.finditer(line, start)]
    lowered = [line[a:b].lower() for a, b in tokens[:_LONGEST_COMMAND + 1]]
    readings = _readings(lowered)
    # (A letter put in a command word counts here too: "signnup Secr3tPw".)
    first = next((found for found in [*readings, *_put_in_readings(lowered, readings)]
                  if found[0].secret), None)
    if first is None and not readings and len(lowered) > 1:
        first = _by_first_word(lowered)  # "change passwd fred Old New", "resgn 101 Pw"
    if (first is None or not first[0].secret
            or _OWN_SUBJECT_RE.fullmatch(line[start:].strip().lower())):
        return []  # not a command line, or the Subject of one of the server's mails
    spec, used = first
    if lowered[used:used + 1] and lowered[used] in NOT_USERIDS:
        return []  # a sentence ("see you at ten, I will use MyPw1 then")
    # Before the first password the userid stands: kept, unless the server knows
    # it names nobody (a password written where the userid is missing:
    # "message Pw1Zq wilma"); signup names a user still to be made.
    shaped = [(index, a, b) for a, b in tokens[used:]
              if password_shaped(line[a:b]) and (
                  a >= after or not (is_userid is None or is_userid(line[a:b])
                                     or spec.name == "signup"))]
    if lowered[0] in _COMMAND_WORDS_ANY or len(lowered[0]) >= 6:
        return shaped
    # A short word with a slip is often another word ("see" for "seek", "week"): only
    # a word up to the password's place (the userid left out: "liit Secr3tPw",
    # "sigup Secr3tPw"), and only where no sentence goes on after it ("see McDonald
    # at the club" keeps its name, as rule 3 keeps a word before prose).
    hidden = {(a, b) for _, a, b in shaped}
    up_to_password = tokens[used:used + max(spec.secret) + 1]
    return [(index, a, b) for number, (a, b) in enumerate(up_to_password, used)
            if (a, b) in hidden
            and not _sentence_after([line[c:d] for c, d in tokens[number + 1:number + 3]])]


def _by_first_word(lowered: Sequence[str]) -> Reading | None:
    """The command with a password whose first word (after the game word) the line's
    first word is, exactly or within one slip or letter put in, where no command's
    words fit the line; of several, the one with the most words up to its last
    password. A slipped word of a board command needs the board after it ("resgn 101
    Secr3tPw"; "that iPhone rocks" is no chat)."""
    first = lowered[0]
    if first == GAME_WORD:
        return None
    if first in COMMANDS_BY_FIRST_WORD:
        return COMMANDS_BY_FIRST_WORD[first], 1
    near = [spec for word, spec in COMMANDS_BY_FIRST_WORD.items()
            if _close_for_masking(first, word) and (
                spec.name not in _BOARD_SECRET_COMMANDS or _BOARD_RE.fullmatch(lowered[1]))]
    return (max(near, key=lambda spec: max(spec.secret)), 1) if near else None


def _sentence_after(rest: Sequence[str]) -> bool:
    """Whether ``rest`` (the words after one) is a sentence going on: two ordinary words,
    the first no command word ("... is a draw"; rule 3's reading of prose)."""
    return (len(rest) >= 2 and all(_PROSE_RE.fullmatch(word) for word in rest[:2])
            and rest[0].lower() not in _COMMAND_WORDS_ANY)


def _starts(analysed: str) -> list[int]:
    """Where a command may begin in an analysed line, first choice first."""
    first = _command_start(analysed)
    starts = _junk_end(analysed, first)
    if starts != [first]:  # (where no junk was skipped they would be ``first`` again)
        # Re:, Subject: ... may stand after the junk too ("<p>AW: signup ..."), or
        # a label whose first letters the junk took ("=E9=0Fwd:" left "wd:").
        starts += [_command_start(" " * s + analysed[s:]) for s in starts]
    # A head of prefixes and tags a mail program put first, read from before the junk
    # (which takes a tag's "[") and after it (which takes a label's first letters);
    # the grammar's definition, so no command it reads behind a head keeps a password.
    for at in (first,) if first == starts[-1] else (first, starts[-1]):
        head = SUBJECT_HEAD_RE.match(analysed, at)
        if head:
            starts.append(head.end())
    return list(dict.fromkeys(starts))


class _Analysed(Sequence[str]):
    """The analyses of ``lines`` (see _analysis), each made when first asked for: the
    lines no command begins on (most of a quoted mail) are never analysed."""

    def __init__(self, lines: Sequence[str], fine: bool) -> None:
        self._lines = lines
        self._fine = fine
        self._made: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if index < 0:
            index += len(self._lines)
        made = self._made.get(index)
        if made is None:
            made = self._made[index] = _cached_analysis(self._lines[index], self._fine)
        return made


#: Lines longer than this are analysed afresh each time instead of kept in the caches
#: (which hold many short lines: a quoted mail repeats its lines, and one mail is
#: read by find_passwords, mask_passwords and quote_original in turn).
_CACHED_LINE = 400


@functools.lru_cache(maxsize=1 << 14)
def _analysis_of_short(line: str, fine: bool) -> str:
    return _analysis(line, fine)


def _cached_analysis(line: str, fine: bool) -> str:
    return _analysis_of_short(line, fine) if len(line) <= _CACHED_LINE else _analysis(line, fine)


def _deletions(word: str) -> list[str]:
    return [word[:i] + word[i + 1:] for i in range(len(word))]


#: The words a line must begin with for rules 1-3 to look at it: command words exactly
#: (also without their first letter, see _BEHEADED), and the words of four letters or
#: more with one slip; a slip is found by deleting one letter of each side (a letter
#: changed or swapped, a superset of _close) or of the command word (a letter left out).
_EXACT_FIRST = _COMMAND_WORDS_ANY | _BEHEADED
_SLIP_TARGETS = frozenset(word for word in _COMMAND_WORDS_ANY if len(word) >= 4)
_ONE_LEFT_OUT = frozenset(d for word in _SLIP_TARGETS for d in _deletions(word))
_TARGET_LENGTHS = frozenset(len(word) for word in _SLIP_TARGETS)


#: The words of the commands with a password, of four letters or more: one of them with
#: a letter put in is read for hiding that command's passwords (_put_in_readings).
_PUT_IN_TARGETS = frozenset(word for key, spec in COMMAND_WORDS.items() if spec.secret
                            for word in key if len(word) >= 4)
_PUT_IN_LENGTHS = frozenset(len(word) + 1 for word in _PUT_IN_TARGETS)


@functools.lru_cache(maxsize=1 << 14)
def _put_in_like(word: str) -> bool:
    """Whether ``word`` (lower case) is a word of a command with a password with one
    letter put in (see ``_put_in``)."""
    return len(word) in _PUT_IN_LENGTHS and any(
        d in _PUT_IN_TARGETS and _put_in(word, d) for d in _deletions(word))


@functools.lru_cache(maxsize=1 << 14)
def _command_like(word: str) -> bool:
    """Whether ``word`` (lower case) may be a command word as rules 1-3 read one:
    true for every word _recognise, _first_command_word, _BEHEADED or
    _put_in_readings accepts."""
    if word in _EXACT_FIRST or word in _ONE_LEFT_OUT:
        return True
    return (len(word) in _TARGET_LENGTHS and any(d in _ONE_LEFT_OUT for d in _deletions(word))
            ) or _put_in_like(word)


def _first_words(analysed: str) -> list[str]:
    """The first word after each place a command may begin (lower case)."""
    words = []
    for start in _starts(analysed):
        found = _TOKEN_RE.search(analysed, start)
        if found:
            words.append(found.group().lower())
    return words


def _may_begin_command(line: str, fine: bool) -> bool:
    """Whether a command may begin on ``line`` in this reading: its first word (after
    quote marks, prefixes and junk) is command-like. Every line rules 1-3 find a
    password on (the first line of a command cut over lines) is one; most lines of
    prose and of a quoted board are not, and are passed by without further work."""
    if len(line) <= _CACHED_LINE:
        return _may_begin_short(line, fine)
    return any(_command_like(word) for word in _first_words(_analysis(line, fine)))


@functools.lru_cache(maxsize=1 << 14)
def _may_begin_short(line: str, fine: bool) -> bool:
    return any(_command_like(word) for word in _first_words(_analysis_of_short(line, fine)))


#: Up to how many distinct lines a text is judged line by line (a quoted board's 50
#: lines: 13 µs so, 45 µs by their rests; a 200 KB thread's 900: 0.4 ms by their rests,
#: several ms line by line when they are new).
_LINES_JUDGED_ONE_BY_ONE = 128
#: The quote marks and blanks that begin a line up to the last blank among them
#: (``> > > ``), then the rest of the line: one match a line in lines joined by LF.
_QUOTED_REST_RE = re.compile(r"^(?:[> ]* )?(.*)$", re.MULTILINE)


def _lines_beginning_commands(lines: Sequence[str], fine: bool) -> frozenset[str]:
    """The distinct lines of ``lines`` on which a command may begin (_may_begin_command).

    Quote marks before a line's last blank among them decide nothing there: every step
    of _analysis leaves them marks or blanks (no pattern of it matches a blank or a
    ``>`` at its start, or looks behind further than one blank), and _starts skips
    them. So a line is judged by its rest, each distinct rest once: a thread quoting
    the same board at every depth costs its board's lines, the rests cut at C speed.
    The answer depends on the set of lines only, and one mail's texts are read several
    times (masked ahead, in the stored copy, quoted): the last few sets are kept. A
    text of few lines is judged line by line (each line's answer is kept): there the
    fixed cost of cutting and keeping the rests is more than they save."""
    distinct = set(lines)
    if len(distinct) <= _LINES_JUDGED_ONE_BY_ONE:
        return frozenset(line for line in distinct if _may_begin_command(line, fine))
    return _beginning_of_distinct(frozenset(distinct), fine)


@functools.lru_cache(maxsize=8)
def _beginning_of_distinct(lines: frozenset[str], fine: bool) -> frozenset[str]:
    distinct, rests = _rests_of(lines)
    verdicts = {rest: _may_begin_command(rest, fine) for rest in set(rests)}
    return frozenset(line for line, rest in zip(distinct, rests) if verdicts[rest])


@functools.lru_cache(maxsize=4)
def _rests_of(lines: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines in some order, and the rest of each after its quote marks up to
    their last blank (the line itself when it holds a line feed), for both readings."""
    distinct = tuple(lines)
    rests = tuple(_QUOTED_REST_RE.findall("\n".join(distinct)))
    if len(rests) != len(distinct):  # (a line holding a line feed: judged whole)
        return distinct, distinct
    return distinct, rests


#: The start of the next command or Subject run together with a password.
_GLUED_RE = re.compile(
    "(?:" + "|".join(sorted(_COMMAND_WORDS_ANY, key=len, reverse=True))
    + r"|(?:re|fwd?|aw|wg|sv|antw|vs|tr)\s*:)$", re.IGNORECASE)
#: The last characters (lower case) of what _GLUED_RE finds: a word ending in another
#: ASCII character holds no glued command, and is passed by without the search
#: (which tries every place of the word: 2 µs a password, 40 ms in a mail of 10,000).
_GLUED_LAST = frozenset(word[-1] for word in _COMMAND_WORDS_ANY) | {":"}


def _secrets_of(lines: Sequence[str], spans: Iterable[Span]) -> set[str]:
    """The words at ``spans``; a word run together with the next command
    (``PWsignup``: a Subject repeated without blanks) also without that command."""
    secrets: set[str] = set()
    for row, a, b in spans:
        word = lines[row][a:b]
        if not word:
            continue
        secrets.add(word)
        last = word[-1]
        if last.isascii() and last.lower() not in _GLUED_LAST:
            continue
        glued = _GLUED_RE.search(word)
        if glued and glued.start() > 0:
            secrets.add(word[: glued.start()])
    return secrets


#: A password this long is hidden wherever it stands, also inside other words; a
#: shorter one (often an ordinary word: "game") only in text back to its own writer,
#: where hiding it tells nobody else what it was.
LONG_SECRET = 6


def _hide_in_line(line: str, secrets: Sequence[str], *, short_too: bool = False) -> str:
    """``line`` with every occurrence of the secrets masked (rule 4): a secret of
    LONG_SECRET characters or more anywhere; a shorter one, with ``short_too``, as a
    word of its own (not inside an address: "fred@new.example").

    The long ones first, in one pass over the text (one pattern for all of them,
    however many there are), then the short ones, longest first, a length at a time
    (hiding one may make a word of the next: "help=" leaves "********=")."""
    patterns = _secret_patterns(tuple(secrets))
    if patterns is None:
        return _hide_one_by_one(line, secrets, short_too=short_too)
    long_pattern, short_patterns = patterns
    if long_pattern is not None:
        line = long_pattern.sub(PASSWORD_MASK, line)
    for pattern in short_patterns if short_too else ():
        line = pattern.sub(PASSWORD_MASK, line)
    return line


def _hide_one_by_one(line: str, secrets: Sequence[str], *, short_too: bool) -> str:
    """As _hide_in_line, a secret at a time (for secrets no pattern can hold)."""
    for secret in secrets:
        if secret not in line:
            continue
        if len(secret) >= LONG_SECRET:
            line = line.replace(secret, PASSWORD_MASK)
        elif short_too:
            line = re.sub(_SHORT_BEFORE + re.escape(secret) + _SHORT_AFTER, PASSWORD_MASK, line)
    return line


#: Around a short secret: a word of its own, not part of an address or a name.
_SHORT_BEFORE = r"(?<![A-Za-z0-9@.])"
_SHORT_AFTER = r"(?![A-Za-z0-9@]|\.\w)"


@functools.lru_cache(maxsize=256)
def _secret_patterns(
        secrets: tuple[str, ...]) -> tuple[re.Pattern[str] | None, list[re.Pattern[str]]] | None:
    """One pattern for the long secrets (None when there are none) and one for the
    short ones of each length, longest first; None when the secrets nest too deep for a
    pattern (then they are hidden one by one)."""
    long_ones = sorted({s for s in secrets if len(s) >= LONG_SECRET})
    short_ones = {s for s in secrets if 0 < len(s) < LONG_SECRET}
    try:
        long_pattern = re.compile(_radix_pattern(long_ones)) if long_ones else None
        short_patterns = [
            re.compile(f"{_SHORT_BEFORE}(?:{_radix_pattern(sorted(of_length))}){_SHORT_AFTER}")
            for length in range(LONG_SECRET - 1, 0, -1)
            if (of_length := [s for s in short_ones if len(s) == length])]
    except RecursionError:
        return None
    return long_pattern, short_patterns


def _radix_pattern(words: list[str]) -> str:
    """One alternation for the sorted, distinct ``words`` that matches the longest of
    them at each place: grouped by their common beginnings, so that a pattern of
    thousands of words costs a few tries at each character, not thousands."""
    branches: list[str] = []
    index = 0
    while index < len(words):
        first = words[index][0]
        end = index
        while end < len(words) and words[end][0] == first:
            end += 1
        group = words[index:end]
        index = end
        if len(group) == 1:
            branches.append(re.escape(group[0]))
            continue
        common = os.path.commonprefix(group)
        rests = [word[len(common):] for word in group]
        inner = _radix_pattern([rest for rest in rests if rest])
        optional = "?" if "" in rests else ""
        branches.append(f"{re.escape(common)}(?:{inner}){optional}")
    return "|".join(branches)


def _ordered(secrets: Iterable[str]) -> list[str]:
    return sorted({s for s in secrets if s and s != PASSWORD_MASK}, key=len, reverse=True)


def _mask_lines(lines: list[str], is_userid: UseridCheck = None) -> list[str]:
    return _mask_lines_finding(lines, is_userid)[0]


def _mask_lines_finding(lines: list[str],
                        is_userid: UseridCheck = None) -> tuple[list[str], set[str]]:
    """The lines masked, and the passwords found in them."""
    spans, whole = _find_spans(lines, is_userid)
    if not spans:
        return list(lines), set()
    found = _secrets_of(lines, spans) | whole
    secrets = _ordered(found)
    out = list(lines)
    # The found places first, right to left so that earlier places keep their columns
    # (places of the two readings may overlap: merged), then every other occurrence.
    by_row: dict[int, list[tuple[int, int]]] = {}
    for row, a, b in spans:
        by_row.setdefault(row, []).append((a, b))
    for row, places in by_row.items():
        merged: list[tuple[int, int]] = []
        for a, b in sorted(places):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        for a, b in reversed(merged):
            out[row] = out[row][:a] + PASSWORD_MASK + out[row][b:]
    # The text itself quotes the command: a short password is hidden as a word too.
    # (One pass over the whole text: no secret holds a line feed.)
    return _hide_in_line("\n".join(out), secrets, short_too=True).split("\n"), found


def find_passwords(text: str, is_userid: UseridCheck = None) -> set[str]:
    """The passwords written in ``text`` (see the module text for the rule)."""
    lines = text.splitlines()
    spans, whole = _find_spans(lines, is_userid)
    return _secrets_of(lines, spans) | whole


def hide_passwords(text: str, secrets: Iterable[str], *, short_too: bool = False) -> str:
    """``text`` with the ``secrets`` (found in another text, e.g. the mail being
    answered) replaced by ``********``: those of LONG_SECRET characters or more
    anywhere, shorter ones as words of their own with ``short_too`` (for an answer to
    the writer of the secrets; in text for others, hiding "game" would tell them it
    was the password)."""
    ordered = _ordered(secrets)
    if not ordered or not text:
        return text
    return _hide_in_line(text, ordered, short_too=short_too)


def hide_passwords_in_html(html_text: str, secrets: Iterable[str], *,
                           short_too: bool = False) -> str:
    """Like :func:`hide_passwords`, in the text between the tags of an HTML page."""
    import html as html_module

    ordered = _ordered(secrets)
    if not ordered:
        return html_text
    escaped = _ordered([*ordered, *(html_module.escape(s) for s in ordered),
                        *(html_module.escape(s, quote=False) for s in ordered)])
    pieces = re.split(r"(<[^<>]*>)", html_text)
    return "".join(piece if piece.startswith("<")
                   else _hide_in_line(piece, escaped, short_too=short_too)
                   for piece in pieces)


#: The tags of HTML elements that begin a line where a mail program shows them.
_LINE_TAG_RE = re.compile(
    r"</?(?:address|article|blockquote|br|center|dd|div|dl|dt|footer|h[1-6]|header|hr|li"
    r"|ol|p|pre|section|table|td|th|tr|ul)\b[^<>]*>",
    re.IGNORECASE,
)
#: What else of an HTML part's markup is no text a sender typed: any other tag (also
#: one _HTML_TAG_RE does not name), script and style elements, the marks around a
#: comment, and no-break spaces.
_MARKUP_RE = re.compile(
    r"<(script|style)\b[^<>]*>.*?(?:</\1\s*>|$)|<!--|-->|<[A-Za-z/!?][^<>]*>|&nbsp;",
    re.IGNORECASE | re.DOTALL,
)


_BLANK_LINES_RE = re.compile(r"\n(?:[^\S\n]*+\n)++")


def markup_words(html_text: str) -> str:
    """The text of HTML markup as the rule reads words in it: the lines a mail program
    shows (a tag of a block, a cell or a line break begins a line) and each other
    piece of markup a blank (words on either side stay apart, as the rule's own
    reading of a tag keeps them); the text itself as it stands. A page of tags is read
    as the few words it shows (a quoted board's 25 KB of markup as a few hundred
    characters), in three passes of a pattern."""
    lines = _MARKUP_RE.sub(" ", _LINE_TAG_RE.sub("\n", html_text))
    # One line break where several stand (the end of one block and the start of the
    # next), as a mail program shows them: a command cut over two blocks stays whole.
    return _BLANK_LINES_RE.sub("\n", lines)


def forget_whole_texts() -> None:
    """Empty the caches keyed on a whole text (a quote, the set of a text's lines), as
    a benchmark needs to read each text as a new mail's; the caches of single lines
    stay (a new mail quotes lines the server has read before)."""
    _quoted.cache_clear()
    _beginning_of_distinct.cache_clear()
    _rests_of.cache_clear()


def mask_passwords(text: str, is_userid: UseridCheck = None) -> str:
    """``text`` (a Subject, a body, or both) with every password replaced by ``********``.

    See the module text for what is a password. Line ends are kept.
    """
    return mask_and_find_passwords(text, is_userid)[0]


def mask_and_find_passwords(text: str, is_userid: UseridCheck = None) -> tuple[str, set[str]]:
    """:func:`mask_passwords` and :func:`find_passwords` of ``text`` in one reading."""
    pieces = text.splitlines(keepends=True)
    bodies = [p.rstrip("\r\n") for p in pieces]
    masked, secrets = _mask_lines_finding(bodies, is_userid)
    if masked == bodies:
        return text, secrets  # (nothing masked: the lines, joined again, are the text)
    return "".join(m + p[len(b):] for m, p, b in zip(masked, pieces, bodies)), secrets


#: What stands in a quote for a line the server cannot read.
_UNREADABLE_NOTE = "[text the server cannot read, not quoted]"
#: Signs of text no charset made readable: replacement characters, controls, an
#: encoded word or quoted-printable escapes left undecoded, blanks read in the wrong
#: charset. The masking cannot tell the words of such a line apart for certain, so
#: the line is not quoted back at all.
_UNREADABLE_RE = re.compile(
    "[\ufffd\x00-\x08\x0b-\x1f\x7f-\x9f]"
    r"|=\?[^?\s]{0,40}\?[QqBb]\?|(?:=[0-9A-Fa-f]{2}){2,}"
)
#: _UNREADABLE_RE's first branch alone, and its others (each begins with "="): a
#: pattern of one character class is searched at C speed, an alternation is tried at
#: every character.
_UNREADABLE_CHAR_RE = re.compile("[\ufffd\x00-\x08\x0b-\x1f\x7f-\x9f]")
_UNREADABLE_ESCAPE_RE = re.compile(r"=\?[^?\s]{0,40}\?[QqBb]\?|(?:=[0-9A-Fa-f]{2}){2,}")


def _unreadable(line: str) -> bool:
    """Whether _UNREADABLE_RE or (in a line not ASCII) mojibake is found in ``line``."""
    # (Mojibake is never ASCII: a plain line is not searched for it.)
    return bool(_UNREADABLE_CHAR_RE.search(line)
                or ("=" in line and _UNREADABLE_ESCAPE_RE.search(line))
                or (not line.isascii() and _LONG_MOJIBAKE_RE.search(line)))


def quotable(line: str) -> str:
    """``line`` for quoting inside an answer, or a note when it cannot be read."""
    return _UNREADABLE_NOTE if _unreadable(line) else line


#: A line end as str.splitlines would not read it: CRLF, LF or CR alone.
_LINE_END_RE = re.compile(r"\r\n|\r|\n")


def _end_of_lines(text: str, count: int) -> int:
    """Where the first ``count`` lines of ``text`` end, with the line end after the last
    of them (the end of ``text`` when it has no more lines)."""
    if count <= 0:
        return 0
    for number, found in enumerate(_LINE_END_RE.finditer(text), start=1):
        if number == count:
            return found.end()
    return len(text)


def quote_original(subject: str, body: str, *, max_lines: int = 200) -> str:
    """The original mail quoted with ``> `` and passwords masked, for an answer.

    The first line quotes the Subject (``> Subject: ...``), then the body follows after
    a quoted blank line.  Blank lines become a bare ``>``; bodies longer than
    ``max_lines`` lines are cut with a note. The last few quotes are kept: an error
    answer quotes its mail for the error text and again for the mail's template.
    """
    return _quoted(subject, body, max_lines)


@functools.lru_cache(maxsize=8)
def _quoted(subject: str, body: str, max_lines: int) -> str:
    subject_line = f"Subject: {subject.strip()}"
    body = body.rstrip("\r\n")
    body_lines: list[str] = []
    cut = 0
    if body.strip():  # (a body of blanks is not quoted)
        # Only the lines quoted are split apart; the others are counted at C speed.
        quoted_end = _end_of_lines(body, max_lines)
        quoted, rest = body[:quoted_end], body[quoted_end:]
        body_lines = quoted.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if rest:
            body_lines.pop()  # (after the line end that closes the last line quoted)
            cut = rest.count("\n") + rest.count("\r") - rest.count("\r\n") + 1
    # Subject and body masked as one text: a command begun in the Subject may go on
    # in the first line of the body.
    masked = _mask_lines([subject_line, *body_lines])
    if _unreadable("\n".join(masked)):  # one look at the whole text first: most is plain
        masked = [_UNREADABLE_NOTE if _unreadable(line) else line for line in masked]
    if masked[0] == _UNREADABLE_NOTE:
        masked[0] = f"Subject: {_UNREADABLE_NOTE}"
    lines = masked[:1]
    if body_lines:
        lines += ["", *masked[1:]]
        if cut > 0:
            lines.append(f"[... {cut} more line{'s' if cut != 1 else ''} not quoted]")
    return "\n".join(f"> {line}".rstrip() if line.strip() else ">" for line in lines)
