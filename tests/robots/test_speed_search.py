"""The two-player search made faster finds what it found before: boulder's move, value
and node count at a fixed depth, pinned on positions of every kind the search treats
apart (openings, middle games, marbles pushed off, a side a marble from the target, the
move limit near), each searched for two moves in a row (the tables a robot keeps
between moves carry over).

The figures were produced by the search before its speed work (commit ffd8c95), and
again when the pressure, push and lead centre terms came to scale with a side's lead
instead of its marbles pushed off, with the evaluation's weights set here (so a change
of a default weight elsewhere does not move them).  A change of the search or of the
evaluation's terms that is meant to change results needs new figures:
``PYTHONPATH=. python tests/robots/test_speed_search.py`` prints them.  A change made
for speed alone must leave them as they are.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from abalone_pbm.robots import BoulderRobot, duel, endgame, features
from abalone_pbm.robots.bitmoves import (
    EJECT, PUSH, QUIET, Child, children, killers_in_order, pushes_in_order, quiet_in_order,
)
from abalone_pbm.rules import Board, Rules
from abalone_pbm.rules.movegen import lane_masks

DEPTH = 4

#: The weights of the evaluation the figures were made with.
WEIGHTS = {
    "MATERIAL": 1000, "PROGRESS": 29, "CENTRE": 96, "COHESION": 37, "LINES": 48, "EDGE": -2,
    "THREAT_NOW": 101, "THREATS": 331, "THREATENED": 97, "EXPOSED": 110, "LEAD_THREATS": 87,
}
PRESSURE, PUSHES = 30, 30
CONTACT_PUSHES, LEAD_CENTRE = 100, 20


@contextmanager
def pinned_weights() -> Iterator[None]:
    saved = (features.current_weights(), features.PRESSURE, features.PUSHES,
             endgame.CONTACT_PUSHES, endgame.LEAD_CENTRE)
    features.set_weights(WEIGHTS)
    features.set_pressure(PRESSURE, PUSHES)
    endgame.set_endgame(CONTACT_PUSHES, LEAD_CENTRE)
    try:
        yield
    finally:
        features.set_weights(saved[0])
        features.set_pressure(saved[1], saved[2])
        endgame.set_endgame(saved[3], saved[4])


def ejecting(board: Board) -> list:
    seat = board.turn
    before = board.ejected(seat)
    out = []
    for move in sorted(board.generate_legal_moves(), key=str):
        board.push(move)
        if board.ejected(seat) > before and board.outcome() is None:
            out.append(move)
        board.pop()
    return out


def positions() -> list[tuple[str, Board]]:
    """Random play (moves in notation order, so the positions do not depend on the
    order the generator lists them in), ejecting when it can with the share given."""
    settings = [
        # (layout, rules, plies, share of ejections taken)
        ("standard", Rules(), 4, 0.0),
        ("belgian-daisy", Rules(), 20, 0.0),
        ("standard", Rules(), 40, 0.8),
        ("belgian-daisy", Rules(), 60, 0.8),
        ("standard", Rules(target=3), 35, 0.9),  # a side a marble from the target
        ("belgian-daisy", Rules(target=2), 30, 0.9),
        ("standard", Rules(movelimit=44), 40, 0.6),  # the move limit a few plies on
        ("belgian-daisy", Rules(movelimit=60), 25, 0.3),
    ]
    rng = random.Random(2024)
    out = []
    for layout, rules, plies, share in settings:
        board = Board.from_layout(layout, rules)
        for _ in range(plies):
            moves = sorted(board.generate_legal_moves(), key=str)
            wins = ejecting(board)
            move = wins[0] if wins and rng.random() < share else rng.choice(moves)
            board.push(move)
            if board.outcome() is not None:
                board.pop()
                break
        name = f"{layout} {rules.target} {rules.movelimit} +{board.ply}"
        out.append((name, Board(board.position(), board.rules)))
    return out


def search_figures() -> list[tuple[str, str, int | None, int]]:
    """(position, move, value, nodes) of two moves of one robot from each position."""
    out = []
    with pinned_weights():
        for name, board in positions():
            robot = BoulderRobot()
            for turn in ("first", "second"):
                if board.outcome() is not None:
                    break
                move = robot.choose_move(board, 60.0, rng_seed=3, max_depth=DEPTH)
                info = robot.last_info
                assert info is not None
                out.append((f"{name} {turn}", str(move), info.value, info.nodes))
                board = board.copy()
                board.push(move)
    return out


PINNED: list[tuple[str, str, int | None, int]] = [
    ('standard 6 None +4 first', 'a5-c5,d5', -357, 8394),
    ('standard 6 None +4 second', 'i9-g7,f6', 119, 2042),
    ('belgian-daisy 6 None +20 first', 'g7-f7,e7', -784, 7383),
    ('belgian-daisy 6 None +20 second', 'a3-c5,d6', 824, 11410),
    ('standard 6 None +40 first', 'a5-b6,b5', -79, 13202),
    ('standard 6 None +40 second', 'f8-f6,f5', -307, 20303),
    ('belgian-daisy 6 None +60 first', 'g9-h9,f8', 3165, 8151),
    ('belgian-daisy 6 None +60 second', 'b6,c6', -3349, 10359),
    ('standard 3 None +35 first', 'f8-g9,f7', 236, 11695),
    ('standard 3 None +35 second', 'a2-a3,b3', -513, 5815),
    ('belgian-daisy 2 None +30 first', 'i7,h6', 1334, 56083),
    ('belgian-daisy 2 None +30 second', 'b5-b6,c5', -1645, 27507),
    ('standard 6 44 +40 first', 'b4-b5,c4', -856, 9078),
    ('standard 6 44 +40 second', 'e6-f6,g6', 535, 19053),
    ('belgian-daisy 6 60 +25 first', 'i6-h6,g6', -5517, 6394),
    ('belgian-daisy 6 60 +25 second', 'a3,b4', 5819, 7063),
]


def test_search_results_are_the_pinned_ones() -> None:
    assert search_figures() == PINNED


def scored_order(
    me: int, op: int, skip: int, killers: tuple[int, int], history: dict[int, int]
) -> list[Child]:
    """The search's move order by its definition: every child but ``skip`` scored
    (ejections, pushes, killers, then history) and sorted, ties in generation order."""
    scored = []
    for kid in children(me, op):
        kind, diff = kid[0], kid[1]
        if diff == skip:
            continue
        if kind == EJECT:
            score = 1 << 36
        elif kind == PUSH:
            score = 1 << 34
        elif diff in killers:
            score = 1 << 32
        else:
            score = history.get(diff, 0)
        scored.append((score, kid))
    scored.sort(key=lambda sk: sk[0], reverse=True)
    return [kid for _, kid in scored]


def test_moves_come_in_the_scores_order() -> None:
    """The search's batches (pushes, then quiet moves by killers and history) are the
    children sorted by the scores, with and without a move to skip, killers that are
    and are not legal here, and histories with ties."""
    rng = random.Random(9)
    tried = 0
    boards = [board for _, board in positions()]
    # Diffs of quiet moves in other positions (either side's, from the positions after).
    elsewhere = [kid[1] for board in boards for seat in (1, 2)
                 for kid in children(board.marbles(seat), board.marbles(3 - seat))
                 if kid[0] == QUIET]
    both_killers = killer_pushes = 0
    for board in boards:
        for seat in (1, 2):
            me, op = board.marbles(seat), board.marbles(3 - seat)
            kids = children(me, op)
            quiet = [kid[1] for kid in kids if kid[0] == QUIET]
            for _ in range(6):
                history = {diff: rng.choice((1, 2, 2, 5, 40)) for diff in rng.sample(
                    quiet, min(len(quiet), rng.randrange(0, 30)))}
                # Killers from this position or another one (legal here or not, or
                # here a push: the same diff as a quiet move of two elsewhere).
                pushes_here = [kid[1] for kid in kids if kid[0] != QUIET] or [0]
                here, other = rng.sample(quiet, 2), rng.choice(elsewhere)
                killers = rng.choice((
                    (here[0], here[1]), (here[0], 0), (other, here[0]),
                    (here[0], rng.choice(pushes_here)), (rng.choice(pushes_here), other),
                    (other, 1 << 130),
                ))
                both_killers += killers[0] in quiet and killers[1] in quiet
                killer_pushes += any(k and k in pushes_here for k in killers)
                skip = rng.choice((0, rng.choice(kids)[1]))
                lanes = lane_masks(me, op)
                diffs = killers_in_order(lanes, skip, *killers) + quiet_in_order(
                    lanes, (skip, *killers), lambda diff: history.get(diff, 0))
                ordered = pushes_in_order(me, op, lanes, skip) + [
                    (QUIET, diff, me ^ diff, op) for diff in diffs]
                assert ordered == scored_order(me, op, skip, killers, history)
                tried += 1
    assert tried > 80 and both_killers > 10 and killer_pushes > 5


def test_search_orders_moves_by_the_history_after_the_table_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a search, each node's moves come in the scores' order with the killers and
    history as they stand once the table's move is searched (the searches of the
    pushes and killers change the history; the order must not follow them)."""
    original = duel.DuelSearch._moves
    wrong: list[tuple[int, int]] = []
    checked = [0]

    def watched(
        self: duel.DuelSearch, me: int, op: int, tt_kid: Child | None, killer1: int,
        killer2: int, quiet: bool,
    ) -> Iterator[list[Child]]:
        batches = original(self, me, op, tt_kid, killer1, killer2, quiet)
        got: list[Child] = []
        want: list[Child] = []
        try:
            if tt_kid is not None:
                for kid in next(batches):
                    yield [kid]
            # The generator orders the rest when asked for its next batch: now.
            want = scored_order(
                me, op, tt_kid[1] if tt_kid else 0, (killer1, killer2), dict(self.history))
            if not quiet:
                want = [kid for kid in want if kid[0] != QUIET]
            for batch in batches:
                for kid in batch:
                    got.append(kid)
                    yield [kid]
        finally:
            checked[0] += 1
            if got != want[:len(got)]:
                wrong.append((me, op))

    monkeypatch.setattr(duel.DuelSearch, "_moves", watched)
    with pinned_weights():
        for _, board in positions():
            robot = BoulderRobot()
            for _ in range(2):
                move = robot.choose_move(board, 60.0, rng_seed=3, max_depth=DEPTH)
                board = board.copy()
                board.push(move)
    assert checked[0] > 1000
    assert wrong == []


if __name__ == "__main__":
    for figure in search_figures():
        print(f"    {figure!r},")
