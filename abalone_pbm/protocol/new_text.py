"""The player's new text in a mail: what they wrote, told apart from what their mail
program added (DESIGN 2.2, 2.8).

A reply is read line by line, once, with a look-ahead of a few lines (wrapped
attributions, header blocks).  Each line is one of:

- **the old mail, and everything after it**: the signature separator (``-- ``), an
  original-message separator (``-----Original Message-----``, ``-----Mensaje
  original-----``, ``---- On ... wrote ----``, a row of underscores), a forwarded-message
  intro, an Outlook-style header block (``From:/Sent:/To:/Subject:`` in any language,
  with or without ``>``), an attribution line with nothing quoted after it (Yahoo, a
  Norwegian iPad, Outlook for iOS: the old mail follows unquoted), or a line of the
  server's own board mail (its "Summary of Abalone Board" line, the board's rows, the
  move list's header, the comment's row of asterisks, the reply instructions): an
  unquoted copy of the old mail is cut there, whatever did or did not announce it;
- **a quote**: ``>`` lines, and the attribution line (one to three wrapped lines, any
  language, date first or name first) that introduces them: passed over, and the new
  text goes on after them (bottom- and inline-posting);
- **an addition of the mail program**: a client line ("Sent from my iPhone", "Gesendet
  von Outlook für Android", "Diese Nachricht wurde von meinem Android-Gerät mit K-9 Mail
  gesendet.") wherever it stands, the text part's placeholder of an inline image or an
  attachment ("[image: logo.png]", "[cid:image001.png@01DB...]", "<IMG_0042.jpeg>"), or a
  company's classification banner ("[EXTERNAL]",
  "[AMD Official Use Only - General]", "Classification: Internal", a "CAUTION: This
  email originated from outside ..." paragraph): dropped;
- **the player's text**: everything else.

The words behind these rules are data (:mod:`.reply_vocabulary`).  No-break spaces and
the invisible characters between words (zero-width space, word joiner, byte order mark)
become blanks, and the joiners and soft hyphens inside words vanish, before a line is
read.

Cost: every line is looked at a bounded number of times (the look-ahead is at most a
few lines and the index of the next non-blank line is made once, backwards), and the
costlier tests only look at lines short enough to be what they test for, so reading is
linear in the mail's size.

Why our own rules and not a reply-parsing library: the maintained ones
(mail-parser-reply, email_reply_parser and its ports, talon) match multi-line patterns
over the whole text for a language list chosen in advance, know nothing of the
server's own board mail (an Outlook copy without ``>`` is the case that matters most
here: its move list and its example move must never be played), and are not bounded
in their cost.  Their public fixture corpora are the shapes of our table test
(``tests/protocol/test_client_replies.py``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

from . import reply_vocabulary as vocabulary
from .words import REPLY_ACTIONS, looks_like_move

#: The bidirectional formatting characters (``mail.validation.BIDI_CONTROLS``: marks,
#: embeddings, overrides, isolates), which show nothing and which a right-to-left
#: client puts around the name and the address of an attribution.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
#: Blanks that are not spaces (no-break, narrow, figure, ideographic) and the invisible
#: characters that stand between words (zero-width space, word joiner, byte-order
#: mark), read as blanks as ``mail.validation`` reads them (glued, a command's words
#: would hide its password from masking); characters that show nothing and stand
#: inside words or around them (the joiners, the soft hyphen, the bidirectional
#: formatting characters) go: a line is read as it shows.
_INVISIBLE = str.maketrans({
    "\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u3000": " ", "\t": " ",
    "\u200b": " ", "\u2060": " ", "\ufeff": " ",
    "\u200c": None, "\u200d": None, "\u00ad": None,
} | dict.fromkeys(BIDI_CONTROLS))

#: Longest line that may be a client line, banner, attribution or header line; longer
#: lines are the player's text (or the old mail's), and the tests never look at them.
_SHORT = 300

_SERVER_MAIL_RE = re.compile(
    r"(?:New )?Summary of Abalone Board \d+"
    # The HTML part's heading ("New Abalone Board 101", "Abalone Board 101: the game
    # is over"): an HTML copy's first line.
    r"|(?:New |Reminder: )?Abalone Board \d+(?::|$)"
    r"|It is \S+'s turn"
    r"|[A-I]-(?: [^ /]){5,9}(?: /(?: \d)?)?$"
    r"|1 2 3 4 5$"
    r"|(?:/ ){5}6$"
    r"|\*{40,}$"
    r"|How to (?:move|reply)$"
    r"|Reply to this mail with your move"
    r"|Player +pushed off"
    r"|\(\*\* on the Subject"
    r"|abalone move \d+ \S+ <password>"
)
#: A date or a time in an attribution ("12:19", "2026", "27.11.", "11/27/26", "2026年").
_DATE_RE = re.compile(r"\d{1,2}:\d{2}|(?<!\d)(?:19|20)\d{2}(?!\d)|\d{1,2}\.\s?\d{1,2}\."
                      r"|\d{1,2}/\d{1,2}/\d{2,4}|\d{4}年")
_WORD_RE = re.compile(r"[^\s,.:;!?()]+")


def _any_of(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for "holds one of these words" (one scan instead of one per word)."""
    return re.compile("|".join(re.escape(word) for word in sorted(words, key=len, reverse=True)))


_PRODUCT_RE = _any_of(vocabulary.CLIENT_PRODUCTS)
_VERB_RE = _any_of(vocabulary.ATTRIBUTION_VERBS)
_VERB_COLON_RE = re.compile(f"(?:{_VERB_RE.pattern})\\s*[:：]")
_BANNER_WORD_RE = _any_of(vocabulary.BANNER_WORDS)
_BANNER_MARK_RE = _any_of(vocabulary.BANNER_MARKS)
_IMAGE_PLACEHOLDERS_RE = re.compile(
    "(?:(?:\\[(?:" + "|".join(map(re.escape, vocabulary.IMAGE_PLACEHOLDER_WORDS))
    + ")\\s*:[^\\[\\]\n]{0,200}\\]"
    # Apple Mail's placeholder of an attachment: its file name in angle brackets.
    + "|<[^<>@/\\n]{1,120}\\.(?:" + "|".join(vocabulary.ATTACHMENT_EXTENSIONS) + ")>)\\s*)+")
_CLIENT_ENDINGS = tuple(ending.rstrip(".") for ending in vocabulary.CLIENT_LINE_ENDINGS)


def _visible(text: str) -> str:
    """``text`` with odd blanks as spaces and invisible characters gone; one C-speed
    replace per character present (``str.translate`` with a table costs ten times more
    on a large text)."""
    for char, becomes in _INVISIBLE.items():
        if chr(char) in text:
            text = text.replace(chr(char), becomes or "")
    return text


def is_quoted(stripped: str) -> bool:
    return stripped.startswith(">")


def is_signature(raw: str) -> bool:
    """The signature separator ``-- `` (also written without its blank)."""
    return raw.rstrip("\r\n") in ("-- ", "--")


def is_separator(stripped: str) -> bool:
    """An original-message or forwarded-message line, any language: text between runs
    of dashes or equals signs, a row of underscores, a "Begin forwarded message:"."""
    if len(stripped) > _SHORT or len(stripped) < 5:
        return False
    if len(stripped) >= 10 and stripped.strip("_") == "":
        return True
    for mark in "-=":
        if stripped.startswith(mark * 2) and stripped.endswith(mark * 2):
            if len(stripped.strip(mark).strip()) >= 3:
                return True
    return stripped.lower() in vocabulary.FORWARD_INTROS


def is_server_mail(stripped: str) -> bool:
    """A line of the server's own board mail (quoted back without ``>``)."""
    return len(stripped) <= 200 and _SERVER_MAIL_RE.match(stripped) is not None


def header_label(stripped: str) -> str | None:
    """``from`` for "From: ...", "*Von:* ...", "发件人：..." (lower case), else None."""
    head = stripped[:40]
    cut = min((i for i in (head.find(":"), head.find("：")) if i >= 0), default=-1)
    if cut <= 0:
        return None
    label = head[:cut].strip(" *_").lower()
    if not label or len(label) > 30 or any(ch.isdigit() for ch in label):
        return None
    return label


def is_client_line(stripped: str) -> bool:
    """A line a phone or a webmailer adds under a text ("Sent from my iPhone")."""
    if len(stripped) > 160:
        return False
    lower = stripped.lower().strip(" *_")
    if lower.startswith(vocabulary.CLIENT_LINE_OPENERS) or (
            len(lower) <= 80 and lower.rstrip(" .!").endswith(_CLIENT_ENDINGS)):
        return _PRODUCT_RE.search(lower) is not None
    if len(lower) <= 100 and "outlook" in lower and ("ios" in lower or "android" in lower):
        return True
    return len(lower) <= 80 and ("yahoo mail" in lower or "aol app" in lower)


def is_image_placeholder(stripped: str) -> bool:
    """A line of nothing but placeholders of inline images or attachments ("[image:
    logo.png]", "<IMG_0042.jpeg>")."""
    return (len(stripped) <= _SHORT and stripped.startswith(("[", "<"))
            and _IMAGE_PLACEHOLDERS_RE.fullmatch(stripped.lower()) is not None)


def banner_kind(stripped: str) -> str | None:
    """``"line"`` for a one-line classification banner, ``"paragraph"`` for the first
    line of a warning paragraph, None for anything else."""
    if len(stripped) > _SHORT:
        return None
    lower = stripped.lower()
    bare = lower.strip(" *_()[]:!")
    if bare in ("external", "extern", "externe", "external email", "external message",
                "external sender", "externe e-mail", "externe mail", "ext"):
        return "line"
    if len(lower) <= 60 and _classification_only(lower):
        return "line"
    if lower.startswith("[") and lower.endswith("]") and len(lower) <= 120:
        if _BANNER_WORD_RE.search(lower):
            return "line"
    label = header_label(stripped)
    if label is not None and label in vocabulary.BANNER_LABELS:
        return "line"
    opener = lower.lstrip(" *_[(")
    if opener.startswith(vocabulary.BANNER_OPENERS):
        if _BANNER_MARK_RE.search(lower):
            return "paragraph"
    return None


_BANNER_WORDS_ALONE = frozenset(word for word in vocabulary.BANNER_WORDS if " " not in word)
_LETTERS_RE = re.compile(r"[^\W\d_]+")
_CLASSIFICATION_WORDS = _BANNER_WORDS_ALONE | vocabulary.BANNER_LINE_WORDS
_CLASSIFICATION_MARKS = " -–|/*_[]():.!"


def _classification_only(lower: str) -> bool:
    """A classification written as a line of its own ("Internal Use Only", "Highly
    Confidential", "Public"): its words are classification words, one at least a level."""
    first = lower.lstrip(_CLASSIFICATION_MARKS).split(None, 1)
    if not first or first[0].rstrip(_CLASSIFICATION_MARKS) not in _CLASSIFICATION_WORDS:
        return False  # (most lines end here, after a set lookup)
    words = _LETTERS_RE.findall(lower)
    if not words or len(words) > 6 or _LETTERS_RE.sub("", lower).strip(_CLASSIFICATION_MARKS):
        return False
    return (all(word in _CLASSIFICATION_WORDS for word in words)
            and any(word in _BANNER_WORDS_ALONE for word in words))


def _starts_with_opener(lower: str) -> bool:
    if lower.startswith("w dniu"):
        return True
    first = _WORD_RE.match(lower)
    return first is not None and first.group() in vocabulary.ATTRIBUTION_OPENERS


def _has_verb(lower: str) -> bool:
    return _VERB_RE.search(lower) is not None


def _attributional(stripped: str) -> bool:
    """May this line be the first or a middle part of a wrapped attribution?"""
    if len(stripped) > 200:
        return False
    return ("@" in stripped or "<" in stripped or _DATE_RE.search(stripped) is not None
            or _starts_with_opener(stripped.lower()))


def _verb_then_colon(lower: str) -> bool:
    """An attribution verb followed by ":" within the line (Yahoo for Android writes
    the old mail on the attribution's own line: "... wrote:   Summary of ...")."""
    return _VERB_COLON_RE.search(lower) is not None


@dataclass(frozen=True)
class NewText:
    """The new text of a mail: its lines (blank lines between kept, runs of them made
    one, none around), and whether the mail had old mail in it (a quote or a copy)."""

    lines: tuple[str, ...]
    had_old_mail: bool
    #: The text the reader did not read because its bounds were reached first (""
    #: when it ended at the old mail or the end): a ``multiple`` counts its lines.
    unread: str = ""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


#: How much is read line by line: a comment longer than this is cut there (no player
#: writes more under a move), and no mail makes the reader go on for longer: the
#: per-line reading costs a few microseconds a line, the skipping of runs of quoted or
#: blank lines next to nothing.
MAX_NEW_LINES = 400
MAX_NEW_CHARS = 32 * 1024

#: Where a run of quoted lines (and the blank lines among and after them) ends, and
#: where a run of blank lines ends: found by the regular-expression engine in one scan,
#: so that a mail of quote marks or blank lines costs next to nothing (each run is one
#: line for the per-line reading, and a run is never next to one of its own kind: the
#: lines read one by one are at most three times those counted against MAX_NEW_LINES).
_QUOTED_RUN_END_RE = re.compile(r"\n(?![ ]*>|[^\S\n]*(?:\n|\Z))")
_NON_BLANK_RE = re.compile(r"[^\s]")
#: A blank line after the first of a run (a blank line ends a banner's paragraph).
_BLANK_LINE_RE = re.compile(r"\n[^\S\n]*(?:\n|\Z)")


class _Reader:
    """One pass over the lines of a body (see the module text).  Lines are taken from
    the text as the reading needs them; it stops where the new text ends."""

    def __init__(self, body: str) -> None:
        # (CRs looked for first: a search for CRLF in a text without costs a scan of
        # it at a third of C's speed; one character is found at memchr's.)
        if "\r" in body:
            body = body.replace("\r\n", "\n").replace("\r", "\n")
        self.text = _visible(body)
        self._offset = 0
        #: The lines read so far; a run of quoted lines is one line ">", a run of blank
        #: lines one line "".
        self.raw: list[str] = []
        #: Where each line of ``raw`` starts in ``text``.
        self._starts: list[int] = []
        self._stripped: dict[int, str] = {}
        self.kept: list[tuple[int, str]] = []  # (source index, line) of the new text
        self.had_old_mail = False
        #: Where each quoted run of ``raw`` stands in ``text`` (start, end).
        self._runs: dict[int, tuple[int, int]] = {}

    def _read_line(self) -> bool:
        text, start = self.text, self._offset
        if start > len(text):
            return False
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        line = text[start:end]
        stripped = line.strip()
        self._starts.append(start)
        if not stripped:
            found = _NON_BLANK_RE.search(text, start)
            self.raw.append("")
            self._offset = (len(text) + 1 if found is None
                            else max(end + 1, text.rfind("\n", start, found.start()) + 1))
        elif stripped.startswith(">"):
            found = _QUOTED_RUN_END_RE.search(text, start)
            run_end = len(text) if found is None else found.start()
            self._runs[len(self.raw)] = (start, run_end)
            self.raw.append(">")
            self._offset = run_end + 1
        else:
            self.raw.append(line)
            self._offset = end + 1
        return True

    def blank_inside(self, index: int) -> bool:
        """Whether the quoted run at ``index`` holds a blank line (looked for only when
        it matters: a banner's paragraph ends at one)."""
        start, end = self._runs[index]
        return _BLANK_LINE_RE.search(self.text, start, end) is not None

    def has_line(self, index: int) -> bool:
        while len(self.raw) <= index:
            if not self._read_line():
                return False
        return True

    def stripped(self, index: int) -> str:
        known = self._stripped.get(index)
        if known is None:
            known = self._stripped[index] = self.raw[index].strip()
        return known

    def content_after(self, index: int) -> int | None:
        """The next non-blank line: at most two lines on, blank runs being one line."""
        for following in (index + 1, index + 2):
            if self.has_line(following) and self.stripped(following):
                return following
        return None

    def old_mail_at(self, index: int | None) -> bool:
        """Does the old mail (a quote, or a copy of it) start at this line?"""
        if index is None:
            return True  # the end of the mail: an attribution of nothing
        line = self.stripped(index)
        return (is_quoted(line) or is_separator(line) or is_server_mail(line)
                or self.header_block_at(index))

    def header_block_at(self, index: int) -> bool:
        """A block of the old mail's headers from this line: "From:" (any language)
        and, among the next lines, another header label (any language); or three
        "Label: value" lines in a row naming an address or the board (a language
        the vocabulary lacks)."""
        first = header_label(self.stripped(index).lstrip("> "))
        if first is None:
            return False
        known = first in vocabulary.HEADER_LABELS
        labels = 1  # lines whose label the vocabulary knows (all of them, if not the first's)
        lines = 1  # lines of "Label: value", whatever the label
        addressed = "@" in self.stripped(index) or "abalone" in self.stripped(index).lower()
        seen = 0
        wrapped = False  # the last line was the wrapped rest of a value
        position = self.content_after(index)
        while position is not None and seen < 5:
            label = header_label(self.stripped(position).lstrip("> "))
            if label is None:
                if wrapped or not _wrapped_address(self.stripped(position).lstrip("> ")):
                    break
                # A value wrapped onto a line of its own (Outlook wraps a long From
                # before its "<address>"): the block goes on below it.
                wrapped = True
                addressed = True
                seen += 1
                position = self.content_after(position)
                continue
            wrapped = False
            lines += 1
            if label in vocabulary.HEADER_LABELS or not known:
                labels += 1
            addressed = addressed or "@" in self.stripped(position) or (
                "abalone" in self.stripped(position).lower())
            seen += 1
            position = self.content_after(position)
        if known and first in vocabulary.HEADER_FIRST_LABELS and labels >= 2 and (
                addressed or labels >= 3):
            return True
        # Three "Label: value" lines naming an address or the board: a header block in a
        # language the vocabulary lacks, whether or not it knows the first label ("Od:"
        # is Polish and Slovenian, "De:" French, Spanish and Catalan).
        return lines >= 3 and addressed

    def attribution_at(self, index: int) -> int | None:
        """When this line ends an attribution: how many kept lines before it belong to
        it (0 to 2); else None."""
        line = self.stripped(index)
        if len(line) > _SHORT:
            return None
        lower = line.lower()
        if not line.endswith((":", "：")):
            # The old mail on the attribution's own line (Yahoo for Android).
            if (_starts_with_opener(lower) and _verb_then_colon(lower)
                    and ("@" in line or _DATE_RE.search(line))):
                return 0
            return None
        self_contained = _starts_with_opener(lower) or (
            _DATE_RE.search(line) is not None and ("@" in line or _has_verb(lower)))
        # The address wrapped onto the line's start ("<fred@x> kirjoitti:", "<fred@x>
        # ezt írta (...):"): the line right above, the name, is its beginning.
        wrapped_address = line.startswith("<")
        before: list[str] = []
        if not self_contained or wrapped_address:
            source = index - 1
            for kept_index, kept_line in reversed(self.kept[-2:]):
                if kept_index != source or not kept_line.strip():
                    break
                name_above = wrapped_address and not before and len(kept_line.strip()) <= 80
                if not (name_above or _attributional(kept_line.strip())):
                    break
                before.insert(0, kept_line.strip())
                source -= 1
        joined = " ".join(before + [line])
        joined_lower = joined.lower()
        names_someone = "@" in joined or "<" in joined or _DATE_RE.search(joined) is not None
        follows = self.old_mail_at(self.content_after(index))
        if _has_verb(joined_lower) and (names_someone or follows
                                        or _starts_with_opener(joined_lower)):
            return len(before)
        if names_someone and follows and ("@" in joined or _DATE_RE.search(joined)):
            return len(before)
        return None

    def read(self) -> NewText:
        in_banner = False
        index = 0
        taken_lines = taken_chars = 0
        unread = ""
        while self.has_line(index):
            if taken_lines >= MAX_NEW_LINES or taken_chars >= MAX_NEW_CHARS:
                unread = self.text[self._starts[index]:]
                break
            line = self.stripped(index)
            if not line:
                in_banner = False
                self.kept.append((index, ""))
                index += 1
                continue
            if is_quoted(line):
                self.had_old_mail = True
                if in_banner and self.blank_inside(index):
                    in_banner = False  # (as the blank line read alone would)
                if self.kept and self.kept[-1][1].strip():
                    self.kept.append((index, ""))  # inline answers stay paragraphs apart
                index += 1
                continue
            if (is_signature(self.raw[index]) or is_separator(line) or is_server_mail(line)
                    or self.header_block_at(index)):
                self.had_old_mail = self.had_old_mail or not is_signature(self.raw[index])
                break
            taken_lines += 1  # every line read counts, kept or dropped
            belonging = self.attribution_at(index)
            if belonging is not None:
                del self.kept[len(self.kept) - belonging:]
                self.had_old_mail = True
                following = self.content_after(index)
                if following is not None and is_quoted(self.stripped(following)) and (
                        line.endswith((":", "："))):
                    index += 1
                    continue
                break  # the old mail follows unquoted: nothing after is the player's
            kind = banner_kind(line)
            if kind == "paragraph":
                in_banner = True
            if kind is not None or is_client_line(line) or is_image_placeholder(line):
                index += 1
                continue
            if in_banner and not _command_shaped(line):
                index += 1
                continue
            in_banner = False
            # A line longer than the room left is cut: the bound holds for one line too.
            kept_line = self.raw[index].rstrip()[:MAX_NEW_CHARS - taken_chars]
            self.kept.append((index, kept_line))
            taken_chars += len(kept_line)
            index += 1
        return NewText(tidy([line for _, line in self.kept]), self.had_old_mail, unread)


def _wrapped_address(stripped: str) -> bool:
    """The wrapped rest of a header's value: an address alone ("<fred@example.org>",
    "[mailto:fred@example.org]") on its line."""
    return (len(stripped) <= 200 and stripped.startswith(("<", "[mailto:"))
            and stripped.endswith((">", "]")) and "@" in stripped)


def _command_shaped(line: str) -> bool:
    """A one-word reply action or a move: never taken for part of a banner."""
    bare = line.strip(" .!*_").lower()
    return bare in REPLY_ACTIONS or looks_like_move(bare)


def tidy(lines: Sequence[str]) -> tuple[str, ...]:
    """No blank lines around, runs of blank lines made one."""
    out: list[str] = []
    for line in lines:
        if not line.strip():
            if out and out[-1]:
                out.append("")
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return tuple(out)


@functools.lru_cache(maxsize=8)
def read_new_text(body: str) -> NewText:
    """The new text of ``body`` (see the module text). Kept for the last few bodies:
    one mail's body is read by the choice of its part, the reply handler, the comment
    and the answer's first line, and a reading is a frozen value."""
    return _Reader(body).read()
