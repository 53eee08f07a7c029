"""Weights of the two-player evaluation (:mod:`abalone_pbm.robots.features`).

Fitted by ``tools/fit_weights.py`` to 10481 self-play positions (selfplay-positions.csv),
then the positional terms set by hand from matches: the fit (kept in
``benchmarks/weights/fitted-2026.json``) valued cohesion far above the centre and
had own marbles on the edge, and exposed ones, count in their favour; with it the
deeper search only drew with boulder-1.  Here the centre outweighs cohesion, and
edge and exposed marbles count against their side.  One marble pushed off is 1000.
"""

MATERIAL = 1000
PROGRESS = 48
CENTRE = 80
COHESION = 40
LINES = 0
EDGE = 20
THREAT_NOW = 200
THREATS = 414
THREATENED = 158
EXPOSED = 30
LEAD_THREATS = 13
