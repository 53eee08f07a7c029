"""benchmarks/external_match.py: our board as the outside engines see it.

The cell mapping is checked in pure Python.  The checks against the engines themselves
need their sources (``ABALONE_COTIX_SRC`` / ``ABALONE_VERLOOP_SRC``, a source tree or a
git repository, or the clones the script keeps in its cache) and g++ or javac; without
them they are skipped.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scripts import load_script

from abalone_pbm.rules import Board, Rules
from abalone_pbm.rules.geometry import (
    CELL_BY_NAME, CELLS, DIAGONAL_OF, OFFSETS, ROW_OF, on_board)

em = load_script("benchmarks/external_match.py")

# Their shift for each of our directions (Game.cpp: UP_LEFT = 11, UP_RIGHT = 10, LEFT = 1,
# RIGHT = -1, DOWN_LEFT = -10, DOWN_RIGHT = -11).
COTIX_STEPS = {-1, 1, -10, 10, -11, 11}


def test_the_mapping_is_one_to_one_and_keeps_neighbours() -> None:
    bits = {em.OUR_TO_COTIX[cell] for cell in CELLS}
    assert len(bits) == 61
    # Their playing field (Game.cpp PLAYING_FIELD): rows 1-9 of the 11 x 11 grid.
    rows = {bit // 11 for bit in bits}
    assert rows == set(range(1, 10))
    for cell in CELLS:
        for offset in OFFSETS:
            if on_board(cell + offset):
                step = em.OUR_TO_COTIX[cell + offset] - em.OUR_TO_COTIX[cell]
                assert step in COTIX_STEPS
    mask = sum(1 << c for c in CELLS[::3])
    assert em.from_cotix(em.to_cotix(mask)) == mask
    with pytest.raises(ValueError):
        em.from_cotix(1)  # bit 0 is padding in their grid


def _source(variable: str, marker: str, prefix: str) -> Path | None:
    given = os.environ.get(variable)
    candidates = [Path(given)] if given else sorted(em.DEFAULT_CACHE.glob(f"{prefix}*"))
    for path in candidates:
        if (path / marker).is_file() or (path / "HEAD").is_file():
            return path
    return None


@pytest.fixture(scope="module")
def cotix_binary() -> Path:
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    given = _source("ABALONE_COTIX_SRC", "Game.cpp", "Cotix-Abalone")
    if given is None:
        pytest.skip("no Cotix/Abalone source (set ABALONE_COTIX_SRC)")
    source = em.resolve_source(str(given), em.COTIX_URL, "Game.cpp", em.DEFAULT_CACHE,
                               "Cotix-Abalone")
    return Path(em.build_cotix(source, em.DEFAULT_CACHE))


@pytest.fixture(scope="module")
def cotix(cotix_binary: Path) -> Iterator[object]:
    engine = em.CotixEngine(cotix_binary, 16)
    yield engine
    engine.close()


def test_their_daisy_is_our_belgian_daisy(cotix: em.CotixEngine) -> None:
    first, second = cotix.start_boards("daisy")
    board = Board.from_layout("belgian-daisy")
    assert (em.from_cotix(first), em.from_cotix(second)) == (board.marbles(1), board.marbles(2))


def test_their_standard_start_puts_a_row_off_the_board(cotix: em.CotixEngine) -> None:
    # Their constructor's layout: player 1 is our first seat's standard start, player 0's
    # back row sits on the padding row 0, which is why the driver is handed the boards.
    first, second = cotix.start_boards("start")
    assert em.from_cotix(second) == Board.from_layout("standard").marbles(1)
    with pytest.raises(ValueError):
        em.from_cotix(first)


@pytest.mark.parametrize("layout", ["standard", "belgian-daisy", "german-daisy"])
def test_every_move_they_generate_is_legal_for_us(cotix: em.CotixEngine, layout: str) -> None:
    board = Board.from_layout(layout)
    rng = random.Random(layout)
    for _ in range(30):
        ours = set()
        for move in board.generate_legal_moves():
            board.push(move)
            ours.add((board.marbles(1), board.marbles(2)))
            board.pop()
        theirs = set(cotix.moves(board))
        assert theirs and theirs <= ours
        board.push(rng.choice(list(board.generate_legal_moves())))


def test_a_cotix_move_is_read_back_as_our_legal_move(cotix: em.CotixEngine) -> None:
    board = Board.from_layout("belgian-daisy")
    cotix.new_game("belgian-daisy", board)
    reply = cotix.choose(board, 0.05)
    move = em.move_to(board, reply.masks)
    assert move is not None and move in board.legal_moves
    assert reply.depth >= 2


@pytest.fixture(scope="module")
def verloop() -> Iterator[object]:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac is not installed")
    given = _source("ABALONE_VERLOOP_SRC", em.VERLOOP_MARKER, "MichielVerloop-AbaloneAI")
    if given is None:
        pytest.skip("no AbaloneAI source (set ABALONE_VERLOOP_SRC)")
    try:
        em.java_classpath()
    except SystemExit:
        pytest.skip("opencsv/guava jars are not installed")
    source = em.resolve_source(str(given), em.VERLOOP_URL, em.VERLOOP_MARKER,
                               em.DEFAULT_CACHE, "MichielVerloop-AbaloneAI")
    engine = em.VerloopEngine(em.build_verloop(source, em.DEFAULT_CACHE))
    yield engine
    engine.close()


def test_java_engine_layouts_and_moves_agree_with_ours(verloop: em.VerloopEngine) -> None:
    for layout in em.VERLOOP_LAYOUTS:
        board = Board.from_layout(layout)
        verloop.new_game(layout, board)  # raises when their layout differs from ours
        rng = random.Random(layout)
        for _ in range(6):  # our moves, followed by their board
            board.push(rng.choice(list(board.generate_legal_moves())))
            verloop.observe(board)
        reply = verloop.choose(board, 0.05)
        move = em.move_to(board, reply.masks)
        assert move is not None
        board.push(move)
        verloop.observe(board)  # their own move is not sent back
        board.push(rng.choice(list(board.generate_legal_moves())))
        verloop.observe(board)


def test_an_answer_no_legal_move_reaches_is_refused() -> None:
    """Read the same way from either seat: a legal answer gives our move, any other
    position is an EngineError that names both positions (the engine forfeits)."""
    board = Board.from_layout("standard", Rules(players=2))
    move = sorted(board.generate_legal_moves(), key=str)[0]
    board.push(move)
    reached = (board.marbles(1), board.marbles(2))
    board.pop()
    assert em.answered_move("cotix", board, em.Reply(reached, 1, 1, 0.0)) == move
    jumped = (reached[0] ^ 1 << CELL_BY_NAME["e5"], reached[1])
    with pytest.raises(em.EngineError) as refused:
        em.answered_move("cotix", board, em.Reply(jumped, 1, 1, 0.0))
    assert str(refused.value) == (
        f"cotix answered a position no legal move reaches (before: {board.position()}; "
        f"after: seat 1 {jumped[0]:#x}, seat 2 {jumped[1]:#x})")


def test_a_board_is_set_up_from_masks_seat_by_seat() -> None:
    board = Board.from_layout("standard", Rules(players=3))
    masks = tuple(board.marbles(s) for s in (1, 2, 3))
    copy = em.board_from_masks(masks, Rules(players=3, movelimit=90))
    assert tuple(copy.marbles(s) for s in (1, 2, 3)) == masks
    assert copy.turn == 1 and copy.ejected_counts == board.ejected_counts
    text = em.position_text(board).split()
    assert em.masks_of(text, 3) == masks
    with pytest.raises(em.EngineError):
        em.masks_of(text, 2)  # a third group where two were expected


def _turned(mask: int, sixths: int) -> int:
    """``mask`` turned about e5 by ``sixths`` sixths of a turn."""
    centre = CELL_BY_NAME["e5"]
    out = 0
    for cell in CELLS:
        if not mask >> cell & 1:
            continue
        x = ROW_OF[cell] - ROW_OF[centre]
        y = -(DIAGONAL_OF[cell] - DIAGONAL_OF[centre])
        z = -x - y
        for _ in range(sixths):
            x, y, z = -z, -x, -y
        row, diagonal = ROW_OF[centre] + x, DIAGONAL_OF[centre] - y
        out |= 1 << next(c for c in CELLS if ROW_OF[c] == row and DIAGONAL_OF[c] == diagonal)
    return out


def test_their_three_player_layout_is_ours_turned(verloop: em.VerloopEngine) -> None:
    theirs = verloop.new_multi_game(3)
    ours = Board.from_layout("standard", Rules(players=3))
    wanted = {ours.marbles(s) for s in (1, 2, 3)}
    assert any({_turned(m, k) for m in theirs} == wanted for k in range(6))


@pytest.mark.parametrize("players", [3, 4])
def test_every_seat_they_play_moves_legally_for_us(verloop: em.VerloopEngine,
                                                   players: int) -> None:
    rules = Rules(players=players, teams=players == 4)
    board = em.board_from_masks(verloop.new_multi_game(players), rules)
    rng = random.Random(players)
    for ply in range(3 * players):
        if ply % players == 0:  # one seat ours, the others theirs
            board.push(rng.choice(list(board.generate_legal_moves())))
        else:
            reply = verloop.choose(board, 0.05)
            move = em.move_to(board, reply.masks)
            assert move is not None, f"their move from {board.position()} is not ours"
            board.push(move)
        verloop.observe(board)


@pytest.mark.parametrize("players", [3, 4])
def test_a_game_with_more_players_is_played_to_the_limit(verloop: em.VerloopEngine,
                                                         players: int) -> None:
    """The match loop itself with more players: ours in one seat, the engine in every
    other one (a partner's too), every move of theirs read back as our legal move."""
    spec = em.MatchSpec("pebble", ("standard",), opening_moves=2, budget=0.05,
                        movelimit=2 + 2 * players, seed=9)
    thinking = {"a": 0.0, "b": 0.0}
    result = em.play_multi_game(spec, 1, players, verloop, thinking)
    assert result.plies == 2 + 2 * players and result.reason.startswith("move limit")
    assert result.a_seat == 2
    assert result.stats["a"].moves == 2
    assert result.stats["b"].moves == 2 * players - 2
    assert thinking["b"] > 0


def test_a_recorded_game_replays_to_its_end(cotix: em.CotixEngine) -> None:
    """The game record holds every move, the random opening's too: played again from the
    layout it reaches the final position, with the marbles pushed off it reports."""
    spec = em.MatchSpec("pebble", ("standard",), opening_moves=4, budget=0.05, movelimit=16,
                        seed=3)
    record = io.StringIO()
    result = em.play_game(spec, 1, cotix, record=record)
    game = json.loads(record.getvalue())
    assert len(game["moves"]) == result.plies == 16
    board = em.replay(game)
    assert board.ply == result.plies
    assert (board.ejected(result.a_seat), board.ejected(3 - result.a_seat)) == (
        result.ejected_a, result.ejected_b) == tuple(game["pushed_off"])
    assert game["ours_seat"] == result.a_seat and game["layout"] == "standard"
    halfway = em.replay(game, 8)
    assert halfway.ply == 8 and halfway.position() != board.position()


def test_time_odds_give_ours_its_own_budget(cotix: em.CotixEngine) -> None:
    """With ``ours_budget`` ours thinks that long a move and the engine the match budget:
    boulder's moves take up to 0.3 s, Cotix's about 0.02 s."""
    spec = em.MatchSpec("boulder", ("standard",), opening_moves=4, budget=0.02, movelimit=12,
                        seed=5, ours_budget=0.3)
    thinking = {"a": 0.0, "b": 0.0}
    result = em.play_game(spec, 0, cotix, thinking)
    ours, theirs = result.stats["a"].moves, result.stats["b"].moves
    assert ours + theirs == result.plies - 4 == 8  # after the random opening
    assert 0.1 < thinking["a"] / ours < 0.35  # the margin kept back, quick moves
    assert thinking["b"] / theirs < 0.1


def test_the_engine_plays_ours_seat_against_itself(cotix: em.CotixEngine,
                                                   cotix_binary: Path) -> None:
    """``--ours cotix``: a second process of the engine holds ours' seat; its moves are
    read back as our legal moves, its search is counted, and its longer budget is its own
    (time odds of the engine against itself)."""
    second = em.EngineInOursSeat(em.CotixEngine(cotix_binary, 16))
    try:
        spec = em.MatchSpec("cotix", ("belgian-daisy",), opening_moves=4, budget=0.02,
                            movelimit=14, seed=7, ours_budget=0.1)
        thinking = {"a": 0.0, "b": 0.0}
        trace = io.StringIO()
        result = em.play_game(spec, 0, cotix, thinking, trace, ours_engine=second)
    finally:
        second.engine.close()
    assert result.plies == 14 and result.reason.startswith("move limit")
    ours = result.stats["a"]
    assert ours.moves == 5 and ours.searched == 5 and ours.depth_total >= 5
    assert thinking["a"] / ours.moves > 2 * thinking["b"] / result.stats["b"].moves
    lines = [json.loads(line) for line in trace.getvalue().splitlines()]
    assert [line["seat"] for line in lines] == [result.a_seat] * 5


@pytest.mark.parametrize("players", ["2", "4t"])
def test_the_engine_in_ours_seat_plays_only_itself(players: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before any engine is built."""
    with pytest.raises(SystemExit) as stop:
        em.main(["--ours", "cotix", "--engine", "verloop", "--players", players])
    assert stop.value.code == 2
    assert "--ours cotix plays against --engine cotix" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--budget", "--ours-budget"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_time_a_move_that_is_none_is_refused(option: str, value: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Before any engine is built: a match at no time (or endless time) a move plays
    nothing worth measuring."""
    with pytest.raises(SystemExit) as stop:
        em.main([option, value])
    assert stop.value.code == 2
    assert f"{value} is no time to think" in capsys.readouterr().err
