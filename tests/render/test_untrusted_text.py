"""Text one user shows another (comments, chats, messages, broadcasts) cannot deceive
nor break the page: bidirectional controls are removed in both parts, a long word is
broken in the text part (no line wider than the rest of the mail) and wraps in the HTML
part (the page is no wider for it, checked in headless Chromium)."""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from browser import chromium

from abalone_pbm.mail.validation import BIDI_CONTROLS, without_bidi_controls
from abalone_pbm.render import Comment, shown_text
from abalone_pbm.render.text import WIDTH
from abalone_pbm.service import passwords
from tests.service.harness import Harness, Sent, make_harness

#: Every control by itself, and the "Trojan Source" forms: an override that makes a
#: move read backwards, an isolate left open so that it swallows what follows.
TRICKS = [f"c3-c5{control}d4" for control in BIDI_CONTROLS] + [
    "I played \u202e4d,5c-3c\u202c, your turn",
    "fred \u2067resigns\u2069 now",
    "unclosed \u2066 isolate and \u202b embedding",
]
LONG_WORD = "abalone" * 572 + "xyzw"  # 4,008 letters without a blank
#: How an HTML page writes each control (it is ASCII: references for the rest).
REFERENCES = [f"&#{ord(c)};" for c in BIDI_CONTROLS] + [f"&#x{ord(c):x};" for c in BIDI_CONTROLS]


def _no_bidi(text: str) -> bool:
    return not any(c in text for c in BIDI_CONTROLS)


def _no_bidi_html(html: str) -> bool:
    lowered = html.lower()
    return _no_bidi(html) and not any(ref in lowered for ref in REFERENCES)


# ------------------------------------------------------------------ the rule itself
@pytest.mark.parametrize("text", TRICKS)
def test_every_bidi_control_is_removed(text: str) -> None:
    shown = shown_text(text)
    assert _no_bidi(shown)
    assert shown == "".join(c for c in text if c not in BIDI_CONTROLS)


def test_right_to_left_writing_keeps_its_letters() -> None:
    hebrew, arabic = "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd", "\u0645\u0631\u062d\u0628\u0627"
    assert shown_text(f"{hebrew}\n{arabic}\u061c!") == f"{hebrew}\n{arabic}!"
    assert without_bidi_controls("plain text") == "plain text"


def test_lines_within_the_width_stay_as_written() -> None:
    text = "  o o o\n x x x x\n\nc3-c5,d4   is my move\t(tab kept)\n" + "y" * WIDTH
    assert shown_text(text) == text


def test_a_long_word_and_a_long_line_are_broken_to_the_width() -> None:
    line = "words " * 40 + LONG_WORD + " tail"
    shown = shown_text("short first line\n    " + line + "\nshort last line")
    lines = shown.split("\n")
    assert lines[0] == "short first line" and lines[-1] == "short last line"
    assert max(map(len, lines)) <= WIDTH
    # Nothing lost, nothing added: the same words and letters in the same order.
    assert "".join(shown.split()) == "".join(("short first line" + line + "short last line").split())
    # The indent of the long line is kept on each of its lines.
    assert all(x.startswith("    ") for x in lines[1:-1])


def test_the_cost_is_linear_in_the_texts_length() -> None:
    def seconds(text: str) -> float:
        started = time.perf_counter()
        shown_text(text)
        return time.perf_counter() - started

    for unit in ("x" * 64, "word "):  # one endless word; endless short words
        small = unit * (32_768 // len(unit))
        large = small * 8  # 256 KiB: the largest mail the server accepts
        seconds(small)  # warm up
        assert seconds(large) < 30 * seconds(small) + 0.05


def test_a_comment_is_fit_to_show_however_it_is_made() -> None:
    comment = Comment("fred", "I played \u202e4d,5c-3c\u202c\n" + LONG_WORD)
    assert _no_bidi(comment.text)
    assert max(map(len, comment.text.split("\n"))) <= WIDTH


# --------------------------------------------------- through the service, both parts
@pytest.fixture
def harness(migrated_db_url: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setattr(passwords, "_hasher", PasswordHasher(time_cost=1, memory_cost=64))
    made = make_harness(migrated_db_url, tmp_path, broadcast_min_games=0,
                        broadcast_min_age_days=0)
    try:
        yield made
    finally:
        made.database.dispose()


HOSTILE = "\n".join(TRICKS) + "\n" + LONG_WORD + "\n"


def _only(sent: list[Sent], to: str, subject: str) -> Sent:
    found = [s for s in sent if s.to == to and re.match(subject, s.subject)]
    assert len(found) == 1, [(s.to, s.subject) for s in sent]
    return found[0]


def _fit_to_show(mail: Sent) -> None:
    """No bidi control in either part; the text part within the mail's width, the
    long word all there (broken, not cut off)."""
    assert _no_bidi(mail.body), mail.subject
    assert max(map(len, mail.body.splitlines())) <= WIDTH, mail.subject
    assert LONG_WORD in "".join(mail.body.split()), mail.subject
    if mail.html is not None:
        assert _no_bidi_html(mail.html), mail.subject
        assert LONG_WORD in "".join(re.sub(r"<[^>]*>", "", mail.html).split())


def test_every_way_one_user_writes_to_another(harness: Harness) -> None:
    h = harness
    fred, wilma = h.signup("fred"), h.signup("wilma")
    boards = h.challenge("fred", "wilma")
    board = int(re.findall(r"\d+", boards["fred"].subject)[0])
    reply = boards["fred"].reply_to
    assert reply
    # A move's comment (reply), shown under the board in wilma's mail.
    moved = h.mail(fred, f"Re: New Abalone Board {board} fred", "c3-c5,d4\n" + HOSTILE,
                   to=reply)
    board_mail = _only(moved, wilma, rf"Abalone Board {board} wilma \*\*$")
    _fit_to_show(board_mail)
    assert board_mail.html is not None and '<pre dir="auto"' in board_mail.html
    # A draw offer's comment (a vote), with the password command.
    offered = h.mail(wilma, f"abalone move {board} wilma wilma-pw propose", HOSTILE)
    _fit_to_show(_only(offered, fred, rf"Abalone Board {board} "))
    # A chat, a message, a broadcast.
    chatted = h.mail(fred, f"abalone chat {board} fred fred-pw", HOSTILE)
    _fit_to_show(_only(chatted, wilma, rf"Abalone Board {board} chat fred$"))
    messaged = h.mail(fred, "message fred fred-pw wilma", HOSTILE)
    _fit_to_show(_only(messaged, wilma, r"Abalone message from fred$"))
    broadcast = h.mail(wilma, "broadcast wilma wilma-pw", HOSTILE)
    _fit_to_show(_only(broadcast, fred, r"Abalone broadcast from wilma$"))


def test_a_withdrawal_that_removes_the_game(harness: Harness) -> None:
    """Resigning before the first round is over removes a two-player game: the last
    mail of the board carries the comment too."""
    h = harness
    fred, wilma = h.signup("fred"), h.signup("wilma")
    boards = h.challenge("fred", "wilma")
    board = int(re.findall(r"\d+", boards["fred"].subject)[0])
    removed = h.mail(fred, f"abalone resign {board} fred fred-pw", HOSTILE)
    mail = _only(removed, wilma, rf"Abalone Board {board}$")
    assert "fred writes:" in mail.body
    _fit_to_show(mail)


# ------------------------------------------------------------ the page in a browser
def _page_width(html: str, window: int) -> int:
    """The width of the laid-out page (``scrollWidth``) in a ``window`` px wide window:
    a copy of the page with one line of script added that writes it into the title."""
    probe = '<script>document.title = "W" + document.documentElement.scrollWidth;</script>'
    with tempfile.TemporaryDirectory(prefix="abalone-width-") as workdir:
        page = Path(workdir) / "mail.html"
        page.write_text(html.replace("</body>", probe + "</body>"), encoding="utf-8")
        profile = Path(workdir) / "profile"
        profile.mkdir()
        done = subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
             f"--window-size={window},900", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120,
        )
    found = re.search(r"<title>W(\d+)</title>", done.stdout)
    assert found, done.stderr[-2000:]
    return int(found.group(1))


@pytest.mark.parametrize("window", [900, 360])
def test_a_long_word_does_not_widen_the_board_page(
    harness: Harness, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board page with a 4,000-letter word in its comment is as wide as the same
    page without one, on a desktop and on a phone.  The text part's breaking is
    turned off here, so the word reaches the page whole and the page's own wrapping
    is what is tested."""
    import abalone_pbm.render.views as views

    monkeypatch.setattr(views, "shown_text", without_bidi_controls)
    h = harness
    fred, wilma = h.signup("fred"), h.signup("wilma")
    boards = h.challenge("fred", "wilma")
    board = int(re.findall(r"\d+", boards["fred"].subject)[0])
    reply = boards["fred"].reply_to
    assert reply
    moved = h.mail(fred, f"Re: New Abalone Board {board} fred",
                   f"c3-c5,d4\nA short word, then a long one:\n{LONG_WORD}\n", to=reply)
    page = _only(moved, wilma, rf"Abalone Board {board} wilma \*\*$").html
    assert page is not None and LONG_WORD in page
    plain = h.mail(wilma, f"abalone show {board}")
    plain_page = _only(plain, wilma, rf"Abalone Board {board} ").html
    assert plain_page is not None and LONG_WORD not in plain_page
    assert _page_width(page, window) <= max(_page_width(plain_page, window), window)
