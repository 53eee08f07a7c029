"""The evaluation's values, fixed against a slow computation written from the terms'
definitions cell by cell, and the searches' results with the fast evaluation against
the same searches with the slow one.

The fast evaluation (:mod:`abalone_pbm.robots.features`, :func:`evaluate_two` of
:mod:`abalone_pbm.robots.evaluation`) is rewritten for speed; these tests hold it to
what it computes on several hundred positions of random play (standard and Belgian
Daisy, marbles pushed off, the variants, three to six players), and a search at fixed
depth must choose the same move with the same value and the same node count.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator

import pytest

from abalone_pbm.robots import BoulderRobot, endgame, features
from abalone_pbm.robots import evaluation as evaluation_module
from abalone_pbm.robots.bitmoves import CHANGES, EJECT, PUSH, children, tactical_children
from abalone_pbm.rules import Board, Rules
from abalone_pbm.rules.geometry import BOARD_MASK, CELLS, DIAGONAL_OF, OFFSETS, ROW_OF
from abalone_pbm.rules.movegen import lane_masks

AXIS_STEPS = OFFSETS[:3]


# ------------------------------------------------------------- the slow terms
def on_board(cell: int) -> bool:
    return 0 <= cell < 121 and bool(BOARD_MASK >> cell & 1)


def has(bits: int, cell: int) -> bool:
    return on_board(cell) and bool(bits >> cell & 1)


def cells_of(bits: int) -> list[int]:
    return [c for c in CELLS if bits >> c & 1]


def distance_to_centre(cell: int) -> int:
    dr, dd = ROW_OF[cell] - 4, DIAGONAL_OF[cell] - 5
    return max(abs(dr), abs(dd), abs(dr - dd))


def centre_sum(bits: int) -> int:
    return sum(distance_to_centre(c) for c in cells_of(bits))


def adjacent_pairs(bits: int) -> int:
    return sum(1 for c in cells_of(bits) for o in AXIS_STEPS if has(bits, c + o))


def lines_of_three(bits: int) -> int:
    return sum(
        1 for c in cells_of(bits) for o in AXIS_STEPS if has(bits, c + o) and has(bits, c + 2 * o)
    )


def edge_count(bits: int) -> int:
    return sum(1 for c in cells_of(bits) if distance_to_centre(c) == 4)


def threatened_cells(pusher: int, enemy: int, victims: int) -> int:
    """Victims on the edge that a line of two or three pushes off (one marble), or a
    line of three (two marbles, the victim in front)."""
    out = 0
    for v in cells_of(victims):
        for o in OFFSETS:
            if on_board(v + o):
                continue
            two_on_one = has(pusher, v - o) and has(pusher, v - 2 * o)
            three_on_two = has(enemy, v - o) and all(has(pusher, v - k * o) for k in (2, 3, 4))
            if two_on_one or three_on_two:
                out |= 1 << v
    return out


def exposed(edge_side: int, other: int) -> int:
    """Edge marbles of ``edge_side`` with a marble of ``other`` right behind them on a
    line out, counted once per such line."""
    return sum(
        1
        for v in cells_of(edge_side)
        for o in OFFSETS
        if not on_board(v + o) and has(other, v - o)
    )


def pushable_cells(pusher: int, enemy: int) -> int:
    """The first marble of every push the pusher has: two or three on one, three on two,
    onto a free cell or off the board."""

    def free(cell: int) -> bool:
        return not on_board(cell) or not (has(pusher, cell) or has(enemy, cell))

    out = 0
    for c in cells_of(enemy):
        for o in OFFSETS:
            if not (has(pusher, c - o) and has(pusher, c - 2 * o)):
                continue
            if free(c + o) or (
                has(pusher, c - 3 * o) and has(enemy, c + o) and free(c + 2 * o)
            ):
                out |= 1 << c
    return out


def slow_features(me: int, op: int, mine: int, theirs: int) -> list[float]:
    my_threats = bin(threatened_cells(me, op, op)).count("1")
    their_threats = bin(threatened_cells(op, me, me)).count("1")
    lead = mine - theirs
    return [
        float(lead),
        float(mine * mine - theirs * theirs),
        float(centre_sum(op) - centre_sum(me)),
        float(adjacent_pairs(me) - adjacent_pairs(op)),
        float(lines_of_three(me) - lines_of_three(op)),
        float(edge_count(op) - edge_count(me)),
        float(my_threats > 0),
        float(my_threats - their_threats),
        float(their_threats > 0),
        float(exposed(op, me) - exposed(me, op)),
        float(lead * my_threats),
    ]


def slow_evaluation(me: int, op: int, mine: int, theirs: int) -> tuple[int, int, int]:
    """(value, threats of the side to move, threats against it), from the definitions
    in the text of :mod:`features`: the fitted sum, the finishing, pressure and push
    terms."""
    weights = features.current_weights()
    fitted = sum(
        weights[name] * value
        for name, value in zip(features.WEIGHT_NAMES, slow_features(me, op, mine, theirs))
    )
    finish = 150 * mine * (mine - 1) - 150 * theirs * (theirs - 1)
    # The pressure and push terms scale with each side's lead, nothing for a side not
    # ahead.
    ahead, behind = max(0, mine - theirs), max(0, theirs - mine)
    press = features.PRESSURE * (ahead * centre_sum(op) - behind * centre_sum(me))
    pushes = features.PUSHES * (
        ahead * bin(pushable_cells(me, op)).count("1")
        - behind * bin(pushable_cells(op, me)).count("1")
    )
    return (
        int(fitted) + finish + press + pushes,
        bin(threatened_cells(me, op, op)).count("1"),
        bin(threatened_cells(op, me, me)).count("1"),
    )


def slow_endgame_terms(me: int, op: int, mine: int, theirs: int) -> int:
    """The endgame terms from the text of :mod:`endgame`: the marbles of the other side a
    side could push now, at every score; per marble of a side's lead, the steps its own
    marbles stand from e5 beyond two each."""
    def beyond_two(bits: int) -> int:
        return sum(distance_to_centre(c) - 2 for c in cells_of(bits))

    pushes = bin(pushable_cells(me, op)).count("1") - bin(pushable_cells(op, me)).count("1")
    ahead, behind = max(0, mine - theirs), max(0, theirs - mine)
    return endgame.CONTACT_PUSHES * pushes - endgame.LEAD_CENTRE * (
        ahead * beyond_two(me) - behind * beyond_two(op))


def slow_search_evaluation(me: int, op: int, mine: int, theirs: int) -> tuple[int, int, int]:
    """What the two-player search evaluates with: :func:`slow_evaluation` plus the endgame
    terms."""
    value, threats, danger = slow_evaluation(me, op, mine, theirs)
    return value + slow_endgame_terms(me, op, mine, theirs), threats, danger


def slow_evaluate_two(me: int, op: int, my_score: int, op_score: int, me_to_move: bool) -> int:
    e = evaluation_module
    mine = bin(threatened_cells(me, op, op)).count("1")
    theirs = bin(threatened_cells(op, me, me)).count("1")
    value = (
        e.MARBLE * (my_score - op_score)
        + e.CENTRE_WEIGHT * (centre_sum(op) - centre_sum(me))
        + e.COHESION_WEIGHT * (adjacent_pairs(me) - adjacent_pairs(op))
        + e.THREAT_EACH * (mine - theirs)
    )
    if me_to_move and mine:
        value += e.THREAT_ON_MOVE
    if not me_to_move and theirs:
        value -= e.THREAT_ON_MOVE
    return value


# ------------------------------------------------------------------ positions
def played(rules: Rules, layout: str, rng: random.Random, plies: int, eager: float) -> Board:
    """A position after ``plies`` random moves; ``eager``: how often a push that
    ejects is taken when there is one (so that marbles are off)."""
    board = Board.from_layout(layout, rules)
    for _ in range(plies):
        if board.outcome() is not None:
            break
        moves = list(board.generate_legal_moves())
        if not moves:
            break
        if rng.random() < eager:
            seat, before = board.turn, board.ejected(board.turn)
            ejecting = []
            for move in moves:
                board.push(move)
                if board.ejected(seat) > before:
                    ejecting.append(move)
                board.pop()
            if ejecting:
                moves = ejecting
        board.push(rng.choice(moves))
    return board


def two_player_positions(count: int, seed: int) -> list[tuple[int, int, int, int]]:
    """(me, op, mine, theirs) from random games; the counts of marbles off are the
    games' and, for every other position, drawn anew (the terms that grow with them)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        layout = ("standard", "belgian-daisy")[i % 2]
        board = played(Rules(), layout, rng, rng.randrange(0, 140), rng.choice((0.0, 0.3, 0.8)))
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        mine, theirs = board.ejected(seat), board.ejected(3 - seat)
        if i % 2:
            mine, theirs = rng.randrange(0, 6), rng.randrange(0, 6)
        out.append((me, op, mine, theirs))
    return out


POSITIONS = two_player_positions(300, seed=24)


def test_positions_are_varied() -> None:
    assert len(set(POSITIONS)) > 280
    assert sum(1 for p in POSITIONS if p[2] or p[3]) > 150
    assert sum(1 for p in POSITIONS if slow_evaluation(*p)[1]) > 20  # threats on the board


def test_evaluation_is_the_terms_definitions() -> None:
    for me, op, mine, theirs in POSITIONS:
        expected = slow_evaluation(me, op, mine, theirs)
        # Twice: the second answer comes from the caches.
        assert features.evaluation(me, op, mine, theirs) == expected
        assert features.evaluation(me, op, mine, theirs) == expected
        assert features.static_eval(me, op, mine, theirs) == expected[:2]
        assert features.evaluate(me, op, mine, theirs) == expected[0]
        assert features.features(me, op, mine, theirs) == slow_features(me, op, mine, theirs)


def test_evaluation_without_caches_is_the_same() -> None:
    for me, op, mine, theirs in POSITIONS[:60]:
        features.clear_caches()
        assert features.evaluation(me, op, mine, theirs) == slow_evaluation(me, op, mine, theirs)


def test_search_evaluation_is_the_terms_definitions() -> None:
    """The two-player search's evaluation (the fitted one with the endgame terms) on the
    same positions, half of them with marbles pushed off."""
    for me, op, mine, theirs in POSITIONS:
        expected = slow_search_evaluation(me, op, mine, theirs)
        # Twice: the second answer comes from the caches.
        assert endgame.evaluation(me, op, mine, theirs) == expected
        assert endgame.evaluation(me, op, mine, theirs) == expected
        assert endgame.endgame_terms(me, op, mine, theirs) == slow_endgame_terms(
            me, op, mine, theirs)


def test_search_evaluation_follows_other_weights() -> None:
    """Every weight the search's evaluation reads, changed after its answers are cached,
    and changed back."""
    saved = (features.current_weights(), features.PRESSURE, features.PUSHES,
             endgame.CONTACT_PUSHES, endgame.LEAD_CENTRE)
    for position in POSITIONS[:80]:
        endgame.evaluation(*position)
    try:
        for settings in ((45, 17, 0, 0), (0, 0, 70, 35), (30, 30, 0, 20), (10, 0, 100, 0)):
            features.set_pressure(settings[0], settings[1])
            endgame.set_endgame(settings[2], settings[3])
            for me, op, mine, theirs in POSITIONS[:80]:
                assert endgame.evaluation(me, op, mine, theirs) == slow_search_evaluation(
                    me, op, mine, theirs)
        features.set_weights({**saved[0], "CENTRE": 33, "THREATS": 250, "MATERIAL": 900,
                              "PROGRESS": 41})
        for me, op, mine, theirs in POSITIONS[:80]:
            assert endgame.evaluation(me, op, mine, theirs) == slow_search_evaluation(
                me, op, mine, theirs)
    finally:
        features.set_weights(saved[0])
        features.set_pressure(saved[1], saved[2])
        endgame.set_endgame(saved[3], saved[4])
    for me, op, mine, theirs in POSITIONS[:80]:
        assert endgame.evaluation(me, op, mine, theirs) == slow_search_evaluation(
            me, op, mine, theirs)


def test_evaluation_follows_other_pressure_weights() -> None:
    pressure, pushes = features.PRESSURE, features.PUSHES
    for position in POSITIONS[:80]:  # cached with the weights of now
        features.evaluation(*position)
    try:
        features.set_pressure(45, 17)
        for me, op, mine, theirs in POSITIONS[:80]:
            assert features.evaluation(me, op, mine, theirs) == slow_evaluation(me, op, mine, theirs)
    finally:
        features.set_pressure(pressure, pushes)


def test_threat_and_push_masks_are_the_definitions() -> None:
    for me, op, _, _ in POSITIONS:
        for a, b in ((me, op), (op, me)):
            assert features.threatened_marbles(a, b) == threatened_cells(a, b, b)
            assert features.threatens(a, b) == bool(threatened_cells(a, b, b))
            assert features.pushable(a, b) == pushable_cells(a, b)
            assert features.pushable(a, b).bit_count() == bin(pushable_cells(a, b)).count("1")


def variant_and_multi_boards(seed: int) -> Iterator[Board]:
    rng = random.Random(seed)
    for variant in ("pillar", "princess", "soccer", "thief"):
        for _ in range(15):
            yield played(Rules(variant=variant), "standard", rng, rng.randrange(0, 120), 0.5)
    for players, teams, layout in ((3, False, "standard"), (4, True, "standard"),
                                   (6, False, "bowl"), (4, False, "bowl")):
        for _ in range(15):
            yield played(Rules(players=players, teams=teams), layout, rng,
                         rng.randrange(0, 160), 0.5)


def test_two_player_heuristic_of_the_variants_is_its_definition() -> None:
    for board in variant_and_multi_boards(seed=5):
        if board.players != 2:
            continue
        me, op = board.marbles(1), board.marbles(2)
        for to_move in (True, False):
            assert evaluation_module.evaluate_two(me, op, 3, 1, to_move) == slow_evaluate_two(
                me, op, 3, 1, to_move)


def test_threats_among_several_sides_are_the_definition() -> None:
    for board in variant_and_multi_boards(seed=6):
        everyone = 0
        for seat in range(1, board.players + 1):
            everyone |= board.marbles(seat)
        for seat in range(1, board.players + 1):
            own = board.marbles(seat)
            rest = everyone & ~own
            for victims in (rest, rest & features.EDGE, board.marbles(seat % board.players + 1)):
                assert features.threatened(own, rest, victims & features.EDGE) == (
                    threatened_cells(own, rest, victims & features.EDGE))
            assert features.threatened_marbles(own, rest) == threatened_cells(own, rest, rest)


def test_moves_come_in_lane_order() -> None:
    """The searches' tie-breaks depend on the order of the moves: kind by kind as the
    rules core's lanes give them, each kind from the highest lane bit down; the
    tactical moves (ejections, pushes onto the edge) in that order too."""
    rng = random.Random(3)
    for me, op, _, _ in POSITIONS[:80]:
        empty = [c for c in CELLS if not (me | op) >> c & 1]
        for blockers in (0, sum(1 << c for c in rng.sample(empty, 4))):
            expected = []
            for bits, kind in lane_masks(me, op, blockers):
                for bit in sorted((b for b in range(bits.bit_length()) if bits >> b & 1),
                                  reverse=True):
                    what, diff, op_diff = CHANGES[kind][bit]
                    expected.append((what, diff, me ^ diff, op ^ op_diff))
            assert children(me, op, blockers) == expected
            if blockers:
                continue
            assert tactical_children(me, op, features.EDGE) == [
                kid for kid in expected
                if kid[0] == EJECT or (kid[0] == PUSH and kid[3] & ~op & features.EDGE)
            ]


# ------------------------------------------------------------------ searches
def use_slow_evaluations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search's evaluation replaced by the slow one (remembered by position),
    wherever a robot module holds it (a term added on top keeps its place)."""
    cache: dict[tuple[int, int, int, int], tuple[int, int, int]] = {}

    def remembered(me: int, op: int, mine: int, theirs: int) -> tuple[int, int, int]:
        key = (me, op, mine, theirs)
        if key not in cache:
            cache[key] = slow_evaluation(*key)
        return cache[key]

    search_cache: dict[tuple[int, int, int, int], tuple[int, int, int]] = {}

    def remembered_search(me: int, op: int, mine: int, theirs: int) -> tuple[int, int, int]:
        key = (me, op, mine, theirs)
        if key not in search_cache:
            search_cache[key] = slow_search_evaluation(*key)
        return search_cache[key]

    fast_evaluation, fast_evaluate_two = features.evaluation, evaluation_module.evaluate_two
    fast_search_evaluation = endgame.evaluation
    replaced = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("abalone_pbm.robots"):
            continue
        for attribute, value in list(vars(module).items()):
            if value is fast_evaluation:
                monkeypatch.setattr(module, attribute, remembered)
                replaced += 1
            elif value is fast_search_evaluation:
                monkeypatch.setattr(module, attribute, remembered_search)
                replaced += 1
            elif value is fast_evaluate_two:
                monkeypatch.setattr(module, attribute, slow_evaluate_two)
                replaced += 1
    assert replaced >= 4  # features' and the searches' names of the two
    # The two-player search evaluates with the fitted terms and the endgame terms.
    assert vars(sys.modules["abalone_pbm.robots.duel"])["evaluation"] is remembered_search


def search_results(boards: list[Board], depth: int) -> list[tuple[str, int | None, int]]:
    out = []
    for board in boards:
        robot = BoulderRobot()
        move = robot.choose_move(board, 60.0, rng_seed=3, max_depth=depth)
        info = robot.last_info
        assert info is not None
        out.append((str(move), info.value, info.nodes))
    return out


def search_boards() -> list[Board]:
    rng = random.Random(77)
    boards = []
    for i in range(10):
        layout = ("standard", "belgian-daisy")[i % 2]
        board = played(Rules(), layout, rng, 10 + 12 * i, (0.0, 0.7)[i % 3 == 2])
        if board.outcome() is None:
            boards.append(Board(board.position(), board.rules))
    for variant in ("pillar", "soccer"):
        board = played(Rules(variant=variant), "standard", rng, 30, 0.5)
        if board.outcome() is None:
            boards.append(Board(board.position(), board.rules))
    return boards


@pytest.mark.parametrize("depth", [3])
def test_search_with_the_fast_evaluation_is_the_search_with_the_definitions(
    depth: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    boards = search_boards()
    assert len(boards) >= 10
    assert any(b.ejected(1) or b.ejected(2) for b in boards)  # the finishing terms count
    fast = search_results(boards, depth)
    use_slow_evaluations(monkeypatch)
    slow = search_results(boards, depth)
    assert fast == slow


def edge_patterns(seed: int) -> Iterator[tuple[int, int]]:
    """(me, op) with, at every edge cell and for every way off the board there, each
    pattern the contact terms read: a victim with a pusher one behind, two, three;
    with its partner behind it and three pushers behind that; among random marbles."""
    rng = random.Random(seed)
    for v in CELLS:
        for o in OFFSETS:
            if on_board(v + o):
                continue
            for pattern in ((1,), (1, 1), (1, 1, 1), (2, 1, 1, 1), (2, 1, 1), (2, 2, 1, 1, 1)):
                me = op = 0
                for k, who in enumerate(pattern):
                    cell = v - k * o if k else v
                    if not on_board(cell):
                        break
                    if k == 0 or who == 2:
                        op |= 1 << cell
                    else:
                        me |= 1 << cell
                for c in CELLS:
                    if not (me | op) >> c & 1 and rng.random() < 0.15:
                        if rng.random() < 0.5:
                            me |= 1 << c
                        else:
                            op |= 1 << c
                yield me, op


def test_contact_terms_at_every_edge_cell_and_way_out() -> None:
    count = 0
    for me, op in edge_patterns(seed=8):
        # The pass that counts the pushes too gives the same contacts, and the pushes.
        assert features._contacts_and_pushes(me, op) == (
            *features._contacts(me, op), pushable_cells(me, op), pushable_cells(op, me))
        for a, b in ((me, op), (op, me)):
            assert features.threatens(a, b) == bool(threatened_cells(a, b, b))
        for mine, theirs in ((0, 0), (2, 3)):
            for a, b in ((me, op), (op, me)):
                assert features.evaluation(a, b, mine, theirs) == slow_evaluation(a, b, mine, theirs)
                count += 1
    assert count > 1000
