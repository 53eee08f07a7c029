"""Hand-set terms that let the two-player search finish a game it leads.

:func:`evaluation` is :func:`features.evaluation` (the fitted terms with the
finishing, pressure and push terms) plus :func:`endgame_terms`; the two-player
search (:mod:`duel`) evaluates with it.  What the terms answer, measured in
``external_match.py --trace`` games against Cotix/Abalone at 1 s a move, where boulder
led on marbles and still ran to the move limit:

* The other side kept the centre: at our moves its marbles stood 1.0 to 1.8 steps
  nearer e5 on average than ours, from ply 40 to the end, in every game (a marble
  is pushed off from the inside out, so a defender that holds the centre cannot be
  finished).  The fitted centre term is the same for both sides whatever the score,
  and the pressure term only pays for the *other* side's marbles standing out.
  :data:`LEAD_CENTRE`: each step an own marble stands from e5 (counted from the
  middle ring, :func:`centre_excess`) costs a side this much per marble it has
  pushed off, so the leader takes the centre as it goes ahead.
* The other side pushed our marbles about: 40 to 60 % of its moves were pushes,
  with 4 to 7 of our marbles pushable at our move against 0.2 to 2 of theirs.  The
  push term of :mod:`features` counts a side's pushes only once it has pushed off a
  marble, so while the defender had pushed off none, marbles of ours it could push
  cost nothing.  :data:`CONTACT_PUSHES`: each marble a side could push now (two on
  one, three on one or on two; :func:`features.pushable`) is worth this much to it
  at every score, so the leader comes in with lines the defender cannot push back.

The typical stalled game: the defender gives up two to four marbles on the rim early,
then holds a compact group of 9 to 11 in the centre and the leader's scattered ring
of marbles around it cannot push it (``finish_probe.py --analyse`` prints these
figures per game).  Searching deeper alone did not help: two such leads played on with
four times the time a move for ours (6.5 plies instead of 5) also ran to the limit.
Against Cotix at 1 s a move (``external_match.py --engine cotix --games 8 --budget 1.0
--movelimit 150 --opening-moves 4``), 8 games a run, wins by six, the machine shared
(load average 2.6 to 5.4 on 2 cores): seed 1 without the terms 2 of 8 (3.9 marbles
pushed off a game; the other side pushed in 55 % of its moves, 5.7 of our marbles
pushable at our move), contact pushes 40 alone 3 of 8 (4.6; 46 %, 4.4), 100 alone
3 of 8 (5.1; 35 %, 2.7), 100 with the lead centre term 20 (kept) 6 of 8 (5.1; 39 %,
3.3; the two standard games where our marbles stood as near e5 as theirs were won
by six); seed 2 without the terms 2 of 8 (4.4), with them 2 of 8 (3.9).  Sixteen
games each: 8 against 4, short of the 80 % wanted, and within the noise of runs this
small on a loaded machine.  Lines of three aimed at the other side's marbles (a
further term weighted like the lead centre term) gave 1 of 5 and 2 of 4 and were
dropped.
"""

from __future__ import annotations

from typing import Final

from abalone_pbm.rules.geometry import CENTRE

from .features import R1, evaluation_with, pushable, register_cache, side_terms

#: Per marble of the other side a side could push now, at every score.
CONTACT_PUSHES: int = 100
#: Per marble a side has pushed off, for each step one of its own marbles stands from e5
#: beyond two (:func:`centre_excess`).
LEAD_CENTRE: int = 20
#: Per own marble on e5 or one of its six neighbours (:data:`CORE_CELLS`), at every score.
CORE: int = 0

#: Per unit of ``mine * theirs * (mine - theirs)`` (:func:`exchange_term`): a marble of
#: the leader's pushed off costs it less the more it leads.
EXCHANGE: int = 0

#: e5 and the six cells round it: the cells a defender's compact group holds.
CORE_CELLS: Final = R1 | (1 << CENTRE)

#: :func:`evaluation`'s answers by (me, op, mine, theirs): the search's only cache of
#: evaluations (the fitted terms and these in one pass, :func:`features.evaluation_with`),
#: emptied with the features' caches at every change of weights.
_CACHE: dict[tuple[int, int, int, int], tuple[int, int, int]] = {}
register_cache(_CACHE)
#: The cache is emptied when it grows past this many entries (bounded memory).
CACHE_LIMIT: Final = 1 << 17


def centre_excess(bits: int) -> int:
    """The steps from e5 of the marbles of ``bits`` beyond two each, summed (a marble
    on e5 counts -2, one on the edge +2).  :data:`LEAD_CENTRE` weighs it by the
    marbles a side has pushed off: measured from the middle ring rather than from e5,
    the weight's rise with each marble pushed off costs the side that pushed it
    little (nothing when its marbles stand two steps out on average).  It is the
    centre sum the features keep per side, less two a marble."""
    return side_terms(bits)[2]


def set_endgame(contact_pushes: int, lead_centre: int, core: int | None = None,
                exchange: int | None = None) -> None:
    """Other weights for the terms (matches between settings; ``core`` or ``exchange``
    None keeps :data:`CORE` or :data:`EXCHANGE`)."""
    global CONTACT_PUSHES, LEAD_CENTRE, CORE, EXCHANGE
    CONTACT_PUSHES = contact_pushes
    LEAD_CENTRE = lead_centre
    if core is not None:
        CORE = core
    if exchange is not None:
        EXCHANGE = exchange
    _CACHE.clear()


def exchange_term(mine: int, theirs: int) -> int:
    """:data:`EXCHANGE` times ``mine * theirs * (mine - theirs)``: nothing until both
    sides have pushed a marble off, then a marble the leader loses costs it less the
    further ahead it is (5-0 to 5-1: 20 units; 4-0 to 4-1: 12), so it may offer one to
    draw the defender's marbles out of their group; the same for the other side when it
    leads (the term changes sign with the sides)."""
    return EXCHANGE * mine * theirs * (mine - theirs)


def core_term(me: int, op: int) -> int:
    """:data:`CORE` for each marble of ``me`` on :data:`CORE_CELLS`, less the same for
    ``op``."""
    return CORE * ((me & CORE_CELLS).bit_count() - (op & CORE_CELLS).bit_count())


def endgame_terms(me: int, op: int, mine: int, theirs: int) -> int:
    """What :func:`evaluation` adds to the fitted evaluation, for the side to move."""
    pushes = pushable(me, op).bit_count() - pushable(op, me).bit_count()
    return CONTACT_PUSHES * pushes - LEAD_CENTRE * (
        mine * centre_excess(me) - theirs * centre_excess(op)
    ) + core_term(me, op) + exchange_term(mine, theirs)


def evaluation(me: int, op: int, mine: int, theirs: int) -> tuple[int, int, int]:
    """:func:`features.evaluation` with :func:`endgame_terms` added to its value: (value,
    marbles the side to move can push off now, marbles the other side could)."""
    key = (me, op, mine, theirs)
    answer = _CACHE.get(key)
    if answer is not None:
        return answer
    answer = evaluation_with(me, op, mine, theirs, CONTACT_PUSHES, LEAD_CENTRE)
    if CORE or EXCHANGE:
        answer = (answer[0] + core_term(me, op) + exchange_term(mine, theirs), answer[1],
                  answer[2])
    if len(_CACHE) >= CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = answer
    return answer
