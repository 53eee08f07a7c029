"""The recurring championship: divisions of about ten by rating, everyone in a division
plays everyone (all games at once), then promotion and relegation into the next edition.

* The first edition ranks the entrants by rating and cuts the list into divisions of
  about :data:`DIVISION_SIZE` (as many divisions as the size fits best, the lower ones
  one larger when the count does not divide, so that a field that grows never keeps a
  relegated player up: the newcomers at the bottom make the lower divisions larger).
* Each next edition keeps the order of the last one's final standings: the top
  :data:`PROMOTED` of every division but the first move one division up, the bottom
  :data:`RELEGATED` of every division but the last one down; within a division those who
  came down rank first, then those who stayed, then those who came up, each in the order
  they finished.  Who left is taken out, newcomers join at the bottom by rating, and
  the list is cut into divisions again (so the number of divisions follows the entries).
"""

from __future__ import annotations

from collections.abc import Sequence

#: Players in a division, about.
DIVISION_SIZE = 10
#: Places promoted from and relegated out of each division.
PROMOTED = 2
RELEGATED = 2


def divisions(ranked: Sequence[str], size: int = DIVISION_SIZE) -> list[list[str]]:
    """``ranked`` (best first) cut into divisions of about ``size`` players."""
    if size < 2:
        raise ValueError("a division has at least two players")
    if not ranked:
        return []
    count = max(1, round(len(ranked) / size))
    # At least two players a division: fewer divisions when the entry is small.
    count = min(count, max(1, len(ranked) // 2))
    base, extra = divmod(len(ranked), count)
    out, start = [], 0
    for index in range(count):
        length = base + (1 if index >= count - extra else 0)
        out.append(list(ranked[start:start + length]))
        start += length
    return out


def moves_of(standings: Sequence[Sequence[str]]) -> dict[str, int]:
    """For each player of the last edition, the division they are due next (0 is the
    first): up, down or the same, from their division's final standings."""
    last = len(standings) - 1
    target: dict[str, int] = {}
    for index, table in enumerate(standings):
        up = PROMOTED if index > 0 else 0
        down = RELEGATED if index < last else 0
        # A small division never promotes and relegates the same player.
        down = min(down, max(0, len(table) - up))
        for place, userid in enumerate(table):
            if place < up:
                target[userid] = index - 1
            elif place >= len(table) - down:
                target[userid] = index + 1
            else:
                target[userid] = index
    return target


def next_edition(standings: Sequence[Sequence[str]], leaving: set[str],
                 newcomers: Sequence[str], size: int = DIVISION_SIZE) -> list[list[str]]:
    """The divisions of the next edition.

    ``standings``: each division of the last edition, its players in their final order;
    ``leaving``: who does not play on; ``newcomers``: new entrants, best rating first.
    """
    target = moves_of(standings)
    keyed = []
    for origin, table in enumerate(standings):
        for place, userid in enumerate(table):
            if userid in leaving:
                continue
            due = target[userid]
            # Came down (origin above) first, then stayed, then came up.
            keyed.append(((due, origin - due if origin < due else (1 if origin == due else 2),
                           place), userid))
    order = [userid for _, userid in sorted(keyed)]
    order += [u for u in newcomers if u not in set(order) and u not in leaving]
    return divisions(order, size)
