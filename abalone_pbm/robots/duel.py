"""The two-player search on bitboards: negamax principal-variation search.

* Positions are ``(me, op, mine, theirs)`` seen by the side to move (see
  :mod:`bitmoves`); a move is the child it leads to, so there is no make/unmake.
* Iterative deepening with aspiration windows around the last value, PVS (null
  windows after the first move), late-move reductions for quiet moves late in the
  order, a quiescence search on ejections and on pushes onto the edge.
* Off the principal variation, positions well above beta where the other side
  threatens nothing are cut: near the leaves by the static value (reverse
  futility), higher up by a null move (the side to move passes; a position still
  above beta after that is not searched in full).
* Move ordering: the table's move, ejections, pushes, two killers per ply, then
  the history heuristic.
* A transposition table, killers and history that live as long as the
  :class:`DuelTables` they are in: a robot keeps one per game, so the next move's
  search starts from what the last one learnt.  The table is bounded: past
  :data:`TABLE_LIMIT` entries the ones from older searches are dropped.
* A side a marble from the target: a threat to push one off is like a check.  At
  the horizon the threatened side may not stand pat (every reply is searched, and a
  loss is found when none parries), and the side a marble from the target also tries
  its threatening quiet moves in the first quiescence plies: a forced finish in three
  moves is seen at depth 2 instead of 4.
* Repetitions: a position had already in this game (or earlier on the search
  path) scores its evaluation less a penalty for the side that is ahead, so a side
  that is ahead does not shuffle but looks for progress.
* The move limit: reaching it with more marbles pushed off is a win, but worth
  less than pushing off the target, so a leader keeps trying to win by six.  The
  quiescence stops there too: no ejection past the limit is counted.
"""

from __future__ import annotations

import time
from collections import defaultdict
from itertools import chain, repeat
from operator import itemgetter
from typing import Final, Iterable, Iterator

from abalone_pbm.rules.movegen import lane_masks

from .bitmoves import (
    EJECT, QUIET, Child, children, killers_in_order, pushes_in_order, quiet_in_order,
    tactical_children,
)
from .endgame import evaluation
from .features import EDGE, threatens

WIN: Final = 1_000_000
#: Any value beyond this is a forced result (win or loss by the target).
WIN_THRESHOLD: Final = WIN - 10_000
#: A win on the move limit (by having pushed off more): less than a win by the target.
LIMIT_WIN: Final = 200_000
INFINITY: Final = 10 * WIN
EXACT, LOWER, UPPER = 0, 1, 2
MAX_PLY: Final = 100
QUIESCENCE_PLIES: Final = 6
#: Quiescence looks at pushes onto the edge (not only ejections) this many plies deep.
EDGE_PUSH_PLIES: Final = 2
#: A side a marble from the target also tries its threatening moves this many plies
#: deep in quiescence (each answered by every reply of the other side).
CHECK_PLIES: Final = 2
#: Most entries of the table (about 90 MB): past it a search stores no new positions
#: and the next search starts by dropping those of older searches.
TABLE_LIMIT: Final = 200_000
CLOCK_MASK: Final = 31
ASPIRATION: Final = 150
#: What returning to a position costs the side that is ahead on marbles.
REPEAT_PENALTY: Final = 400
#: Frontier nodes this far below alpha search only their pushes.
FUTILITY_MARGIN: Final = 800
#: Reverse futility: up to this depth, a null-window node this far above beta per
#: ply of depth left returns at once.
STATIC_PRUNE_DEPTH = 2
STATIC_MARGIN = 300
#: Null move: from this depth, searched this much shallower (one more from depth 6).
NULL_MIN_DEPTH = 3
NULL_REDUCTION = 2

_first = itemgetter(0)
_batches = chain.from_iterable
#: The kind of every quiet child (zip stops at the end of the diffs).
_QUIET_KINDS: Final = repeat(QUIET)


class Timeout(Exception):
    """The deadline passed inside the search."""


class DuelTables:
    """What one game's searches share: transposition table, killers, history, the
    positions each side already had, and a search counter to age the table."""

    def __init__(self) -> None:
        #: (me, op) -> (depth, value, flag, best move as a child, generation).  The marbles pushed
        #: off follow from the marbles left within one game, so they are not in the key.
        self.table: dict[tuple[int, int], tuple[int, int, int, Child | None, int]] = {}
        self.killers: list[list[int]] = [[0, 0] for _ in range(MAX_PLY + 2)]
        #: Cutoffs by quiet move (diff), weighted by depth.  A defaultdict: its lookup
        #: of an unknown diff (0) is C code, the key of the quiet moves' sort; the diffs
        #: it learns are the board's moves, a bounded set.
        self.history: defaultdict[int, int] = defaultdict(int)
        self.generation = 0
        #: Positions (me, op) the side to move already had in this game.
        self.seen: set[tuple[int, int]] = set()

    def new_search(self) -> None:
        self.generation += 1
        for pair in self.killers:
            pair[0] = pair[1] = 0
        # History fades so that the last searches count most.
        self.history = defaultdict(
            int, {k: v >> 2 for k, v in self.history.items() if v >= 4})
        if len(self.table) >= TABLE_LIMIT * 3 // 4:
            keep = self.generation - 1
            self.table = {k: e for k, e in self.table.items() if e[4] >= keep}
            if len(self.table) >= TABLE_LIMIT * 3 // 4:
                self.table.clear()


class DuelSearch:
    """One search from one position; ``tables`` carry over between searches.

    ``reductions``, ``futility`` and ``pruning`` switch off the unsafe prunings
    (late-move reductions, futility pruning at the frontier, reverse futility and
    null move): without them the search returns exactly the minimax value over the
    same quiescence.
    """

    reductions = True
    futility = True
    #: Reverse futility and null-move pruning.
    pruning = True

    def __init__(
        self,
        tables: DuelTables,
        target: int,
        plies_left: int | None,
        deadline: float | None,
    ) -> None:
        self.tables = tables
        self.table = tables.table
        self.killers = tables.killers
        self.history = tables.history
        self.generation = tables.generation
        self.target = target
        #: Plies until the move limit from the root (None: no limit).
        self.plies_left = plies_left
        self.deadline = deadline
        self.nodes = 0
        #: Positions had in the game and those on the search path: a return is a draw.
        self.repeated = tables.seen
        #: Root results of the iteration under way: (value, diff) of the best so far.
        self.root_best: tuple[int, int] | None = None
        #: null_after[ply]: the move into this ply was a null move (no second one).
        self.null_after = [False] * (MAX_PLY + 2)
        #: The history's values before their changes, one dict per node whose quiet
        #: moves wait to be ordered as the history stood when its pushes came up (see
        #: :meth:`_moves`); innermost last.  At most a dict per ply, each at most a
        #: value per move of the board.
        self.pending: list[dict[int, int]] = []

    # -------------------------------------------------------------------- root
    def root(
        self, me: int, op: int, mine: int, theirs: int, moves: list[Child], depth: int,
        alpha: int, beta: int,
    ) -> tuple[int, list[Child]]:
        """Search the root moves in the given order; (best value, moves re-ordered)."""
        best = -INFINITY
        alpha0 = alpha
        scored: list[tuple[int, int]] = []
        self.root_best = None
        self.pending.clear()  # nothing left from a search a timeout broke off
        had_root = (me, op) in self.repeated
        self.repeated.add((me, op))
        target = self.target
        for i, child in enumerate(moves):
            kind, diff, nme, nop = child
            gained = mine + (kind == EJECT)
            if gained >= target:
                value = WIN - 1
            elif i == 0:
                value = -self.search(nop, nme, theirs, gained, depth - 1, -beta, -alpha, 1)
            else:
                value = -self.search(nop, nme, theirs, gained, depth - 1, -alpha - 1, -alpha, 1)
                if alpha < value < beta:
                    value = -self.search(nop, nme, theirs, gained, depth - 1, -beta, -alpha, 1)
            scored.append((value, i))
            if value > best:
                best = value
                # Past the first move only a proven improvement counts (a value
                # under a null window is a bound, not a better move).
                if i == 0 or value > alpha:
                    self.root_best = (value, diff)
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if not had_root:
            self.repeated.discard((me, op))
        scored.sort(key=lambda vi: (-vi[0], vi[1]))
        seen = {i for _, i in scored}
        order = [moves[i] for _, i in scored] + [m for i, m in enumerate(moves) if i not in seen]
        if self.root_best is not None:
            flag = UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT)
            best_kid = next(m for m in moves if m[1] == self.root_best[1])
            self.table[(me, op)] = (depth, best, flag, best_kid, self.generation)
        return best, order

    # ------------------------------------------------------------------ search
    def search(
        self, me: int, op: int, mine: int, theirs: int, depth: int, alpha: int, beta: int,
        ply: int,
    ) -> int:
        self.nodes += 1
        if not self.nodes & CLOCK_MASK and self.deadline is not None:
            if time.perf_counter() > self.deadline:
                raise Timeout
        plies_left = self.plies_left
        if plies_left is not None and ply >= plies_left:
            return self._limit_value(mine, theirs, ply)
        position = (me, op)
        repeated = self.repeated
        if position in repeated:
            # Going round in circles favours the side that is behind: the one ahead
            # pays for it, so it looks for progress instead.
            value = evaluation(me, op, mine, theirs)[0]
            if mine != theirs:
                value += -REPEAT_PENALTY if mine > theirs else REPEAT_PENALTY
            return value
        if depth <= 0:
            return self.quiesce(me, op, mine, theirs, alpha, beta, ply, 0)

        entry = self.table.get(position)
        tt_kid = None
        if entry is not None:
            e_depth, e_value, e_flag, tt_kid, _ = entry
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
        if mine + 1 >= self.target and threatens(me, op):
            return WIN - ply - 1
        killers = self.killers[ply]
        k1, k2 = killers

        alpha0 = alpha
        best = -INFINITY
        best_kid: Child | None = None
        next_ply = ply + 1
        frontier = depth == 1 and (plies_left is None or next_ply < plies_left)
        prune_quiet = False
        # The node's evaluation once read (the pruning and the futility test share it).
        static: tuple[int, int, int] | None = None
        if beta - alpha == 1 and self.pruning and abs(beta) < WIN_THRESHOLD and (
            plies_left is None or ply + depth < plies_left
        ):
            # Off the principal variation, a position already well above beta, where
            # the other side threatens nothing, is not searched further: near the
            # leaves at once (reverse futility), higher up when even passing the move
            # keeps it above beta (null move; Abalone knows no zugzwang).
            static = evaluation(me, op, mine, theirs)
            stand, _, danger = static
            if stand >= beta and not danger:
                if depth <= STATIC_PRUNE_DEPTH and stand - STATIC_MARGIN * depth >= beta:
                    return stand
                null_after = self.null_after
                if depth >= NULL_MIN_DEPTH and not null_after[ply]:
                    reduced = depth - 1 - (NULL_REDUCTION + (depth >= 6))
                    null_after[next_ply] = True
                    try:
                        value = -self.search(
                            op, me, theirs, mine, reduced, -beta, -beta + 1, next_ply
                        )
                    finally:
                        null_after[next_ply] = False
                    if value >= beta:
                        return beta if value > WIN_THRESHOLD else value
        if frontier:
            stand, _, danger = static or evaluation(me, op, mine, theirs)
            # Futility: a quiet move seldom gains this much; only pushes may help.
            # (Not a marble from the target: there a quiet move that threatens may win.)
            if (self.futility and stand + FUTILITY_MARGIN <= alpha and not danger
                    and mine + 1 < self.target):
                prune_quiet = True
                best = stand
        repeated.add(position)
        try:
            if frontier:
                quiesce = self.quiesce
                for kid in _batches(self._moves(me, op, tt_kid, k1, k2, not prune_quiet)):
                    kind, diff, nme, nop = kid
                    if kind == QUIET and prune_quiet:
                        continue
                    gained = mine + 1 if kind == EJECT else mine
                    value = -quiesce(nop, nme, theirs, gained, -beta, -alpha, next_ply, 0)
                    if value > best:
                        best = value
                        best_kid = kid
                        if value > alpha:
                            alpha = value
                            if alpha >= beta:
                                # A quiet move other than the table's: killer, history.
                                if kind == QUIET and kid is not tt_kid:
                                    if k1 != diff:
                                        killers[1] = k1
                                        killers[0] = diff
                                    self._learn(diff, 1)
                                break
            else:
                search = self.search
                next_depth = depth - 1
                for i, kid in enumerate(_batches(self._moves(me, op, tt_kid, k1, k2, True))):
                    kind, diff, nme, nop = kid
                    gained = mine + 1 if kind == EJECT else mine
                    if i == 0:
                        value = -search(
                            nop, nme, theirs, gained, next_depth, -beta, -alpha, next_ply
                        )
                    else:
                        reduce = 0
                        # Late quiet moves (past the table's, not killers) are reduced.
                        if (depth >= 3 and i >= 4 and kind == QUIET and diff != k1
                                and diff != k2 and self.reductions):
                            reduce = 2 if (i >= 12 and depth >= 5) else 1
                        value = -search(
                            nop, nme, theirs, gained, next_depth - reduce, -alpha - 1, -alpha,
                            next_ply,
                        )
                        if value > alpha and reduce:
                            value = -search(
                                nop, nme, theirs, gained, next_depth, -alpha - 1, -alpha,
                                next_ply,
                            )
                        if alpha < value < beta:
                            value = -search(
                                nop, nme, theirs, gained, next_depth, -beta, -alpha, next_ply
                            )
                    if value > best:
                        best = value
                        best_kid = kid
                        if value > alpha:
                            alpha = value
                            if alpha >= beta:
                                if kind == QUIET and kid is not tt_kid:
                                    if k1 != diff:
                                        killers[1] = k1
                                        killers[0] = diff
                                    self._learn(diff, depth * depth)
                                break
        finally:
            repeated.discard(position)
        if best == -INFINITY:
            return -WIN + ply  # unable to move: the other side wins

        if best <= alpha0:
            flag = UPPER
        elif best >= beta:
            flag = LOWER
        else:
            flag = EXACT
        if best > WIN_THRESHOLD:
            stored = best + ply
        elif best < -WIN_THRESHOLD:
            stored = best - ply
        else:
            stored = best
        table = self.table
        if len(table) < TABLE_LIMIT or position in table:
            table[position] = (depth, stored, flag, best_kid, self.generation)
        return best

    def _learn(self, diff: int, weight: int) -> None:
        """A quiet move cut off: its history goes up by ``weight``; the nodes whose
        quiet moves are still to be ordered keep its value of before."""
        history = self.history
        before = history[diff]
        for then in self.pending:
            then.setdefault(diff, before)
        history[diff] = before + weight

    def _moves(
        self, me: int, op: int, tt_kid: Child | None, killer1: int, killer2: int, quiet: bool
    ) -> Iterator[Iterable[Child]]:
        """The moves in search order, in batches, each made only when the one before
        did not cut: the table's move, the ejections and pushes, then (when ``quiet``)
        the killers, then the other quiet moves by history.  The order is the one of
        sorting every move by its score as the table's move left the history: the
        quiet moves are listed and sorted last (a push or a killer often cuts first),
        by the history's values of then, which :meth:`_learn` keeps aside as the
        searches of the pushes and killers change them.  The killers are the node's:
        only a node at the same ply changes them, and none runs while this one does."""
        skip = 0
        if tt_kid is not None:
            yield (tt_kid,)
            skip = tt_kid[1]
        lanes = lane_masks(me, op)
        pushes = pushes_in_order(me, op, lanes, skip)
        if not quiet:
            yield pushes
            return
        killers = killers_in_order(lanes, skip, killer1, killer2)
        then: dict[int, int] = {}
        pending = self.pending
        pending.append(then)
        try:
            if pushes:
                yield pushes
            if killers:
                yield zip(_QUIET_KINDS, killers, map(me.__xor__, killers), repeat(op))
        finally:
            # Nested nodes leave first: this node's dict is the last one.
            if pending and pending[-1] is then:
                pending.pop()
            else:
                pending[:] = [other for other in pending if other is not then]
        history = self.history
        if then:
            now = {diff: history[diff] for diff in then}
            history.update(then)
            diffs = quiet_in_order(lanes, (skip, killer1, killer2), history.__getitem__)
            history.update(now)
        else:
            diffs = quiet_in_order(lanes, (skip, killer1, killer2), history.__getitem__)
        yield zip(_QUIET_KINDS, diffs, map(me.__xor__, diffs), repeat(op))

    def quiesce(
        self, me: int, op: int, mine: int, theirs: int, alpha: int, beta: int, ply: int,
        qply: int,
    ) -> int:
        """Stand pat on the evaluation, or try the ejections (and first, the pushes
        onto the edge) until the position is quiet."""
        self.nodes += 1
        # The clock is read here too: quiescence holds most of the nodes, and a count
        # that only search() looks at skips past the multiples it waits for.
        if not self.nodes & CLOCK_MASK and self.deadline is not None:
            if time.perf_counter() > self.deadline:
                raise Timeout
        plies_left = self.plies_left
        if plies_left is not None and ply >= plies_left:
            return self._limit_value(mine, theirs, ply)
        stand, can_eject, danger = evaluation(me, op, mine, theirs)
        target = self.target
        if can_eject and mine + 1 >= target:
            return WIN - ply - 1  # the side to move pushes off its last marble
        # A threat is one while the other side has a move left before the limit.
        if (danger and theirs + 1 >= target and qply < QUIESCENCE_PLIES
                and (plies_left is None or ply + 1 < plies_left)):
            # The other side threatens its last marble: as in check, standing pat is no
            # option; every reply is searched, and none that parries is a loss.
            kids = children(me, op)
            best = -WIN + ply + 1
        else:
            if stand >= beta or qply >= QUIESCENCE_PLIES:
                return stand
            if not can_eject and qply >= EDGE_PUSH_PLIES:
                return stand
            if stand > alpha:
                alpha = stand
            kids = tactical_children(me, op, EDGE if qply < EDGE_PUSH_PLIES else 0)
            if mine + 1 >= target and qply < CHECK_PLIES:
                # A marble from the target: the moves that threaten one are searched too
                # (the other side must parry each), so a forced finish past the horizon
                # is seen.
                kids += self._checks(me, op, kids)
            if not kids:
                return stand
            best = stand
            kids.sort(key=_first, reverse=True)  # ejections first
        for kind, _diff, nme, nop in kids:
            gained = mine + 1 if kind == EJECT else mine
            if gained >= target:
                return WIN - ply - 1
            value = -self.quiesce(nop, nme, theirs, gained, -beta, -alpha, ply + 1, qply + 1)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best

    def _checks(self, me: int, op: int, tactical: list[Child]) -> list[Child]:
        """The quiet moves and pushes not in ``tactical`` after which ``me`` could push
        a marble of ``op`` off."""
        have = {kid[1] for kid in tactical}
        return [
            kid for kid in children(me, op)
            if kid[1] not in have and threatens(kid[2], kid[3])
        ]

    def _limit_value(self, mine: int, theirs: int, ply: int) -> int:
        if mine > theirs:
            return LIMIT_WIN - ply + 1000 * (mine - theirs)
        if mine < theirs:
            return -LIMIT_WIN + ply - 1000 * (theirs - mine)
        return 0

    def principal_line(
        self, me: int, op: int, mine: int, theirs: int, length: int
    ) -> list[tuple[int, int, int, int, int]]:
        """The expected line from the table: (diff, me, op, mine, theirs) per ply,
        each position seen by the side that moves from it."""
        line = []
        seen = set()
        for _ in range(length):
            entry = self.table.get((me, op))
            if entry is None or entry[3] is None or (me, op) in seen:
                break
            seen.add((me, op))
            kind, diff, nme, nop = entry[3]
            line.append((diff, me, op, mine, theirs))
            gained = mine + (kind == EJECT)
            me, op, mine, theirs = nop, nme, theirs, gained
            if gained >= self.target:
                break
        return line
