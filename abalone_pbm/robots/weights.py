"""Weights of the two-player evaluation (:mod:`abalone_pbm.robots.features`).

Hand-set starting values (the old evaluation's, in thousandths of a marble);
``tools/fit_weights.py`` rewrites this file with weights fitted to self-play results.
"""

MATERIAL = 1000
PROGRESS = 60
CENTRE = 24
COHESION = 8
LINES = 10
EDGE = 20
THREAT_NOW = 600
THREATS = 90
THREATENED = -300
EXPOSED = 30
LEAD_THREATS = 40
