"""Tournaments, the pure core: formats (round robin, Swiss, knockout, championship),
their pairings and the standings with tie-breaks.  No I/O: the service layer
(``service.tournaments``) stores tournaments and starts their games."""

from .results import FORMATS, Format, Kind, Pairing, Result
from .standings import Primary, Standing, standings, table_lines

__all__ = ["FORMATS", "Format", "Kind", "Pairing", "Primary", "Result", "Standing",
           "standings", "table_lines"]
