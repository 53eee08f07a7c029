"""Moves as changes of bitboards, for the searches: no ``Move`` objects, no push/pop.

A position seen by the side to move is two integers, ``me`` and ``op`` (the mover's
and the other marbles on the 11 x 11 grid of :mod:`abalone_pbm.rules.geometry`).
A move is given by the position it leads to: ``(kind, diff, new_me, new_op)`` where
``diff = me ^ new_me`` names the move (two moves never lead to the same child) and
``kind`` is :data:`QUIET`, :data:`PUSH` or :data:`EJECT`.  Python integers are
immutable, so making a move is computing two integers and unmaking it is nothing.

An in-line move of one, two or three marbles only moves the rear marble to the
cell ahead of the front one; a push moves the first pushed marble to the cell
beyond the last pushed one (or off the board); a side-step shifts the line.

``fixed`` marbles (the pillar of a variant, and in multi-player searches nothing)
block like marbles that cannot be pushed.  ``enemy`` is what may be pushed.
"""

from __future__ import annotations

from typing import Callable, Final

from abalone_pbm.rules.geometry import BOARD_MASK, GRID_MASK, OFFSETS
from abalone_pbm.rules.movegen import BELOW, OFF_BOARD_LANES, SPREAD, TABLES, lane_masks
from abalone_pbm.rules.moves import Move

QUIET: Final = 0
PUSH: Final = 1
EJECT: Final = 2

Child = tuple[int, int, int, int]
#: What :func:`lane_masks` answers: (bits, kind) pairs.
Lanes = list[tuple[int, int]]
#: What a lane bit of :func:`lane_masks` changes: (kind, the mover's diff, the other's).
Change = tuple[int, int, int]

_S0, _S1, _S2, _S3, _S4, _S5 = SPREAD


def _change(move: Move, pushed: int) -> Change:
    """The change a move of the rules core makes, with ``pushed`` marbles ahead of it."""
    o = OFFSETS[move.direction]
    if not move.cells:
        return (QUIET, 0, 0)  # no move ends on this bit
    if not move.is_inline:
        return (QUIET, move.cells | move.moved, 0)
    rear, front = move.rear, move.front
    if not pushed:
        return (QUIET, (1 << rear) | (1 << (front + o)), 0)
    # The rear marble takes the first pushed marble's cell; that marble goes beyond
    # the last pushed one (or off the board).
    first = front + o
    beyond = front + (pushed + 1) * o
    if BOARD_MASK >> beyond & 1:
        return (PUSH, (1 << rear) | (1 << first), (1 << first) | (1 << beyond))
    return (EJECT, (1 << rear) | (1 << first), 1 << first)


#: The lane tables of the rules core as changes of bitboards, kind by kind.
_PUSHED: Final = (0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0, 0)
CHANGES: Final = tuple(
    [_change(move, pushed) for move in table] for table, pushed in zip(TABLES, _PUSHED)
)


#: The same tables indexed by ``bits.bit_length()`` (one more than the bit; entry 0 is
#: never read), so that the loops below read the highest set bit without a
#: subtraction; the quiet kinds' as the mover's diff alone (the other side's marbles
#: stay as they are).
_BY_LENGTH: Final = tuple(((QUIET, 0, 0), *table) for table in CHANGES)
_QUIET_BY_LENGTH: Final = tuple(
    (0, *(diff for _, diff, _ in table))
    if all(what == QUIET and not op_diff for what, _, op_diff in table) else None
    for table in CHANGES
)
#: ``_BELOW_LENGTH[n]``: the bits below the highest bit of an integer of n bits.
_BELOW_LENGTH: Final = (0, *BELOW)


def children(me: int, op: int, blockers: int = 0) -> list[Child]:
    """Every legal move of ``me`` marbles alone against ``op`` (what may be pushed);
    ``blockers`` are marbles that neither move nor are pushed (a partner's)."""
    out: list[Child] = []
    append = out.append
    below = _BELOW_LENGTH
    for bits, kind in lane_masks(me, op, blockers):
        # Every set bit is the end of a legal move (see rules.movegen), read from the
        # highest down.
        quiet = _QUIET_BY_LENGTH[kind]
        if quiet is not None:
            while bits:
                n = bits.bit_length()
                diff = quiet[n]
                append((QUIET, diff, me ^ diff, op))
                bits &= below[n]
        else:
            table = _BY_LENGTH[kind]
            while bits:
                n = bits.bit_length()
                what, diff, op_diff = table[n]
                append((what, diff, me ^ diff, op ^ op_diff))
                bits &= below[n]
    return out


def pushes_in_order(me: int, op: int, lanes: Lanes, skip: int) -> list[Child]:
    """The ejections, then the other pushes, of ``me`` (the lanes of
    ``lane_masks(me, op)``), each group in the order of :func:`children`, without the
    move whose diff is ``skip`` (searched already): the two-player search's first
    moves after the table's."""
    ejects: list[Child] = []
    pushes: list[Child] = []
    below = _BELOW_LENGTH
    for bits, kind in lanes:
        if _QUIET_BY_LENGTH[kind] is not None:
            continue
        table = _BY_LENGTH[kind]
        while bits:
            n = bits.bit_length()
            what, diff, op_diff = table[n]
            if diff != skip:
                if what == EJECT:
                    ejects.append((EJECT, diff, me ^ diff, op ^ op_diff))
                else:
                    pushes.append((what, diff, me ^ diff, op ^ op_diff))
            bits &= below[n]
    if not ejects:
        return pushes
    ejects += pushes
    return ejects


#: Where each quiet move's diff is named in the lanes: diff -> the (kind, bit length)
#: pairs of the quiet tables that hold it (a step and its way back share a diff; at
#: most one of them is legal in a position).
_QUIET_PLACES: Final[dict[int, tuple[tuple[int, int], ...]]] = {}
for _kind, _steps in enumerate(_QUIET_BY_LENGTH):
    if _steps is not None:
        for _n, _diff in enumerate(_steps):
            if _diff:
                _QUIET_PLACES[_diff] = (*_QUIET_PLACES.get(_diff, ()), (_kind, _n))


def killers_in_order(lanes: Lanes, skip: int, killer1: int, killer2: int) -> list[int]:
    """The killers (diffs of quiet moves) that are legal quiet moves in the lanes, but
    ``skip``, in the order of :func:`children`: read off their lane bits, so the other
    quiet moves need not be listed when a killer cuts."""
    found: list[tuple[int, int, int]] = []
    for killer in (killer1, killer2):
        places = _QUIET_PLACES.get(killer)
        if places is None or killer == skip:
            continue
        for kind, n in places:
            for bits, lane_kind in lanes:
                if lane_kind == kind:
                    if bits >> (n - 1) & 1:
                        # children lists kind by kind, each from the highest bit down.
                        found.append((kind, -n, killer))
                    break
    if len(found) > 1:
        found.sort()
    return [killer for _, _, killer in found]


def quiet_in_order(
    lanes: Lanes, leave_out: tuple[int, ...], history_of: Callable[[int], int]
) -> list[int]:
    """The diffs of the quiet moves of the lanes, but those of ``leave_out`` (the
    table's move, the killers: searched before), by ``history_of`` (a C-level lookup
    that answers 0 for a diff it does not know), highest first; ties keep the order of
    :func:`children` (the sort is stable).  The search makes a child of a diff only
    when it comes to it."""
    diffs: list[int] = []
    add = diffs.append
    below = _BELOW_LENGTH
    for bits, kind in lanes:
        steps = _QUIET_BY_LENGTH[kind]
        if steps is None:
            continue
        while bits:
            n = bits.bit_length()
            add(steps[n])
            bits &= below[n]
    for diff in leave_out:
        if diff and diff in diffs:
            diffs.remove(diff)
    diffs.sort(key=history_of, reverse=True)
    return diffs


def tactical_children(me: int, op: int, edge: int) -> list[Child]:
    """The pushes that eject a marble, and those that push one onto ``edge`` cells
    (a threat for the next move): what quiescence searches."""
    o2 = me * _S2
    o3 = me * _S3
    e1 = op * _S1
    hits = o3 & o2 & e1
    if not hits:
        return []
    # Where the first pushed marble may go: off the board, or onto a free edge cell.
    landing = OFF_BOARD_LANES | (edge & BOARD_MASK & ~(me | op)) * _S0
    one = hits & landing
    o4 = me * _S4
    found = ((one, 3), (one & o4, 4), (me * _S5 & o4 & o3 & op * _S2 & e1 & landing, 5))
    out: list[Child] = []
    append = out.append
    below = _BELOW_LENGTH
    for bits, kind in found:
        table = _BY_LENGTH[kind]
        while bits:
            n = bits.bit_length()
            what, diff, op_diff = table[n]
            append((what, diff, me ^ diff, op ^ op_diff))
            bits &= below[n]
    return out


#: A push in team play whose line takes a partner's marbles along:
#: (line cells rear to front, direction offset, pushed marbles, ejects).
PartnerPush = tuple[tuple[int, ...], int, int, bool]


def partner_pushes(own: int, friends: int, enemy: int) -> list[PartnerPush]:
    """The pushes whose line has ``own`` marble at the rear and a partner's marble in
    it (team play: a partner's marbles move with one's own only in a push).  Lines of
    two push one marble, lines of three one or two; a pushed marble that leaves the
    board is ejected.  :func:`children` gives every other move."""
    mine = own | friends
    free = GRID_MASK & ~(mine | enemy)
    out: list[PartnerPush] = []
    for o in OFFSETS:
        if o > 0:
            second = (own << o) & mine
            third = (second << o) & mine
        else:
            second = (own >> -o) & mine
            third = (second >> -o) & mine
        # Fronts of lines of two with a partner in front, and of three with one inside.
        for fronts, length in ((second & friends, 2), (third, 3)):
            while fronts:
                low = fronts & -fronts
                fronts ^= low
                front = low.bit_length() - 1
                line = tuple(front - k * o for k in range(length - 1, -1, -1))
                if length == 3 and not any(friends >> c & 1 for c in line):
                    continue
                target = front + o
                if not enemy >> target & 1:
                    continue
                after = target + o
                run = 1
                if enemy >> after & 1:
                    run, after = 2, after + o
                if run >= length or not free >> after & 1:
                    continue
                out.append((line, o, run, not BOARD_MASK >> after & 1))
    return out
