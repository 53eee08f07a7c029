"""An HTML mail part as plain text lines, in time linear in the markup's length.

Every sender is a stranger, so the cost of reading one mail must not depend on its shape.
The standard library's ``html.parser`` is quadratic on unclosed tags (``<a <a <a``,
``</</``; CVE-2025-6069 class) and raises on ``<![<![``. The two maintained linear parsers
were measured on the hostile shapes at the 256 KiB mail limit (2026, selectolax 1.0.2 with
Lexbor, lxml 6.1 with libxml2 2.14): both are fast on ordinary mail and on unclosed tags,
but one tag with 29,000 distinct attributes costs Lexbor 2.2 s and lxml 3.6 s (each new
attribute is compared with all before it), Lexbor takes 5.5 s for 52,000 nested ``<div>``
and 1.7 s for ``<b>x</p>`` repeated, and lxml silently drops everything after element
depth 256. Taming either would take a linear pre-pass over the markup that is already a
tokenizer, so this module is that tokenizer, with no tree at all:

* The markup is scanned once, left to right. Every search either succeeds and the
  position moves past all it scanned, or fails and the rest of the markup is consumed
  (an unclosed comment or tag ends the text, as in a browser); the regular expressions
  used on tags are possessive, so none backtracks.
* Only the elements that shape the text are followed: blocks, table cells, ``<pre>``,
  skipped elements and mail programs' containers; inline markup (``<a>``, ``<span>``,
  ``<font>`` …) changes no line and is not followed, so misnested inline tags cannot
  pile up. The followed elements live on a stack whose operations are O(1) amortised:
  each is pushed once and popped once, and which one an end tag closes is found through
  per-name lists of open positions, not by walking the stack. HTML's implied ends
  (``<p>`` closing an open ``p``, ``<li>`` an ``li`` …) are kept, so sloppy markup does
  not nest ever deeper. Elements deeper than :data:`MAX_DEPTH` are not followed; the text
  inside them is read as quoted, so nothing deep is ever taken for the player's new text.
* Quoting: ``<blockquote>`` (any type) and the quote containers of mail programs become
  lines prefixed ``"> "`` (nested ``"> > "``, at most :data:`MAX_QUOTE_PREFIX` levels
  shown). After a reply marker (Outlook's ``divRplyFwdMsg``, ``appendonsend``,
  ``stopSpelling``, its header block with a bold ``From:``; Zimbra's ``zwchr``; Zoho's
  ``zmail_extra_hr``) outside any quote, the rest of the mail is quoted: those programs
  do not nest the original in a blockquote. Signature containers come out after a line
  ``"-- "``, the separator the text reader stops at.
* Block elements end lines, ``<p>``, ``<blockquote>`` and ``<table>`` end paragraphs
  (a blank line), ``<pre>`` keeps its text as written; ``script``, ``style``, ``head``,
  ``title`` and ``template`` are skipped; entities are decoded (bounded, so a numeric
  reference of 5,000 digits is no error); no-break spaces and the invisible characters that stand between words (zero-width
  space, word joiner, byte order mark) become blanks, and the joiners and the soft
  hyphen are removed. The text ends with one ``"\\n"``.
"""

from __future__ import annotations

import re
from html import unescape
from typing import NamedTuple

__all__ = ["html_to_text", "MAX_DEPTH", "MAX_QUOTE_PREFIX"]

#: Followed elements open at once; text in deeper ones is read as quoted.
MAX_DEPTH = 400
#: Quote levels written as "> " at the start of a line (deeper quotes look the same):
#: bounds the output to a small multiple of the input, whatever the nesting.
MAX_QUOTE_PREFIX = 8

_TAG_NAME = re.compile(r"[A-Za-z][^\s/>]*+")
# The rest of a tag up to its ">": a quoted attribute value may hold ">"; an unclosed
# quote is an ordinary character. Possessive throughout, so it never backtracks.
_TAG_REST = re.compile(r"""(?:[^>"'=]++|=\s*+"[^"]*+"|=\s*+'[^']*+'|=|["'])*+>""")
_ATTRIBUTE = re.compile(
    r"""([^\s/>"'=][^\s/>"'=]*+)(?:\s*+=\s*+(?:"([^"]*+)"|'([^']*+)'|([^\s>]*+)))?+"""
)
_COMMENT_END = re.compile(r"--!?>")
_ENTITY = re.compile(r"&(?:#[0-9]++;?|#[xX][0-9a-fA-F]++;?|[A-Za-z][A-Za-z0-9]{0,31}+;?)")
_MAX_REFERENCE_DIGITS = 10  # html.unescape raises on a decimal reference of 5,000 digits
# No-break spaces become blanks, and so do the invisible characters that stand between
# words (zero-width space, word joiner, byte order mark: ``mail.validation`` reads them
# so too, and a command glued at them would hide its password from masking); the
# joiners and the soft hyphen, which stand inside words, go (one pass over the markup,
# and again over text that held entities).
_INVISIBLES = str.maketrans(
    {"\xa0": " ", "\u2007": " ", "\u202f": " ", "\u200b": " ", "\u2060": " ", "\ufeff": " "}
    | dict.fromkeys("\u00ad\u180e\u200c\u200d")
)

# What each element name does, as bits (names not listed: inline markup, not followed).
_BLOCK = 1  # ends a line before and after
_VOID = 2  # has no end tag
_FOLLOWED = 4  # pushed on the stack of open elements
_CLOSES_P = 8  # its start tag closes an open <p>
_SPECIAL = 16  # a block end tag does not reach past it... (see _SCOPE)
_SCOPE = 32  # end tags do not close past it (HTML's "scope" boundaries)
_PARAGRAPH = 64  # a blank line after it
_PRE = 128  # text kept as written
_SKIP = 256  # nothing inside is text
_RAW = 512  # nothing inside is markup: it ends at its own end tag
_BOLD = 1024
_ATTRIBUTES = 2048  # its class, id … may name a mail program's container
_CELL = 4096  # a table cell: a blank before its text
_IN_HEAD = 8192  # may stand in <head> without ending it
_IMPLIES_END = 16384  # its start tag ends an open sibling (see _IMPLIED_END)
_ENDS_ITSELF = 32768  # its start tag ends the same element when that is the innermost


def _flag_table() -> dict[str, int]:
    flags: dict[str, int] = {}

    def add(names: str, bits: int) -> None:
        for name in names.split():
            flags[name] = flags.get(name, 0) | bits

    blocks = (
        "address article aside blockquote center dd details dialog dir div dl dt fieldset "
        "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup li main menu nav ol "
        "p pre listing section summary table tbody thead tfoot tr caption ul"
    )
    add(blocks, _BLOCK | _FOLLOWED | _SPECIAL)
    add("br hr", _BLOCK | _VOID)
    add("area base basefont bgsound col embed img input keygen link meta param source "
        "track wbr", _VOID)
    add(blocks.replace("tbody thead tfoot tr caption", "") + " hr", _CLOSES_P)
    add("td th", _FOLLOWED | _SPECIAL | _SCOPE | _CELL)
    add("table caption html template object applet marquee", _SCOPE)
    add("p blockquote table pre listing h1 h2 h3 h4 h5 h6 ul ol dl", _PARAGRAPH)
    add("pre listing textarea xmp plaintext", _PRE | _FOLLOWED)
    add("head template", _SKIP | _FOLLOWED)
    add("script style title iframe noembed noframes", _SKIP | _RAW | _FOLLOWED)
    add("textarea xmp", _RAW)
    add("b strong", _BOLD)
    add("div blockquote hr span section article aside p font table td", _ATTRIBUTES)
    add("base basefont bgsound link meta noscript script style template title", _IN_HEAD)
    add("li dt dd td th tr", _IMPLIES_END)
    add("p li dt dd td th tr", _ENDS_ITSELF)
    return flags


_FLAGS = _flag_table()
# Start tag -> (the open elements it ends, the elements that fence them off).
_IMPLIED_END: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "li": (("li",), ("ul", "ol", "menu")),
    "dt": (("dt", "dd"), ("dl",)),
    "dd": (("dt", "dd"), ("dl",)),
    "td": (("td", "th"), ("tr", "table")),
    "th": (("td", "th"), ("tr", "table")),
    "tr": (("tr", "td", "th"), ("table",)),
}
_RAW_END = {
    name: re.compile(r"</" + name + r"(?=[\s/>])", re.IGNORECASE)
    for name, bits in _FLAGS.items()
    if bits & _RAW
}

# Mail programs' containers, matched against each class and id token in lower case; they
# prefix them when they quote (Outlook "x_", Gmail "m_-123…", Yahoo "ydp1a2b…").
_QUOTE_SUFFIXES = (
    "gmail_quote", "gmail_quote_container", "gmail_attr", "moz-cite-prefix",
    "protonmail_quote", "zmail_extra", "olk_src_body_section",
)
_QUOTE_INFIXES = ("yahoo_quoted",)
_MARKER_SUFFIXES = (
    "divrplyfwdmsg", "appendonsend", "stopspelling", "zwchr", "zmail_extra_hr",
    "outlookmessageheader",
)
_SIGNATURE_SUFFIXES = (
    "gmail_signature", "signature", "ms-outlook-mobile-signature", "moz-signature",
    "applemailsignature", "protonmail_signature_block", "ymail_android_signature",
    "zm-_id_-sgn",
)


def _kind(name: str, attributes: dict[str, str]) -> str:
    """"quote", "marker" (the rest is quoted), "signature", "header?" (Outlook's header
    block, when a bold label follows) or "" for an element with these attributes."""
    if name == "blockquote":
        return "quote"
    tokens = (attributes.get("class", "") + " " + attributes.get("id", "")).lower().split()
    if any(token.endswith(_MARKER_SUFFIXES) for token in tokens):
        return "marker"
    if any(
        token.endswith(_QUOTE_SUFFIXES) or any(infix in token for infix in _QUOTE_INFIXES)
        for token in tokens
    ):
        return "quote"
    if attributes.get("data-smartmail", "").lower() == "gmail_signature" or any(
        token.endswith(_SIGNATURE_SUFFIXES) for token in tokens
    ):
        return "signature"
    if name == "div":
        style = "".join(attributes.get("style", "").lower().split())
        if "border:none" in style and "border-top:solid" in style:
            return "header?"
    return ""


def _attributes(rest: str) -> dict[str, str]:
    """The attributes this reader uses, from the text of a tag after its name."""
    found: dict[str, str] = {}
    for match in _ATTRIBUTE.finditer(rest):
        key = match.group(1).lower()
        if key in ("class", "id", "style", "data-smartmail") and key not in found:
            value = match.group(2) or match.group(3) or match.group(4) or ""
            found[key] = _decode_entities(value)
    return found


def _decode_entity(match: re.Match[str]) -> str:
    reference = match.group()
    if reference.startswith("&#") and len(reference.rstrip(";")) > _MAX_REFERENCE_DIGITS + 3:
        return "\ufffd"
    return unescape(reference)


def _decode_entities(text: str) -> str:
    return _ENTITY.sub(_decode_entity, text) if "&" in text else text


class _Open(NamedTuple):
    """A followed open element and the reading state inside it."""

    name: str
    quote: int  # quote level of the text inside
    absorb: bool  # in a mail program's quote container: a blockquote adds no level
    pre: bool
    skip: bool
    signature: bool
    scope: int  # stack index of the nearest scope boundary at or below this one


_ROOT = _Open("#root", 0, False, False, False, False, 0)


class _Reader:
    """The state of one reading: open elements and the lines written so far."""

    def __init__(self) -> None:
        self.stack: list[_Open] = [_ROOT]
        self.open_at: dict[str, list[int]] = {}  # name -> stack indexes, innermost last
        self.too_deep = 0  # start tags not followed beyond MAX_DEPTH, still open
        self.bold = 0
        self.lines: list[tuple[int, str]] = []
        self.pieces: list[str] = []
        self.rest_quoted = 0  # 1 once a reply marker was met outside any quote
        self.header_candidate = 0  # stack index of what may be Outlook's header block
        self.drop_newline = False  # HTML drops a line end right after <pre>

    def level(self) -> int:
        quote = self.stack[-1].quote + self.rest_quoted
        return max(quote, 1) if self.too_deep else quote

    def flush(self, always: bool = False) -> None:
        """End the current line (an empty one only when ``always``: ``<br>``)."""
        if not self.pieces and not always:
            return
        text = "".join(self.pieces)
        self.pieces = []
        level = self.level()
        if self.stack[-1].pre:
            for part in text.split("\n"):
                self.lines.append((level, part.rstrip()))
            return
        text = " ".join(text.split())
        if text or always:
            self.lines.append((level, text))

    def paragraph_end(self) -> None:
        if self.lines and not self.lines[-1][1]:
            return
        self.lines.append((self.level(), ""))

    def text(self, data: str) -> None:
        if "head" in self.open_at and data.strip(" \t\n\f"):
            self.close_to(self.open_at["head"][-1])  # text ends an unclosed <head>
        if self.stack[-1].skip:
            return
        if self.drop_newline:
            self.drop_newline = False
            if data.startswith("\n"):
                data = data[1:]
        if "&" in data:
            data = _decode_entities(data).translate(_INVISIBLES)
        if self.header_candidate and data.strip():
            # Outlook's header block starts with a bold label ("From:", "Von:", "De :").
            if self.bold and data.strip()[-1] in ":\uff1a":
                self.flush()
                self.rest_quoted = 1
            self.header_candidate = 0
        self.pieces.append(data)

    def start(self, name: str, flags: int, attributes: dict[str, str]) -> None:
        if flags & _ENDS_ITSELF and not attributes and self.stack[-1].name == name:
            # The next sibling (<li> after <li>, <p> after <p>): what closing the one and
            # opening the other would do, the open element (the same state) kept.
            if flags & _BLOCK:
                self.flush()
            if flags & _PARAGRAPH:
                self.paragraph_end()
            elif flags & _CELL:
                self.pieces.append(" ")
            return
        open_at = self.open_at
        if open_at:
            if "head" in open_at and not flags & _IN_HEAD:
                self.close_to(open_at["head"][-1])
            if flags & _CLOSES_P and "p" in open_at and open_at["p"][-1] >= self.stack[-1].scope:
                self.close_to(open_at["p"][-1])
            if flags & _IMPLIES_END:
                self.implied_end(name)
        if flags & _BOLD:
            self.bold += 1
        if flags & _BLOCK:
            self.flush(name == "br")
            if flags & _PARAGRAPH and self.lines:
                self.paragraph_end()
        elif flags & _CELL:
            self.pieces.append(" ")
        top = self.stack[-1]
        kind = _kind(name, attributes) if attributes or name == "blockquote" else ""
        if kind == "marker" and top.quote == 0 and not top.skip and not self.rest_quoted:
            self.flush()
            self.rest_quoted = 1
        if flags & _VOID or not (flags & _FOLLOWED or kind):
            return
        if len(self.stack) > MAX_DEPTH:
            self.too_deep += 1
            return
        quote, absorb, signature = top.quote, top.absorb, top.signature
        if kind == "quote":
            # Inside a mail program's container (attribution and all) the quote level is
            # already one up: its blockquote adds none, a second container neither.
            if absorb:
                absorb = name != "blockquote"
            else:
                self.flush()
                if self.lines:
                    self.paragraph_end()  # a quote stands apart from what comes before
                quote, absorb = quote + 1, name != "blockquote"
        elif kind == "signature" and not signature and quote == 0 and not self.rest_quoted:
            self.flush()
            self.lines.append((0, "-- "))
            signature = True
        index = len(self.stack)
        self.stack.append(
            _Open(
                name, quote, absorb, top.pre or bool(flags & _PRE),
                top.skip or bool(flags & _SKIP), signature,
                index if flags & _SCOPE else top.scope,
            )
        )
        positions = open_at.get(name)
        if positions is None:
            open_at[name] = [index]
        else:
            positions.append(index)
        if kind == "header?" and quote == 0 and not self.rest_quoted:
            self.header_candidate = index
        if flags & _PRE:
            self.drop_newline = True

    def implied_end(self, name: str) -> None:
        """``<li>`` ends an open ``li`` unless a list lies between them (and alike)."""
        ends, fences = _IMPLIED_END[name]
        target = 0
        for end in ends:
            positions = self.open_at.get(end)
            if positions and positions[-1] > target:
                target = positions[-1]
        if not target:
            return
        for fence in fences:
            positions = self.open_at.get(fence)
            if positions and positions[-1] > target:
                return
        self.close_to(target)

    def end(self, name: str, flags: int) -> None:
        positions = self.open_at.get(name)
        if self.too_deep and (positions or flags & _FOLLOWED):
            self.flush()  # the text in them is quoted
            self.too_deep -= 1  # closes one of those not followed, whichever
            return
        if not positions:
            if flags & _BOLD and self.bold:
                self.bold -= 1
            elif flags & _BLOCK:
                self.flush(name == "br")  # a stray </p> ends a line, </br> is a <br>
            return
        index = positions[-1]
        if index < self.stack[-1].scope:
            return  # it lies outside the table cell
        self.close_to(index)

    def close_to(self, index: int) -> None:
        """Close the open element at ``index`` and all opened after it."""
        stack = self.stack
        while len(stack) > index:
            closing = stack[-1]
            name = closing.name
            flags = _FLAGS.get(name, 0)
            quote_changes = closing.quote != stack[-2].quote
            if flags & _BLOCK or quote_changes or closing.pre:
                self.flush()
            stack.pop()
            positions = self.open_at[name]
            positions.pop()
            if not positions:
                del self.open_at[name]
            if self.header_candidate >= len(stack):
                self.header_candidate = 0
            if flags & _PARAGRAPH or quote_changes:
                self.paragraph_end()

    def finish(self) -> str:
        self.flush()
        out: list[str] = []
        blank_due = False  # a blank line (or several) comes before the next text
        last_level = 0
        for level, line in self.lines:
            if not line:
                blank_due = bool(out)
                continue
            if blank_due:
                # As deep as the text on both sides: a blank inside a quote is quoted.
                out.append(("> " * min(last_level, level, MAX_QUOTE_PREFIX)).rstrip())
                blank_due = False
            shown = min(level, MAX_QUOTE_PREFIX)
            out.append(("> " * shown + line).rstrip() if shown else line)
            last_level = level
        return "\n".join(out) + "\n"


def html_to_text(markup: str) -> str:
    """HTML as plain text: block elements end lines, quotes and what mail programs mark
    as quoted become ``"> "`` lines, signatures follow a ``"-- "`` line, entities are
    decoded; linear in ``len(markup)`` whatever the markup (see the module text)."""
    markup = markup.replace("\r\n", "\n").replace("\r", "\n").translate(_INVISIBLES)
    reader = _Reader()
    size = len(markup)
    position = 0
    find = markup.find
    while position < size:
        lt = find("<", position)
        if lt < 0:
            reader.text(markup[position:])
            break
        if lt > position:
            reader.text(markup[position:lt])
        position = _markup(reader, markup, lt)
    return reader.finish()


def _tag_end(markup: str, after_name: int) -> int | None:
    """The position after the ">" that ends the tag whose name ends at ``after_name``;
    None when the tag is never closed (it runs to the end of the markup)."""
    if markup.startswith(">", after_name):
        return after_name + 1
    rest = _TAG_REST.match(markup, after_name)
    return None if rest is None else rest.end()


def _markup(reader: _Reader, markup: str, lt: int) -> int:
    """Read the markup at ``lt`` (a "<"); the position after it (``len(markup)`` when it
    runs to the end)."""
    size = len(markup)
    if markup.startswith("/", lt + 1):
        name_match = _TAG_NAME.match(markup, lt + 2)
        if name_match is None:  # "</>" is nothing, "</3" a bogus comment
            close = markup.find(">", lt + 2)
            return size if close < 0 else close + 1
        tag_end = _tag_end(markup, name_match.end())
        if tag_end is None:
            return size
        name = name_match.group().lower()
        reader.end(name, _FLAGS.get(name, 0))
        return tag_end
    if markup.startswith("!", lt + 1) or markup.startswith("?", lt + 1):
        if markup.startswith("<!--", lt):
            if markup.startswith("<!-->", lt):
                return lt + 5
            if markup.startswith("<!--->", lt):
                return lt + 6
            end = _COMMENT_END.search(markup, lt + 4)
            return size if end is None else end.end()
        close = markup.find(">", lt + 2)  # <!DOCTYPE …>, <![CDATA[ …>, <?xml …>: bogus comments
        return size if close < 0 else close + 1
    name_match = _TAG_NAME.match(markup, lt + 1)
    if name_match is None:
        reader.text("<")
        return lt + 1
    after_name = name_match.end()
    tag_end = _tag_end(markup, after_name)
    if tag_end is None:
        return size
    name = name_match.group().lower()
    flags = _FLAGS.get(name, 0)
    if not flags:
        return tag_end  # inline markup: no line, no state
    attributes = (
        _attributes(markup[after_name : tag_end - 1])
        if flags & _ATTRIBUTES and tag_end - 1 > after_name
        else {}
    )
    reader.start(name, flags, attributes)
    if flags & _RAW:
        end = _RAW_END[name].search(markup, tag_end)
        stop = size if end is None else end.start()
        if not flags & _SKIP:
            reader.text(markup[tag_end:stop])
        return stop
    if name == "plaintext":
        reader.text(markup[tag_end:])
        return size
    return tag_end
