"""The bitboard search core: move generation, exactness of the search, kept tables."""

from __future__ import annotations

import random

from robots_helpers import cells, make_position, next_player_can_win

from abalone_pbm.robots import BoulderRobot
from abalone_pbm.robots.base import SearchInfo
from abalone_pbm.robots.bitmoves import EJECT, PUSH, children, partner_pushes, tactical_children
from abalone_pbm.robots.duel import INFINITY, WIN, DuelSearch, DuelTables
from abalone_pbm.robots.endgame import evaluation as search_evaluation
from abalone_pbm.robots.features import EDGE, FEATURES, features, finish_term, static_eval
from abalone_pbm.robots.multi import MultiSearch, MultiTables
from abalone_pbm.rules import Board, Move, Rules


def _random_positions(layout: str, players: int, count: int, seed: int) -> list[Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = Board.from_layout(layout, Rules(players=players))
        for _ in range(rng.randrange(0, 70)):
            moves = list(board.generate_legal_moves())
            if not moves:
                break
            board.push(rng.choice(moves))
        if board.outcome() is None:
            out.append(board)
    return out


def test_children_are_the_rules_moves() -> None:
    for layout in ("standard", "belgian-daisy", "german-daisy"):
        for board in _random_positions(layout, 2, 12, seed=len(layout)):
            seat = board.turn
            me, op = board.marbles(seat), board.marbles(3 - seat)
            expected = set()
            for move in board.generate_legal_moves():
                before = board.ejected(seat)
                board.push(move)
                expected.add((board.marbles(seat), board.marbles(3 - seat), board.ejected(seat) > before))
                board.pop()
            kids = children(me, op)
            assert len(kids) == len(expected)
            assert {(k[2], k[3], k[0] == EJECT) for k in kids} == expected
            assert len({k[1] for k in kids}) == len(kids)  # diff names a move
            tactical = {(k[2], k[3]) for k in tactical_children(me, op, EDGE)}
            assert tactical == {
                (k[2], k[3])
                for k in kids
                if k[0] == EJECT or (k[0] == PUSH and k[3] & ~op & EDGE)
            }


def _minimax(search: DuelSearch, me: int, op: int, mine: int, theirs: int, depth: int, ply: int) -> int:
    if depth == 0:
        return search.quiesce(me, op, mine, theirs, -INFINITY, INFINITY, ply, 0)
    kids = children(me, op)
    if not kids:
        return -WIN + ply
    if any(kind == EJECT for kind, *_ in kids) and mine + 1 >= search.target:
        return WIN - ply - 1
    return max(
        -_minimax(search, nop, nme, theirs, mine + (kind == EJECT), depth - 1, ply + 1)
        for kind, _, nme, nop in kids
    )


def test_search_without_prunings_is_exact_minimax() -> None:
    for board in _random_positions("belgian-daisy", 2, 4, seed=5):
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        mine, theirs = board.ejected(seat), board.ejected(3 - seat)
        search = DuelSearch(DuelTables(), 6, None, None)
        search.reductions = search.futility = search.pruning = False
        root = children(me, op)
        for depth in (1, 2):
            value, root = search.root(me, op, mine, theirs, root, depth, -INFINITY, INFINITY)
            reference = DuelSearch(DuelTables(), 6, None, None)
            assert value == _minimax(reference, me, op, mine, theirs, depth, 0)


def test_quiescence_sees_an_ejection_and_the_win() -> None:
    # Player 1 (to move) can push i9 (player 2's) off the board with g7-h8.
    board = Board("...../....../......./......../......112/......../......./....../..... 1 5,0")
    me, op = board.marbles(1), board.marbles(2)
    search = DuelSearch(DuelTables(), 6, None, None)
    stand, can_eject, _ = search_evaluation(me, op, 5, 0)
    assert can_eject == 1
    # With five off already, the ejection wins at once.
    assert search.quiesce(me, op, 5, 0, -INFINITY, INFINITY, 0, 0) == WIN - 1
    # With four off, the quiet evaluation is not the end of it: the ejection is searched.
    ejection = next(k for k in tactical_children(me, op, EDGE) if k[0] == EJECT)
    after = -search_evaluation(ejection[3], ejection[2], 0, 5)[0]
    assert search.quiesce(me, op, 4, 0, -INFINITY, INFINITY, 0, 0) >= after


def test_features_and_fast_evaluation_agree() -> None:
    from abalone_pbm.robots.features import current_weights

    weights = current_weights()
    names = list(weights)
    assert len(names) == len(FEATURES)
    for board in _random_positions("standard", 2, 30, seed=9):
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        mine, theirs = board.ejected(seat), board.ejected(3 - seat)
        vector = features(me, op, mine, theirs)
        assert static_eval(me, op, mine, theirs)[0] == int(
            sum(weights[n] * x for n, x in zip(names, vector))
        ) + finish_term(mine, theirs)


def test_best_reply_moves_follow_the_rules() -> None:
    for players, teams in ((3, False), (4, False), (6, False), (4, True), (6, True)):
        for board in _random_positions("standard", players, 4, seed=players)[:4]:
            if teams:
                board = Board(board.position(), Rules(players=players, teams=True))
            search = MultiSearch(board, MultiTables(), None)
            marbles, scores = search._state(board)
            seat = board.turn
            friends = enemy = 0
            for other in range(1, players + 1):
                if other == seat:
                    continue
                if search.side_of[other] == search.side_of[seat]:
                    friends |= marbles[other]
                else:
                    enemy |= marbles[other]
            expected = set()
            for move in board.generate_legal_moves():
                board.push(move)
                expected.add(search._state(board))
                board.pop()
            got = {
                search._apply(marbles, scores, seat, kind, diff, new_own, enemy, new_enemy)
                for kind, diff, new_own, new_enemy in children(marbles[seat], enemy, friends)
            }
            along = partner_pushes(marbles[seat], friends, enemy)
            if not teams:
                assert not along
            got |= {search._apply_partner_push(marbles, scores, seat, push) for push in along}
            assert got == expected


def test_best_reply_search_takes_partners_along_as_the_rules_do() -> None:
    # Random team games until many positions with pushes that move a partner's
    # marbles have been seen: the search's positions after them are the rules' ones.
    rng = random.Random(5)
    checked = 0
    while checked < 30:
        players = rng.choice((4, 6))
        board = Board.from_layout("standard", Rules(players=players, teams=True))
        for _ in range(rng.randrange(10, 90)):
            if board.outcome() is not None:
                break
            board.push(rng.choice(list(board.generate_legal_moves())))
        if board.outcome() is not None:
            continue
        search = MultiSearch(board, MultiTables(), None)
        marbles, scores = search._state(board)
        seat = board.turn
        friends = enemy = 0
        for other in range(1, players + 1):
            if other != seat:
                if search.side_of[other] == search.side_of[seat]:
                    friends |= marbles[other]
                else:
                    enemy |= marbles[other]
        along = partner_pushes(marbles[seat], friends, enemy)
        if not along:
            continue
        expected = set()
        for move in board.generate_legal_moves():
            board.push(move)
            expected.add(search._state(board))
            board.pop()
        got = {
            search._apply(marbles, scores, seat, kind, diff, new_own, enemy, new_enemy)
            for kind, diff, new_own, new_enemy in children(marbles[seat], enemy, friends)
        }
        taken_along = {search._apply_partner_push(marbles, scores, seat, p) for p in along}
        assert not taken_along & got
        assert got | taken_along == expected
        checked += 1


def test_tables_are_kept_within_a_game_and_dropped_for_another() -> None:
    robot = BoulderRobot()
    board = Board.from_layout("standard", Rules(movelimit=100))
    board.push(robot.choose_move(board, 5.0, rng_seed=1, max_depth=3))
    tables = robot.duel_tables()
    assert tables.generation == 1 and tables.table
    board.push(list(board.generate_legal_moves())[0])
    board.push(robot.choose_move(board, 5.0, rng_seed=1, max_depth=3))
    assert robot.duel_tables() is tables and tables.generation == 2
    robot.choose_move(Board.from_layout("belgian-daisy"), 5.0, rng_seed=1, max_depth=2)
    assert robot.duel_tables() is not tables


def test_a_side_ahead_pays_for_a_repetition() -> None:
    board = Board.from_layout("standard")
    me, op = board.marbles(1), board.marbles(2)
    tables = DuelTables()
    tables.seen.add((me, op))
    search = DuelSearch(tables, 6, None, None)
    ahead = search.search(me, op, 2, 0, 2, -INFINITY, INFINITY, 1)
    behind = search.search(me, op, 0, 2, 2, -INFINITY, INFINITY, 1)
    assert ahead == search_evaluation(me, op, 2, 0)[0] - 400
    assert behind == search_evaluation(me, op, 0, 2)[0] + 400


def test_a_trade_gains_for_the_side_ahead_and_costs_the_side_behind() -> None:
    board = _random_positions("standard", 2, 1, seed=4)[0]
    me, op = board.marbles(board.turn), board.marbles(3 - board.turn)
    for mine, theirs in ((1, 0), (2, 0), (3, 2), (4, 1), (5, 3)):
        before = static_eval(me, op, mine, theirs)[0]
        traded = static_eval(me, op, mine + 1, theirs + 1)[0]
        assert traded > before + 100 * (mine - theirs)
        # The same trade seen by the side that is behind.
        assert static_eval(op, me, theirs + 1, mine + 1)[0] < static_eval(op, me, theirs, mine)[0]


def test_quiescence_ejections_are_the_rules_ejections() -> None:
    # Random free-for-all and team games: at every position the ejections the
    # quiescence search plays for the mover lead to the positions the rules give
    # after the mover's moves that push a marble off (the pushed ones follow their
    # owners, a partner's marbles taken along included).
    rng = random.Random(23)
    with_ejections = 0
    for players, teams in ((3, False), (4, False), (6, False), (4, True), (6, True)) * 4:
        board = Board.from_layout("standard", Rules(players=players, teams=teams))
        for _ in range(rng.randrange(40, 160)):
            if board.outcome() is not None:
                break
            search = MultiSearch(board, MultiTables(), None)
            marbles, scores = search._state(board)
            seat = board.turn
            expected = set()
            moves = list(board.generate_legal_moves())
            for move in moves:
                before = board.ejected(seat)
                board.push(move)
                if board.ejected(seat) > before:
                    expected.add(search._state(board))
                board.pop()
            got = search._ejections(marbles, scores, seat)
            assert len(got) == len(set(got))
            assert set(got) == expected
            with_ejections += bool(expected)
            board.push(rng.choice(moves))
    assert with_ejections >= 20


def test_quiescence_sees_an_ejection_past_the_horizon_with_three_players() -> None:
    # Seat 1 may push seat 3's i9 off (g9 h9 behind it), but seat 2 (b1 c1) is about
    # to push seat 1's a1 off.  Searched one move deep, the evaluation counts the
    # threat to a1 as less than the marble won; the quiescence search plays the
    # reply, a marble lost (and its penalty) for one won, and moves a1 away instead.
    position = make_position(
        {**cells("a1 g9 h9 d4 d5 e4", 1), **cells("b1 c1 f3 f4", 2), **cells("i9 e6 e7 d7", 3)},
        1,
        (0, 0, 0),
    )
    board = Board(position, Rules(players=3))
    moves = list(board.generate_legal_moves())
    chosen = {}
    for quiescence in (False, True):
        info = SearchInfo()
        search = MultiSearch(board, MultiTables(), None, quiescence)
        chosen[quiescence] = search.run(moves, 1, random.Random(1), info)
    board.push(chosen[False])
    assert board.ejected(1) == 1  # the static search grabs i9 ...
    assert any(_ejects(board, reply) for reply in board.generate_legal_moves())  # ... and a1 goes
    board.pop()
    board.push(chosen[True])
    assert board.ejected(1) == 0 and board.marble_count(1) == 6
    assert not any(_ejects(board, reply) for reply in board.generate_legal_moves())


def _ejects(board: Board, move: Move) -> bool:
    before = board.ejected(board.turn)
    seat = board.turn
    board.push(move)
    try:
        return board.ejected(seat) > before
    finally:
        board.pop()


def test_quiescence_sees_an_opponent_win_on_a_third_player() -> None:
    # Seat 2 has five off and can push seat 3's i9 off (g9 h9 behind it) to win.
    # Seat 1 may push seat 3's a1 off (c1 b1) or seat 2's h9 (h7 h8), which breaks
    # that line.  Searched one move deep, the evaluation does not see threats between
    # opponents and takes a1; the quiescence search plays the opponents' ejections of
    # one another's marbles when one of them is a marble from the target.
    position = make_position(
        {**cells("h7 h8 c1 b1 d4", 1), **cells("g9 h9 e4 e5", 2), **cells("i9 a1 d6 c6", 3)},
        1,
        (0, 5, 0),
    )
    board = Board(position, Rules(players=3))
    moves = list(board.generate_legal_moves())
    for quiescence in (False, True):
        search = MultiSearch(board, MultiTables(), None, quiescence)
        move = search.run(moves, 1, random.Random(1), SearchInfo())
        board.push(move)
        assert board.ejected(1) == 1
        assert next_player_can_win(board) is not quiescence
        board.pop()
