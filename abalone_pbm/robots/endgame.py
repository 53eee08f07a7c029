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
  middle ring, :func:`centre_excess`) costs a side this much per marble of its lead
  (:func:`features.leads`), so the leader takes the centre as it goes ahead.
* The other side pushed our marbles about: 40 to 60 % of its moves were pushes,
  with 4 to 7 of our marbles pushable at our move against 0.2 to 2 of theirs.  The
  push term of :mod:`features` counts a side's pushes only while it leads
  (:func:`features.leads`), so to a defender not ahead, marbles of ours it could push
  cost nothing.  :data:`CONTACT_PUSHES`: each marble a side could push now (two on
  one, three on one or on two; :func:`features.pushable`) is worth this much to it
  at every score, so the leader comes in with lines the defender cannot push back.

The typical stalled game: the defender gives up two to four marbles on the rim early,
then holds a compact group of 9 to 11 in the centre and the leader's scattered ring
of marbles around it cannot push it (``finish_probe.py --analyse`` prints these
figures per game).  Weights can steer the leader in but cannot plan the break: a line
that pushes moves with the marbles it pushes, so on a push towards e5 the lead centre
term (ours nearer) and the pressure term (theirs farther) pull against each other, and
what tells a push that breaks a held centre from one that does not is only the
contacts and threats it leaves.  Every match behind these weights, and every setting
tried beside them and not kept, is in ``docs/robot-strength.md`` ("Finishing the
game").
"""

from __future__ import annotations

from typing import Final

from .features import evaluation_with, leads, pushable, register_cache, side_terms

#: Per marble of the other side a side could push now, at every score.
CONTACT_PUSHES: int = 100
#: Per marble of a side's lead (:func:`features.leads`), for each step one of its own
#: marbles stands from e5 beyond two (:func:`centre_excess`).
LEAD_CENTRE: int = 20

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


def set_endgame(contact_pushes: int, lead_centre: int) -> None:
    """Other weights for the terms (matches between settings)."""
    global CONTACT_PUSHES, LEAD_CENTRE
    CONTACT_PUSHES = contact_pushes
    LEAD_CENTRE = lead_centre
    _CACHE.clear()


def endgame_terms(me: int, op: int, mine: int, theirs: int) -> int:
    """What :func:`evaluation` adds to the fitted evaluation, for the side to move."""
    pushes = pushable(me, op).bit_count() - pushable(op, me).bit_count()
    ahead, behind = leads(mine, theirs)
    return CONTACT_PUSHES * pushes - LEAD_CENTRE * (
        ahead * centre_excess(me) - behind * centre_excess(op))


def evaluation(me: int, op: int, mine: int, theirs: int) -> tuple[int, int, int]:
    """:func:`features.evaluation` with :func:`endgame_terms` added to its value: (value,
    marbles the side to move can push off now, marbles the other side could)."""
    key = (me, op, mine, theirs)
    answer = _CACHE.get(key)
    if answer is not None:
        return answer
    answer = evaluation_with(me, op, mine, theirs, CONTACT_PUSHES, LEAD_CENTRE)
    if len(_CACHE) >= CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = answer
    return answer
