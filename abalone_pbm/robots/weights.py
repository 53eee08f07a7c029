"""Weights of the two-player evaluation (:mod:`abalone_pbm.robots.features`).

Fitted by ``tools/fit_weights.py --folds 5`` (Texel local search, README "Robot
strength") to 28004 self-play positions whose quiescence search ends where it starts,
from 240 games of boulder at 0.1 s a move (standard and Belgian Daisy) and 150 at depth
3, all played with the earlier hand-set weights (``benchmarks/weights/hand-set-2026.json``).
Starting from those, one weight at a time moved by a step of 16 (down to 2) while the
error of ``sigmoid(v / K)`` against the results fell, ``v`` the quiescence value, each
time with a fifth of the games held out to say when to stop (K 896; every fold lowered
its held-out loss, by 1.1 to 3.7 %); these are the mean of the five.  In matches at
0.3 s they score 67.7 % against the hand-set weights over 48 games and 78.1 %
against boulder-1 over 32.  One marble pushed off is 1000.
"""

MATERIAL = 1000
PROGRESS = 29
CENTRE = 96
COHESION = 37
LINES = 48
EDGE = -2
THREAT_NOW = 101
THREATS = 331
THREATENED = 97
EXPOSED = 110
LEAD_THREATS = 87
