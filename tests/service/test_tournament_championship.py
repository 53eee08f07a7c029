"""A championship played by mail (worker, mailroom, outbox) with the clock moved
forward: two divisions of four by rating, a withdrawal (a no-show in every game, and
out of the next edition too) and a timeout; the final standings worked out by hand,
then the second edition starting by itself a week after the first ended, with the
top two of division 2 promoted, the bottom two of division 1 relegated, the leaver
gone, and the newcomers at the bottom."""

from __future__ import annotations

from abalone_pbm.db.models import TournamentEntry
from abalone_pbm.service import tournaments

from . import tournament_play as tp
from .harness import Harness, Sent

FIRST = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]
NEWCOMERS = ["c9", "ca"]


def _tables(mail: Sent) -> list[list[list[str]]]:
    """Each division's table of a standings mail, a list of words a player."""
    out = []
    for chunk in mail.body.split(" Pts ")[1:]:
        lines = chunk.splitlines()[1:]
        out.append([line.split() for line in lines[:lines.index("")]])
    return out


def _divisions(harness: Harness, name: str) -> list[list[str]]:
    """Each division's players, sorted by userid."""
    with harness.database.read() as session:
        t = tournaments.require(session, name)
        entries = [e for e in tournaments.entries_of(session, t) if e.status == "entered"]
        assert all(isinstance(e, TournamentEntry) for e in entries)
        found: dict[int, list[str]] = {}
        for e in sorted(entries, key=lambda e: e.user.userid):
            found.setdefault(e.division, []).append(e.user.userid)
        return [found[d] for d in sorted(found)]


def test_championship_with_promotion_into_a_second_edition(harness: Harness) -> None:
    for userid in FIRST + NEWCOMERS:
        harness.signup(userid)
    tp.set_ratings(harness, {u: 1900.0 - 25 * i for i, u in enumerate(FIRST + NEWCOMERS)})
    tp.create(harness, tournaments.Plan(name="champ", format="championship",
                                        games_per_pairing=1, division_size=4))
    tp.join_all(harness, "champ", FIRST)
    tp.start(harness, "champ")
    assert _divisions(harness, "champ") == [["c1", "c2", "c3", "c4"], ["c5", "c6", "c7", "c8"]]
    # The next edition is open as soon as this one starts, everyone re-entered.
    with harness.database.read() as session:
        following = tournaments.require(session, "champ-2")
        assert following.status == "signup" and following.signup_until is None
        assert sorted(e.user.userid for e in tournaments.entries_of(session, following)) == FIRST
    tp.join_all(harness, "champ-2", NEWCOMERS)

    sent = harness.mail("c4@example.org", "abalone tournament withdraw champ c4 c4-pw")
    assert any(s.subject == "Abalone tournament champ withdraw c4" for s in sent)
    timed_out = None
    for _, board, first, second, kind, _ in tp.open_games(harness, "champ"):
        assert board is not None and second is not None and "c4" not in (first, second)
        if (first, second) == ("c5", "c6"):
            timed_out = board  # c5 never moves
            continue
        tp.play(harness, board, first, second, loser=max(first, second))
    assert timed_out is not None
    harness.clock.advance(days=7, hours=1)
    sent = harness.tick()
    assert tp.status(harness, "champ")[0] == "finished"
    final = [s for s in sent if s.subject == "Abalone tournament champ standings final"]
    assert sorted(s.to.split("@")[0] for s in final) == [u for u in FIRST if u != "c4"]

    # Division 1: c4 lost every game unplayed.  c1 beat c2, c3, c4: 3, SB 2+1+0 = 3;
    # c2 beat c3, c4: 2, SB 1+0 = 1; c3 beat c4: 1, SB 0.
    # Division 2: c5 forfeited to c6.  c6 beat c5, c7, c8: 3, SB 2+1+0 = 3; c5 beat
    # c7, c8: 2, SB 1+0 = 1; c7 beat c8: 1, SB 0; c8 0.
    assert _tables(final[0]) == [
        [["1", "c1", "3", "3", "0", "+0", "1900", "3", "3", "0", "0"],
         ["2", "c2", "2", "1", "0", "+0", "1875", "3", "2", "0", "1"],
         ["3", "c3", "1", "0", "0", "+0", "1850", "3", "1", "0", "2"],
         ["4", "c4", "0", "0", "0", "+0", "1825", "3", "0", "0", "3", "(withdrawn)"]],
        [["1", "c6", "3", "3", "0", "+0", "1775", "3", "3", "0", "0"],
         ["2", "c5", "2", "1", "0", "+0", "1800", "3", "2", "0", "1"],
         ["3", "c7", "1", "0", "0", "+0", "1750", "3", "1", "0", "2"],
         ["4", "c8", "0", "0", "0", "+0", "1725", "3", "0", "0", "3"]],
    ]
    assert "Division 2:" in final[0].body

    # The second edition starts a week after the first ended.
    harness.clock.advance(days=6)
    harness.tick()
    assert tp.status(harness, "champ-2")[0] == "signup"
    harness.clock.advance(days=1)
    sent = harness.tick()
    assert tp.status(harness, "champ-2")[0] == "running"
    started = sorted(s.to.split("@")[0] for s in sent
                     if s.subject == "Abalone tournament champ-2 has started")
    assert started == sorted(u for u in FIRST + NEWCOMERS if u != "c4")
    # Division 1: c1 c2 stayed, c6 c5 came up; division 2: c3 came down (c4 left),
    # c7 c8 stayed, the newcomers c9 ca below them; the lower division takes the
    # odd player, so no one relegated stays up.
    assert _divisions(harness, "champ-2") == [["c1", "c2", "c5", "c6"],
                                               ["c3", "c7", "c8", "c9", "ca"]]
    # Five in division 2: a single round robin of five rounds, one resting each.
    games = tp.open_games(harness, "champ-2")
    assert len(games) == 6 + 10
    with harness.database.read() as session:
        third = tournaments.require(session, "champ-3")
        assert sorted(e.user.userid for e in tournaments.entries_of(session, third)) == \
            sorted(u for u in FIRST + NEWCOMERS if u != "c4")
