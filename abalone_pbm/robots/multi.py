"""Three to six players: best-reply search on bitboards.

Paranoid search lets every opponent move in turn before the robot moves again, so
with four or six players it sees only one move of its own.  Best-reply search
(Schadd and Winands, 2011) instead alternates the robot's side with *one* reply:
the most harmful move of any one opponent.  At the same cost it looks several of
its own moves ahead, which is what matters for pushing marbles off.

Positions are tuples of bitboards, one per seat (index 0 unused), with the marbles
pushed off per side; moves come from :func:`bitmoves.children` against the union of
the opponents' marbles (a partner's marbles block), and in team play from
:func:`bitmoves.partner_pushes` (pushes whose line takes a partner's marbles along).  Alpha-beta with a
transposition table, killers and history kept between the moves of one game;
values are from the robot's side, in thousandths of a marble.

At the horizon a quiescence search stands pat on the evaluation or plays the
ejections of the side to move on that layer (the robot's seat, or each opponent
seat for the best reply), a few plies deep: a marble about to be pushed off just
past the horizon is searched, not guessed by the evaluation's threat terms.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from operator import itemgetter
from typing import Final

from abalone_pbm.rules import Board, Move
from abalone_pbm.rules.geometry import BOARD_MASK, OFFSETS

from .base import SearchInfo
from .bitmoves import EJECT, PartnerPush, children, partner_pushes, tactical_children
from .features import EDGE, R1, R2, R3, R4, threatened_marbles

WIN: Final = 1_000_000
WIN_THRESHOLD: Final = WIN - 10_000
INFINITY: Final = 10 * WIN
EXACT, LOWER, UPPER = 0, 1, 2
#: Most entries of the table: past it a search stores no new positions.
TABLE_LIMIT: Final = 200_000
CLOCK_MASK: Final = 63
MAX_DEPTH: Final = 40

MARBLE: Final = 1000
LOST: Final = 300
CENTRE: Final = 24
COHESION: Final = 8
THREAT_EACH: Final = 90
THREAT_URGENT: Final = 600
#: Most plies of ejections the quiescence search plays past the horizon.
QUIESCENCE_PLIES: Final = 4

_first = itemgetter(0)
#: (rear-to-pushed distance) -> (direction offset, marbles in the pushing line)
_PUSH_STEP: Final = {k * o: (o, k) for o in OFFSETS for k in (2, 3)}

State = tuple[tuple[int, ...], tuple[int, ...]]
#: The kind of a push that takes a partner's marbles along (besides QUIET, PUSH, EJECT).
PARTNER_PUSH: Final = 3


class Timeout(Exception):
    """The deadline passed inside the search."""


def multi_supported(board: Board) -> bool:
    """Whether best-reply search plays this game (more than two players, no variant)."""
    return board.players > 2 and board.rules.variant is None


class MultiTables:
    """Transposition table, killers and history of one game's searches."""

    def __init__(self) -> None:
        self.table: dict[tuple[tuple[int, ...], tuple[int, ...], bool], tuple[int, int, int, int]]
        self.table = {}
        self.killers: list[list[int]] = [[0, 0] for _ in range(MAX_DEPTH + 2)]
        self.history: dict[int, int] = {}

    def new_search(self) -> None:
        for pair in self.killers:
            pair[0] = pair[1] = 0
        self.history = {k: v >> 2 for k, v in self.history.items() if v >= 4}
        if len(self.table) >= TABLE_LIMIT * 3 // 4:
            self.table.clear()


class MultiSearch:
    """Best-reply alpha-beta from the position of ``board`` for the seat to move."""

    def __init__(
        self, board: Board, tables: MultiTables, deadline: float | None, quiescence: bool = True
    ) -> None:
        rules = board.rules
        #: Whether the horizon plays out ejections (False: the evaluation alone, as the
        #: first best-reply search did; kept for matches between the two).
        self.quiescence = quiescence
        self.board = board
        self.tables = tables
        self.deadline = deadline
        self.players = board.players
        self.seat = board.turn
        self.side_of = (0,) + tuple(rules.side_of(s) for s in range(1, board.players + 1))
        self.side = self.side_of[self.seat]
        self.sides = rules.sides
        self.teams = rules.teams
        self.target = rules.target
        self.other_sides = tuple(x for x in range(self.sides) if x != self.side)
        self.opponents = tuple(
            s
            for s in range(1, board.players + 1)
            if self.side_of[s] != self.side and board.is_active(s) and board.marble_count(s)
        )
        #: Our side's marbles at the start of the game (for the marbles lost).
        self.start_marbles = sum(
            board.marble_count(s) + board.lost(s) for s in range(1, board.players + 1)
            if self.side_of[s] == self.side
        )
        #: Per seat, the seats of its own side (partners) and of the other sides.
        self.friends_of: tuple[tuple[int, ...], ...] = ((),) + tuple(
            tuple(o for o in range(1, board.players + 1)
                  if o != s and self.side_of[o] == self.side_of[s])
            for s in range(1, board.players + 1)
        )
        self.enemies_of: tuple[tuple[int, ...], ...] = ((),) + tuple(
            tuple(o for o in range(1, board.players + 1) if self.side_of[o] != self.side_of[s])
            for s in range(1, board.players + 1)
        )
        self.our_seats = (self.seat,) + self.friends_of[self.seat]
        limit = rules.movelimit
        self.plies_left = None if limit is None else limit - board.ply
        self.nodes = 0

    # -------------------------------------------------------------- the driver
    def run(
        self, moves: list[Move], depth_limit: int | None, rng: random.Random, info: SearchInfo
    ) -> Move:
        start = time.perf_counter()
        self.tables.new_search()
        board = self.board
        root: list[tuple[int, Move, State]] = []
        order = list(moves)
        rng.shuffle(order)
        for move in order:
            before = board.ejected(self.seat)
            board.push(move)
            root.append((int(board.ejected(self.seat) > before), move, self._state(board)))
            board.pop()
        root.sort(key=_first, reverse=True)
        best = root[0]
        limit = depth_limit if depth_limit is not None else MAX_DEPTH
        for depth in range(1, limit + 1):
            alpha = -INFINITY
            values = []
            try:
                for i, entry in enumerate(root):
                    marbles, scores = entry[2]
                    value = self._search(marbles, scores, depth - 1, alpha, INFINITY, False, 1)
                    values.append((value, i))
                    if value > alpha:
                        alpha = value
                        if depth > 1 or i == 0:
                            best = entry
            except Timeout:
                break
            values.sort(key=lambda vi: (-vi[0], vi[1]))
            root = [root[i] for _, i in values]
            best = root[0]
            info.depth = depth
            info.depths.append(depth)
            info.value = values[0][0]
            if abs(values[0][0]) > WIN_THRESHOLD:
                break
        info.nodes = self.nodes
        info.elapsed = time.perf_counter() - start
        info.reason = f"best-reply search depth {info.depth}"
        return best[1]

    def _state(self, board: Board) -> State:
        marbles = tuple(board.marbles(s) for s in range(board.players + 1))
        scores = [0] * self.sides
        for s in range(1, board.players + 1):
            scores[self.side_of[s]] += board.ejected(s)
        return marbles, tuple(scores)

    # -------------------------------------------------------------- the search
    def _search(
        self,
        marbles: tuple[int, ...],
        scores: tuple[int, ...],
        depth: int,
        alpha: int,
        beta: int,
        ours: bool,
        ply: int,
    ) -> int:
        over = self._enter(scores, ply)
        if over is not None:
            return over
        if depth <= 0:
            if self.quiescence:
                return self._quiesce(marbles, scores, alpha, beta, ours, ply, 0)
            return self.evaluate(marbles, scores, ours)

        tables = self.tables
        key = (marbles, scores, ours)
        entry = tables.table.get(key)
        tt_move = 0
        if entry is not None:
            e_depth, e_value, e_flag, tt_move = entry
            if e_depth >= depth and abs(e_value) < WIN_THRESHOLD:
                if e_flag == EXACT:
                    return e_value
                if e_flag == LOWER and e_value >= beta:
                    return e_value
                if e_flag == UPPER and e_value <= alpha:
                    return e_value

        killers = tables.killers[ply]
        history = tables.history
        ordered = []
        along: dict[int, PartnerPush] = {}
        for seat in ((self.seat,) if ours else self.opponents):
            own = marbles[seat]
            if not own:
                continue
            friends = _union(marbles, self.friends_of[seat])
            enemy = _union(marbles, self.enemies_of[seat])
            for kind, diff, new_own, new_enemy in children(own, enemy, friends):
                k = diff * 8 + seat
                if k == tt_move:
                    order = 1 << 40
                elif kind:
                    order = (1 << 36) if kind == EJECT else (1 << 34)
                elif k == killers[0] or k == killers[1]:
                    order = 1 << 32
                else:
                    order = history.get(k, 0)
                ordered.append((order, k, seat, kind, diff, new_own, enemy, new_enemy))
            if self.teams and friends:
                # Pushes that take a partner's marbles along: negative keys, so they
                # never meet a move of one's own marbles in the table or the killers.
                for push in partner_pushes(own, friends, enemy):
                    line, o, _, ejects = push
                    k = -(((1 << (line[-1] + o)) | sum(1 << c for c in line)) * 8 + seat)
                    order = 1 << 40 if k == tt_move else (1 << 36 if ejects else 1 << 34)
                    along[k] = push
                    ordered.append((order, k, seat, PARTNER_PUSH, 0, 0, enemy, 0))
        if not ordered:
            # Nobody on this layer can move: the other layer moves again.
            return self._search(marbles, scores, depth - 1, alpha, beta, not ours, ply + 1)
        ordered.sort(key=_first, reverse=True)

        alpha0, beta0 = alpha, beta
        best = -INFINITY if ours else INFINITY
        best_key = 0
        for order, k, seat, kind, diff, new_own, enemy, new_enemy in ordered:
            if kind == PARTNER_PUSH:
                child, child_scores = self._apply_partner_push(marbles, scores, seat, along[k])
            else:
                child, child_scores = self._apply(
                    marbles, scores, seat, kind, diff, new_own, enemy, new_enemy
                )
            value = self._search(child, child_scores, depth - 1, alpha, beta, not ours, ply + 1)
            if ours:
                if value > best:
                    best, best_key = value, k
                    if value > alpha:
                        alpha = value
            elif value < best:
                best, best_key = value, k
                if value < beta:
                    beta = value
            if alpha >= beta:
                if order < (1 << 34):
                    if killers[0] != k:
                        killers[1] = killers[0]
                        killers[0] = k
                    history[k] = history.get(k, 0) + depth * depth
                break
        if best <= alpha0:
            flag = UPPER
        elif best >= beta0:
            flag = LOWER
        else:
            flag = EXACT
        table = tables.table
        if len(table) < TABLE_LIMIT or key in table:
            table[key] = (depth, best, flag, best_key)
        return best

    def _enter(self, scores: tuple[int, ...], ply: int) -> int | None:
        """Count a node and now and then read the clock; the value of a game that is
        over there (a side reached the target, or the move limit), else None."""
        self.nodes += 1
        if not self.nodes & CLOCK_MASK and self.deadline is not None:
            if time.perf_counter() > self.deadline:
                raise Timeout
        best_score = max(scores)
        if best_score >= self.target:
            return (WIN - ply) if scores[self.side] == best_score else (-WIN + ply)
        if self.plies_left is not None and self._real_plies(ply) >= self.plies_left:
            return self._limit_value(scores, ply)
        return None

    def _quiesce(
        self,
        marbles: tuple[int, ...],
        scores: tuple[int, ...],
        alpha: int,
        beta: int,
        ours: bool,
        ply: int,
        qply: int,
    ) -> int:
        """Stand pat on the evaluation, or play an ejection of the layer to move (our
        seat, or any opponent seat as the best reply) until none is left."""
        over = self._enter(scores, ply)  # quiescence holds many nodes: the clock too
        if over is not None:
            return over
        stand, threats = self._evaluate(marbles, scores, ours, True)
        if qply >= QUIESCENCE_PLIES or not threats:
            return stand
        if ours:
            if stand >= beta:
                return stand
            if stand > alpha:
                alpha = stand
            seats: tuple[int, ...] = (self.seat,)
        else:
            if stand <= alpha:
                return stand
            if stand < beta:
                beta = stand
            seats = self.opponents
        best = stand
        # The opponents' ejections of one another's marbles count when one of them
        # would reach the target with it; else only those of our side's marbles.
        ours_only = not ours and not self._opponent_near_target(scores)
        if ours_only:
            ours_before = self._our_count(marbles)
        for seat in seats:
            for child, child_scores in self._ejections(marbles, scores, seat):
                if ours_only and self._our_count(child) == ours_before:
                    continue
                value = self._quiesce(child, child_scores, alpha, beta, not ours, ply + 1,
                                      qply + 1)
                if ours:
                    if value > best:
                        best = value
                        if value > alpha:
                            alpha = value
                elif value < best:
                    best = value
                    if value < beta:
                        beta = value
                if alpha >= beta:
                    return best
        return best

    def _our_count(self, marbles: tuple[int, ...]) -> int:
        return sum(marbles[s].bit_count() for s in self.our_seats)

    def _opponent_near_target(self, scores: tuple[int, ...]) -> bool:
        """Whether an opponent side is one marble from the target."""
        return max(scores[x] for x in self.other_sides) + 1 >= self.target

    def _ejections(
        self, marbles: tuple[int, ...], scores: tuple[int, ...], seat: int
    ) -> list[State]:
        """The positions after each move of ``seat`` that pushes a marble off."""
        own = marbles[seat]
        enemy = _union(marbles, self.enemies_of[seat])
        if not own or not enemy & EDGE:
            return []
        # Ejections only (no edge cells): a partner's marbles stand neither in the
        # pushing line nor beyond it (that cell is off the board), so need no mask.
        out = [
            self._apply(marbles, scores, seat, kind, diff, new_own, enemy, new_enemy)
            for kind, diff, new_own, new_enemy in tactical_children(own, enemy, 0)
        ]
        if self.teams and self.friends_of[seat]:
            out.extend(
                self._apply_partner_push(marbles, scores, seat, push)
                for push in partner_pushes(own, _union(marbles, self.friends_of[seat]), enemy)
                if push[3]
            )
        return out

    def _apply(
        self,
        marbles: tuple[int, ...],
        scores: tuple[int, ...],
        seat: int,
        kind: int,
        diff: int,
        new_own: int,
        enemy: int,
        new_enemy: int,
    ) -> State:
        """The position after ``seat``'s move: the pushed marbles follow their owners."""
        new = list(marbles)
        new[seat] = new_own
        if not kind:
            return tuple(new), scores
        removed = enemy & ~new_enemy
        t = removed.bit_length() - 1
        rear = (diff ^ removed).bit_length() - 1
        o, length = _PUSH_STEP[t - rear]
        chain = [t + o, t] if length == 3 and enemy >> (t + o) & 1 else [t]
        if self._step_front_first(marbles, new, chain, o):
            side = self.side_of[seat]
            scores = scores[:side] + (scores[side] + 1,) + scores[side + 1 :]
        return tuple(new), scores

    def _step_front_first(self, before: tuple[int, ...], new: list[int],
                          cells: Iterable[int], o: int) -> bool:
        """Move the marble on each of ``cells`` (front first, so none lands on one not
        moved yet) one step of ``o`` in ``new``, whoever owned it ``before``; True when
        one left the board."""
        ejected = False
        for cell in cells:
            for owner in range(1, self.players + 1):
                if before[owner] >> cell & 1:
                    break
            new[owner] ^= 1 << cell
            dest = cell + o
            if BOARD_MASK >> dest & 1:
                new[owner] |= 1 << dest
            else:
                ejected = True
        return ejected

    def _apply_partner_push(
        self, marbles: tuple[int, ...], scores: tuple[int, ...], seat: int, push: PartnerPush
    ) -> State:
        """The position after a push whose line takes a partner's marbles along:
        every marble of the line and of the pushed ones steps once, the front first."""
        line, o, run, _ = push
        front = line[-1]
        cells = list(line) + [front + o * (i + 1) for i in range(run)]
        new = list(marbles)
        if self._step_front_first(marbles, new, reversed(cells), o):
            side = self.side_of[seat]
            scores = scores[:side] + (scores[side] + 1,) + scores[side + 1 :]
        return tuple(new), scores

    def _real_plies(self, ply: int) -> int:
        """Moves of the real game that ``ply`` best-reply plies stand for."""
        ours = (ply + 1) // 2
        return ours + (ply // 2) * (self.players - 1)

    def _limit_value(self, scores: tuple[int, ...], ply: int) -> int:
        best = max(scores)
        if scores.count(best) > 1:
            return 0
        return (WIN - ply) if scores[self.side] == best else (-WIN + ply)

    # ----------------------------------------------------------- evaluation
    def evaluate(self, marbles: tuple[int, ...], scores: tuple[int, ...], ours: bool) -> int:
        """Our side's score against the best opponent side's, the marbles we lost,
        centre and cohesion against the opponents' mean, and edge threats."""
        return self._evaluate(marbles, scores, ours, False)[0]

    def _evaluate(
        self, marbles: tuple[int, ...], scores: tuple[int, ...], ours: bool, tactics: bool
    ) -> tuple[int, int]:
        """The evaluation, and for the layer to move whether it could push off a marble
        the quiescence search plays: how many opponent marbles our side could (ours),
        or (theirs, asked with ``tactics``) which of ours the opponent sides could, and
        of anyone's when one of them is a marble from the target; 0: none."""
        side_of = self.side_of
        masks = [0] * self.sides
        for seat in range(1, self.players + 1):
            masks[side_of[seat]] |= marbles[seat]
        side = self.side
        mine = masks[side]
        occupied = 0
        for bits in masks:
            occupied |= bits
        others = occupied & ~mine
        best_other = 0
        other_positional = 0
        count = 0
        hurt = 0
        #: What the opponent sides could push off (anyone's marbles).
        threats = 0
        for x in range(self.sides):
            if x == side or not masks[x]:
                continue
            count += 1
            if scores[x] > best_other:
                best_other = scores[x]
            other_positional += _positional(masks[x])
            if mine & EDGE or (tactics and not ours):
                threatened_by_x = threatened_marbles(masks[x], occupied & ~masks[x])
                hurt |= threatened_by_x & mine
                threats |= threatened_by_x
        value = MARBLE * (scores[side] - best_other)
        value -= LOST * (self.start_marbles - mine.bit_count())
        value += _positional(mine)
        if count:
            value -= other_positional // count
        attack = threatened_marbles(mine, others).bit_count() if others & EDGE else 0
        hurt_count = hurt.bit_count()
        value += THREAT_EACH * (attack - hurt_count)
        if ours and attack:
            value += THREAT_URGENT
        # Several opponents move before we do again: a threat against us is urgent.
        if hurt_count:
            value -= THREAT_URGENT
        if ours:
            return value, attack
        return value, (threats if best_other + 1 >= self.target else hurt)


def _union(marbles: tuple[int, ...], seats: Iterable[int]) -> int:
    """The marbles of ``seats`` together."""
    together = 0
    for seat in seats:
        together |= marbles[seat]
    return together


def _positional(bits: int) -> int:
    centre = (
        (bits & R1).bit_count()
        + 2 * (bits & R2).bit_count()
        + 3 * (bits & R3).bit_count()
        + 4 * (bits & R4).bit_count()
    )
    pairs = (
        (bits & (bits >> 1)).bit_count()
        + (bits & (bits >> 12)).bit_count()
        + (bits & (bits >> 11)).bit_count()
    )
    return COHESION * pairs - CENTRE * centre
