"""Weights of the two-player evaluation (:mod:`abalone_pbm.robots.features`).

Fitted by ``tools/fit_weights.py`` to 10481 self-play positions (selfplay-positions.csv); one marble pushed off is 1000.
"""

MATERIAL = 1000
PROGRESS = 48
CENTRE = 48
COHESION = 132
LINES = -22
EDGE = -15
THREAT_NOW = 200
THREATS = 414
THREATENED = 158
EXPOSED = -22
LEAD_THREATS = 13
