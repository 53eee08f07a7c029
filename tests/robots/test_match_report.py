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


def test_share_interval_is_wilsons() -> None:
    # Wilson's interval stays inside 0-1 and is not empty at either end.
    assert report.share_interval(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))
    assert report.share_interval(10, 10) == (pytest.approx(0.7225, abs=1e-4), 1.0)
    low, high = report.share_interval(8, 16)
    assert (round(low, 3), round(high, 3)) == (0.28, 0.72)
    assert report.share_interval(0, 0) == (0.0, 1.0)
    assert report.share_of_games_text(8, 16) == "8 of 16 games (50 %, 95 % interval 28-72 %)"
    assert report.share_of_games_text(0, 0) == "0 of 0 games"


def test_fisher_exact_against_known_tables() -> None:
    # The lady tasting tea (3 of 3 against 0 of 3) and the textbook 1/9 against 11/14.
    assert report.fisher_exact(3, 3, 0, 3) == pytest.approx(0.1)
    assert report.fisher_exact(1, 9, 11, 14) == pytest.approx(0.002759, abs=1e-6)
    # Equal shares: nothing to tell them apart; a table and its mirror alike.
    assert report.fisher_exact(4, 8, 4, 8) == pytest.approx(1.0)
    assert report.fisher_exact(8, 16, 3, 16) == pytest.approx(report.fisher_exact(3, 16, 8, 16))
    assert report.fisher_exact(0, 8, 8, 8) == pytest.approx(2 / math.comb(16, 8))
    with pytest.raises(ValueError):
        report.fisher_exact(9, 8, 0, 8)


def test_compare_prints_both_shares_and_the_test(capsys: pytest.CaptureFixture[str]) -> None:
    assert report.main(["8/16", "3/16"]) == 0
    out = capsys.readouterr().out
    assert "first:  8 of 16 games (50 %, 95 % interval 28-72 %)" in out
    assert "second: 3 of 16 games (19 %, 95 % interval 7-43 %)" in out
    assert "p = 0.135" in out


@pytest.mark.parametrize("bad", ["9/8", "-1/8", "3/0", "3", "a/b", "3/8/2"])
def test_compare_refuses_what_is_no_share(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        report.main(["--", bad, "1/2"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"'{bad}'" in err and ("no share" in err or "hits lie between" in err), err


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
    assert re.search(r"boulder won by six \d of 2 games \(\d+ %, 95 % interval \d+-\d+ %\)", out)
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
