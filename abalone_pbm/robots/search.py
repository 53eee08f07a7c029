"""Alpha-beta search with iterative deepening, a transposition table and move ordering.

The search is written as minimax from the point of view of the side to move at
the root (the *root side*): nodes where a player of the root side moves maximise,
all other nodes minimise.  With two players this is ordinary alpha-beta; with three
to six it is the *paranoid* search (every opponent is one minimising coalition),
and in team games the partners' nodes maximise with the mover.

* Transposition table keyed by ``board.zobrist_hash()`` (XORed with a hash of the
  ejection counts in multi-player games, where the marbles alone do not tell who
  pushed what off), storing depth, value, bound and best move.
* Move ordering: the table's move, ejections, pushes, two killers per ply, then
  the history heuristic.
* Iterative deepening until the deadline; the clock is read every few hundred
  nodes and an unfinished iteration still counts for the root moves it completed.
"""

from __future__ import annotations

import random
import time
from operator import itemgetter

from abalone_pbm.rules import Board, Move
from abalone_pbm.rules.geometry import BOARD_MASK, OFFSETS

from .base import BaseRobot, SearchInfo, move_key, occupied_mask, push_kind
from .evaluation import WIN, WIN_THRESHOLD, Evaluator, evaluate_two

INFINITY = 10 * WIN
EXACT, LOWER, UPPER = 0, 1, 2
MAX_PLY = 128
#: The table is emptied when it grows past this many entries.
TT_LIMIT = 1_000_000
#: Nodes between two looks at the clock.
CLOCK_MASK = 63

_SCORE_TT = 1 << 60
_SCORE_EJECT = 1 << 50
_SCORE_PUSH = 1 << 48
_SCORE_KILLER = 1 << 46
_first = itemgetter(0)


class _Timeout(Exception):
    """The deadline passed inside the search."""


class AlphaBeta:
    """One search from one position (make a new one for every move).

    The board is played on with push/pop; after a timeout it is left mid-line, so
    give it a copy.
    """

    def __init__(self, board: Board, deadline: float | None = None) -> None:
        self.board = board
        self.side = board.rules.side_of(board.turn)
        self.evaluator = Evaluator(board, self.side)
        self.side_of = self.evaluator.side_of
        self.multi = board.players > 2
        #: Two players: leaves are evaluated from bitboards without push/pop.
        self.fast_leaves = not self.multi
        self.deadline = deadline
        self.tt: dict[int, tuple[int, int, int, int]] = {}
        self.history: dict[int, int] = {}
        self.killers: list[list[int]] = [[0, 0] for _ in range(MAX_PLY + 1)]
        self.nodes = 0
        self._root_best: tuple[int, Move] | None = None

    # ----------------------------------------------------------------- driver
    def run(
        self,
        moves: list[Move],
        max_depth: int | None,
        rng: random.Random,
        info: SearchInfo,
        start: float | None = None,
    ) -> Move:
        """Iterative deepening over ``moves`` (the root moves allowed); the best one."""
        start = time.perf_counter() if start is None else start
        root = list(moves)
        rng.shuffle(root)  # the seed breaks ties between equally good moves
        occupied = occupied_mask(self.board)
        root.sort(key=lambda m: push_kind(occupied, m), reverse=True)
        best_move = root[0]
        limit = max_depth if max_depth is not None else MAX_PLY
        last_iteration = 0.0
        for depth in range(1, limit + 1):
            if self.deadline is not None and depth > 1:
                remaining = self.deadline - time.perf_counter()
                if remaining < last_iteration:
                    break
            began = time.perf_counter()
            self._root_best = None
            try:
                value, best_move, root = self._root(root, depth)
            except _Timeout:
                if self._root_best is not None:
                    info.value, best_move = self._root_best
                break
            last_iteration = time.perf_counter() - began
            info.depth = depth
            info.depths.append(depth)
            info.value = value
            if abs(value) > WIN_THRESHOLD:
                break
        info.nodes = self.nodes
        info.elapsed = time.perf_counter() - start
        info.reason = f"alpha-beta depth {info.depth}"
        return best_move

    def _root(self, root: list[Move], depth: int) -> tuple[int, Move, list[Move]]:
        board = self.board
        alpha = -INFINITY
        best_value = -INFINITY
        best_move = root[0]
        values: list[tuple[int, int]] = []
        for i, move in enumerate(root):
            board.push(move)
            if i == 0:
                value = self._search(depth - 1, alpha, INFINITY, 1)
            else:
                # Null window first: most moves only need to be shown no better.
                value = self._search(depth - 1, alpha, alpha + 1, 1)
                if value > alpha:
                    value = self._search(depth - 1, alpha, INFINITY, 1)
            board.pop()
            values.append((value, i))
            if value > best_value:
                best_value, best_move = value, move
                self._root_best = (value, move)
                if value > alpha:
                    alpha = value
        # Next iteration: the best move first, the others by their (bounded) values.
        values.sort(key=lambda vi: (-vi[0], vi[1]))
        order = [root[i] for _, i in values]
        self.tt[self._key()] = (depth, best_value, EXACT, move_key(best_move))
        return best_value, best_move, order

    def _key(self) -> int:
        board = self.board
        if self.multi:
            return board.zobrist_hash() ^ hash(board.ejected_counts)
        return board.zobrist_hash()

    # ----------------------------------------------------------------- search
    def _visit(self, ply: int) -> int | None:
        """Count the node, watch the clock; the score if the game is over here."""
        self.nodes += 1
        if not self.nodes & CLOCK_MASK and self.deadline is not None:
            if time.perf_counter() > self.deadline:
                raise _Timeout
        term = self.evaluator.terminal(self.board)
        if term is None:
            return None
        # Prefer the quicker win and the slower loss.
        if term > 0:
            return term - ply
        if term < 0:
            return term + ply
        return 0

    def _search(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        over = self._visit(ply)
        if over is not None:
            return over
        board = self.board
        evaluator = self.evaluator
        if depth <= 0:
            return evaluator.evaluate(board)

        key = board.zobrist_hash()
        if self.multi:
            key ^= hash(board.ejected_counts)
        tt = self.tt
        entry = tt.get(key)
        tt_move = -1
        if entry is not None:
            e_depth, e_value, e_flag, tt_move = entry
            if e_depth >= depth:
                if e_value > WIN_THRESHOLD:
                    e_value -= ply
                elif e_value < -WIN_THRESHOLD:
                    e_value += ply
                if e_flag == EXACT:
                    return e_value
                if e_flag == LOWER:
                    if e_value >= beta:
                        return e_value
                elif e_value <= alpha:
                    return e_value

        moves = list(board.generate_legal_moves())
        if not moves:
            value = evaluator.outcome_value(board)
            if value > WIN_THRESHOLD:
                return value - ply
            if value < -WIN_THRESHOLD:
                return value + ply
            return value

        # ---- move ordering
        occupied = 0
        for seat in range(1, board.players + 1):
            occupied |= board.marbles(seat)
        killers = self.killers[ply]
        k1, k2 = killers
        history = self.history
        scored = []
        for m in moves:
            cells = m.cells
            d = m.direction
            k = cells << 3 | d
            if k == tt_move:
                s = _SCORE_TT
            else:
                o = OFFSETS[d]
                if o > 0:
                    t = cells.bit_length() - 1 + o
                else:
                    t = (cells & -cells).bit_length() - 1 + o
                if (occupied >> t) & 1:
                    t += o
                    while (occupied >> t) & 1:
                        t += o
                    s = _SCORE_PUSH if (BOARD_MASK >> t) & 1 else _SCORE_EJECT
                elif k == k1 or k == k2:
                    s = _SCORE_KILLER
                else:
                    s = history.get(k, 0)
            scored.append((s, k, m))
        scored.sort(key=_first, reverse=True)

        maximizing = self.side_of[board.turn] == self.side
        alpha0, beta0 = alpha, beta
        push, pop = board.push, board.pop
        best_key = 0
        next_depth = depth - 1
        next_ply = ply + 1
        if next_depth == 0 and self.fast_leaves and not self._limit_near(board):
            best, best_key = self._frontier_two(scored, maximizing, alpha, beta, depth, ply)
        elif next_depth == 0:
            # Frontier: the children are leaves; evaluate them without recursing.
            leaf = self._leaf
            if maximizing:
                best = -INFINITY
                for s, k, m in scored:
                    push(m)
                    value = leaf(next_ply)
                    pop()
                    if value > best:
                        best = value
                        best_key = k
                        if value > alpha:
                            alpha = value
                            if alpha >= beta:
                                self._cutoff(k, s, depth, ply)
                                break
            else:
                best = INFINITY
                for s, k, m in scored:
                    push(m)
                    value = leaf(next_ply)
                    pop()
                    if value < best:
                        best = value
                        best_key = k
                        if value < beta:
                            beta = value
                            if alpha >= beta:
                                self._cutoff(k, s, depth, ply)
                                break
        elif maximizing:
            # Principal variation search: the first move with the full window,
            # the others with a null window, searched again if they beat alpha.
            search = self._search
            best = -INFINITY
            first = True
            for s, k, m in scored:
                push(m)
                if first:
                    value = search(next_depth, alpha, beta, next_ply)
                    first = False
                else:
                    value = search(next_depth, alpha, alpha + 1, next_ply)
                    if alpha < value < beta:
                        value = search(next_depth, alpha, beta, next_ply)
                pop()
                if value > best:
                    best = value
                    best_key = k
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            self._cutoff(k, s, depth, ply)
                            break
        else:
            search = self._search
            best = INFINITY
            first = True
            for s, k, m in scored:
                push(m)
                if first:
                    value = search(next_depth, alpha, beta, next_ply)
                    first = False
                else:
                    value = search(next_depth, beta - 1, beta, next_ply)
                    if alpha < value < beta:
                        value = search(next_depth, alpha, beta, next_ply)
                pop()
                if value < best:
                    best = value
                    best_key = k
                    if value < beta:
                        beta = value
                        if alpha >= beta:
                            self._cutoff(k, s, depth, ply)
                            break

        if best <= alpha0:
            flag = UPPER
        elif best >= beta0:
            flag = LOWER
        else:
            flag = EXACT
        stored = best
        if stored > WIN_THRESHOLD:
            stored += ply
        elif stored < -WIN_THRESHOLD:
            stored -= ply
        if len(tt) >= TT_LIMIT:
            tt.clear()
        tt[key] = (depth, stored, flag, best_key)
        return best

    def _limit_near(self, board: Board) -> bool:
        limit = board.rules.movelimit
        return limit is not None and board.ply + 1 >= limit

    def _frontier_two(
        self,
        scored: list[tuple[int, int, Move]],
        maximizing: bool,
        alpha: int,
        beta: int,
        depth: int,
        ply: int,
    ) -> tuple[int, int]:
        """A depth-1 node of a two-player game: each child's position is computed
        from the bitboards (the move, and the chain it pushes) and evaluated, with
        no push/pop.  Returns (best value, its move key)."""
        board = self.board
        mover = board.turn
        other = 3 - mover
        own = board.marbles(mover)
        opp = board.marbles(other)
        occupied = own | opp
        own_ejected = board.ejected(mover)
        opp_ejected = board.ejected(other)
        target = board.rules.target
        win = WIN - (ply + 1)
        root_moves = mover == self.evaluator.my_seat
        deadline = self.deadline
        best = -INFINITY if maximizing else INFINITY
        best_key = 0
        for s, k, m in scored:
            self.nodes += 1
            if not self.nodes & CLOCK_MASK and deadline is not None:
                if time.perf_counter() > deadline:
                    raise _Timeout
            cells = m.cells
            o = OFFSETS[m.direction]
            low = cells & -cells
            lo = low.bit_length() - 1
            new_opp = opp
            ejected = own_ejected
            if cells == low or (cells >> (lo + (o if o > 0 else -o))) & 1:
                # In line: the rear marble goes to the cell ahead of the front one.
                if o > 0:
                    t = cells.bit_length() - 1 + o
                    rear = low
                else:
                    t = lo + o
                    rear = 1 << (cells.bit_length() - 1)
                new_own = own ^ rear ^ (1 << t)
                if (occupied >> t) & 1:
                    e = t + o
                    while (opp >> e) & 1:
                        e += o
                    if (BOARD_MASK >> e) & 1:
                        new_opp = opp ^ (1 << t) ^ (1 << e)
                    else:
                        new_opp = opp ^ (1 << t)
                        ejected += 1
            else:
                new_own = (own & ~cells) | (cells << o if o > 0 else cells >> -o)
            if ejected >= target:
                value = win if root_moves else -win
            elif root_moves:
                value = evaluate_two(new_own, new_opp, ejected, opp_ejected, False)
            else:
                value = evaluate_two(new_opp, new_own, opp_ejected, ejected, True)
            if maximizing:
                if value > best:
                    best = value
                    best_key = k
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            self._cutoff(k, s, depth, ply)
                            break
            elif value < best:
                best = value
                best_key = k
                if value < beta:
                    beta = value
                    if alpha >= beta:
                        self._cutoff(k, s, depth, ply)
                        break
        return best, best_key

    def _leaf(self, ply: int) -> int:
        """A node at depth 0: the game's result if it is over, else the evaluation."""
        over = self._visit(ply)
        return over if over is not None else self.evaluator.evaluate(self.board)

    def _cutoff(self, k: int, score: int, depth: int, ply: int) -> None:
        if score >= _SCORE_PUSH:
            return  # pushes and the table's move are ordered first anyway
        killers = self.killers[ply]
        if killers[0] != k:
            killers[1] = killers[0]
            killers[0] = k
        self.history[k] = self.history.get(k, 0) + depth * depth


class SearchRobot(BaseRobot):
    """Alpha-beta (paranoid for 3+ players) with iterative deepening in the budget."""

    name = "search"
    level = 3

    def __init__(self, depth_limit: int | None = None) -> None:
        super().__init__()
        #: A cap on the depth even when time is left (None: no cap).
        self.depth_limit = depth_limit

    def pick(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        max_depth: int | None,
        info: SearchInfo,
    ) -> Move:
        if len(moves) == 1:
            info.reason = "only safe move"
            return moves[0]
        depth = max_depth if max_depth is not None else self.depth_limit
        search = AlphaBeta(board, deadline)
        return search.run(moves, depth, rng, info)
