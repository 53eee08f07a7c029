"""The strongest robots' player: the right search for the game, tables kept per game.

* Two players, no variant: :mod:`duel` (bitboard PVS with quiescence).
* Three to six players, free-for-all or teams, no variant: :mod:`multi`
  (best-reply search on bitboards, with quiescence on ejections).
* Variants: the paranoid alpha-beta of :mod:`search` over the rules core.

One robot object is meant to play one game (the service keeps one per game while
it runs): it keeps the search tables and the positions already seen between its
moves, and notices by itself when it is handed a position of another game.
"""

from __future__ import annotations

import random
import time

from abalone_pbm.rules import Board, Move

from .base import BaseRobot, SearchInfo
from .bitmoves import EJECT, PUSH, QUIET
from .duel import INFINITY, WIN_THRESHOLD, DuelSearch, DuelTables, Timeout
from .multi import MultiSearch, MultiTables, multi_supported
from .search import AlphaBeta

#: Half-width of the first window around the last iteration's value.
ASPIRATION = 120


class BoulderRobot(BaseRobot):
    """Iterative deepening in the whole budget with tables kept between moves."""

    name = "boulder"
    level = 3
    # The search reads the clock every few hundred microseconds and returns within a
    # millisecond or so of its deadline.  What is kept back (a twentieth of a second
    # and 5 % of the budget, at most a quarter of it) is for a busy machine that does
    # not run us at every moment.  Keeping back less (20 ms and 3 %: 0.95 s of a
    # second used instead of 0.90) was measured against Cotix at 1 s a move, seeds 1
    # and 2 beside each other: 3 of 16 games won by six against 8 of 16 with this
    # margin on the same seeds and load.  Not a significant difference, but no gain
    # either, and under load 8 % of the moves then ended up to 0.12 s late.
    safety_fraction = 0.25
    safety_per_second = 0.05

    def __init__(self, depth_limit: int | None = None, multi_quiescence: bool = True) -> None:
        super().__init__()
        self.depth_limit = depth_limit
        #: Whether the multi-player search plays out ejections at its horizon.
        self.multi_quiescence = multi_quiescence
        self._duel: DuelTables | None = None
        self._multi: MultiTables | None = None
        #: (marbles on the board, ply) of the last position searched: a position with
        #: more marbles or an earlier ply belongs to another game.
        self._last: tuple[int, int] | None = None

    # ------------------------------------------------------------------ entry
    def pick(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        max_depth: int | None,
        info: SearchInfo,
    ) -> Move:
        self._notice_new_game(board)
        if len(moves) == 1:
            info.reason = "only safe move"
            self._remember(board, moves[0])
            return moves[0]
        depth = max_depth if max_depth is not None else self.depth_limit
        rules = board.rules
        if rules.variant is None and board.players == 2:
            move = self._pick_duel(board, moves, deadline, rng, depth, info)
        elif rules.variant is None and multi_supported(board):
            move = self._pick_multi(board, moves, deadline, rng, depth, info)
        else:
            move = AlphaBeta(board, deadline).run(moves, depth, rng, info)
        self._remember(board, move)
        return move

    def _notice_new_game(self, board: Board) -> None:
        on_board = sum(board.marble_count(s) for s in range(1, board.players + 1))
        now = (on_board, board.ply)
        if self._last is not None and (now[0] > self._last[0] or now[1] < self._last[1]):
            self._duel = None
            self._multi = None
        self._last = now

    def _remember(self, board: Board, move: Move) -> None:
        """Note the position before and after our move as had (repetitions)."""
        if board.players != 2 or self._duel is None:
            return
        seat = board.turn
        seen = self._duel.seen
        seen.add((board.marbles(seat), board.marbles(3 - seat)))
        board.push(move)
        seen.add((board.marbles(3 - seat), board.marbles(seat)))
        board.pop()

    # ------------------------------------------------------------- two players
    def duel_tables(self) -> DuelTables:
        if self._duel is None:
            self._duel = DuelTables()
        return self._duel

    def _pick_duel(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        depth_limit: int | None,
        info: SearchInfo,
    ) -> Move:
        start = time.perf_counter()
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        mine, theirs = board.ejected(seat), board.ejected(3 - seat)
        tables = self.duel_tables()
        # Positions of this game before the root (when the board carries its history).
        work = board.copy()
        while work.move_stack:
            work.pop()
            mover = work.turn
            tables.seen.add((work.marbles(mover), work.marbles(3 - mover)))
        tables.new_search()
        # Each allowed move as the child it leads to.
        by_diff: dict[int, Move] = {}
        root: list[tuple[int, int, int, int]] = []
        order = list(moves)
        rng.shuffle(order)  # the seed breaks ties between equally good moves
        for move in order:
            before = board.ejected(seat)
            board.push(move)
            nme, nop = board.marbles(seat), board.marbles(3 - seat)
            kind = EJECT if board.ejected(seat) > before else (PUSH if op != nop else QUIET)
            board.pop()
            diff = me ^ nme
            by_diff[diff] = move
            root.append((kind, diff, nme, nop))
        entry = tables.table.get((me, op))
        tt_diff = entry[3][1] if entry is not None and entry[3] is not None else 0
        root.sort(key=lambda c: (c[1] == tt_diff, c[0]), reverse=True)
        limit = board.rules.movelimit
        plies_left = None if limit is None else limit - board.ply
        search = DuelSearch(tables, board.rules.target, plies_left, deadline)
        best_diff = root[0][1]
        value = 0
        max_depth = depth_limit if depth_limit is not None else 60
        for depth in range(1, max_depth + 1):
            try:
                if depth >= 3 and abs(value) < WIN_THRESHOLD // 2:
                    alpha, beta = value - ASPIRATION, value + ASPIRATION
                    found, ordered = search.root(me, op, mine, theirs, root, depth, alpha, beta)
                    if found <= alpha or found >= beta:
                        found, ordered = search.root(
                            me, op, mine, theirs, ordered, depth, -INFINITY, INFINITY
                        )
                else:
                    found, ordered = search.root(
                        me, op, mine, theirs, root, depth, -INFINITY, INFINITY
                    )
            except Timeout:
                # The unfinished iteration searched the last best move first: a move it
                # proved better at the new depth (or the first move's new value) counts.
                partial = search.root_best
                if partial is not None:
                    best_diff = partial[1]
                    info.value = partial[0]
                break
            root = ordered
            value = found
            best_diff = root[0][1]
            info.depth = depth
            info.depths.append(depth)
            info.value = value
            if abs(value) > WIN_THRESHOLD:
                break
        info.nodes = search.nodes
        info.elapsed = time.perf_counter() - start
        info.reason = f"principal-variation search depth {info.depth}"
        self.last_search = search
        return by_diff[best_diff]

    # ------------------------------------------------------------ many players
    def _pick_multi(
        self,
        board: Board,
        moves: list[Move],
        deadline: float | None,
        rng: random.Random,
        depth_limit: int | None,
        info: SearchInfo,
    ) -> Move:
        if self._multi is None:
            self._multi = MultiTables()
        search = MultiSearch(board, self._multi, deadline, self.multi_quiescence)
        return search.run(moves, depth_limit, rng, info)
