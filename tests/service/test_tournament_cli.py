"""``abalone-pbm tournament ...``: every bad argument is one clear line on stderr and
exit status 2, nothing printed on stdout; the good paths say what they did."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from abalone_pbm.cli.main import main

from . import tournament_play as tp
from .harness import Harness

PLAYERS = ["ann", "bob", "cyd", "dan"]
#: ``abalone-pbm tournament ARGS`` run: (exit status, stdout, stderr).
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(harness: Harness, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``abalone-pbm tournament ARGS`` on the harness's database: (status, out, err)."""
    monkeypatch.setenv("ABALONE_PBM_DATABASE_URL", harness.settings.database_url)
    for userid in PLAYERS:
        harness.signup(userid)

    def run(*args: str) -> tuple[int, str, str]:
        try:
            status = main(["tournament", *args])
        except SystemExit as leaving:  # argparse's own exits
            status = int(leaving.code or 0)
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


BAD_CREATE = [
    (["create", "t1"], "--format"),
    (["create", "t1", "--format", "ladder"], "invalid choice"),
    (["create", "t1", "--format", "swiss", "--rounds", "0"], "whole number"),
    (["create", "t1", "--format", "swiss", "--rounds", "x"], "whole number"),
    (["create", "t1", "--format", "roundrobin", "--rounds", "3"], "--rounds is for a Swiss"),
    (["create", "t1", "--format", "swiss", "--rounds", "9", "--max", "8"], "more rounds"),
    (["create", "t1", "--format", "swiss", "--games", "2"], "--games"),
    (["create", "t1", "--format", "knockout", "--min", "9", "--max", "4"], "--min and --max"),
    (["create", "t1", "--format", "knockout", "--signup-until", "soon"], "not a date"),
    (["create", "t1", "--format", "knockout", "--signup-until", "2001-01-01"], "future"),
    (["create", "t1", "--format", "knockout", "--layout", "nosuch"], "nosuch"),
    (["create", "t1", "--format", "knockout", "--variant", "chess"], "invalid choice"),
    (["create", "t1", "--format", "championship", "--division-size", "1"], "--division-size"),
    (["create", "no good", "--format", "knockout"], ""),
    (["create", "t1", "--format", "knockout", "--bogus"], "unrecognized"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
]


@pytest.mark.parametrize(("args", "said"), BAD_CREATE)
def test_bad_arguments_of_create_are_one_line_and_exit_2(cli: Run, args: list[str],
                                                        said: str) -> None:
    status, out, err = cli(*args)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("abalone-pbm tournament"), err
    assert said in err


def test_the_good_paths_and_the_bad_arguments_of_each_action(cli: Run, harness: Harness) -> None:
    def bad(*args: str, said: str) -> None:
        status, out, err = cli(*args)
        assert (status, out) == (2, ""), (args, status, out, err)
        assert err.count("\n") == 1 and said in err, (args, err)

    status, out, err = cli("create", "cup", "--format", "swiss", "--rounds", "2")
    assert status == 0 and err == ""
    assert out.startswith("tournament cup created (swiss), signup;")
    bad("create", "cup", "--format", "swiss", said='A tournament "cup" exists already')
    assert cli("create", "rr", "--format", "roundrobin", "--games", "1")[0] == 0

    bad("start", "nosuch", said='There is no tournament "nosuch"')
    bad("start", "cup", said="fewer than its minimum of 2")
    bad("enter", "cup", "ann", "zed", said="there is no user zed")
    status, out, _ = cli("enter", "cup", *PLAYERS)
    assert status == 0 and out == "entered in tournament cup: ann, bob, cyd, dan\n"
    assert cli("enter", "rr", "ann", "bob")[0] == 0
    bad("disqualify", "cup", "zed", said="there is no user zed")
    bad("pair", "cup", said="only a running Swiss or knockout")

    status, out, _ = cli("start", "cup")
    assert status == 0 and out.startswith("tournament cup started: 2 games, ")
    bad("start", "cup", said="is running, not open for sign-up")
    bad("enter", "cup", "ann", said="The sign-up of tournament")
    assert cli("start", "rr")[0] == 0
    bad("pair", "rr", said="a roundrobin tournament, running")
    bad("pair", "cup", said="round 1 still has 2 games running")
    games = tp.open_games(harness, "cup")
    board = games[0][1]
    assert board is not None
    bad("adjudicate", "cup", "x", "1-0", said="is not a board number")
    bad("adjudicate", "cup", "99999", "1-0", said="is not a game of tournament")
    bad("adjudicate", "cup", str(board), "maybe", said="The result is 1-0, 0-1, draw")
    rr_board = tp.open_games(harness, "rr")[0][1]
    bad("adjudicate", "cup", str(rr_board), "1-0", said="is not a game of tournament")

    status, out, _ = cli("adjudicate", "cup", str(board), "draw")
    assert status == 0 and out == f"board {board} of tournament cup decided: draw\n"
    bad("adjudicate", "cup", str(board), "1-0", said="is not running")
    first_of_other = games[1][2]
    status, out, _ = cli("disqualify", "cup", first_of_other)
    assert status == 0 and out.startswith(f"{first_of_other} disqualified from tournament cup")
    bad("disqualify", "cup", first_of_other, said="is not entered")
    # Both games of round 1 over: round 2 was paired by itself (three players left).
    assert tp.status(harness, "cup") == ("running", 2)

    status, out, _ = cli("list")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["NAME", "FORMAT", "STATUS", "PLAYERS", "ROUND"]
    assert [line.split()[:5] for line in lines[1:]] == [
        ["cup", "swiss", "running", "3", "2"], ["rr", "roundrobin", "running", "2", "1"]]
    status, out, _ = cli("show", "cup")
    assert status == 0 and "Format: Swiss" in out and "Buchholz" in out
    bad("show", "nosuch", said='There is no tournament "nosuch"')
