"""benchmarks/multi_match.py: seat rotations that are fair, and a short real match."""

from __future__ import annotations

import re

import pytest

from tests.scripts import load_script

from abalone_pbm.rules import Rules

mm = load_script("benchmarks/multi_match.py")


@pytest.mark.parametrize(
    ("players", "teams", "games"), [(3, False, 6), (4, False, 2), (5, False, 10), (6, False, 2),
                                    (4, True, 2), (6, True, 6)]
)
def test_each_engine_holds_each_seat_equally_often(players: int, teams: bool, games: int) -> None:
    rules = Rules(players=players, teams=teams)
    assignments = mm.rotation(rules)
    assert len(assignments) == games
    for seat in range(1, players + 1):
        assert sum(seat in a_seats for a_seats in assignments) * 2 == games
    for a_seats in assignments:
        assert 0 < len(a_seats) < players  # both engines play every game
        for side in range(rules.sides):
            held = {seat in a_seats for seat in rules.seats_of_side(side)}
            assert len(held) == 1  # a team is one engine's


def test_a_short_match_reports_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert mm.main(["--setups", "3,4t", "--layouts", "standard", "--openings", "2",
                    "--movelimit", "9", "--opening-moves", "2", "--depth-a", "1",
                    "--depth-b", "1", "--budget", "5"]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"^game ", out, re.M)) == 8  # six for 3 players, two for 4 in teams
    summary = out[out.index(" all: "):]
    counts = re.search(r"all: (\d+) games, (\d+) drawn", summary)
    assert counts is not None
    games, drawn = int(counts[1]), int(counts[2])
    won = [int(n) for n in re.findall(r": won (\d+) ", summary)]
    assert games == 8 and sum(won) + drawn == games
    assert "mean depth 1.00" in summary


def test_bad_setups_are_refused() -> None:
    with pytest.raises(SystemExit):
        mm.main(["--setups", "3t"])
    with pytest.raises(SystemExit):
        mm.main(["--setups", "2"])
