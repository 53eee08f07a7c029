"""Does our robot convert a lead?  Play positions where it leads to the end against Cotix.

    python benchmarks/external_match.py --engine cotix --games 8 --budget 1 --trace t.jsonl
    python benchmarks/finish_probe.py --analyse t.jsonl
    python benchmarks/finish_probe.py --gathering t1.jsonl t2.jsonl ...
    python benchmarks/finish_probe.py --forced-finishes t1.jsonl t2.jsonl ...
    python benchmarks/finish_probe.py --by-value t1.jsonl t2.jsonl ... [--value-ply 30] [--terms]
    python benchmarks/finish_probe.py --positions t1.jsonl ... --out p.csv [--limit-result 0.5]
    python benchmarks/finish_probe.py --trace t1.jsonl [t2.jsonl ...] --lead 3 --budget 1
    python benchmarks/finish_probe.py --from-gathering t1.jsonl t2.jsonl --off 4 --budget 1
    python benchmarks/finish_probe.py --position "....1/...111/... 1 5,0" --ply 110

``--analyse`` reads a trace and says what the search saw while ours led: by marbles
pushed off, the share of quiet moves, pushes and ejections, of positions where it had
no push at all (the other side's group kept out of reach) and of moves back to a
position of the game; with a marble to go, in how many positions an exact full-width
solver finds a forced finish within two or three moves, how many of those the search's
value showed as a win, and how often the move chosen kept the forced finish; and how
many values were a win on the move limit (the horizon reaching it).

``--forced-finishes`` pools traces and asks, with a marble to go, whether a forced
finish was there to be seen at all: in the games won by six and in the others, the
positions of ours with a marble to push off at once or a finish forced by threats alone
within eight moves (each move of ours threatens to push one off, and only the replies
that parry it are searched) or with one quiet move within four
(:func:`forced_by_threats`, :data:`FORCING_SEARCHES`).  ``--analyse`` prints the same
for its trace.

``--gathering`` pools traces and asks when the other side's group formed: per game,
how many marbles ours had pushed off when all the other side's marbles first stood
within two steps of e5 (:data:`GATHERED`, the 19 cells of e5 and its two rings), and
the share of those games won by six.  Against Cotix a group formed that way is seldom
broken again: the games are decided by what was pushed off before it formed.
``--by-value`` pools traces and asks whether the games were decided earlier still:
per game, the value ours' search gave its position at its last move by ply
``--value-ply`` (30), less a marble's weight (:data:`~abalone_pbm.robots.weights.MATERIAL`)
for each marble of its lead, so that what is left is how well placed its marbles
stood, how its lines met the other side's and what it threatened, and the terms that
grow with the marbles pushed off; and the share of games won by six in each band of
that value (:data:`VALUE_BANDS`).  With ``--terms`` it also prints the evaluation term
by term (:func:`evaluation_terms`): the mean at ours' first traced move and at that
ply, and at that ply in the games won by six and in the others.

``--positions`` writes the traced positions of ours as rows for ``tools/fit_weights.py``,
each labelled with how its game ended for ours (won by six 1, at the move limit
``--limit-result``, lost 0): the evaluation fitted to what predicts finishing against the
engine rather than to self-play results.

``--from-gathering`` plays on from those positions (``--off``: only where ours had
pushed off that many), the same plies left before the move limit: how often a robot
breaks a group once it has formed, measured apart from the rest of the game.

The positions come from the trace ``external_match.py --trace`` writes (one JSON line
per move of ours): in each game, the first position where ours is to move and leads by
``--lead`` marbles or more, at least ``--room`` plies before the move limit.  From each,
ours plays on against the Cotix engine (the same time a move for both) until the game
ends.  Prints per position whether ours pushed off the target and in how many plies,
and for the moves ours made while ahead what its search saw: the share whose value
was a forced win, the share of pushes and ejections among them, the mean depth, and
how often a move returned to a position of the game.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
for path in (str(REPO), str(BENCHMARKS)):
    if path not in sys.path:
        sys.path.insert(0, path)

from abalone_pbm.robots import ENGINES, make_engine  # noqa: E402
from abalone_pbm.robots.base import occupied_mask, push_kind  # noqa: E402
from abalone_pbm.robots.bitmoves import EJECT, children  # noqa: E402
from abalone_pbm.robots.duel import LIMIT_WIN, WIN_THRESHOLD  # noqa: E402
from abalone_pbm.robots.weights import MATERIAL  # noqa: E402
from abalone_pbm.robots.endgame import endgame_terms  # noqa: E402
from abalone_pbm.robots.features import (  # noqa: E402
    R1, R2, WEIGHT_NAMES, centre_sum, current_weights, features, finish_term, pressure_term,
    pushable, threatens)
from abalone_pbm.rules import Board, PositionError, Rules  # noqa: E402
from abalone_pbm.rules.geometry import CENTRE  # noqa: E402
from match_report import share_of_games_text  # noqa: E402
from external_match import (  # noqa: E402
    COTIX_URL, DEFAULT_CACHE, CotixEngine, EngineError, add_weight_options,
    answered_move, apply_weight_options, build_cotix, resolve_source)


#: e5 and its six neighbours: where Cotix's group stood in the games that stalled.
CORE_CELLS: Final = R1 | (1 << CENTRE)
#: e5 and the cells one and two steps from it: where the other side's last marbles
#: gather into a group that is not broken again.
GATHERED: Final = CORE_CELLS | R2
T = TypeVar("T")
#: The bounds of ``--by-value``'s bands of a position's value less its lead on marbles.
VALUE_BANDS: Final = (-800, 0, 800)
#: Values this far from 0 are results (on the move limit, or forced), not judgements of
#: a position.
_RESULT_VALUES: Final = LIMIT_WIN - 10_000


@dataclass
class Start:
    game: int
    ply: int
    position: str


@dataclass
class Outcome:
    start: Start
    by_target: bool
    winner: str
    plies: int
    score: tuple[int, int]
    moves: int
    forced_win_seen: int
    pushes: int
    depth_total: int
    returns: int


def starts_from_trace(path: Path, lead: int, room: int, movelimit: int) -> list[Start]:
    """Per game of the trace, the first position of ours leading by ``lead`` or more."""
    def first_lead(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
        return next((entry for entry in entries
                     if int(entry["mine"]) - int(entry["theirs"]) >= lead
                     and int(entry["ply"]) + room <= movelimit), None)

    found = sorted((game, entry) for _, game, _, entry in _read_games([path], first_lead)
                   if entry is not None)
    return [Start(game, int(entry["ply"]), str(entry["position"])) for game, entry in found]


def starts_from_traces(paths: list[Path], lead: int, room: int, movelimit: int) -> list[Start]:
    """:func:`starts_from_trace` of each trace: one trace keeps its games' numbers,
    several are numbered on across them in the order given."""
    found = [start for path in paths
             for start in starts_from_trace(path, lead, room, movelimit)]
    if len(paths) == 1:
        return found
    return [Start(number, start.ply, start.position) for number, start in enumerate(found)]


def wins_within(me: int, op: int, mine: int, theirs: int, moves: int, target: int) -> bool:
    """Exact, full width: whether the side to move (``me``) forces its ``target``-th
    marble off within ``moves`` moves of its own, whatever the other side plays."""
    if moves <= 0:
        return False
    kids = children(me, op)
    if mine + 1 >= target and any(kind == EJECT for kind, *_ in kids):
        return True
    if moves == 1:
        return False
    return any(
        every_reply_loses(nop, nme, theirs, mine + (kind == EJECT), moves - 1, target)
        for kind, _diff, nme, nop in kids
    )


def every_reply_loses(me: int, op: int, mine: int, theirs: int, moves: int,
                      target: int) -> bool:
    """Whether every move of the side to move leaves the other side a forced finish
    within ``moves`` of its moves."""
    for kind, _diff, nme, nop in children(me, op):
        gained = mine + (kind == EJECT)
        if gained >= target or not wins_within(nop, nme, theirs, gained, moves, target):
            return False
    return True


def forced_by_threats(me: int, op: int, theirs: int, moves: int, quiet: int, target: int,
                      memo: dict[tuple[int, int, int, int], bool]) -> bool:
    """With a marble to go for the side to move (``me``): whether it forces it off within
    ``moves`` moves of its own, at most ``quiet`` of which leave it no marble to push off
    next (the others each threaten one, and a reply that leaves the threat standing
    loses at once, so only the replies that parry it are searched).  ``quiet`` of
    ``moves - 1`` is the full-width solver (:func:`wins_within`); 0 is a search of
    threats alone, narrow enough to look many moves ahead.  ``memo`` is shared by the
    calls for one position (from one root, the marbles on the board say how many the
    other side has pushed off, so the key needs no ``theirs``)."""
    key = (me, op, moves, quiet)
    known = memo.get(key)
    if known is not None:
        return known
    kids = children(me, op)
    found = any(kind == EJECT for kind, *_ in kids)
    if not found and moves > 1:
        for _kind, _diff, nme, nop in kids:
            threat = threatens(nme, nop)
            if not threat and not quiet:
                continue
            for kind, _diff, rme, rop in children(nop, nme):
                if kind == EJECT and theirs + 1 >= target:
                    break  # the reply wins first
                if threat and threatens(rop, rme):
                    continue  # the threat stands: pushed off at once
                if not forced_by_threats(rop, rme, theirs + (kind == EJECT), moves - 1,
                                         quiet - (not threat), target, memo):
                    break
            else:
                found = True
                break
    memo[key] = found
    return found


#: (moves, quiet moves among them) of the forced finishes ``--analyse`` looks for with a
#: marble to go, beyond the full-width ones: threats alone eight moves deep, and with
#: one quiet move four deep (together about 6 s for a hundred positions).
FORCING_SEARCHES: Final = ((8, 0), (4, 1))


def forced_finishes(paths: list[Path], target: int = 6) -> dict[bool, tuple[int, int, int]]:
    """With a marble to go for ours: per kind of game (won by six: True; the others:
    False), (the positions of ours, those with a forced finish: a marble to push off at
    once or one of :data:`FORCING_SEARCHES`, the games with a marble to go)."""
    counts = {True: [0, 0, 0], False: [0, 0, 0]}
    for path in paths:
        for entries in trace_games(path).values():
            last_to_go = [e for e in entries if int(e["mine"]) + 1 == target]
            if not last_to_go:
                continue
            tally = counts[_won_by_six(entries, target)]
            tally[2] += 1
            for entry in last_to_go:
                board = Board(str(entry["position"]), Rules(players=2))
                seat = board.turn
                me, op = board.marbles(seat), board.marbles(3 - seat)
                memo: dict[tuple[int, int, int, int], bool] = {}
                theirs = int(entry["theirs"])
                tally[0] += 1
                tally[1] += any(forced_by_threats(me, op, theirs, moves, quiet, target, memo)
                                for moves, quiet in FORCING_SEARCHES)
    return {won: (t[0], t[1], t[2]) for won, t in counts.items()}


def print_forced_finishes(paths: list[Path], target: int = 6) -> None:
    found = forced_finishes(paths, target)
    searches = " or ".join(
        f"by threats alone within {moves} moves" if quiet == 0
        else f"with {quiet} quiet move{'s' if quiet > 1 else ''} within {moves}"
        for moves, quiet in FORCING_SEARCHES)
    print(f"a marble to go, positions with a forced finish (at once, {searches}):")
    for won, label in ((True, "won by six"), (False, "not won by six")):
        positions, forced, games = found[won]
        print(f"  {games} game{'' if games == 1 else 's'} {label}: {forced} of {positions} "
              "positions")


def analyse(path: Path, movelimit: int, target: int = 6) -> None:
    kinds: dict[int, Counter[str]] = {}
    forced = {2: 0, 3: 0}
    seen = kept = at_last = limit_values = 0
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        mine, theirs = int(entry["mine"]), int(entry["theirs"])
        value = entry["value"]
        if value is not None and LIMIT_WIN // 2 < value < WIN_THRESHOLD:
            limit_values += 1
        if mine <= theirs:
            continue
        tally = kinds.setdefault(mine, Counter())
        tally[str(entry["kind"])] += 1
        tally["returns"] += bool(entry["returns"])
        board = Board(str(entry["position"]), Rules(players=2, movelimit=movelimit))
        seat = board.turn
        me, op = board.marbles(seat), board.marbles(3 - seat)
        tally["no push"] += not pushable(me, op)
        if mine + 1 != target:
            continue
        at_last += 1
        within = next((n for n in (1, 2, 3) if wins_within(me, op, mine, theirs, n, target)),
                      None)
        if within is None or within == 1:
            continue  # none, or an ejection at once (the robots take those first)
        forced[within] += 1
        seen += value is not None and value > WIN_THRESHOLD
        move = board.parse_move(str(entry["move"])) if entry.get("move") else None
        if move is not None:
            board.push(move)
            kept += every_reply_loses(board.marbles(3 - seat), board.marbles(seat), theirs,
                                      board.ejected(seat), within - 1, target)
    print("moves of ours while ahead, by marbles pushed off (quiet / push / eject; no "
          "push to be had; back to a position of the game):")
    for mine in sorted(kinds):
        t = kinds[mine]
        n = t["quiet"] + t["push"] + t["eject"]
        print(f"  {mine}: {n} moves, {t['quiet'] / n:.0%} quiet, {t['push'] / n:.0%} pushes, "
              f"{t['eject'] / n:.0%} ejections; no push possible in {t['no push'] / n:.0%}; "
              f"{t['returns']} returns")
    print(f"a marble to go: {at_last} positions; a forced finish in 2 moves in {forced[2]}, "
          f"in 3 in {forced[3]}; the search's value a win in {seen} of them; the move "
          f"chosen kept it in {kept}")
    print_forced_finishes([path], target)
    print(f"values that were a win on the move limit: {limit_values}")
    print_contact(path)
    print_gathering([path], target)


def trace_games(path: Path) -> dict[int, list[dict[str, Any]]]:
    """The JSON lines of a trace, by game, in the order written."""
    games: dict[int, list[dict[str, Any]]] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            entry = json.loads(line)
            games.setdefault(int(entry["game"]), []).append(entry)
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}, line {number}: no entry of a trace ({error})") from None
    return games


def gathering(paths: list[Path], target: int = 6) -> dict[int | None, tuple[int, int]]:
    """Over the games of the traces: by the marbles ours had pushed off when all the
    other side's marbles first stood on :data:`GATHERED` cells at our move (None: never),
    (games won by six, games).  A game is won by six when its last traced move of ours
    pushed off the ``target``-th marble."""
    def gathered_at(entries: list[dict[str, Any]]) -> int | None:
        formed = _first_gathered(entries)
        return None if formed is None else int(formed["mine"])
    return _shares_by(paths, gathered_at, target)


def by_value(paths: list[Path], ply: int, target: int = 6) -> dict[int | None, tuple[int, int]]:
    """Over the games of the traces: by the band (an index into the gaps of
    :data:`VALUE_BANDS`; None: no value by then) of the value ours' search gave at its
    last move by ``ply``, less :data:`MATERIAL` for each marble of its lead, (games won
    by six, games).  A value that is a result (a forced win or loss, or one on the move
    limit) has no band: the value before it counts."""
    def band(entries: list[dict[str, Any]]) -> int | None:
        placed = None
        for entry in entries:
            if int(entry["ply"]) > ply:
                break
            value = entry.get("value")
            if value is not None and abs(int(value)) < _RESULT_VALUES:
                placed = int(value) - MATERIAL * (int(entry["mine"]) - int(entry["theirs"]))
        return None if placed is None else sum(placed >= bound for bound in VALUE_BANDS)
    return _shares_by(paths, band, target)


def _shares_by(paths: list[Path], key_of: Callable[[list[dict[str, Any]]], int | None],
               target: int) -> dict[int | None, tuple[int, int]]:
    """(Games won by six, games) of the traces by ``key_of`` each game's entries."""
    found: dict[int | None, tuple[int, int]] = {}
    for _path, _game, _entries, (key, by_six) in _read_games(
            paths, lambda entries: (key_of(entries), _won_by_six(entries, target))):
        won, played = found.get(key, (0, 0))
        found[key] = (won + by_six, played + 1)
    return found


def _won_by_six(entries: list[dict[str, Any]], target: int) -> bool:
    """Whether ours won the game by the target: its last traced move pushed off the
    ``target``-th marble."""
    last = entries[-1]
    return int(last["mine"]) + 1 >= target and last.get("kind") == "eject"


def print_by_value(paths: list[Path], ply: int, target: int = 6) -> None:
    found = by_value(paths, ply, target)
    print(f"won by six, by the value of ours' position at its last move by ply {ply}, "
          f"less {MATERIAL} for each marble of its lead:")
    names = [f"below {VALUE_BANDS[0]}",
             *(f"{low} to {high}" for low, high in zip(VALUE_BANDS, VALUE_BANDS[1:])),
             f"{VALUE_BANDS[-1]} and more"]
    for band, name in enumerate(names):
        if band in found:
            print(f"  {name}: {share_of_games_text(*found[band])}")
    if None in found:
        print(f"  no value by then: {share_of_games_text(*found[None])}")


#: The names of :func:`evaluation_terms`, in its order.
TERM_NAMES: Final = (*WEIGHT_NAMES, "FINISH", "PRESSURE_AND_PUSHES", "CONTACT_AND_LEAD_CENTRE")


def evaluation_terms(position: str) -> list[int]:
    """The evaluation of a position for the side to move, term by term (they add up to
    the search's static value): each fitted weight times its feature, then the
    finishing, the pressure and push, and the endgame terms."""
    board = Board(position, Rules(players=2))
    seat = board.turn
    me, op = board.marbles(seat), board.marbles(3 - seat)
    mine, theirs = board.ejected(seat), board.ejected(3 - seat)
    weights = current_weights()
    fitted = [round(weights[name] * value)
              for name, value in zip(WEIGHT_NAMES, features(me, op, mine, theirs))]
    return [*fitted, finish_term(mine, theirs), pressure_term(me, op, mine, theirs),
            endgame_terms(me, op, mine, theirs)]


def term_means(paths: list[Path], ply: int, target: int = 6
               ) -> tuple[int, int, list[tuple[float, float, float, float]]]:
    """Over the games of the traces with a move of ours by ``ply``: (games, games won
    by six, per term of :data:`TERM_NAMES` the mean at ours' first traced move, at its
    last move by ``ply``, and at that move in the games won by six and in the others)."""
    def row(entries: list[dict[str, Any]]) -> tuple[list[int], list[int], bool] | None:
        by_then = [entry for entry in entries if int(entry["ply"]) <= ply]
        if not by_then:
            return None
        return (evaluation_terms(str(by_then[0]["position"])),
                evaluation_terms(str(by_then[-1]["position"])), _won_by_six(entries, target))

    rows = [found for _, _, _, found in _read_games(paths, row) if found is not None]

    def mean(values: list[int]) -> float:
        return sum(values) / len(values) if values else float("nan")

    means = [
        (mean([first[i] for first, _, _ in rows]), mean([then[i] for _, then, _ in rows]),
         mean([then[i] for _, then, six in rows if six]),
         mean([then[i] for _, then, six in rows if not six]))
        for i in range(len(TERM_NAMES))
    ]
    return len(rows), sum(six for _, _, six in rows), means


def print_term_means(paths: list[Path], ply: int, target: int = 6) -> None:
    games, won, means = term_means(paths, ply, target)
    print(f"the evaluation's terms at ours' first traced move and its last by ply {ply}, "
          f"mean of {games} games ({won} won by six):")
    print(f"  {'term':24s} {'first':>7s} {'by then':>8s} {'change':>7s} {'by six':>7s} "
          f"{'others':>7s}")
    for name, (first, then, six, others) in zip(TERM_NAMES, means):
        print(f"  {name:24s} {first:7.0f} {then:8.0f} {then - first:7.0f} {six:7.0f} "
              f"{others:7.0f}")


def starts_at_gathering(paths: list[Path], off: int | None = None) -> list[Start]:
    """Per game of the traces, the first position at our move where all the other
    side's marbles stood on :data:`GATHERED` cells (the group formed), when ours had
    pushed off ``off`` marbles then (any number: None).  Numbered in the order found,
    across the traces, so that games of different traces stay apart."""
    found: list[Start] = []
    for _path, _game, _entries, formed in _read_games(paths, _first_gathered):
        if formed is not None and (off is None or int(formed["mine"]) == off):
            found.append(Start(len(found), int(formed["ply"]), str(formed["position"])))
    return found


def _other_side_gathered(position: str) -> bool:
    """Whether all the marbles of the side not to move stand on :data:`GATHERED` cells."""
    board = Board(position, Rules(players=2))
    return not board.marbles(3 - board.turn) & ~GATHERED


def _read_games(paths: list[Path], read: Callable[[list[dict[str, Any]]], T]
                ) -> Iterator[tuple[Path, int, list[dict[str, Any]], T]]:
    """Per game of the traces: (its trace, its number, its entries, ``read`` of them); an
    entry ``read`` cannot take is refused with the trace and the game it is in."""
    for path in paths:
        for game, entries in trace_games(path).items():
            try:
                found = read(entries)
            except (KeyError, ValueError, TypeError) as error:
                raise ValueError(f"{path}, game {game}: no entry of a trace ({error})"
                                 ) from None
            yield path, game, entries, found


def _first_gathered(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first entry where all the other side's marbles stood on :data:`GATHERED`
    cells (None: none)."""
    return next((entry for entry in entries
                 if _other_side_gathered(str(entry["position"]))), None)


def evenly_spread(starts: list[Start], count: int) -> list[Start]:
    """``count`` of ``starts`` (all of them when there are no more), spread evenly from
    the first to the last, so that a sample takes from every trace given."""
    if count >= len(starts):
        return starts
    step = len(starts) / count
    return [starts[int(i * step)] for i in range(count)]


#: The columns ``--positions`` writes (read by :func:`abalone_pbm.robots.tuning.load_samples`).
POSITION_COLUMNS: Final = ("position", "result", "end", "ply", "game")


def position_rows(paths: list[Path], limit_result: float, movelimit: int,
                  target: int = 6) -> Iterator[tuple[str, float, str, int, str]]:
    """Each traced position of ours, labelled for ``tools/fit_weights.py`` with how the
    game ended for ours: 1 when it pushed off the target, ``limit_result`` when the game
    ran to the move limit, 0 when it ended earlier without that (the other side's win:
    a trace has only ours' moves)."""
    def label(entries: list[dict[str, Any]]) -> tuple[float, str]:
        if _won_by_six(entries, target):
            return 1.0, "target"
        if int(entries[-1]["ply"]) + 2 >= movelimit:
            return limit_result, "limit"
        return 0.0, "target"

    # Games are numbered on across the traces, so that each keeps its own number.
    for number, (_, _, entries, (result, end)) in enumerate(_read_games(paths, label)):
        for entry in entries:
            yield str(entry["position"]), result, end, int(entry["ply"]), str(number)


def write_positions(paths: list[Path], out: Path, limit_result: float, movelimit: int
                    ) -> tuple[int, int]:
    """Write :func:`position_rows` to ``out`` as CSV: (positions, games)."""
    rows = list(position_rows(paths, limit_result, movelimit))
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(POSITION_COLUMNS)
        writer.writerows(rows)
    return len(rows), len({row[-1] for row in rows})


def print_gathering(paths: list[Path], target: int = 6) -> None:
    found = gathering(paths, target)
    print("won by six, by the marbles pushed off when all the other side's marbles first "
          "stood within two steps of e5:")
    for off in sorted(k for k in found if k is not None):
        print(f"  {off} off: {share_of_games_text(*found[off])}")
    if None in found:
        print(f"  never gathered: {share_of_games_text(*found[None])}")


def replies(before: dict[str, object], after: dict[str, object]) -> int | None:
    """The kind of the other side's move between two traced moves of ours (0 quiet,
    1 push, 2 ejection), or None when no single move joins them."""
    board = Board(str(before["position"]), Rules(players=2))
    board.push(board.parse_move(str(before["move"])))
    reached = Board(str(after["position"]), Rules(players=2)).position().split(" ")[0]
    occupied = occupied_mask(board)
    for move in board.generate_legal_moves():
        board.push(move)
        found = board.position().split(" ")[0] == reached
        board.pop()
        if found:
            return push_kind(occupied, move)
    return None


def print_contact(path: Path, from_ply: int = 30) -> None:
    """Per game, the plies at which a marble went off, and from ``from_ply`` on: the
    share of the other side's moves that pushed, the marbles of ours it could push and
    of its ours could push at our moves, how much farther from e5 our marbles stood
    than its (steps a marble, on average), and how many of ours and of its stood on e5
    and its six neighbours (:data:`CORE_CELLS`)."""
    games = trace_games(path)
    print(f"per game (from ply {from_ply}: the other side's pushes, marbles of ours it could "
          "push / of its we could, our marbles' extra distance from e5, ours / its on e5 "
          "and its ring):")
    # pushes, replies, positions, exposed, reach, distance, our core, their core
    totals: list[float] = [0, 0, 0, 0, 0, 0.0, 0, 0]
    for game, entries in sorted(games.items()):
        offs, score = [], (0, 0)
        pushes = replied = positions = exposed = reach = our_core = their_core = 0
        distance = 0.0
        for entry, following in zip(entries, entries[1:] + [None]):
            now = (int(entry["mine"]), int(entry["theirs"]))
            if now != score:
                offs.append(f"{entry['ply']}:{now[0]}-{now[1]}")
                score = now
            if int(entry["ply"]) < from_ply:
                continue
            board = Board(str(entry["position"]), Rules(players=2))
            me, op = board.marbles(board.turn), board.marbles(3 - board.turn)
            positions += 1
            exposed += pushable(op, me).bit_count()
            reach += pushable(me, op).bit_count()
            distance += centre_sum(me) / me.bit_count() - centre_sum(op) / op.bit_count()
            our_core += (me & CORE_CELLS).bit_count()
            their_core += (op & CORE_CELLS).bit_count()
            kind = replies(entry, following) if following is not None else None
            if kind is not None:
                replied += 1
                pushes += kind > 0
        figures = (pushes, replied, positions, exposed, reach, distance, our_core, their_core)
        for i, figure in enumerate(figures):
            totals[i] += figure
        last = entries[-1]
        line = f"  game {game + 1}: to ply {last['ply']}, off at {' '.join(offs) or '-'}"
        if positions:
            line += (f"; pushes {pushes / max(1, replied):.0%}, pushable {exposed / positions:.1f}"
                     f" / {reach / positions:.1f}, farther {distance / positions:+.2f}, core "
                     f"{our_core / positions:.1f} / {their_core / positions:.1f}")
        print(line)
    (all_pushes, all_replied, all_positions, all_exposed, all_reach, all_distance,
     all_our_core, all_their_core) = totals
    if all_positions:
        print(f"  all games: pushes {all_pushes / max(1, all_replied):.0%}, pushable "
              f"{all_exposed / all_positions:.2f} / {all_reach / all_positions:.2f}, farther "
              f"{all_distance / all_positions:+.2f}, core {all_our_core / all_positions:.2f}"
              f" / {all_their_core / all_positions:.2f}")


def play_out(start: Start, ours: str, engine: CotixEngine, budget: float, movelimit: int,
             seed: int) -> Outcome:
    board = Board(start.position, Rules(players=2, movelimit=movelimit), ply=start.ply)
    ours_seat = board.turn
    robot = make_engine(ours)
    rng = random.Random(seed * 7919 + start.game)
    engine.new_game("standard", board)
    had = {board.position().split(" ")[0] + str(board.turn)}
    moves = forced = pushes = depth_total = returns = 0
    while board.outcome() is None:
        if board.turn == ours_seat:
            occupied = occupied_mask(board)
            move = robot.choose_move(board, budget, rng_seed=rng.getrandbits(32))
            info = robot.last_info
            moves += 1
            if info is not None:
                depth_total += info.depth
                if info.value is not None and info.value > WIN_THRESHOLD:
                    forced += 1
            if push_kind(occupied, move):
                pushes += 1
        else:
            move = answered_move(engine.name, board, engine.choose(board, budget))
        board.push(move)
        key = board.position().split(" ")[0] + str(board.turn)
        if board.turn != ours_seat and key in had:
            returns += 1
        had.add(key)
    outcome = board.outcome()
    assert outcome is not None
    if outcome.draw:
        winner = "draw"
    else:
        winner = "ours" if outcome.winners[0] == ours_seat else "theirs"
    return Outcome(start, outcome.reason.startswith("pushed off"), winner,
                   board.ply - start.ply, (board.ejected(ours_seat), board.ejected(3 - ours_seat)),
                   moves, forced, pushes, depth_total, returns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", default="boulder", choices=sorted(ENGINES))
    parser.add_argument("--trace", nargs="+", default=None, metavar="TRACE",
                        help="traces of external_match.py --trace: play on from each "
                             "game's first position where ours leads by --lead")
    parser.add_argument("--analyse", default=None, metavar="TRACE",
                        help="say what the search saw in a trace, and play nothing")
    parser.add_argument("--gathering", nargs="+", default=None, metavar="TRACE",
                        help="pool traces: the share won by six by the marbles pushed off "
                             "when the other side's group formed; play nothing")
    parser.add_argument("--forced-finishes", nargs="+", default=None, metavar="TRACE",
                        help="pool traces: with a marble to go, the positions with a forced "
                             "finish in the games won by six and in the others; play nothing")
    parser.add_argument("--by-value", nargs="+", default=None, metavar="TRACE",
                        help="pool traces: the share won by six by ours' value at "
                             "--value-ply less 1000 a marble of lead (see the text); "
                             "play nothing")
    parser.add_argument("--value-ply", type=int, default=30,
                        help="with --by-value: the ply of the value read (default 30)")
    parser.add_argument("--terms", action="store_true",
                        help="with --by-value: also the mean of each evaluation term "
                             "then, in the games won by six and in the others")
    parser.add_argument("--positions", nargs="+", default=None, metavar="TRACE",
                        help="write the traces' positions of ours, labelled with how each "
                             "game ended, to --out for tools/fit_weights.py; play nothing")
    parser.add_argument("--out", default=None, metavar="CSV",
                        help="with --positions: the file to write")
    parser.add_argument("--limit-result", type=float, default=0.5,
                        help="with --positions: the label of a game that ran to the move "
                             "limit (default 0.5; won by six is 1, lost 0)")
    parser.add_argument("--from-gathering", nargs="+", default=None, metavar="TRACE",
                        help="play on from each game's position where the other side's "
                             "group formed (see --gathering)")
    parser.add_argument("--off", type=int, default=None,
                        help="with --from-gathering: only games where ours had pushed off "
                             "this many marbles then")
    parser.add_argument("--sample", type=int, default=None,
                        help="play only this many of the positions found, evenly spread "
                             "over them (the traces in the order given)")
    parser.add_argument("--position", action="append", default=[],
                        help="a position to play out (ours to move); may be repeated")
    parser.add_argument("--ply", type=int, default=60, help="the ply of --position")
    parser.add_argument("--lead", type=int, default=2)
    parser.add_argument("--room", type=int, default=30,
                        help="plies the start leaves before the move limit at least")
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--movelimit", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    add_weight_options(parser)
    parser.add_argument("--cotix-src", default=None)
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE))
    args = parser.parse_args(argv)
    if args.terms and not args.by_value:
        parser.error("--terms goes with --by-value")
    if args.analyse:
        analyse(Path(args.analyse), args.movelimit)
        return 0
    pooled_reports: tuple[tuple[str, Callable[[list[Path]], None]], ...] = (
        ("gathering", print_gathering), ("forced_finishes", print_forced_finishes))
    for option, report in pooled_reports:
        traces = getattr(args, option)
        if traces:
            try:
                report([Path(p) for p in traces])
            except (OSError, ValueError, KeyError) as error:
                # A missing file, a line that is no JSON, an entry without its fields.
                parser.error(f"--{option.replace('_', '-')} reads traces of "
                             f"external_match.py --trace: {error}")
            return 0
    if args.positions:
        if args.out is None:
            parser.error("--positions writes to --out CSV: give it")
        if not 0.0 <= args.limit_result <= 1.0:
            parser.error("--limit-result is a result between 0 (lost) and 1 (won)")
        try:
            count, games = write_positions([Path(p) for p in args.positions], Path(args.out),
                                           args.limit_result, args.movelimit)
        except (OSError, ValueError, KeyError) as error:
            parser.error(f"--positions reads traces of external_match.py --trace: {error}")
        print(f"wrote {count} positions of {games} games to {args.out}")
        return 0
    if args.by_value:
        if args.value_ply < 0:
            parser.error("--value-ply is a ply of the game: 0 or more")
        try:
            print_by_value([Path(p) for p in args.by_value], args.value_ply)
            if args.terms:
                print_term_means([Path(p) for p in args.by_value], args.value_ply)
        except (OSError, ValueError, KeyError) as error:
            parser.error(f"--by-value reads traces of external_match.py --trace: {error}")
        return 0
    apply_weight_options(parser, args)
    for position in args.position:
        try:
            Board(position, Rules(players=2))
        except PositionError as error:
            parser.error(f"--position {position!r}: {error}")
    starts = [Start(i, args.ply, p) for i, p in enumerate(args.position)]
    if args.trace:
        try:
            starts += starts_from_traces([Path(p) for p in args.trace], args.lead, args.room,
                                         args.movelimit)
        except (OSError, ValueError, KeyError, TypeError) as error:
            parser.error(f"--trace reads traces of external_match.py --trace: {error}")
    if args.from_gathering:
        try:
            starts += starts_at_gathering([Path(p) for p in args.from_gathering], args.off)
        except (OSError, ValueError) as error:
            parser.error(f"--from-gathering reads traces of external_match.py --trace: {error}")
    if not starts:
        if not (args.position or args.trace or args.from_gathering):
            parser.error("no position to play: give --trace, --from-gathering or --position")
        which = ("gathered with {} marbles off".format(args.off)
                 if args.from_gathering and args.off is not None else "gives one")
        parser.error(f"no position to play: no game of the traces given {which}")
    if args.sample is not None:
        if args.sample < 1:
            parser.error(f"--sample {args.sample}: give a number of positions above 0")
        starts = evenly_spread(starts, args.sample)
    cache = Path(args.cache_dir).expanduser()
    source = resolve_source(args.cotix_src, COTIX_URL, "Game.cpp", cache, "Cotix-Abalone",
                            "--cotix-src")
    engine = CotixEngine(build_cotix(source, cache), 256)
    began = time.perf_counter()
    outcomes = []
    try:
        for start in starts:
            o = play_out(start, args.ours, engine, args.budget, args.movelimit, args.seed)
            outcomes.append(o)
            print(f"game {o.start.game + 1:3d} from ply {o.start.ply:3d} "
                  f"({o.start.position.split()[-1]}): {o.winner:6s} "
                  f"{'by six' if o.by_target else 'at the limit' if o.winner != 'draw' else ''} "
                  f"{o.score[0]}-{o.score[1]} after {o.plies} plies; ours {o.moves} moves, "
                  f"forced win seen in {o.forced_win_seen}, pushes {o.pushes}, mean depth "
                  f"{o.depth_total / max(1, o.moves):.1f}, returns {o.returns}", flush=True)
    except EngineError as error:
        # An illegal answer ends the probe: the positions after it would not be Cotix's play.
        raise SystemExit(f"finish_probe: {error}") from None
    finally:
        engine.close()
    won = sum(o.by_target and o.winner == "ours" for o in outcomes)
    moves = sum(o.moves for o in outcomes) or 1
    print(f"\n{args.ours} converted {won} of {len(outcomes)} leads by pushing off the target "
          f"(budget {args.budget} s a move, move limit {args.movelimit}); mean plies to "
          f"finish {sum(o.plies for o in outcomes if o.by_target) / max(1, won):.0f}; "
          f"pushes {sum(o.pushes for o in outcomes) / moves:.0%} of its moves, forced win "
          f"seen in {sum(o.forced_win_seen for o in outcomes) / moves:.0%}; "
          f"wall {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
