"""The rules tools of the command line: ``moves`` and ``perft``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rules_helpers import STANDARD_START, naive_successors, row_e

from abalone_pbm.rules import Board

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "abalone_pbm", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def expected_block(position: str) -> list[str]:
    board = Board(position)
    lines = []
    for move in board.generate_legal_moves():
        board.push(move)
        lines.append(f"{move}\t{board.position()}")
        board.pop()
    return sorted(lines) + [""]


def test_moves_of_one_position() -> None:
    result = run("moves", STANDARD_START)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")
    assert lines[-1] == ""  # the output ends with a newline
    block = lines[:-1]
    assert block == expected_block(STANDARD_START)
    assert len(block) == 45 and block[-1] == ""
    after_c5_d5 = "11111/111111/..11.../....1.../........./......../..222../222222/22222 2 0,0"
    assert f"c5,d5\t{after_c5_d5}" in block
    # Every printed position is the reference's position after that move.
    reference = set(naive_successors(STANDARD_START).values())
    assert {line.split("\t")[1] for line in block[:-1]} == reference


def test_moves_from_stdin() -> None:
    push = row_e("....22211", turn=2)
    result = run("moves", "-", stdin=f"{STANDARD_START}\n\n{push}\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")[:-1]
    assert lines == expected_block(STANDARD_START) + expected_block(push)
    assert f"e5-e7,e8\t{row_e('.....2221', turn=1, ejected=(0, 1))}" in lines


def test_moves_of_several_arguments() -> None:
    other = Board()
    other.push_text("c5,d5")
    result = run("moves", STANDARD_START, other.position())
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")[:-1]
    assert lines == expected_block(STANDARD_START) + expected_block(other.position())


def test_moves_of_a_bad_position() -> None:
    result = run("moves", "not a position", STANDARD_START)
    assert result.returncode == 1
    assert "not a position" in result.stderr
    # An empty block for the bad one, so the output stays aligned with the input.
    assert result.stdout.split("\n")[:-1] == [""] + expected_block(STANDARD_START)


def test_perft_standard_two() -> None:
    result = run("perft", "standard", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1936\n"


def test_perft_of_a_position_and_divide() -> None:
    result = run("perft", STANDARD_START, "1")
    assert result.stdout == "44\n"
    result = run("perft", "belgian-daisy", "2", "--divide")
    lines = result.stdout.splitlines()
    assert lines[-1] == "2692"
    assert sum(int(line.split("\t")[1]) for line in lines[:-1]) == 2692


def test_perft_bad_layout() -> None:
    result = run("perft", "nowhere", "2")
    assert result.returncode == 2
    assert "unknown layout" in result.stderr


def test_moves_with_the_soccer_ball_behind_an_opponent() -> None:
    # Issue 24's position: player 1's e8-e6 against player 2's e5 with the ball behind
    # it on e4 is blocked in soccer (the ball is an obstacle there), not in princess.
    position = "...../....../......./......../...*2111./......../......./....../..... 1 0,0"
    soccer = run("moves", "--variant", "soccer", position)
    assert soccer.returncode == 0, soccer.stderr
    soccer_moves = {line.split("\t")[0] for line in soccer.stdout.splitlines() if line}
    princess = run("moves", "--variant", "princess", position)
    princess_moves = {line.split("\t")[0] for line in princess.stdout.splitlines() if line}
    assert princess_moves - soccer_moves == {"e8-e6,e5"}
    assert len(soccer_moves) == 27
