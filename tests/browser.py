"""A real browser for the HTML mails: headless Chromium, its screenshots, and reading a
board's cells off a screenshot.

``chromium()`` finds Debian's ``chromium``; where it is missing and we run as root with
apt-get (CI), it installs it once.  Otherwise the tests that need it are skipped with
the reason.  PNG files are read with the standard library (zlib), nothing else.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from apt_packages import apt_install

from abalone_pbm.render import board_html
from abalone_pbm.rules import Board
from abalone_pbm.rules.geometry import CELLS, cell_name

_COMMANDS = ("chromium", "chromium-browser")
_install_error: list[str] = []


def _find() -> str | None:
    for name in _COMMANDS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _install() -> str | None:
    """apt-get install chromium (as root only); the reason it failed, or None."""
    return apt_install("chromium", lambda: _find() is not None, recommends=True)


def chromium() -> str:
    """The chromium command, installed if need be; skips the test when impossible."""
    path = _find()
    if path:
        return path
    if not _install_error:
        _install_error.append(_install() or "")
    path = _find()
    if path is None:
        pytest.skip("headless Chromium not available: " + (_install_error[0] or "unknown"))
    return path


def screenshot(html: str, *, width: int = 900, height: int = 1400) -> Image:
    """Render an HTML page in headless Chromium and return the screenshot."""
    command = chromium()
    with tempfile.TemporaryDirectory(prefix="abalone-shot-") as workdir:
        page = Path(workdir) / "mail.html"
        page.write_text(html, encoding="utf-8")
        shot = Path(workdir) / "shot.png"
        profile = Path(workdir) / "profile"
        profile.mkdir()
        done = subprocess.run(
            [
                command,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                f"--user-data-dir={profile}",
                f"--screenshot={shot}",
                f"--window-size={width},{height}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if not shot.exists():
            raise AssertionError(f"chromium made no screenshot: {done.stderr[-2000:]}")
        return read_png(shot.read_bytes())


# ------------------------------------------------------------------------ PNG
@dataclass
class Image:
    width: int
    height: int
    #: One bytes object of RGB triples per row.
    rows: list[bytes]

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        row = self.rows[y]
        return row[3 * x], row[3 * x + 1], row[3 * x + 2]


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(data: bytes) -> Image:
    """Decode an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat = 8, bytearray()
    width = height = colour_type = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or colour_type not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour_type}")
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    channels = 4 if colour_type == 6 else 3
    stride = width * channels
    raw = zlib.decompress(bytes(idat))
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up_left = previous[i - channels] if i >= channels else 0
                line[i] = (line[i] + _paeth(left, previous[i], up_left)) & 0xFF
        previous = line
        if channels == 4:
            rgb = bytearray()
            for i in range(0, stride, 4):
                rgb += line[i : i + 3]
            rows.append(bytes(rgb))
        else:
            rows.append(bytes(line))
    return Image(width, height, rows)


# ----------------------------------------------------------------- the board
def _rgb(hex_colour: str) -> tuple[int, int, int]:
    value = hex_colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def _close(a: tuple[int, int, int], b: tuple[int, int, int], tolerance: int = 12) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def find_boards(image: Image) -> list[tuple[int, int]]:
    """Top-left corners of every board picture in the screenshot, top to bottom.

    A board is a rectangle of the board colour :data:`board_html.TABLE_WIDTH` pixels
    wide (its corners are rounded, so the straight left edge is looked for).
    """
    colour = _rgb(board_html.BOARD_COLOUR)
    found: list[tuple[int, int]] = []
    y = 0
    while y < image.height:
        row = image.rows[y]
        hit = None
        for x in range(image.width):
            if _close((row[3 * x], row[3 * x + 1], row[3 * x + 2]), colour, 2):
                hit = x
                break
        if hit is None:
            y += 1
            continue
        # The first board-coloured row is the rounded top edge: go down to the rows
        # whose board colour starts furthest left, and up again to the table's top.
        top = y
        left = hit
        probe = y
        while probe < min(image.height, y + 20):
            r = image.rows[probe]
            for x in range(image.width):
                if _close((r[3 * x], r[3 * x + 1], r[3 * x + 2]), colour, 2):
                    left = min(left, x)
                    break
            probe += 1
        found.append((left, top))
        y = top + board_html.TABLE_HEIGHT
    return found


def read_board(image: Image, origin: tuple[int, int]) -> dict[str, int | None]:
    """For every cell, the seat whose colour the screenshot shows at its centre (0 for
    a neutral marble, None for an empty hole); AssertionError for any other colour."""
    palette: list[tuple[int | None, tuple[int, int, int]]] = [(None, _rgb(board_html.HOLE_COLOUR))]
    palette += [(seat, _rgb(c)) for seat, c in enumerate(board_html.SEAT_COLOURS, start=1)]
    palette.append((0, _rgb(board_html.NEUTRAL_COLOUR)))
    left, top = origin
    seen: dict[str, int | None] = {}
    for cell in CELLS:
        cx, cy = board_html.cell_centre(cell)
        samples = [
            image.pixel(int(left + cx + dx), int(top + cy + dy))
            for dx in (-3, 0, 3)
            for dy in (-3, 0, 3)
        ]
        matches = {
            seat
            for sample in samples
            for seat, colour in palette
            if _close(sample, colour)
        }
        if len(matches) != 1:
            raise AssertionError(
                f"{cell_name(cell)}: colours {sorted(set(samples))} match {matches}"
            )
        seen[cell_name(cell)] = matches.pop()
    return seen


def expected_cells(board: Board) -> dict[str, int | None]:
    return {cell_name(cell): board.owner(cell) for cell in CELLS}
