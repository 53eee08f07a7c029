"""Weights of the two-player evaluation (:mod:`abalone_pbm.robots.features`).

Fitted by ``tools/fit_weights.py`` (Texel local search, README "Robot strength") to
28004 self-play positions whose quiescence search ends where it starts, from 240 games
of boulder at 0.1 s a move (standard and Belgian Daisy) and 150 at depth 3, all played
with the earlier hand-set weights (``benchmarks/weights/hand-set-2026.json``): starting
from those, one weight at a time moved by 16 while the error of ``sigmoid(v / K)``
against the results fell, ``v`` the quiescence value, stopped by the held-out games
(K 913; loss 0.1096 -> 0.1070 on the held-out fifth).  In matches at 0.3 s they score
51.0 % against the hand-set weights over 48 games (as strong, not shown stronger) and
76.6 % against boulder-1 over 32.  One marble pushed off is 1000.
"""

MATERIAL = 1000
PROGRESS = 32
CENTRE = 96
COHESION = 56
LINES = 16
EDGE = 4
THREAT_NOW = 184
THREATS = 414
THREATENED = 142
EXPOSED = 46
LEAD_THREATS = -3
