"""What the match scripts print for every run: Elo with its interval, wins by six, the
depth and speed of both sides, and the machine's load."""

from __future__ import annotations

import math
import re
import time

import pytest

from tests.scripts import load_script

report = load_script("benchmarks/match_report.py")
robots = load_script("benchmarks/robots.py")
multi = load_script("benchmarks/multi_match.py")


def test_elo_of_a_score() -> None:
    assert report.elo(0.5) == 0
    assert report.elo(0.75) == pytest.approx(190.85, abs=0.01)
    assert report.elo(0.25) == pytest.approx(-190.85, abs=0.01)
    assert report.elo(1.0) == math.inf and report.elo(0.0) == -math.inf


def test_score_and_its_interval() -> None:
    # 6 wins, 2 draws, 2 losses: score 0.7; per-game variance 0.16 over 10 games.
    score, margin = report.score_interval(6, 2, 2)
    assert score == pytest.approx(0.7)
    assert margin == pytest.approx(1.96 * math.sqrt(0.16 / 10))
    assert report.score_interval(0, 0, 0) == (0.5, math.inf)


def test_elo_text_has_signs_and_infinite_ends() -> None:
    assert report.elo_text(0.5, 0.1) == "Elo +0 [-70, +70]"
    assert report.elo_text(0.75, 0.3) == "Elo +191 [-35, +inf]"
    assert report.elo_text(0.5, math.inf) == "Elo +0 [-inf, +inf]"


def test_share_and_search_texts() -> None:
    assert report.share_text(3, 8) == "3/8 (38%)"
    assert report.share_text(0, 0) == "0/0"
    assert report.search_text(52, 10, 131_000, 1.0) == "mean depth 5.20, 131,000 nodes/s"
    assert report.search_text(0, 0, 0, 0.0) == "no search figures"


def test_load_watch_samples_while_running() -> None:
    watch = report.LoadWatch(every=0.05)
    time.sleep(0.2)
    line = watch.stop()
    assert len(watch.samples) >= 4
    match = re.search(r"(\d+) samples over \d+ s\): mean ([\d.]+), min ([\d.]+), max ([\d.]+) "
                      r"on (\d+) cores", line)
    assert match is not None, line
    low, high = float(match[3]), float(match[4])
    assert low <= float(match[2]) <= high


def test_robots_match_prints_everything(capsys: pytest.CaptureFixture[str]) -> None:
    assert robots.main(["--a", "boulder", "--b", "boulder-1", "--games", "2", "--depth-a", "1",
                        "--depth-b", "1", "--budget", "5", "--movelimit", "6",
                        "--quiet"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Elo [+-](\d+|inf) \[[+-](\d+|inf), [+-](\d+|inf)\]", out)
    assert "won by pushing off the target:" in out
    for side in ("a=boulder", "b=boulder-1"):
        line = next(line for line in out.splitlines() if line.strip().startswith(side))
        assert re.search(r"mean depth 1\.00, [\d,]+ nodes/s", line), line
    assert "machine load (1-minute average" in out


def test_multi_match_prints_elo_six_and_load(capsys: pytest.CaptureFixture[str]) -> None:
    assert multi.main(["--setups", "3", "--layouts", "standard", "--openings", "1",
                       "--movelimit", "6", "--depth-a", "1", "--depth-b", "1",
                       "--budget", "5", "--quiet"]) == 0
    out = capsys.readouterr().out
    summary = out[out.index(" all: "):]
    assert re.search(r"A's score [\d.]+%, Elo ", summary)
    assert summary.count("by six 0/0 of its wins") == 2  # nobody wins in six plies
    assert summary.count("mean depth 1.00") == 2
    assert "machine load (1-minute average" in summary
