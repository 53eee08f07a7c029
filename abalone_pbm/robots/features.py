"""The two-player evaluation as named features and fitted weights.

A position is seen by the side to move: ``me`` and ``op`` are the bitboards,
``mine`` and ``theirs`` the marbles each side has pushed off.  :func:`features`
gives the feature vector (what ``tools/fit_weights.py`` fits against game
results); :func:`evaluate` is the same sum, written out for speed, with the
weights of :mod:`abalone_pbm.robots.weights` (one marble pushed off = 1000).

The features, each "mine minus theirs" where that makes sense:

* ``material`` -- marbles pushed off;
* ``progress`` -- their squares: a marble is worth more the nearer its side is to
  the target, so when ahead a trade gains (attack and trade when ahead);
* ``centre`` -- the sum of the distances to e5 (theirs minus mine);
* ``cohesion`` -- adjacent pairs of own marbles;
* ``lines`` -- lines of three own marbles (the strongest pushers);
* ``edge`` -- marbles on the edge (theirs minus mine);
* ``threat_now`` -- 1 when the side to move can push a marble off now;
* ``threats`` -- marbles each side could push off with one move;
* ``threatened`` -- 1 when the other side could push one of ours off next move;
* ``exposed`` -- edge marbles with an enemy marble right behind them on the line
  out (one marble more there and it is a threat: danger two moves out);
* ``lead_threats`` -- the lead times the threats: press harder when ahead.

On top of the fitted sum, :func:`evaluate` adds a hand-set finishing term,
``FINISH[mine] - FINISH[theirs]``: each marble pushed off is worth more the more
that side has already pushed off (``FINISH[n] = 150 n (n - 1)``), so a one-for-one
trade gains for the side that is ahead and costs the side that is behind.  It is
not fitted (results at the move limit do not show it): it drives the leader to
trade down to a win by the target instead of holding a lead.

And a hand-set pressure term, ``PRESS[mine] * centre(op) - PRESS[theirs] *
centre(me)`` with ``PRESS[n] = PRESSURE * n``: each step an opponent marble stands
away from e5 is worth more the more marbles a side has pushed off.  A push moves the
pushing line outward as far as the marbles pushed, and the line is the longer (two on
one, three on one or two), so the symmetric centre term alone makes pushing a compact
defender towards the edge cost the pusher; with five pushed off and ``PRESSURE`` 30 a
two-on-one push outward gains 54, a three-on-two 204.  Leaders that kept 75-80 % of
their moves quiet against Cotix (traces of ``benchmarks/external_match.py --trace``)
press instead.

With it a hand-set push term, ``PUSH_BY[mine] * pushable(me, op) - PUSH_BY[theirs] *
pushable(op, me)`` (``PUSH_BY[n] = PUSHES * n``; :func:`pushable`: the marbles of the
other side a side could push now): in those traces the leader had no push at all in
25-67 % of its positions, its marbles spread round the other side's compact group.

In both, and in the lead centre term of :mod:`endgame`, ``mine`` and ``theirs`` are
each side's *lead* (:func:`leads`: the marbles it has pushed off beyond the other's,
0 for the side not ahead), not its count.  Scaled by the counts, the first marble the
other side took switched on ``PRESS[1]`` times the summed distances of all our marbles
from e5 (about a marble's worth for a side kept off the centre), so a one-for-one trade
cost the leader more than the finishing term gave it, and the leader declined the
trades that term is there for.  Scaled by the lead, a trade changes none of them.
"""

from __future__ import annotations

from typing import Final

from abalone_pbm.rules.geometry import BOARD_MASK, CELLS, DIAGONAL_OF, GRID_MASK, OFFSETS, ROW_OF
from abalone_pbm.rules.geometry import CENTRE as CENTRE_CELL

from .weights import (
    CENTRE,
    COHESION,
    EXPOSED,
    LEAD_THREATS,
    LINES,
    MATERIAL,
    PROGRESS,
    THREAT_NOW,
    THREATENED,
    THREATS,
)
from .weights import EDGE as EDGE_WEIGHT

FEATURES: Final = (
    "material",
    "progress",
    "centre",
    "cohesion",
    "lines",
    "edge",
    "threat_now",
    "threats",
    "threatened",
    "exposed",
    "lead_threats",
)


def hex_distance(cell: int, other: int = CENTRE_CELL) -> int:
    dr = ROW_OF[cell] - ROW_OF[other]
    dd = DIAGONAL_OF[cell] - DIAGONAL_OF[other]
    return max(abs(dr), abs(dd), abs(dr - dd))


def _ring(k: int) -> int:
    return sum(1 << c for c in CELLS if hex_distance(c) == k)


R1, R2, R3, R4 = _ring(1), _ring(2), _ring(3), _ring(4)
EDGE: Final = R4
#: (offset, cells whose neighbour that way is off the board) per direction.
_OUT: Final = tuple(
    (o, sum(1 << c for c in CELLS if not (BOARD_MASK >> (c + o)) & 1)) for o in OFFSETS
)
_AXES: Final = (OFFSETS[0], OFFSETS[1], OFFSETS[2])
_OUT_BY_OFFSET: Final = dict(_OUT)
#: Per axis: (one, two, three steps along it, the cells whose neighbour one way or the
#: other along it is off the board).
_AXIS_STEPS: Final = tuple(
    (o, 2 * o, 3 * o, _OUT_BY_OFFSET[o] | _OUT_BY_OFFSET[-o]) for o in _AXES
)


def threatened(pusher: int, enemy: int, victims: int) -> int:
    """The marbles of ``victims`` that a line of ``pusher`` marbles can push off now.

    ``enemy`` is every marble the pusher may push (``victims`` is part of it): a line
    of two or three pushes one marble standing on the edge, or three push two whose
    front one stands on the edge.
    """
    out = 0
    for o, edge in _OUT:
        target = edge & victims
        if not target:
            continue
        if o > 0:
            g2 = pusher & (pusher << o)
            if not g2:
                continue
            f2 = g2 << o
            out |= f2 & target
            g3 = g2 & f2
            if g3:
                out |= (((g3 << o) & enemy) << o) & target
        else:
            p = -o
            g2 = pusher & (pusher >> p)
            if not g2:
                continue
            f2 = g2 >> p
            out |= f2 & target
            g3 = g2 & f2
            if g3:
                out |= (((g3 >> p) & enemy) >> p) & target
    return out


def threatened_marbles(pusher: int, enemy: int) -> int:
    """The marbles of ``enemy`` that ``pusher`` could push off with one move (a mask)."""
    victims = enemy & EDGE
    return threatened(pusher, enemy, victims) if victims else 0


#: Per axis: (one to four steps along it, the cells whose neighbour one way or the other
#: along it is off the board).
_THREAT_STEPS: Final = tuple((o, o2, o3, 4 * o, out) for o, o2, o3, out in _AXIS_STEPS)


def threatens(pusher: int, enemy: int) -> bool:
    """Whether ``pusher`` could push a marble of ``enemy`` off now
    (:func:`threatened_marbles` is not empty), answered at the first line found.

    An edge cell's neighbour is off the board one way along an axis only (the lines
    are five cells long at least), so the lines behind it are read both ways at once
    (the marbles shifted the other way find nothing there)."""
    victims = enemy & EDGE
    if not victims:
        return False
    for o, o2, o3, o4, out in _THREAT_STEPS:
        edge = victims & out
        if edge:
            up2 = pusher << o2
            down2 = pusher >> o2
            # Two on one: pushers one and two steps behind the victim.
            if edge & ((pusher << o) & up2 | (pusher >> o) & down2):
                return True
            # Three on two: the victim's partner behind it, three pushers behind that.
            if edge & (
                (enemy << o) & up2 & (pusher << o3) & (pusher << o4)
                | (enemy >> o) & down2 & (pusher >> o3) & (pusher >> o4)
            ):
                return True
    return False


def _exposed(mine: int, other: int) -> int:
    count = 0
    for o, edge in _OUT:
        at_edge = mine & edge
        if at_edge:
            count += (at_edge & (other << o if o > 0 else other >> -o)).bit_count()
    return count


def centre_sum(bits: int) -> int:
    """The steps from e5 of the marbles of ``bits``, summed (kept with the side's terms:
    :func:`side_terms`)."""
    return side_terms(bits)[1]


def _cohesion(bits: int) -> int:
    return sum((bits & (bits >> o)).bit_count() for o in _AXES)


def _lines(bits: int) -> int:
    total = 0
    for o in _AXES:
        g2 = bits & (bits >> o)
        total += (g2 & (g2 >> o)).bit_count()
    return total


def features(me: int, op: int, mine: int, theirs: int) -> list[float]:
    """The feature vector of a position, from the side to move (see the module text)."""
    my_threats = threatened_marbles(me, op).bit_count()
    their_threats = threatened_marbles(op, me).bit_count()
    lead = mine - theirs
    return [
        float(lead),
        float(mine * mine - theirs * theirs),
        float(centre_sum(op) - centre_sum(me)),
        float(_cohesion(me) - _cohesion(op)),
        float(_lines(me) - _lines(op)),
        float((op & EDGE).bit_count() - (me & EDGE).bit_count()),
        float(my_threats > 0),
        float(my_threats - their_threats),
        float(their_threats > 0),
        float(_exposed(op, me) - _exposed(me, op)),
        float(lead * my_threats),
    ]


#: The weights' names in :mod:`weights`, in the order of :data:`FEATURES`.
WEIGHT_NAMES: Final = (
    "MATERIAL",
    "PROGRESS",
    "CENTRE",
    "COHESION",
    "LINES",
    "EDGE",
    "THREAT_NOW",
    "THREATS",
    "THREATENED",
    "EXPOSED",
    "LEAD_THREATS",
)
#: The finishing term by marbles pushed off (see the module text); long enough for
#: any side's marbles.
FINISH: Final = tuple(150 * n * (n - 1) for n in range(len(CELLS) + 1))


#: The pressure term by lead: each step an opponent marble stands away from e5 is worth
#: this much more to a side n marbles ahead (:func:`leads`; see the module text).
PRESSURE: int = 30
PRESS: list[int] = [PRESSURE * n for n in range(len(CELLS) + 1)]


#: The push term by lead: each marble of the other side that a side could push (two
#: on one, three on one or two) is worth this much per marble of its lead (:func:`leads`).
#: Measured when it was per marble pushed off: against Cotix at 1 s a move (seed 1) 4 of
#: 8 games were won by six with it, 0 of 5 without; at 0.3 s (seed 2) 3 of 8 and 2 of 8.
#: It costs about a quarter more time to the same depth once a side leads.
PUSHES: int = 30
PUSH_BY: list[int] = [PUSHES * n for n in range(len(CELLS) + 1)]


def set_pressure(per_marble: int, pushes: int | None = None) -> None:
    """Other weights for the pressure and push terms (matches between settings)."""
    global PRESSURE, PUSHES
    PRESSURE = per_marble
    PRESS[:] = [per_marble * n for n in range(len(CELLS) + 1)]
    if pushes is not None:
        PUSHES = pushes
        PUSH_BY[:] = [pushes * n for n in range(len(CELLS) + 1)]
    clear_caches()


def pushable(pusher: int, enemy: int) -> int:
    """The marbles of ``enemy`` that a line of ``pusher`` marbles could push (the first
    marble pushed: two on one, three on one, three on two), onto an empty cell or off.

    Each axis's pairs of pushers are found once for both of its directions.
    """
    free = GRID_MASK & ~(pusher | enemy)
    pushed = 0
    for o, o2, o3, _ in _AXIS_STEPS:
        pairs = pusher & (pusher << o)  # a pusher here and one a step back
        if not pairs:
            continue
        first = enemy & (pairs << o)  # pushed towards +o
        if first:
            pushed |= first & (free >> o)
            three = first & (pusher << o3) & (enemy >> o)
            if three:
                pushed |= three & (free >> o2)
        first = enemy & (pairs >> o2)  # pushed towards -o
        if first:
            pushed |= first & (free << o)
            three = first & (pusher >> o3) & (enemy << o)
            if three:
                pushed |= three & (free << o2)
    return pushed


def finish_term(mine: int, theirs: int) -> int:
    """The hand-set finishing term of :func:`evaluate` (not one of the features)."""
    return FINISH[mine] - FINISH[theirs]


def leads(mine: int, theirs: int) -> tuple[int, int]:
    """(The side to move's lead on marbles pushed off, the other side's): the counts the
    pressure, push and lead centre terms scale with, each 0 for a side not ahead, so
    that a one-for-one trade leaves those terms as they were."""
    lead = mine - theirs
    return (lead, 0) if lead > 0 else (0, -lead)


def pressure_term(me: int, op: int, mine: int, theirs: int) -> int:
    """The hand-set pressure and push terms of :func:`evaluate` (not features)."""
    ahead, behind = leads(mine, theirs)
    return (
        PRESS[ahead] * centre_sum(op) - PRESS[behind] * centre_sum(me)
        + PUSH_BY[ahead] * pushable(me, op).bit_count()
        - PUSH_BY[behind] * pushable(op, me).bit_count()
    )


def hand_set_terms(me: int, op: int, mine: int, theirs: int) -> int:
    """What :func:`evaluate` adds to the fitted sum of :func:`features`."""
    return finish_term(mine, theirs) + pressure_term(me, op, mine, theirs)


_WEIGHT_GLOBALS: Final = dict(
    zip(WEIGHT_NAMES, (*WEIGHT_NAMES[:5], "EDGE_WEIGHT", *WEIGHT_NAMES[6:])))


def current_weights() -> dict[str, int]:
    """The weights :func:`static_eval` uses now, by their names in :mod:`weights`."""
    return {name: int(globals()[_WEIGHT_GLOBALS[name]]) for name in WEIGHT_NAMES}


def set_weights(weights: dict[str, int]) -> None:
    """Make :func:`static_eval` use other weights (matches between weight sets; the
    evaluation reads module globals because that is fastest)."""
    if all(int(globals()[_WEIGHT_GLOBALS[n]]) == int(v) for n, v in weights.items()):
        return
    for name, value in weights.items():
        globals()[_WEIGHT_GLOBALS[name]] = int(value)
    clear_caches()


#: One side's share of the evaluation by its bitboard (see :func:`side_terms`): a move
#: changes one side's marbles only (two with a push), so most lookups hit.
_SIDE_CACHE: dict[int, tuple[int, int, int]] = {}
#: The cache is emptied when it grows past this many entries (bounded memory).
SIDE_CACHE_LIMIT: Final = 1 << 16
#: The cells at least 1, 2, 3 steps from e5: a marble's distance is the number of these
#: it lies in (and the edge), so the centre sum is four population counts, no products.
_BEYOND_1: Final = R1 | R2 | R3 | R4
_BEYOND_2: Final = R2 | R3 | R4
_BEYOND_3: Final = R3 | R4


def side_terms(bits: int) -> tuple[int, int, int]:
    """(The terms of one side's marbles alone: centre, cohesion, lines and edge; the sum
    of the marbles' distances to e5; that sum less two a marble: the steps beyond the
    middle ring that the endgame's lead centre term reads).  The centre sum is written
    out here, not read from :func:`centre_sum`: in a search about three lookups in ten
    miss this cache."""
    terms = _SIDE_CACHE.get(bits)
    if terms is not None:
        return terms
    m1, m12, m11 = bits & (bits >> 1), bits & (bits >> 12), bits & (bits >> 11)
    edge = (bits & R4).bit_count()
    centre = (
        (bits & _BEYOND_1).bit_count() + (bits & _BEYOND_2).bit_count()
        + (bits & _BEYOND_3).bit_count() + edge
    )
    value = (
        COHESION * (m1.bit_count() + m12.bit_count() + m11.bit_count())
        + LINES * (
            (m1 & (m1 >> 1)).bit_count() + (m12 & (m12 >> 12)).bit_count()
            + (m11 & (m11 >> 11)).bit_count()
        )
        - CENTRE * centre
        - EDGE_WEIGHT * edge
    )
    if len(_SIDE_CACHE) >= SIDE_CACHE_LIMIT:
        _SIDE_CACHE.clear()
    terms = _SIDE_CACHE[bits] = (value, centre, centre - 2 * bits.bit_count())
    return terms


def evaluate(me: int, op: int, mine: int, theirs: int) -> int:
    """The weighted sum of :func:`features` plus :func:`finish_term`, in thousandths
    of a marble."""
    return evaluation(me, op, mine, theirs)[0]


def static_eval(me: int, op: int, mine: int, theirs: int) -> tuple[int, int]:
    """(:func:`evaluate`, the marbles the side to move can push off now)."""
    value, my_threats, _ = evaluation(me, op, mine, theirs)
    return value, my_threats


#: Caches of other modules whose answers are built on these weights (see
#: :func:`register_cache`), emptied with this module's own.
_DEPENDENT_CACHES: list[dict[tuple[int, int, int, int], tuple[int, int, int]]] = []


def register_cache(cache: dict[tuple[int, int, int, int], tuple[int, int, int]]) -> None:
    """Have :func:`clear_caches` (every change of weights) empty ``cache`` too."""
    _DEPENDENT_CACHES.append(cache)


#: The terms of the marbles pushed off alone (material, progress, finishing) by the
#: counts of both sides, ``_SCORE_TERMS[mine][theirs]``: rebuilt at every change of
#: weights (:func:`clear_caches`).
_SCORE_TERMS: list[list[int]] = []


def _build_score_terms() -> None:
    _SCORE_TERMS[:] = [
        [
            MATERIAL * (mine - theirs) + PROGRESS * (mine * mine - theirs * theirs)
            + FINISH[mine] - FINISH[theirs]
            for theirs in range(len(FINISH))
        ]
        for mine in range(len(FINISH))
    ]


_build_score_terms()


def clear_caches() -> None:
    """Forget every cached value (after a change of weights)."""
    _SIDE_CACHE.clear()
    _build_score_terms()
    for cache in _DEPENDENT_CACHES:
        cache.clear()


def evaluation(me: int, op: int, mine: int, theirs: int) -> tuple[int, int, int]:
    """(:func:`evaluate`, the marbles the side to move can push off now, the marbles
    the other side could push off if it were to move), without the endgame terms.  Not
    cached: the searches evaluate with :func:`endgame.evaluation`, which keeps the cache
    of whole evaluations."""
    return evaluation_with(me, op, mine, theirs, 0, 0)


def evaluation_with(
    me: int, op: int, mine: int, theirs: int, contact_pushes: int, lead_centre: int
) -> tuple[int, int, int]:
    """:func:`evaluation` computed afresh, with the endgame terms of :mod:`endgame` added
    at the weights given (0 and 0: none): their inputs, the pushable marbles and the
    centre sums, are the ones the push and pressure terms read, so each is computed once.
    """
    get = _SIDE_CACHE.get
    mine_side = get(me) or side_terms(me)
    their_side = get(op) or side_terms(op)
    lead = mine - theirs
    value = mine_side[0] - their_side[0] + _SCORE_TERMS[mine][theirs]
    # The pressure, push and lead centre terms scale with a side's lead: leads(), written
    # out here because this runs at every node of the search.
    ahead, behind = (lead, 0) if lead > 0 else (0, -lead)
    # Per marble a side could push: the push term once it leads, and the contact pushes
    # at every score.
    my_pushes = PUSH_BY[ahead] + contact_pushes
    their_pushes = PUSH_BY[behind] + contact_pushes
    if my_pushes or their_pushes:
        hit_op, hit_me, exposed, op_pushable, me_pushable = _contacts_and_pushes(me, op)
        value += my_pushes * op_pushable.bit_count() - their_pushes * me_pushable.bit_count()
    else:
        hit_op, hit_me, exposed = _contacts(me, op)
    if lead:
        # The pressure and lead centre terms are nothing while the scores are level.
        value += PRESS[ahead] * their_side[1] - PRESS[behind] * mine_side[1]
        if lead_centre:
            value -= lead_centre * (ahead * mine_side[2] - behind * their_side[2])
    my_threats = hit_op.bit_count() if hit_op else 0
    their_threats = hit_me.bit_count() if hit_me else 0
    if my_threats:
        value += THREAT_NOW + THREATS * my_threats
        if lead:
            value += LEAD_THREATS * lead * my_threats
    if their_threats:
        value += THREATENED - THREATS * their_threats
    value += EXPOSED * exposed
    return value, my_threats, their_threats


#: Per direction, apart for positive and negative offsets (a shift each way, no test
#: of the sign): (one to four steps along it, the cells whose neighbour that way is
#: off the board).
_UP: Final = tuple((o, 2 * o, 3 * o, 4 * o, out) for o, out in _OUT if o > 0)
_DOWN: Final = tuple((-o, -2 * o, -3 * o, -4 * o, out) for o, out in _OUT if o < 0)


def _contacts(me: int, op: int) -> tuple[int, int, int]:
    """(the marbles of ``op`` that ``me`` could push off now, those of ``me`` that ``op``
    could, the ``exposed`` feature): :func:`threatened_marbles` both ways and
    ``exposed`` in one pass over the three axes.

    An edge cell's neighbour is off the board one way along an axis, and then (the
    board is convex) the cells one and two steps further that way are too: shifted
    both ways along the axis, a bitboard holds at such a cell only what lies behind
    it.  So each axis takes one test for both of its directions.
    """
    hit_op = hit_me = exposed = 0
    deep_op = deep_me = 0
    for o, o2, _, out in _AXIS_STEPS:
        op_out = op & out
        me_out = me & out
        near_me = (me << o) | (me >> o)
        near_op = (op << o) | (op >> o)
        far_me = (me << o2) | (me >> o2)
        far_op = (op << o2) | (op >> o2)
        behind = op_out & near_me
        if behind:
            exposed += behind.bit_count()
            hit_op |= behind & far_me
        behind = me_out & near_op
        if behind:
            exposed -= behind.bit_count()
            hit_me |= behind & far_op
        # Three push two: a victim's partner behind it, a pusher behind that.
        deep_op |= op_out & near_op & far_me
        deep_me |= me_out & near_me & far_op
    if deep_op:
        hit_op |= _three_push_two(me, op)
    if deep_me:
        hit_me |= _three_push_two(op, me)
    return hit_op, hit_me, exposed


#: Where the other side's bitboard goes in the packed pair of :func:`_contacts_and_pushes`:
#: far enough above the grid that no shift of its steps (three at most, 36 bits) carries
#: a marble of one side into the other's range.
_PACK: Final = 160
_LOW: Final = (1 << _PACK) - 1
_GRID_PAIR: Final = GRID_MASK | GRID_MASK << _PACK
#: :data:`_AXIS_STEPS` with the edge cells in both halves of a packed pair.
_PAIR_STEPS: Final = tuple((o, o2, o3, out | out << _PACK) for o, o2, o3, out in _AXIS_STEPS)


def _contacts_and_pushes(me: int, op: int) -> tuple[int, int, int, int, int]:
    """:func:`_contacts` and :func:`pushable` both ways: (the marbles of ``op`` that
    ``me`` could push off now, those of ``me`` that ``op`` could, the ``exposed``
    feature, the marbles of ``op`` that ``me`` could push, those of ``me`` that ``op``
    could).

    Both sides at once: ``pushers`` holds ``me`` low and ``op`` above :data:`_PACK`,
    ``pushed`` the other way round, so each shift and test serves both sides (half
    the operations of two passes; Python's cost is per operation more than per bit).
    A push is the first marble pushed with two pushers behind it, and a third behind
    those with a second marble in front; it ejects when the marble in front stands on
    the edge that way (an edge cell's neighbour behind it is on the board, so an
    axis's edge cells serve both directions).
    """
    pushers = me | op << _PACK
    pushed_side = op | me << _PACK
    free = _GRID_PAIR & ~(pushers | pushed_side)
    hit = pushed = 0
    exposed_all = exposed_high = 0
    for o, o2, o3, out in _PAIR_STEPS:
        up = pushers << o
        down = pushers >> o
        # Exposed: an edge marble with a pusher right behind it (the way out is free).
        behind = pushed_side & out & (up | down)
        if behind:
            exposed_all += behind.bit_count()
            exposed_high += (behind >> _PACK).bit_count()
        first = pushed_side & up & (pushers << o2)  # pushed towards +o
        if first:
            pushed |= first & (free >> o)
            hit |= first & out
            three = first & (pushers << o3) & (pushed_side >> o)
            if three:
                pushed |= three & (free >> o2)
                hit |= (three << o) & out
        first = pushed_side & down & (pushers >> o2)  # pushed towards -o
        if first:
            pushed |= first & (free << o)
            hit |= first & out
            three = first & (pushers >> o3) & (pushed_side << o)
            if three:
                pushed |= three & (free << o2)
                hit |= (three >> o) & out
    return (
        hit & _LOW, hit >> _PACK, exposed_all - 2 * exposed_high,
        pushed & _LOW, pushed >> _PACK,
    )


def _three_push_two(pusher: int, enemy: int) -> int:
    """The marbles of ``enemy`` that a line of three pushes off in front of another."""
    hit = 0
    for o, o2, o3, o4, out in _UP:
        pair = enemy & out & (enemy << o) & (pusher << o2)
        if pair:
            hit |= pair & (pusher << o3) & (pusher << o4)
    for o, o2, o3, o4, out in _DOWN:
        pair = enemy & out & (enemy >> o) & (pusher >> o2)
        if pair:
            hit |= pair & (pusher >> o3) & (pusher >> o4)
    return hit
