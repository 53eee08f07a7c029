"""Reading the argument words of one command line, left to right: userids, passwords,
board numbers, mail addresses, moves.  Every mistake raises the command's
:class:`~.commands.CommandSyntaxError`.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from .commands import CommandSyntaxError
from .registry import CommandSpec
from .words import MOVE_ACTIONS, board_number, is_compact_move, userid_problem, whole_number

_ADDRESS_RE = re.compile(r"[^@\s<>(),;:\"\[\]]+@[^@\s<>(),;:\"\[\]]+\.[^@\s<>(),;:\"\[\]]+")
_MOVE_NUMBER_RE = re.compile(r"^(?P<move>.*?)\s*#\s*(?P<n>\S*)\s*$", re.DOTALL)
#: A move inside a longer text (``preview``): blanks may appear between the parts.
_MOVE_IN_TEXT_RE = re.compile(
    r"[a-z]\s*\d{1,2}\s*(?:-\s*[a-z]\s*\d{1,2}\s*)?,\s*[a-z]\s*\d{1,2}", re.IGNORECASE
)


class ArgumentReader:
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

    def either(self, first: str, second: str) -> bool:
        """The next word, which must be ``first`` or ``second`` (any case): True for
        ``first``."""
        word = self.take(f'"{first}" or "{second}"')
        if word.lower() not in (first, second):
            raise self.fail(f'"{word}" is neither "{first}" nor "{second}"')
        return word.lower() == first

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
        number = board_number(word)
        if number is None:
            raise self.fail(f'"{word}" is not a board number (board numbers look like 101)')
        return number

    def rest(self) -> list[str]:
        words = self.words[self.pos :]
        self.pos = len(self.words)
        return words

    def done(self) -> None:
        if self.pos < len(self.words):
            # Counted, not quoted: a word the command does not take may be a password
            # written where this command has none (``games fred <password>``).
            extra = len(self.words) - self.pos
            more = "one word" if extra == 1 else f"{extra} words"
            raise self.fail(f'Too many words for "{self.spec.name}": {more} more than it takes')

    def board_and_ply(self, word: str) -> tuple[int, int | None]:
        text, _, ply_text = word.partition("#")
        number = board_number(text)
        if number is None:
            raise self.fail(f'"{word}" is not a board number (board numbers look like 101)')
        if "#" not in word:
            return number, None
        ply = whole_number(ply_text, low=0)
        if ply is None:
            raise self.fail(f'"#{ply_text[:20]}" is not a move number (write {number}#5)')
        return number, ply

    def addresses(self, *, required: bool) -> tuple[str, ...]:
        words = self.rest()
        if required and not words:
            raise self.fail(f'Too few words: "{self.spec.name}" needs at least one mail address')
        out = []
        for word in words:
            address = word.strip("<>,;")
            if not _ADDRESS_RE.fullmatch(address):
                raise self.fail(f'"{word}" is not a mail address')
            out.append(address)
        return tuple(out)

    def userids(self, words: Iterable[str]) -> tuple[str, ...]:
        out = []
        for word in words:
            problem = userid_problem(word)
            if problem:
                raise self.fail(problem)
            out.append(word.lower())
        return tuple(out)

    def move_text(self, words: list[str]) -> tuple[str, int | None]:
        """The move of move/queue/submit: blanks inside allowed, an optional ``#n``."""
        text = " ".join(words).strip()
        if not text:
            raise self.fail(f'Too few words: "{self.spec.name}" needs a move')
        expected = None
        match = _MOVE_NUMBER_RE.match(text)
        if match:
            number = match.group("n")
            expected = whole_number(number)
            if expected is None:
                raise self.fail(
                    f'"#{number[:20]}" is not a move number; write the move as c3-c5,d4#7'
                )
            text = match.group("move").strip()
            if not text:
                raise self.fail(f'Too few words: "{self.spec.name}" needs a move before #{number}')
        compact = re.sub(r"\s+", "", text).lower()
        if is_compact_move(compact) or compact in MOVE_ACTIONS:
            return compact, expected
        return text, expected

    def moves_list(self, words: list[str]) -> tuple[str, ...]:
        text = " ".join(words)
        moves, last = [], 0
        for match in _MOVE_IN_TEXT_RE.finditer(text):
            between = text[last : match.start()]
            if between.strip(" \t;"):
                raise self.fail(f'"{between.strip()}" is not a move (write moves as c3-c5,d4)')
            moves.append(re.sub(r"\s+", "", match.group()).lower())
            last = match.end()
        tail = text[last:]
        if tail.strip(" \t;"):
            raise self.fail(f'"{tail.strip()}" is not a move (write moves as c3-c5,d4)')
        return tuple(moves)


def split_filter(words: list[str], allowed: Sequence[str]) -> tuple[list[str], str | None]:
    """The words without a final filter word (``active``), and that word or None."""
    if words and words[-1].lower() in allowed:
        return words[:-1], words[-1].lower()
    return words, None
