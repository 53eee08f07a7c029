"""benchmarks/finish_probe.py --analyse: the other side's moves read back from a trace of
ours, and the figures printed per game."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from robots_helpers import FORCED, mask

from tests.scripts import load_script

from abalone_pbm.robots import tuning
from abalone_pbm.robots.base import occupied_mask, push_kind
from abalone_pbm.robots.features import hex_distance
from abalone_pbm.rules import Board, Rules
from abalone_pbm.rules.geometry import CELL_BY_NAME, ROWS, cell_name, iter_bits

fp = load_script("benchmarks/finish_probe.py")


def _trace(plies: int, seed: int) -> tuple[list[dict[str, object]], list[int]]:
    """A trace of seat 1's moves in a random game (as external_match writes it) and the
    kind of each move of seat 2's."""
    rng = random.Random(seed)
    board = Board.from_layout("belgian-daisy", Rules(players=2))
    entries: list[dict[str, object]] = []
    kinds: list[int] = []
    while board.ply < plies and board.outcome() is None:
        moves = list(board.generate_legal_moves())
        occupied = occupied_mask(board)
        # Pushes first, so that the game has some.
        pushing = [m for m in moves if push_kind(occupied, m)]
        move = rng.choice(pushing if pushing and rng.random() < 0.6 else moves)
        if board.turn == 1:
            entries.append({"game": 0, "ply": board.ply, "position": board.position(),
                            "seat": 1, "mine": board.ejected(1), "theirs": board.ejected(2),
                            "move": str(move)})
        else:
            kinds.append(push_kind(occupied, move))
        board.push(move)
    return entries, kinds


def test_the_other_sides_moves_are_read_back_with_their_kind() -> None:
    entries, kinds = _trace(80, seed=5)
    found = [fp.replies(a, b) for a, b in zip(entries, entries[1:])]
    assert found == kinds[: len(found)]
    assert any(found) and not all(found)


def test_contact_figures_per_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries, kinds = _trace(80, seed=5)
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    fp.print_contact(path, from_ply=0)
    out = capsys.readouterr().out
    counted = kinds[: len(entries) - 1]
    share = sum(k > 0 for k in counted) / len(counted)
    assert f"pushes {share:.0%}" in out
    assert "game 1: to ply" in out and "all games:" in out
    # Ours and theirs on e5 and its ring, averaged over our moves (the same figure per
    # game and over all games here: one game).
    boards = [Board(str(e["position"]), Rules(players=2)) for e in entries]
    ours = sum((b.marbles(b.turn) & fp.CORE_CELLS).bit_count() for b in boards) / len(boards)
    theirs = sum((b.marbles(3 - b.turn) & fp.CORE_CELLS).bit_count()
                 for b in boards) / len(boards)
    assert f"core {ours:.1f} / {theirs:.1f}" in out
    assert f"core {ours:.2f} / {theirs:.2f}" in out
    assert fp.CORE_CELLS.bit_count() == 7


def _position(ours: list[str], theirs: list[str], ejected: tuple[int, int]) -> str:
    """A position text with seat 1 (ours, to move) on ``ours`` and seat 2 on ``theirs``:
    the board's own text of a position, with no marble moved, rewritten cell by cell."""
    board = Board("...../....../......./......../........./......../......./....../..... "
                  "1 0,0", Rules(players=2))
    rows = [list(row) for row in board.position().split()[0].split("/")]
    for name in ours + theirs:
        row = ROWS.index(name[0])
        # Rows a-e begin at diagonal 1, rows f-i at diagonal (row - 3).
        rows[row][int(name[1:]) - (1 if row <= 4 else row - 3)] = "1" if name in ours else "2"
    text = "/".join("".join(r) for r in rows) + f" 1 {ejected[0]},{ejected[1]}"
    placed = Board(text, Rules(players=2))
    assert {cell_name(c) for c in iter_bits(placed.marbles(2))} == set(theirs)
    return text


def test_gathering_counts_games_by_marbles_off_when_the_group_formed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ours = ["a1", "a2", "a3", "b1", "b2"]
    spread = ["e5", "e6", "i5"]  # i5 on the edge: not gathered
    centre = ["e5", "e6", "d4", "f6", "c3", "g7", "g5"]  # all within two steps of e5
    assert max(hex_distance(CELL_BY_NAME[name]) for name in centre) == 2
    assert hex_distance(CELL_BY_NAME["i5"]) == 4

    def entry(game: int, ply: int, theirs: list[str], mine: int, kind: str) -> str:
        return json.dumps({"game": game, "ply": ply, "seat": 1, "mine": mine, "theirs": 0,
                           "position": _position(ours, theirs, (mine, 0)), "kind": kind,
                           "move": None}) + "\n"

    one = tmp_path / "one.jsonl"
    one.write_text(
        # game 0: gathered at 4 off, then won by the sixth
        entry(0, 10, spread, 3, "quiet") + entry(0, 12, centre, 4, "push")
        + entry(0, 30, centre, 5, "eject")
        # game 1: gathered at 4 off, ran to the limit
        + entry(1, 10, centre, 4, "quiet") + entry(1, 148, centre, 5, "quiet"))
    two = tmp_path / "two.jsonl"
    two.write_text(entry(0, 10, spread, 5, "eject"))  # never gathered, won by six
    found = fp.gathering([one, two])
    assert found == {4: (1, 2), None: (1, 1)}
    fp.print_gathering([one, two])
    out = capsys.readouterr().out
    assert "4 off: 1 of 2 games (50 %, 95 % interval 9-91 %)" in out
    assert "never gathered: 1 of 1 games" in out
    assert fp.GATHERED.bit_count() == 19
    assert fp.main(["--gathering", str(one), str(two)]) == 0
    assert "4 off: 1 of 2 games" in capsys.readouterr().out


@pytest.mark.parametrize("content", [None, "not json\n", '{"game": 0}\n',
                                     '{"game": 0, "position": "nonsense", "mine": 0}\n'])
def test_gathering_refuses_what_is_no_trace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None) -> None:
    path = tmp_path / "trace.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as stop:
        fp.main(["--gathering", str(path)])
    assert stop.value.code == 2
    assert "--gathering reads traces of external_match.py --trace" in capsys.readouterr().err


def test_by_value_counts_games_by_how_well_placed_ours_stood(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def entry(game: int, ply: int, value: int | None, mine: int, theirs: int,
              kind: str = "quiet") -> str:
        return json.dumps({"game": game, "ply": ply, "seat": 1, "mine": mine,
                           "theirs": theirs, "value": value, "kind": kind,
                           "position": "", "move": None}) + "\n"

    trace = tmp_path / "t.jsonl"
    trace.write_text(
        # game 0: 2500 with two marbles ahead is 500 less the lead; won by six
        entry(0, 20, -3000, 0, 0) + entry(0, 30, 2500, 2, 0) + entry(0, 32, -9000, 2, 0)
        + entry(0, 90, 6000, 5, 0, "eject")
        # game 1: a forced win or a win on the move limit by ply 30 has no band; the
        # value before them counts
        + entry(1, 24, -900, 0, 0) + entry(1, 26, 999_000, 1, 0)
        + entry(1, 28, 199_870, 1, 0) + entry(1, 148, 0, 3, 0)
        # game 2: the value at ply 30 is 800 exactly with none ahead: the top band
        + entry(2, 30, 800, 0, 0) + entry(2, 40, 1000, 5, 1, "eject")
        # game 3: no value by then
        + entry(3, 31, 100, 0, 0))
    found = fp.by_value([trace], 30)
    assert found == {2: (1, 1), 0: (0, 1), 3: (1, 1), None: (0, 1)}
    assert fp.main(["--by-value", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "0 to 800: 1 of 1 games" in out and "below -800: 0 of 1 games" in out
    assert "800 and more: 1 of 1 games" in out and "no value by then: 0 of 1 games" in out
    assert "-800 to 0" not in out
    # An earlier ply reads an earlier value.
    assert fp.by_value([trace], 20) == {0: (1, 1), None: (1, 3)}
    with pytest.raises(SystemExit):
        fp.main(["--by-value", str(trace), "--value-ply", "-1"])
    assert "--value-ply is a ply of the game" in capsys.readouterr().err
    trace.write_text('{"game": 0, "ply": "x"}\n')
    with pytest.raises(SystemExit):
        fp.main(["--by-value", str(trace)])
    assert "--by-value reads traces of external_match.py --trace" in capsys.readouterr().err


def test_the_terms_add_up_to_the_search_evaluation() -> None:
    from abalone_pbm.robots.endgame import evaluation

    entries, _ = _trace(90, seed=3)
    assert any(entry["mine"] or entry["theirs"] for entry in entries)
    for entry in entries:
        board = Board(str(entry["position"]), Rules(players=2))
        me, op = board.marbles(board.turn), board.marbles(3 - board.turn)
        value = evaluation(me, op, board.ejected(board.turn), board.ejected(3 - board.turn))[0]
        terms = fp.evaluation_terms(str(entry["position"]))
        assert len(terms) == len(fp.TERM_NAMES)
        assert abs(sum(terms) - value) <= len(fp.WEIGHT_NAMES)  # each fitted term rounded


def test_term_means_split_the_games_won_by_six_from_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries, _ = _trace(60, seed=4)
    won = [dict(entry, game=0, value=0) for entry in entries]
    won[-1] = dict(won[-1], mine=5, kind="eject")
    lost = [dict(entry, game=1, value=0) for entry in entries[:10]]
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(entry) + "\n" for entry in won + lost))
    games, by_six, means = fp.term_means([trace], 30)
    assert (games, by_six) == (2, 1)
    last_by_30 = [entry for entry in entries if int(entry["ply"]) <= 30][-1]
    first, then, six, others = means[fp.TERM_NAMES.index("CENTRE")]
    assert six == fp.evaluation_terms(str(last_by_30["position"]))[fp.TERM_NAMES.index("CENTRE")]
    assert first == fp.evaluation_terms(str(entries[0]["position"]))[fp.TERM_NAMES.index("CENTRE")]
    assert then == (six + others) / 2
    assert fp.main(["--by-value", str(trace), "--terms"]) == 0
    out = capsys.readouterr().out
    assert "mean of 2 games (1 won by six)" in out and "CONTACT_AND_LEAD_CENTRE" in out
    with pytest.raises(SystemExit):
        fp.main(["--gathering", str(trace), "--terms"])
    assert "--terms goes with --by-value" in capsys.readouterr().err


def test_starts_from_several_traces_are_numbered_across_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries, _ = _trace(40, seed=6)

    def lead_at(ply: int, game: int) -> str:
        return "".join(json.dumps(dict(entry, game=game, mine=3 if entry["ply"] >= ply else 0))
                       + "\n" for entry in entries)

    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text(lead_at(10, 0) + lead_at(20, 1))
    two.write_text(lead_at(30, 0))
    alone = fp.starts_from_traces([two], 2, 30, 150)
    assert [(s.game, s.ply) for s in alone] == [(0, 30)]
    both = fp.starts_from_traces([one, two], 2, 30, 150)
    assert [(s.game, s.ply) for s in both] == [(0, 10), (1, 20), (2, 30)]
    assert both[2].position == alone[0].position
    with pytest.raises(SystemExit):
        fp.main(["--trace", str(one), str(tmp_path / "missing.jsonl")])
    assert "--trace reads traces of external_match.py --trace" in capsys.readouterr().err


def test_starts_at_gathering_pick_each_games_first_gathered_position(tmp_path: Path) -> None:
    spread = Board.from_layout("standard", Rules(players=2))
    # Seat 2's marbles all within two steps of e5: a gathered group, seat 1 to move.
    gathered = Board("...../....../..111../.112221./.1122221./.11222../..111../....../"
                     "..... 1 4,0", Rules(players=2))
    assert not gathered.marbles(2) & ~fp.GATHERED
    assert spread.marbles(2) & ~fp.GATHERED

    def entry(game: int, ply: int, board: Board, mine: int) -> dict[str, object]:
        return {"game": game, "ply": ply, "position": board.position(), "seat": 1,
                "mine": mine, "theirs": 0, "move": "a1-b1"}

    first = tmp_path / "one.jsonl"
    first.write_text("".join(json.dumps(e) + "\n" for e in (
        entry(0, 10, spread, 0), entry(0, 40, gathered, 4), entry(0, 42, gathered, 4),
        entry(1, 10, spread, 0), entry(1, 50, gathered, 3),
        entry(2, 10, spread, 0))))
    second = tmp_path / "two.jsonl"
    second.write_text(json.dumps(entry(0, 60, gathered, 4)) + "\n")
    every = fp.starts_at_gathering([first, second])
    assert [(s.game, s.ply) for s in every] == [(0, 40), (1, 50), (2, 60)]
    assert every[0].position == gathered.position()
    four = fp.starts_at_gathering([first, second], off=4)
    assert [s.ply for s in four] == [40, 60]
    assert [s.game for s in four] == [0, 1]


def test_a_sample_of_starts_is_spread_over_all_of_them() -> None:
    starts = [fp.Start(i, 40, "") for i in range(10)]
    assert [s.game for s in fp.evenly_spread(starts, 4)] == [0, 2, 5, 7]
    assert fp.evenly_spread(starts, 10) == starts
    assert fp.evenly_spread(starts, 30) == starts


@pytest.mark.parametrize("content", ['{"CENTRE": "x"}', '{"NO_SUCH": 3}', "[1, 2]", "{"])
def test_a_weights_file_that_is_no_set_of_weights_is_refused_with_why(
        tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "weights.json"
    path.write_text(content)
    with pytest.raises(SystemExit):
        fp.main(["--weights", str(path), "--position", "x"])
    assert f"--weights {path}:" in capsys.readouterr().err


def test_positions_are_labelled_with_how_each_game_ended_and_read_back_by_game(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ours, theirs = ["a1", "a2", "a3", "b1", "b2"], ["e5", "e6", "d4"]

    def entry(game: int, ply: int, mine: int, kind: str) -> str:
        return json.dumps({"game": game, "ply": ply, "seat": 1, "mine": mine, "theirs": 0,
                           "position": _position(ours, theirs, (mine, 0)), "kind": kind,
                           "move": None}) + "\n"

    one = tmp_path / "one.jsonl"
    one.write_text(
        entry(0, 10, 4, "quiet") + entry(0, 40, 5, "eject")       # won by six
        + entry(1, 10, 1, "quiet") + entry(1, 148, 2, "quiet"))   # ran to the limit
    two = tmp_path / "two.jsonl"
    # Game 0 again in another trace (another game), ended early without our sixth: lost.
    two.write_text(entry(0, 10, 0, "quiet") + entry(0, 60, 0, "push"))
    out = tmp_path / "positions.csv"
    assert fp.main(["--positions", str(one), str(two), "--out", str(out),
                    "--limit-result", "0.25"]) == 0
    assert "wrote 6 positions of 3 games" in capsys.readouterr().out
    samples = tuning.load_samples(out)
    assert [(s.result, s.end, s.game) for s in samples] == [
        (1.0, "target", 0), (1.0, "target", 0), (0.25, "limit", 1), (0.25, "limit", 1),
        (0.0, "target", 2), (0.0, "target", 2)]
    assert [s.mine for s in samples] == [4, 5, 1, 2, 0, 0]


@pytest.mark.parametrize("options, says", [
    ([], "--positions writes to --out CSV"),
    (["--out", "x.csv", "--limit-result", "2"], "--limit-result is a result between"),
])
def test_positions_refuse_a_missing_file_or_label(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], says: str
) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text("")
    with pytest.raises(SystemExit) as stop:
        fp.main(["--positions", str(trace), *options])
    assert stop.value.code == 2 and says in capsys.readouterr().err


def _random_last_marble_positions(count: int, seed: int) -> list[tuple[int, int]]:
    """Small random positions (me, op) for a side to move with a marble to go."""
    rng = random.Random(seed)
    cells_all = [CELL_BY_NAME[name] for name in CELL_BY_NAME]
    found = []
    while len(found) < count:
        chosen = rng.sample(cells_all, rng.randint(7, 12))
        split = rng.randint(3, len(chosen) - 3)
        found.append((sum(1 << c for c in chosen[:split]),
                      sum(1 << c for c in chosen[split:])))
    return found


def test_the_threat_search_with_every_move_allowed_is_the_full_width_solver() -> None:
    """``forced_by_threats`` with ``moves - 1`` quiet moves answers as the exact solver,
    and with none it finds only finishes the exact solver finds too."""
    positions = _random_last_marble_positions(120, seed=7)
    positions += [(mask(ours), mask(theirs)) for _moves, ours, theirs in FORCED]
    forced = {1: 0, 2: 0}
    by_threats = 0
    for me, op in positions:
        for moves in (1, 2):
            exact = fp.wins_within(me, op, 5, 0, moves, 6)
            assert fp.forced_by_threats(me, op, 0, moves, moves - 1, 6, {}) == exact
            if fp.forced_by_threats(me, op, 0, moves, 0, 6, {}):
                assert exact
                by_threats += moves == 2
            forced[moves] += exact
    assert forced[1] and forced[2] > forced[1] and by_threats


def test_forced_finishes_of_three_moves_by_threats_or_with_a_quiet_move() -> None:
    """The positions of a finish in three (the exact solver's, from tests/robots): found
    with two quiet moves allowed, and those found by threats alone are a part of them."""
    threes = [(mask(ours), mask(theirs)) for moves, ours, theirs in FORCED if moves == 3]
    alone = [fp.forced_by_threats(me, op, 0, 3, 0, 6, {}) for me, op in threes]
    assert all(fp.forced_by_threats(me, op, 0, 3, 2, 6, {}) for me, op in threes)
    assert any(alone)  # some need no quiet move...
    # ...and none is found sooner than the exact solver allows.
    assert not any(fp.forced_by_threats(me, op, 0, 2, 1, 6, {}) for me, op in threes)


#: Finishes in two by a threat (none at once) that a side which is a marble from its own
#: target refutes: it can push one of ours off in reply (found among random positions).
REFUTED_AT_FIVE = [
    ("b4 c3 c5 d4 d8 e8 f4 f5 g6 h5 i9", "d6 d7 f9 h4 i5"),
    ("b5 b6 c7 d3 e1 e3 f4 f6 g7 g8 h8", "c1 d1 d5 e4 h4"),
]


@pytest.mark.parametrize(("ours", "theirs"), REFUTED_AT_FIVE)
def test_a_reply_that_reaches_its_own_target_first_refutes_a_finish(
        ours: str, theirs: str) -> None:
    me, op = mask(ours), mask(theirs)
    assert not fp.wins_within(me, op, 5, 0, 1, 6)
    for quiet in (0, 1):
        assert fp.forced_by_threats(me, op, 0, 2, quiet, 6, {})
        assert not fp.forced_by_threats(me, op, 5, 2, quiet, 6, {})
    assert fp.wins_within(me, op, 5, 0, 2, 6) and not fp.wins_within(me, op, 5, 5, 2, 6)


def test_forced_finishes_split_the_games_won_by_six_from_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    won_ours, won_theirs = "d6 e7 f8 g8 i5".split(), "b6 g9 i8".split()  # eject at once
    none_ours, none_theirs = ["a1", "a2"], ["i5", "i6", "i7"]  # nothing near

    def entry(game: int, ply: int, ours: list[str], theirs: list[str], kind: str) -> str:
        return json.dumps({"game": game, "ply": ply, "seat": 1, "mine": 5, "theirs": 0,
                           "position": _position(ours, theirs, (5, 0)), "kind": kind,
                           "move": None}) + "\n"

    path = tmp_path / "trace.jsonl"
    path.write_text(entry(0, 40, none_ours, none_theirs, "quiet")
                    + entry(0, 42, won_ours, won_theirs, "eject")
                    + entry(1, 146, none_ours, none_theirs, "quiet")
                    + entry(1, 148, none_ours, none_theirs, "quiet"))
    assert fp.forced_finishes([path]) == {True: (2, 1, 1), False: (2, 0, 1)}
    assert fp.main(["--forced-finishes", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 game won by six: 1 of 2 positions" in out
    assert "1 game not won by six: 0 of 2 positions" in out


@pytest.mark.parametrize("option", ["--gathering", "--forced-finishes"])
def test_pooled_reports_refuse_a_missing_trace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str) -> None:
    with pytest.raises(SystemExit) as stop:
        fp.main([option, str(tmp_path / "none.jsonl")])
    assert stop.value.code == 2
    assert f"{option} reads traces of external_match.py --trace" in capsys.readouterr().err


class _ScriptedEngine:
    """Stands in for Cotix in :func:`play_out`: answers with the first of our legal moves
    in text order, or, once ``illegal_from`` plies are reached, with a marble of its own
    conjured onto e5."""

    name = "cotix"

    def __init__(self, illegal_from: int | None = None) -> None:
        self.illegal_from = illegal_from

    def new_game(self, layout: str, board: Board) -> None:
        pass

    def choose(self, board: Board, budget: float) -> object:
        move = sorted(board.generate_legal_moves(), key=str)[0]
        board.push(move)
        reached = tuple(board.marbles(seat) for seat in (1, 2))
        board.pop()
        if self.illegal_from is not None and board.ply >= self.illegal_from:
            seat = board.turn - 1
            reached = tuple(mask | 1 << CELL_BY_NAME["e5"] if index == seat else mask
                            for index, mask in enumerate(reached))
        # The Reply of the external_match module finish_probe reads answers with.
        return sys.modules[fp.answered_move.__module__].Reply(reached, 1, 1, 0.0)


def test_play_out_reads_the_engine_answer_as_external_match_does() -> None:
    """A legal answer is played; an answer no legal move reaches stops the probe with the
    message external_match gives (both positions named), not with a probe of its own."""
    start = fp.Start(0, 0, Board.from_layout("standard", Rules(players=2)).position())
    outcome = fp.play_out(start, "pebble", _ScriptedEngine(), 0.01, 12, 1)
    assert outcome.plies == 12 and outcome.moves == 6
    with pytest.raises(fp.EngineError) as refused:
        fp.play_out(start, "pebble", _ScriptedEngine(illegal_from=3), 0.01, 12, 1)
    assert str(refused.value).startswith("cotix answered a position no legal move reaches")


def test_a_position_that_is_none_is_refused_before_any_engine_is_built(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        fp.main(["--position", "not a position", "--cotix-src", "/nonexistent"])
    assert stop.value.code == 2
    assert ("--position 'not a position': a position has 9 rows separated by '/', not 1"
            in capsys.readouterr().err)
