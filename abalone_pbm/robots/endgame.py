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

Who holds the centre, measured again (seed 2, the same command, the search of
commit bf0d08a, 8 games a run, mean load 1.8 to 3.4): with these terms 4 of 8 won by six
(5.25 marbles pushed off a game; from ply 30, at our moves, 0.9 of our marbles stood
on e5 and its six neighbours against 5.6 of Cotix's, and in the four games to the
limit 0.0 to 1.7 against 5.0 to 6.5; ``finish_probe.py --analyse`` prints it as
"core").  Cotix takes those cells in the first 30 plies, while we take its rim
marbles.  Tried and dropped, each with the same seed: a core term, a weight per own
marble on those seven cells less the other side's, at every score: 150 gave 4 of 8
(5.00 pushed off, games 21 plies longer, core 1.2 against 5.4), 400 gave 4 of 8
(4.62; core 2.3 against 4.4): in three standard games we then held the core (5.3 to
6.3 of ours against 0.5 to 1.6) and won two games by ply 86, but a third held it and
ended 2-1 at the limit (the centre bought with rim marbles not taken), and on the
Belgian Daisy Cotix still held it (5.4 to 6.0) in all four; an exchange term,
``40 * mine * theirs * (mine - theirs)`` (a marble the leader loses costs it less the
further ahead it is), 4 of 8 and a 0-0 draw (4.38): it is nothing until both sides
have lost a marble, which was so at 4 of our 506 moves.  The same seed does not
replay the same games (both searches stop on the clock): the exchange run changed
almost nothing at the root and its games still differed from the baseline's, so one
run of eight tells little below a change of two or three wins by six.  Holding the
core does not decide a game alone: two of the exchange run's wins had 0.0 and 0.4 of
our marbles there.

Weights of the centre, and time, measured once more at 0.5 s a move (8 games a run,
seeds 1 and 2, two runs beside each other on two cores): these terms as they are,
9 of 16 won by six.  The centre made dearer for both sides beyond the middle ring
(150 a marble beyond it and 150 more beyond the next, one marble pushed off 1300 so
that an ejection from the edge stays worth what it was): 10 of 16, and our marbles on
e5 and its ring from ply 30 did not change (1.1 to 1.6 against Cotix's 4.9 to 5.5).
The same without the contact pushes: 2 of 8.  Per marble pushed off, 40 for each of
the other side's marbles beyond the middle ring (more beyond the next and on the
edge): 8 of 15.  The centre twice as dear and 300 and 300 beyond the rings: 0 of 8
(we held 2.3 of those cells against 4.4, but Cotix pushed off one of ours in five
games and no game was finished).  None was kept.  With four times the time a move
for ours (2 s against Cotix's 0.5 s, ``external_match.py --ours-budget 2 --budget
0.5``, the same seeds): 11 of 16, 7 of the 8 games where ours moved first after the
opening and 4 of the 8 where Cotix did.  Over 164 games of traces, the share won by
six is 63 % where we held three or more of the seven cells at ply 30 and 31 % where
we held fewer, 49 % when ours moved first and 36 % when Cotix did: more search helps,
and the centre helps, but neither alone reaches 80 %.  The arithmetic of a push says
why these weights cannot plan it: a line that pushes moves with the marbles it pushes,
so on a push towards e5 the lead centre term (ours nearer) and the pressure term
(theirs farther) pull against each other (five marbles off, three pushing two a step
inwards: +300 by the first, -300 by the second), and what tells a push that breaks a
held centre from one that does not is only the contacts and threats it leaves.

Six mechanisms more, each at 0.5 s a move over seeds 1 and 2 (16 games, two runs
beside each other, load 1.8 to 2.7), against these terms as they are, run again in the
same session: 6 of 16 won by six (9 of 16 a session earlier: 15 of 32 together).  A
term for our marbles on e5 and its ring less the other side's, 300 a marble for the
first 30 plies (the centre race): 8 of 16, one game lost 1-4 and two drawn, and the
centre did not change hands (from ply 30, 1.7 of those cells ours against Cotix's 5.0).
No reverse futility nor null move: 6 of 16, depth 4.6 instead of 5.6.  More
reductions (late quiet moves from the fourth, two plies from the ninth at depth 4, the
null move a ply shallower from depth 5): 5 of 16; 6.5 plies in
``benchmarks/search_speed.py --budget 0.5`` instead of 5.75, no more in the games.  A
squeeze, 25 per marble pushed off for each free cell next to the other side's marbles:
5 of 16.  The leader's pushes at the frontier searched a ply deeper instead of in
quiescence: 6 of 16, one game lost 0-4.  Each of the other side's marbles beyond the
middle ring that a side could push, 150 more (the outliers taken before they join the
group, see below): 9 of 16, and 6 of 16 on seeds 3 and 4 where the control won 4 of 16
(15 of 32 against 10 of 32, p = 0.31; five off before the group gathered, or never
gathered, in 12 of 32 games against 7 of 32: the closest lead of these runs).  None differs from the control by more than
chance (``benchmarks/match_report.py 5/16 9/16``: p = 0.29), and none was kept.  With
eight times the time (``--ours-budget 1 --budget 0.125``): 10 of 16, and three games of
seed 1 still ended 5-0 at the limit with boulder searching 5.8 plies against 4.6, the
other side's last nine marbles kept together on and around e5: once that group has
formed, more search alone does not finish it.  What the runs leave is the phase before
it forms: over 257 traced games (``finish_probe.py --gathering``), the share won by six
by the marbles pushed off when all the other side's marbles first stood within two
steps of e5 was 3 of 48 with none to two, 7 of 41 with three, 34 of 76 with four and
41 of 53 with five (21 of 33 where they never gathered).

That phase, and the one after it, measured once more: the outlier pushes over 64 games,
27 won by six against 28 for these terms as they are (chance, not kept).  From 40 of
those positions where the group had just formed with four marbles off
(``finish_probe.py --from-gathering ... --off 4 --sample 40``), these terms converted 19;
the pressure and push terms doubled 20 (12 both, 7 and 8 one alone); without
:data:`LEAD_CENTRE` 19; with it measured from a side's own group instead of e5 17.  Once
the group has formed, no weight of these terms decides the game.

Nor does a term that pushes the group as a whole.  The pressure term sums each marble's
distance from e5, which a compact group shifted a step off the centre raises by only
three (its near side comes in as its far side goes out); a group's drift, the hex
length of its marbles' summed offsets from e5, rises by its size.  Per marble pushed off,
10 a step of the other side's drift: 20 of the same 40 starts; 30: 18 (11 and 9 of them
converted by both runs).  Over the six settings run from these 40 starts, 5 were never
converted and 3 always, the rest by one to five runs of six: from a formed group the
result depends on the start less than on how the two clocks happen to cut the searches.
Two whole-game screens besides, at 0.5 s a move on seeds 5 and 6 (16 games each, two
runs beside each other), against 8 of 16 for these terms on the same seeds: Cotix's own
piece values (13, 12, 9, 6, 5 by the distance from the point halfway between a side's
centroid and e5) added for both sides at 40 a point, 7 of 16; the first two marbles a
side loses costing it 600 less each once it has pushed off three (spare marbles, so
that the leader takes the contact a break needs), 7 of 16.  Neither was kept.

Earlier still than the group, by ply 30, most games are decided, and by the marbles
taken, not by the centre.  ``finish_probe.py --by-value ... --terms`` over 435 traced
games (the value of our last move by ply 30 less 1000 a marble of lead): below -800, 19
of 139 won by six; -800 to 0, 37 of 102; 0 to 800, 47 of 84; 800 and more, 81 of 110.
The centre term fell from -138 at our first move to -1394 at ply 30, Cotix taking the
centre in every game, and stood the same in the games won by six and the others (-1374
and -1409); what differs is 2.0 marbles off by ply 30 against 1.3, and the terms that
grow with them (finishing, pressure and pushes: 1841 against 1064).  The random opening
counts too: at our first move, no marble off, 62 of 222 games valued below 0 were won
by six and 122 of 213 from 0 up.  Four times the time for our first 30 plies (2 s
against 0.5 s, seeds 5 and 6, stopped after 13 games) won 3 by six and took fewer
marbles by ply 30 (1.3 against 1.7 in the other runs of those seeds) while losing less
of the centre; four and eight times the time for the whole game took 1.9 and won 11 and
10 of 16.  Caring less for the centre so as to take more (the fitted centre weight halved, seeds 5 and 6) took
no more (1.7), lost more of the centre and won 5 of 16 by six.  From the first position
of 24 traced games where we led by five, the sixth was pushed off in 19, and in the same
19 with the threatening moves tried four plies deep in quiescence instead of two
(:data:`~abalone_pbm.robots.duel.CHECK_PLIES`).  In the games that
ended 0-0 to 2-0 at the limit our search valued its own position at -1200 to -2400 from
ply 20 on, its marbles held on their home rows behind a wall of all fourteen of Cotix's.
Weights fitted to those games' results instead of self-play (``finish_probe.py
--positions``, 53,252 positions of 845 games, won by six 1 and the limit 0.5) were far
more careful of our own marbles and won 1 of 16 by six where the shipped ones won 8;
half as careful (threatened and exposed marbles 48 and 55 instead of 97 and 110), 6 of 16.
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
