"""Static evaluation of a position for the computer players, with bitboard popcounts.

Every term is a handful of shifts, masks and ``int.bit_count()`` calls over the
11 x 11 bit grid of :mod:`abalone_pbm.rules.geometry`; nothing loops over cells.

Terms (after Lemmens 2005, Papadopoulos et al. 2012, Aichholzer et al. 2002):

* material: marbles pushed off (by far the heaviest; reaching the target is a win);
* centre: the sum over a side's marbles of the hex distance to e5
  (``sum_k k * popcount(marbles & RING[k])``), lower is better;
* cohesion: the number of adjacent pairs of a side's own marbles;
* danger: own marbles on the edge that an enemy line could push off in one move
  (exact for two players); a threat held by the side to move is worth most of a marble.
  With three or more players several opponents move before a side moves again, so
  a threat against the side counts as urgent whoever is to move.

Values are integers from the point of view of one *side* (a player, or a team);
:data:`WIN` marks a won game.
"""

from __future__ import annotations

from typing import Final

from abalone_pbm.rules import Board
from abalone_pbm.rules.geometry import BOARD_MASK, CELLS, OFFSETS

from .features import hex_distance, threatened

#: The value of a won game (a lost one is ``-WIN``); search adjusts it by the distance.
WIN: Final = 1_000_000
#: Anything beyond this in absolute value is a forced win or loss.
WIN_THRESHOLD: Final = WIN - 10_000

# Weights (integers; one marble pushed off is 1000).
MARBLE: Final = 1000
CENTRE_WEIGHT: Final = 24
COHESION_WEIGHT: Final = 8
THREAT_ON_MOVE: Final = 600
THREAT_EACH: Final = 90
#: Multi-player: each own marble lost, beyond what it gives the best opponent.
LOST_WEIGHT: Final = 300
#: Multi-player: each marble pushed off by the best-scoring opponent side.
OTHERS_WEIGHT: Final = 1000
#: Multi-player: a threat against the side when it is to move itself.
MULTI_DANGER_ON_MOVE: Final = 600


def _rings() -> tuple[int, ...]:
    rings = [0] * 5
    for cell in CELLS:
        rings[hex_distance(cell)] |= 1 << cell
    return tuple(rings)


#: ``RING[k]``: the cells at distance k from e5 (k = 0..4; ring 4 is the edge).
RING: Final = _rings()
RING1, RING2, RING3, RING4 = RING[1], RING[2], RING[3], RING[4]
EDGE: Final = RING[4]


def _edge_out() -> tuple[int, ...]:
    masks = []
    for o in OFFSETS:
        masks.append(sum(1 << c for c in CELLS if not (BOARD_MASK >> (c + o)) & 1))
    return tuple(masks)


#: ``EDGE_OUT[d]``: the cells whose neighbour in direction d is off the board.
EDGE_OUT: Final = _edge_out()
#: Offsets of the three axes (right, down-right, down-left), for counting adjacent pairs.
AXIS_OFFSETS: Final = (OFFSETS[0], OFFSETS[1], OFFSETS[2])


def centre_sum(bits: int) -> int:
    """Sum of the hex distances to e5 of the marbles in ``bits``."""
    return (
        (bits & RING1).bit_count()
        + 2 * (bits & RING2).bit_count()
        + 3 * (bits & RING3).bit_count()
        + 4 * (bits & RING4).bit_count()
    )


def cohesion(bits: int) -> int:
    """Number of adjacent pairs of marbles in ``bits``."""
    return (
        (bits & (bits >> 1)).bit_count()
        + (bits & (bits >> 12)).bit_count()
        + (bits & (bits >> 11)).bit_count()
    )


def positional(bits: int) -> int:
    """Centre and cohesion of one side's marbles, in evaluation units."""
    return COHESION_WEIGHT * cohesion(bits) - CENTRE_WEIGHT * centre_sum(bits)


def evaluate_two(me: int, op: int, my_score: int, op_score: int, me_to_move: bool) -> int:
    """The two-player evaluation from the side owning ``me`` (no win check)."""
    value = MARBLE * (my_score - op_score)
    value += CENTRE_WEIGHT * (
        (op & RING1).bit_count()
        + 2 * (op & RING2).bit_count()
        + 3 * (op & RING3).bit_count()
        + 4 * (op & RING4).bit_count()
        - (me & RING1).bit_count()
        - 2 * (me & RING2).bit_count()
        - 3 * (me & RING3).bit_count()
        - 4 * (me & RING4).bit_count()
    )
    value += COHESION_WEIGHT * (
        (me & (me >> 1)).bit_count()
        + (me & (me >> 12)).bit_count()
        + (me & (me >> 11)).bit_count()
        - (op & (op >> 1)).bit_count()
        - (op & (op >> 12)).bit_count()
        - (op & (op >> 11)).bit_count()
    )
    mine = threatened(me, op, op & EDGE).bit_count() if op & EDGE else 0
    theirs = threatened(op, me, me & EDGE).bit_count() if me & EDGE else 0
    if me_to_move:
        if mine:
            value += THREAT_ON_MOVE
        value += THREAT_EACH * (mine - theirs)
    else:
        if theirs:
            value -= THREAT_ON_MOVE
        value += THREAT_EACH * (mine - theirs)
    return value


class Evaluator:
    """Evaluates positions of one game from the point of view of one side.

    Two players: :func:`evaluate_two`.  Three to six (paranoid view): the side's
    own ejections against the best opponent side's, its own losses, its positional
    terms against the opponents' mean, and edge threats both ways.  Partners in a
    team game are one side.
    """

    def __init__(self, board: Board, side: int) -> None:
        rules = board.rules
        self.rules = rules
        self.side = side
        self.players = board.players
        self.target = rules.target
        self.side_of = [0] + [rules.side_of(s) for s in range(1, board.players + 1)]
        self.sides = rules.sides
        self.seats_of = [rules.seats_of_side(x) for x in range(rules.sides)]
        self.two = board.players == 2
        self.my_seat = self.seats_of[side][0]
        self.op_seat = 3 - self.my_seat if self.two else 0

    def side_scores(self, board: Board) -> list[int]:
        scores = [0] * self.sides
        side_of = self.side_of
        for seat in range(1, self.players + 1):
            scores[side_of[seat]] += board.ejected(seat)
        return scores

    def terminal(self, board: Board) -> int | None:
        """``WIN``/``-WIN``/0 when a side has reached the target (or the move limit hit)."""
        target = self.target
        if self.two:
            if board.ejected(self.my_seat) >= target:
                return WIN
            if board.ejected(self.op_seat) >= target:
                return -WIN
        else:
            scores = self.side_scores(board)
            best = max(scores)
            if best >= target:
                return WIN if scores[self.side] == best else -WIN
        limit = self.rules.movelimit
        if limit is not None and board.ply >= limit:
            return self.limit_value(board)
        return None

    def limit_value(self, board: Board) -> int:
        scores = self.side_scores(board)
        best = max(scores)
        if scores.count(best) > 1:
            return 0  # the rules core calls any tie for the most ejections a draw
        return WIN if scores[self.side] == best else -WIN

    def outcome_value(self, board: Board) -> int:
        """The value of a finished game, from the rules core's verdict."""
        outcome = board.outcome()
        if outcome is None:
            return self.evaluate(board)
        if outcome.draw:
            return 0
        return WIN if self.side_of[outcome.winners[0]] == self.side else -WIN

    def evaluate(self, board: Board) -> int:
        """Heuristic value (no check for the end of the game)."""
        if self.two:
            me = self.my_seat
            op = self.op_seat
            return evaluate_two(
                board.marbles(me),
                board.marbles(op),
                board.ejected(me),
                board.ejected(op),
                board.turn == me,
            )
        return self._evaluate_many(board)

    def _evaluate_many(self, board: Board) -> int:
        side_of = self.side_of
        masks = [0] * self.sides
        scores = [0] * self.sides
        for seat in range(1, self.players + 1):
            x = side_of[seat]
            masks[x] |= board.marbles(seat)
            scores[x] += board.ejected(seat)
        side = self.side
        mine = masks[side]
        occupied = 0
        for bits in masks:
            occupied |= bits
        others = occupied & ~mine
        best_other = 0
        other_positional = 0
        count = 0
        danger = 0
        mover_side = side_of[board.turn]
        for x in range(self.sides):
            if x == side:
                continue
            bits = masks[x]
            if not bits:
                continue
            count += 1
            if scores[x] > best_other:
                best_other = scores[x]
            other_positional += positional(bits)
            if mine & EDGE:
                danger |= threatened(bits, occupied & ~bits, mine & EDGE)
        value = MARBLE * scores[side] - OTHERS_WEIGHT * best_other
        for seat in self.seats_of[side]:
            value -= LOST_WEIGHT * board.lost(seat)
        value += positional(mine)
        if count:
            value -= other_positional // count
        attack = threatened(mine, others, others & EDGE).bit_count() if others & EDGE else 0
        hurt = danger.bit_count()
        value += THREAT_EACH * (attack - hurt)
        # With more than two players several opponents move before this side moves
        # again, so a threat against it is urgent even when a partner is to move.
        if mover_side == side:
            if attack:
                value += THREAT_ON_MOVE
            if hurt:
                value -= MULTI_DANGER_ON_MOVE
        elif hurt:
            value -= THREAT_ON_MOVE
        return value

    def value(self, board: Board) -> int:
        """Terminal value when the game is decided, else the heuristic."""
        term = self.terminal(board)
        if term is not None:
            return term
        return self.evaluate(board)
