"""The README's "Your first game in five minutes", run as a newcomer runs it.

Its two shell blocks are taken from the README as they stand and run with bash against
a real ``abalone-pbm serve`` on the embedded defaults (SQLite and the Maildir under
``var/``, in a directory of the test's own).  Only what must differ here is replaced:
the listening port (8025 may be taken on a test machine), the scripts' place (``/tmp``
is shared) and ``py`` (this interpreter).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import _start_serve, _stop, _wait_listening, free_port

README = Path(__file__).resolve().parents[2] / "README.md"


def first_game_blocks() -> list[str]:
    """The shell blocks of the README's first-game section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Your first game", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)


@pytest.fixture
def newcomer(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A serve on the embedded defaults in ``tmp_path``, listening on a free port."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ABALONE_PBM_")}
    env["ABALONE_PBM_LISTEN"] = f"127.0.0.1:{port}"
    process = _start_serve(tmp_path, env)
    try:
        _wait_listening("127.0.0.1", port, process, timeout=30)
        yield tmp_path, port
    finally:
        _stop(process)


def run_block(block: str, workdir: Path, port: int) -> str:
    scripts = workdir / "scripts"
    scripts.mkdir(exist_ok=True)
    # Each block is run alone: ``py`` (set in the first) is this interpreter in both.
    script = f"py={sys.executable}\n" + (
        block.replace('"127.0.0.1", 8025', f'"127.0.0.1", {port}')
        .replace("/tmp/", f"{scripts}/")
        .replace("py=.venv/bin/python\n", ""))
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=workdir,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_readme_first_game_shows_each_board_as_it_says(newcomer: tuple[Path, int]) -> None:
    workdir, port = newcomer
    start, moves = first_game_blocks()[:2]
    listing = run_block(start, workdir, port)
    rows = [[cell.strip() for cell in line.split("|")] for line in listing.splitlines()
            if "|" in line]
    assert [row[:2] for row in rows[:4]] == [
        ["fred@example.org", "Abalone signup fred"],
        ["wilma@example.org", "Abalone signup wilma"],
        ["fred@example.org", "New Abalone Board 101 fred **"],
        ["wilma@example.org", "New Abalone Board 101 fred **"],
    ], listing
    assert re.fullmatch(r"abalone\+101\.\w+@localhost", rows[2][2]), rows[2]
    # read.py fred: fred's new board, with the challenge's comment
    assert "Good luck, Wilma!" in listing and "It is fred's turn" in listing, listing

    after = run_block(moves, workdir, port)
    # echo "$fred_reply": fred's own reply address, read off the listing
    assert after.splitlines()[0] == rows[2][2], after
    # "the board after both moves": fred's reply played c3-c5,d4, wilma's command g7-g5,f6
    assert "It is fred's turn" in after and "the next move is move #3" in after, after
    assert "1. c3-c5,d4" in after and "g7-g5,f6" in after, after
    assert "<table" in (workdir / "scripts" / "board.html").read_text(encoding="utf-8")


def readme_read_py(workdir: Path) -> Path:
    """The README's read.py, written into ``workdir`` as the README has it, beside an
    empty Maildir ``var/outgoing/new`` (returned)."""
    start = first_game_blocks()[0]
    read_py = re.search(r"cat > /tmp/read.py <<'EOF'\n(.*?)\nEOF", start, re.DOTALL)
    assert read_py is not None
    (workdir / "read.py").write_text(read_py.group(1) + "\n", encoding="utf-8")
    new = workdir / "var" / "outgoing" / "new"
    new.mkdir(parents=True)
    return new


def run_read_py(workdir: Path, *args: str, check: bool = True
                ) -> subprocess.CompletedProcess[str]:
    """``python read.py ARGS`` in ``workdir``, as the README runs it (``check``: a
    failure raises)."""
    return subprocess.run([sys.executable, "read.py", *args], cwd=workdir,
                          capture_output=True, text=True, timeout=60, check=check)


def test_read_py_takes_the_mails_in_the_order_written(tmp_path: Path) -> None:
    """Maildir names carry the microseconds without leading zeros: as text, a mail
    written at .M99999 sorts after one written at .M100000 of the same second."""
    new = readme_read_py(tmp_path)
    written = [("1795880566.M99999P7Q1.host", "the board after fred's move"),
               ("1795880566.M100000P7Q2.host", "the board after wilma's move"),
               ("1795880567.M5P7Q3.host", "the board after fred's second move")]
    for name, body in written:
        (new / name).write_text(
            "From: abalone@localhost\nTo: wilma@example.org\nSubject: " + body
            + "\nDate: Sat, 28 Nov 2026 15:42:46 +0000\n\n" + body + "\n", encoding="utf-8")
    listing = run_read_py(tmp_path).stdout
    assert [line.split("|")[1].strip() for line in listing.splitlines()] == [
        body for _, body in written]
    (new / written[2][0]).unlink()
    newest = run_read_py(tmp_path, "wilma").stdout
    assert newest.strip() == "the board after wilma's move"


def test_read_py_says_so_when_a_name_has_no_mail(tmp_path: Path) -> None:
    """One line on standard error and exit status 1, not a traceback."""
    readme_read_py(tmp_path)
    nobody = run_read_py(tmp_path, "nobody", check=False)
    assert nobody.returncode == 1
    assert nobody.stderr.strip() == "no mail to nobody in var/outgoing/new yet"
