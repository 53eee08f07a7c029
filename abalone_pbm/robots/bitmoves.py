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

from typing import Final

from abalone_pbm.rules.geometry import AXES, BOARD_MASK, GRID_MASK, OFFSETS

QUIET: Final = 0
PUSH: Final = 1
EJECT: Final = 2

Child = tuple[int, int, int, int]

#: For each axis (its offset), the offsets of the four side-step directions.
_SIDE_STEPS: Final = tuple(
    (OFFSETS[axis], tuple(OFFSETS[d] for d in range(6) if d not in (axis, axis + 3)))
    for axis in AXES
)


def children(me: int, op: int, blockers: int = 0) -> list[Child]:
    """Every legal move of ``me`` marbles alone against ``op`` (what may be pushed);
    ``blockers`` are marbles that neither move nor are pushed (a partner's)."""
    occupied = me | op | blockers
    empty = BOARD_MASK & ~occupied
    free = GRID_MASK & ~occupied
    out: list[Child] = []
    append = out.append
    for o in OFFSETS:
        if o > 0:
            g2 = me & (me << o)
            g3 = g2 & (g2 << o)
            f1, f2, f3 = me << o, g2 << o, g3 << o
        else:
            p = -o
            g2 = me & (me >> p)
            g3 = g2 & (g2 >> p)
            f1, f2, f3 = me >> p, g2 >> p, g3 >> p
        # Into empty cells: the rear marble jumps to the front target.
        for fronts, back in ((f1 & empty, o), (f2 & empty, 2 * o), (f3 & empty, 3 * o)):
            while fronts:
                low = fronts & -fronts
                fronts ^= low
                diff = low | (1 << (low.bit_length() - 1 - back))
                append((QUIET, diff, me ^ diff, op))
        # Pushes of one marble by two or three.
        for pushed, back in ((f2 & op, 2 * o), (f3 & op, 3 * o)):
            if not pushed:
                continue
            beyond = (pushed << o if o > 0 else pushed >> -o) & free
            while beyond:
                low = beyond & -beyond
                beyond ^= low
                b = low.bit_length() - 1
                t = b - o
                diff = (1 << t) | (1 << (t - back))
                if BOARD_MASK & low:
                    append((PUSH, diff, me ^ diff, op ^ (1 << t) ^ low))
                else:
                    append((EJECT, diff, me ^ diff, op ^ (1 << t)))
        # Three push two.
        first = f3 & op
        if first:
            second = (first << o if o > 0 else first >> -o) & op
            if second:
                beyond = (second << o if o > 0 else second >> -o) & free
                while beyond:
                    low = beyond & -beyond
                    beyond ^= low
                    b = low.bit_length() - 1
                    t = b - 2 * o
                    diff = (1 << t) | (1 << (t - 3 * o))
                    if BOARD_MASK & low:
                        append((PUSH, diff, me ^ diff, op ^ (1 << t) ^ low))
                    else:
                        append((EJECT, diff, me ^ diff, op ^ (1 << t)))
    # Side-steps of lines of two and three.
    for o, steps in _SIDE_STEPS:
        t2 = me & (me >> o)
        if not t2:
            continue
        t3 = t2 & (t2 >> o)
        e2 = empty & (empty >> o)
        e3 = e2 & (e2 >> o)
        for s in steps:
            for tails, room, length in ((t2, e2, 2), (t3, e3, 3)):
                if not tails:
                    continue
                ok = (tails << s if s > 0 else tails >> -s) & room
                while ok:
                    low = ok & -ok
                    ok ^= low
                    c = low.bit_length() - 1 - s
                    cells = (1 << c) | (1 << (c + o))
                    if length == 3:
                        cells |= 1 << (c + 2 * o)
                    moved = cells << s if s > 0 else cells >> -s
                    diff = cells | moved
                    append((QUIET, diff, me ^ diff, op))
    return out


def tactical_children(me: int, op: int, edge: int) -> list[Child]:
    """The pushes that eject a marble, and those that push one onto ``edge`` cells
    (a threat for the next move): what quiescence searches."""
    occupied = me | op
    free = GRID_MASK & ~occupied
    out: list[Child] = []
    append = out.append
    for o in OFFSETS:
        if o > 0:
            g2 = me & (me << o)
            g3 = g2 & (g2 << o)
            f2, f3 = g2 << o, g3 << o
        else:
            p = -o
            g2 = me & (me >> p)
            g3 = g2 & (g2 >> p)
            f2, f3 = g2 >> p, g3 >> p
        for pushed, back in ((f2 & op, 2 * o), (f3 & op, 3 * o)):
            if not pushed:
                continue
            beyond = (pushed << o if o > 0 else pushed >> -o) & free
            beyond &= ~BOARD_MASK | edge
            while beyond:
                low = beyond & -beyond
                beyond ^= low
                t = low.bit_length() - 1 - o
                diff = (1 << t) | (1 << (t - back))
                if BOARD_MASK & low:
                    append((PUSH, diff, me ^ diff, op ^ (1 << t) ^ low))
                else:
                    append((EJECT, diff, me ^ diff, op ^ (1 << t)))
        first = f3 & op
        if first:
            second = (first << o if o > 0 else first >> -o) & op
            if second:
                beyond = (second << o if o > 0 else second >> -o) & free
                beyond &= ~BOARD_MASK | edge
                while beyond:
                    low = beyond & -beyond
                    beyond ^= low
                    t = low.bit_length() - 1 - 2 * o
                    diff = (1 << t) | (1 << (t - 3 * o))
                    if BOARD_MASK & low:
                        append((PUSH, diff, me ^ diff, op ^ (1 << t) ^ low))
                    else:
                        append((EJECT, diff, me ^ diff, op ^ (1 << t)))
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
