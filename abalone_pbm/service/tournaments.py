"""Tournaments stored and run (DESIGN §2.9): creating, joining, starting, pairing the next
round, recording each game's result as it ends, standings and their mails, withdrawals,
adjudications and disqualifications.

The formats and the arithmetic are the pure core's (``abalone_pbm.tournaments``); this
module reads and writes the rows and starts the games.  Tournament games are ordinary
boards started by the server (``challenges.start_game``): their options carry the
tournament's name and round (``GameOptions.extra``) so board mails name them, and the
end of every game calls :func:`game_ended` (from ``turns.end_game``), which records the
result and moves the tournament on in the same transaction.
"""

from __future__ import annotations

import json
import logging
import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import render
from ..db import repository
from ..db.models import Game, Tournament, TournamentEntry, TournamentGame, User
from ..rules import Outcome
from ..tournaments import Pairing, Primary, Result, Standing, standings, table_lines
from ..tournaments import championship, knockout, round_robin, swiss
from ..tournaments.results import FORMATS
from ..tournaments.standings import TIE_BREAK_LINES, half
from .context import CommandError, MailContext
from .unsubscribe import Unsubscription
from .games import GameOptions, parse_options, winners_of
from .tournament_games import ROUND_KEY, TOURNAMENT_KEY, Ending
from .views import when as _when
from . import turns

log = logging.getLogger(__name__)

#: pbmserv's tournament time limits: a reminder after a day, a forfeit after a week.
NAGTIME_DAYS = 1
FORFEITTIME_DAYS = 7
#: The most entrants of a tournament (pairing and standings stay cheap).
MOST_PLAYERS = 200

PRIMARY: dict[str, Primary] = {
    "roundrobin": "sb", "championship": "sb", "swiss": "buchholz", "knockout": "round",
}
FORMAT_NAMES = {
    "roundrobin": "round robin", "swiss": "Swiss", "knockout": "knockout",
    "championship": "championship",
}


class TournamentError(CommandError):
    """A tournament action that cannot be done; nothing it did is kept."""


#: Tournaments whose moving on waits while several of their games end as one act
#: (a player leaving resigns all their games): each game's end records its result,
#: and the tournament moves on once, after the last (see :func:`_held`).
_HELD: ContextVar[frozenset[int]] = ContextVar("tournaments_held", default=frozenset())


@contextmanager
def _held(t: Tournament) -> Iterator[None]:
    """While inside, the games of ``t`` that end only record their results: no round
    is reported, paired or finished on a state half-way through one act."""
    token = _HELD.set(_HELD.get() | {t.id})
    try:
        yield
    finally:
        _HELD.reset(token)


# ------------------------------------------------------------------------- reading
def get(session: Session, name: str) -> Tournament | None:
    return session.scalar(select(Tournament).where(Tournament.name == name.lower()))


def require(session: Session, name: str) -> Tournament:
    tournament = get(session, name)
    if tournament is None:
        raise TournamentError(f'There is no tournament "{name}"; "abalone tournaments" '
                              "lists them")
    return tournament


def entries_of(session: Session, t: Tournament) -> list[TournamentEntry]:
    return list(session.scalars(
        select(TournamentEntry).where(TournamentEntry.tournament_id == t.id)
        .order_by(TournamentEntry.joined_at, TournamentEntry.id)))


def entry_of(session: Session, t: Tournament, user: User) -> TournamentEntry | None:
    return session.scalar(select(TournamentEntry).where(
        TournamentEntry.tournament_id == t.id, TournamentEntry.user_id == user.id))


def games_of(session: Session, t: Tournament) -> list[TournamentGame]:
    return list(session.scalars(
        select(TournamentGame).where(TournamentGame.tournament_id == t.id)
        .order_by(TournamentGame.round, TournamentGame.division, TournamentGame.match,
                  TournamentGame.id)))


def entered(session: Session, t: Tournament) -> list[TournamentEntry]:
    """The entries still in (neither withdrawn nor disqualified), in joining order."""
    return [e for e in entries_of(session, t) if e.status == "entered"]


def _gone(session: Session, t: Tournament) -> frozenset[str]:
    """The userids of those who left (withdrawn or disqualified)."""
    return frozenset(e.user.userid for e in entries_of(session, t) if e.status != "entered")


def _mailed(session: Session, t: Tournament) -> list[User]:
    """The entrants still in who read mail (computer players do not)."""
    return [e.user for e in entered(session, t) if e.user.robot is None]


def _rating(e: TournamentEntry) -> float:
    return e.rating_at_start if e.rating_at_start is not None else e.user.rating


def game_options(t: Tournament) -> dict[str, str | bool]:
    return dict(json.loads(t.options or "{}"))


def _result(row: TournamentGame) -> Result:
    assert row.score_first is not None
    return Result(row.round, row.first.userid, row.second.userid if row.second else None,
                  row.score_first, row.marbles_first, row.marbles_second,
                  row.kind, row.match, row.division)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Table:
    """One table of standings (a championship has one a division)."""

    division: int
    rows: list[Standing]


def tables_of(session: Session, t: Tournament) -> list[Table]:
    """The standings now, a table a division (one for every format but championships)."""
    entries = entries_of(session, t)
    rows = games_of(session, t)
    results = [_result(r) for r in rows if r.score_first is not None]
    status = {e.user.userid: "" if e.status == "entered" else e.status for e in entries}
    by_division: dict[int, dict[str, float]] = defaultdict(dict)
    for e in entries:
        if e.status != "entered" and e.seed is None:
            continue  # left before the start (seeds are given then): never played in it
        by_division[e.division if t.format == "championship" else 0][e.user.userid] = _rating(e)
    primary = PRIMARY[t.format]
    reached = _rounds_reached(session, t, rows) if t.format == "knockout" else None
    return [
        Table(division, standings(players, [r for r in results if r.division == division],
                                  primary, status=status, rounds_reached=reached))
        for division, players in sorted(by_division.items())
    ]


def _rounds_reached(session: Session, t: Tournament,
                    rows: Sequence[TournamentGame]) -> dict[str, int]:
    reached: dict[str, int] = {}
    for row in rows:
        for user in (row.first, row.second):
            if user is not None:
                reached[user.userid] = max(reached.get(user.userid, 0), row.round)
    if t.status == "finished" and rows:
        champion = _knockout_champion(session, t, rows)
        if champion is not None:
            reached[champion] = reached.get(champion, 0) + 1
    return reached


# ------------------------------------------------------------------------ creating
@dataclass(frozen=True)
class Plan:
    """What the admin asks for on ``abalone-pbm tournament create``."""

    name: str
    format: str
    rounds: int | None = None
    games_per_pairing: int | None = None
    options: dict[str, str | bool] | None = None
    min_players: int = 2
    max_players: int = 64
    signup_until: datetime | None = None
    division_size: int = championship.DIVISION_SIZE
    interval_days: int = 7


def create(session: Session, plan: Plan, now: datetime) -> Tournament:
    """A new tournament open for sign-up; every wrong setting is one clear sentence."""
    from ..protocol.tournament_commands import name_problem

    problem = name_problem(plan.name)
    if problem:
        raise TournamentError(problem)
    name = plan.name.lower()
    if get(session, name) is not None:
        raise TournamentError(f'A tournament "{name}" exists already')
    if plan.format not in FORMATS:
        raise TournamentError(f'Unknown format "{plan.format}"; the formats are '
                              + ", ".join(FORMATS))
    if not 2 <= plan.min_players <= plan.max_players <= MOST_PLAYERS:
        raise TournamentError(f"--min and --max must satisfy 2 <= min <= max <= {MOST_PLAYERS}")
    if plan.rounds is not None and (plan.format != "swiss" or plan.rounds < 1):
        raise TournamentError("--rounds is for a Swiss, and at least 1")
    if plan.rounds is not None and plan.rounds > plan.max_players - 1:
        raise TournamentError("a Swiss cannot have more rounds than players less one")
    games = plan.games_per_pairing
    if games is None:
        games = 1 if plan.format == "swiss" else 2
    if not 1 <= games <= 4 or (plan.format == "swiss" and games != 1):
        raise TournamentError("--games is 1 to 4 (a Swiss plays one game a round)")
    if not 2 <= plan.division_size <= 20:
        raise TournamentError("--division-size is 2 to 20")
    raw = dict(plan.options or {})
    raw.setdefault("nagtime", str(NAGTIME_DAYS))
    raw.setdefault("forfeittime", str(FORFEITTIME_DAYS))
    try:
        parse_options(raw, 2)  # the games' options are checked now, not at the start
    except CommandError as error:
        raise TournamentError(error.message) from None
    if plan.signup_until is not None and plan.signup_until <= now:
        raise TournamentError("--signup-until must be in the future")
    tournament = Tournament(
        name=name, format=plan.format, status="signup", games_per_pairing=games,
        rounds=plan.rounds, options=json.dumps(raw, sort_keys=True),
        min_players=plan.min_players, max_players=plan.max_players,
        signup_until=plan.signup_until, created_at=now,
        series=name if plan.format == "championship" else None, edition=1,
        division_size=plan.division_size, interval_days=plan.interval_days,
        current_round=0, reported_round=0,
    )
    session.add(tournament)
    session.flush()
    return tournament


# ----------------------------------------------------------------------- entrants
def join(ctx: MailContext, t: Tournament, user: User, *, once: bool = False) -> TournamentEntry:
    if t.status != "signup":
        following = _next_edition(ctx.session, t)
        hint = (f'; its next edition "{following.name}" is open for sign-up'
                if following is not None and following.status == "signup" else "")
        raise TournamentError(f'The sign-up of tournament "{t.name}" is closed{hint}')
    if user.disabled:
        raise TournamentError(f"{user.userid} is no longer active")
    entry = entry_of(ctx.session, t, user)
    if entry is not None and entry.status == "entered":
        entry.once = once
        return entry
    if len(entered(ctx.session, t)) >= t.max_players:
        raise TournamentError(f'Tournament "{t.name}" is full ({t.max_players} players)')
    if entry is None:
        entry = TournamentEntry(tournament_id=t.id, user_id=user.id, user=user,
                                status="entered", joined_at=ctx.now, once=once,
                                standings_mail=True, division=0)
        ctx.session.add(entry)
    else:
        entry.status, entry.left_at, entry.once = "entered", None, once
    ctx.session.flush()
    return entry


def leave(ctx: MailContext, t: Tournament, user: User, *, status: str = "withdrawn") -> None:
    """Take ``user`` out (``withdrawn`` by their own word, ``disqualified`` by the admin):
    before the start the entry just ends; after it every running game of theirs in
    the tournament is resigned and they are paired no more.  A championship's next
    edition drops them too."""
    if t.status not in ("signup", "running"):
        following = _next_edition(ctx.session, t)
        hint = (f'; its next edition "{following.name}" is open for sign-up, and '
                "withdrawing from that one takes you out of it"
                if following is not None and following.status == "signup" else "")
        raise TournamentError(f'Tournament "{t.name}" is {t.status}: there is nothing '
                              f"left to withdraw from{hint}")
    entry = entry_of(ctx.session, t, user)
    if entry is None or entry.status != "entered":
        raise TournamentError(f'{user.userid} is not entered in tournament "{t.name}"')
    entry.status, entry.left_at = status, ctx.now
    if t.status == "running":
        why = "withdrew from" if status == "withdrawn" else "was disqualified from"
        # Every game resigned first, then the tournament moves on once: a round's
        # standings never show only some of the leaver's games decided.
        with _held(t):
            for row in games_of(ctx.session, t):
                if row.score_first is None and row.board is not None \
                        and user.id in (row.first_user_id, row.second_user_id):
                    _resign_for_tournament(ctx, row.board, user, f"{user.userid} {why} "
                                           f"tournament {t.name}")
        advance(ctx, t)
    following = _next_edition(ctx.session, t)
    if following is not None and following.status == "signup":
        later = entry_of(ctx.session, following, user)
        if later is not None and later.status == "entered":
            later.status, later.left_at = status, ctx.now
    ctx.session.flush()


def _resign_for_tournament(ctx: MailContext, number: int, user: User, reason: str) -> None:
    from .games import load_board, seat_of
    from .turns import end_game, resign_seat

    game = repository.get_game(ctx.session, number, for_update=True)
    if game is None or game.status != "active":
        return
    seat = seat_of(game, user)
    if seat is None or seat.resigned:
        return
    board = load_board(game)
    resign_seat(ctx, game, board, seat)
    outcome = board.outcome()
    if outcome is None:  # a tournament game has two players: one left wins
        others = tuple(s.seat for s in game.seats if not s.resigned)
        outcome = Outcome(others, reason)
    end_game(ctx, game, board, Outcome(outcome.winners, reason), mover=user, comment="",
             notices=[f"{reason}."])


# ----------------------------------------------------------------------- starting
def start(ctx: MailContext, t: Tournament) -> list[int]:
    """Close the sign-up and start the first games; returns their boards."""
    if t.status != "signup":
        raise TournamentError(f'Tournament "{t.name}" is {t.status}, not open for sign-up')
    players = entered(ctx.session, t)
    if len(players) < max(t.min_players, 2):
        raise TournamentError(f'Tournament "{t.name}" has {len(players)} players, '
                              f"fewer than its minimum of {max(t.min_players, 2)}")
    if t.format == "swiss":
        rounds = t.rounds or max(1, math.ceil(math.log2(len(players))))
        if rounds > len(players) - 1:
            raise TournamentError(f"a Swiss of {len(players)} players has at most "
                                  f"{len(players) - 1} rounds, not {rounds}")
        t.rounds = rounds
    for e in players:
        e.rating_at_start = e.user.rating
    seeded = sorted(players, key=lambda e: (-(e.rating_at_start or 0.0), e.user.userid))
    for seed, e in enumerate(seeded, start=1):
        e.seed = seed
    t.status, t.started_at, t.current_round = "running", ctx.now, 1
    userids = [e.user.userid for e in seeded]
    if t.format == "roundrobin":
        pairings = round_robin.round_robin(userids, t.games_per_pairing)
        t.current_round = max((p.round for p in pairings), default=1)
    elif t.format == "swiss":
        pairings = _swiss_pairings(ctx.session, t, 1)
    elif t.format == "knockout":
        pairings = [g for m in knockout.first_round(userids)
                    for g in knockout.match_games(m, t.games_per_pairing)]
    else:
        pairings = _championship_start(ctx.session, t, seeded)
        t.current_round = max((p.round for p in pairings), default=1)
    boards = _start_games(ctx, t, pairings)
    if t.format == "championship":
        _open_next_edition(ctx, t)
    _announce_start(ctx, t)
    advance(ctx, t)  # byes alone may finish a round
    return boards


def _championship_start(session: Session, t: Tournament,
                        seeded: Sequence[TournamentEntry]) -> list[Pairing]:
    previous = _previous_edition(session, t)
    by_userid = {e.user.userid: e for e in seeded}
    if previous is None or previous.status != "finished":
        groups = championship.divisions([e.user.userid for e in seeded], t.division_size)
    else:
        tables = tables_of(session, previous)
        finished = [[s.userid for s in table.rows] for table in tables]
        earlier = {u for table in finished for u in table}
        leaving = earlier - set(by_userid)
        newcomers = [e.user.userid for e in seeded if e.user.userid not in earlier]
        groups = championship.next_edition(finished, leaving, newcomers, t.division_size)
    pairings: list[Pairing] = []
    for division, members in enumerate(groups):
        for userid in members:
            by_userid[userid].division = division
        pairings += round_robin.round_robin(members, t.games_per_pairing, division=division)
    return pairings


def _previous_edition(session: Session, t: Tournament) -> Tournament | None:
    if t.series is None or t.edition <= 1:
        return None
    return session.scalar(select(Tournament).where(
        Tournament.series == t.series, Tournament.edition == t.edition - 1))


def _next_edition(session: Session, t: Tournament) -> Tournament | None:
    if t.series is None:
        return None
    return session.scalar(select(Tournament).where(
        Tournament.series == t.series, Tournament.edition == t.edition + 1))


def edition_name(series: str, edition: int) -> str:
    suffix = f"-{edition}"
    return series[: 40 - len(suffix)] + suffix


def _open_next_edition(ctx: MailContext, t: Tournament) -> Tournament:
    """A championship's next edition, open for sign-up as soon as this one starts, with
    everyone re-entered who did not join "once"; it starts by itself ``interval_days``
    after this one ends."""
    assert t.series is not None
    following = _next_edition(ctx.session, t)
    if following is not None:
        return following
    following = Tournament(
        name=edition_name(t.series, t.edition + 1), format=t.format, status="signup",
        games_per_pairing=t.games_per_pairing, rounds=None, options=t.options,
        min_players=t.min_players, max_players=t.max_players, signup_until=None,
        created_at=ctx.now, series=t.series, edition=t.edition + 1,
        division_size=t.division_size, interval_days=t.interval_days,
        current_round=0, reported_round=0,
    )
    ctx.session.add(following)
    ctx.session.flush()
    for e in entries_of(ctx.session, t):
        if e.status == "entered" and not e.once:
            ctx.session.add(TournamentEntry(
                tournament_id=following.id, user_id=e.user_id, user=e.user,
                status="entered", joined_at=ctx.now, once=False,
                standings_mail=e.standings_mail, division=0))
    ctx.session.flush()
    return following


def _start_games(ctx: MailContext, t: Tournament, pairings: Sequence[Pairing]) -> list[int]:
    from .handlers.challenges import start_game

    users = {u.userid: u for u in ctx.session.scalars(select(User).where(
        User.userid.in_({p.first for p in pairings} | {p.second for p in pairings if p.second})))}
    boards = []
    for p in pairings:
        row = TournamentGame(tournament_id=t.id, round=p.round, match=p.match,
                             division=p.division, first_user_id=users[p.first].id,
                             first=users[p.first], kind="game",
                             marbles_first=0, marbles_second=0)
        if p.second is None:
            row.kind, row.score_first = "bye", 1.0
            ctx.session.add(row)
            continue
        row.second_user_id, row.second = users[p.second].id, users[p.second]
        game = start_game(ctx, game_options(t), [p.first, p.second], automatic=True,
                          entered=True, extra={TOURNAMENT_KEY: t.name, ROUND_KEY: str(p.round)})
        row.board = game.number
        ctx.session.add(row)
        boards.append(game.number)
    ctx.session.flush()
    return boards


def _swiss_pairings(session: Session, t: Tournament, round_number: int) -> list[Pairing]:
    rows = games_of(session, t)
    points: dict[str, float] = defaultdict(float)
    opponents: dict[str, set[str]] = defaultdict(set)
    firsts: dict[str, int] = defaultdict(int)
    seconds: dict[str, int] = defaultdict(int)
    last_first: dict[str, bool] = {}
    byes: dict[str, int] = defaultdict(int)
    for row in rows:
        if row.score_first is None:
            continue
        first = row.first.userid
        points[first] += row.score_first
        if row.second is None:
            byes[first] += 1
            continue
        second = row.second.userid
        points[second] += 1.0 - row.score_first
        opponents[first].add(second)
        opponents[second].add(first)
        firsts[first] += 1
        seconds[second] += 1
        last_first[first], last_first[second] = True, False
    players = [
        swiss.SwissPlayer(e.user.userid, points[e.user.userid], e.rating_at_start or 0.0,
                          frozenset(opponents[e.user.userid]), firsts[e.user.userid],
                          seconds[e.user.userid], last_first.get(e.user.userid),
                          byes[e.user.userid])
        for e in entered(session, t)
    ]
    return swiss.pair_round(players, round_number)


# ---------------------------------------------------------------- games and rounds
def game_ended(ctx: MailContext, game: Game, ending: Ending | None) -> None:
    """Record a finished tournament game's result and move its tournament on (called
    by ``turns`` for every game that ends, with what its end found: see
    ``turns.GAME_ENDED``)."""
    if ending is None or ending.row.score_first is not None:
        return
    row = ending.row
    winners = winners_of(game)
    row.score_first = 0.5 if not winners or len(winners) > 1 else (
        1.0 if winners[0] == 1 else 0.0)
    ejected = _ejected(game.position)
    row.marbles_first, row.marbles_second = ejected[0], ejected[1]
    if ending.no_show:
        row.kind = "noshow"
    ctx.session.flush()
    t = ctx.session.get(Tournament, row.tournament_id)
    if t is not None and t.id not in _HELD.get():
        advance(ctx, t)


def _ejected(position: str) -> tuple[int, int]:
    fields = position.split()
    counts = [int(n) for n in fields[2].split(",")] if len(fields) > 2 else []
    counts += [0, 0]
    return counts[0], counts[1]


def advance(ctx: MailContext, t: Tournament) -> None:
    """Move a running tournament on as far as its results allow: mail the standings of
    each round completed, pair the next Swiss round, start a knockout's deciders and
    next round, finish it.  Safe to call any time (the clock calls it too)."""
    if t.status != "running":
        return
    rows = games_of(ctx.session, t)
    if t.format == "knockout":
        # Match by match: a slow game holds up only its own branch of the bracket.
        if not _knockout_step(ctx, t, rows):
            _finish(ctx, t)
        return
    if any(r.score_first is None for r in rows):
        _report_completed_rounds(ctx, t, rows)
        return
    if t.format == "swiss":
        if t.current_round < (t.rounds or 0):
            _report_completed_rounds(ctx, t, rows)
            try:
                pairings = _swiss_pairings(ctx.session, t, t.current_round + 1)
            except swiss.PairingImpossible as error:
                _finish(ctx, t, note=f"round {t.current_round + 1} could not be paired: "
                        f"{error}")
                return
            t.current_round += 1
            _start_games(ctx, t, pairings)
            advance(ctx, t)
            return
    _finish(ctx, t)


def _report_completed_rounds(ctx: MailContext, t: Tournament, rows: Sequence[TournamentGame]) -> None:
    """Mail the standings once a round is complete (every game of it and of the rounds
    before over), the latest such round only."""
    open_rounds = [r.round for r in rows if r.score_first is None]
    complete = (min(open_rounds) - 1) if open_rounds else t.current_round
    if complete > t.reported_round:
        t.reported_round = complete
        mail_standings(ctx, t, f"after round {complete}")


def _knockout_matches(rows: Sequence[TournamentGame], round_number: int) -> dict[int, list[TournamentGame]]:
    matches: dict[int, list[TournamentGame]] = defaultdict(list)
    for row in rows:
        if row.round == round_number:
            matches[row.match].append(row)
    return dict(sorted(matches.items()))


def _match_of(games: Sequence[TournamentGame], seeds: dict[str, int]) -> knockout.Match:
    first = games[0]
    if first.second is None:
        return knockout.Match(first.round, first.match, first.first.userid, None)
    a, b = first.first.userid, first.second.userid
    high, low = sorted((a, b), key=lambda u: seeds.get(u, 10**6))
    return knockout.Match(first.round, first.match, high, low)


def _seeds(session: Session, t: Tournament) -> dict[str, int]:
    return {e.user.userid: e.seed or 10**6 for e in entries_of(session, t)}


def _knockout_step(ctx: MailContext, t: Tournament, rows: Sequence[TournamentGame]) -> bool:
    """Start every decider and next-round match the results allow, each as soon as its
    own match (or the two matches before it) is decided; False once the final is."""
    seeds = _seeds(ctx.session, t)
    gone = _gone(ctx.session, t)
    entrants = sum(1 for e in entries_of(ctx.session, t) if e.seed is not None)
    final_round = knockout.rounds_needed(entrants)
    by_round: dict[int, dict[int, list[TournamentGame]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_round[row.round][row.match].append(row)
    starting: list[Pairing] = []
    winners: dict[int, dict[int, str]] = defaultdict(dict)
    for round_number, matches in sorted(by_round.items()):
        for number, games in sorted(matches.items()):
            state = knockout.match_state(
                _match_of(games, seeds), t.games_per_pairing,
                [_result(g) for g in games if g.score_first is not None],
                sum(1 for g in games if g.score_first is None), gone)
            if state.decider is not None:
                starting.append(state.decider)
            elif state.winner is not None:
                winners[round_number][number] = state.winner
    if winners[final_round]:
        return False
    for round_number in range(1, final_round):
        decided = winners[round_number]
        for number in range(1, knockout.matches_in_round(entrants, round_number + 1) + 1):
            a, b = decided.get(2 * number - 1), decided.get(2 * number)
            if a is None or b is None or number in by_round[round_number + 1]:
                continue
            match = knockout.meeting(a, b, round_number + 1, number, seeds, gone)
            starting += knockout.match_games(match, t.games_per_pairing)
    if starting:
        t.current_round = max(t.current_round, *(p.round for p in starting))
        _start_games(ctx, t, starting)
        rows = games_of(ctx.session, t)
    _report_completed_rounds(ctx, t, rows)
    if any(p.second is None for p in starting):
        advance(ctx, t)  # a bye decides its match at once
    return True


def _knockout_champion(session: Session, t: Tournament,
                       rows: Sequence[TournamentGame]) -> str | None:
    last = max(r.round for r in rows)
    finals = _knockout_matches(rows, last)
    if len(finals) != 1:
        return None
    games = next(iter(finals.values()))
    if any(g.score_first is None for g in games):
        return None
    # The same seeds and leavers as the step that ended the final, so the same winner.
    gone = _gone(session, t)
    match = _match_of(games, _seeds(session, t))
    return knockout.match_state(match, t.games_per_pairing, [_result(g) for g in games],
                                0, gone).winner


def _finish(ctx: MailContext, t: Tournament, note: str | None = None) -> None:
    t.status, t.finished_at, t.note = "finished", ctx.now, note
    t.reported_round = t.current_round
    following = _next_edition(ctx.session, t)
    if following is not None and following.status == "signup" and following.signup_until is None:
        following.signup_until = ctx.now + timedelta(days=t.interval_days)
    mail_standings(ctx, t, "final" if note is None else f"final ({note})")
    if note:
        log.warning("tournament %s ended early: %s", t.name, note)


def adjudicate(ctx: MailContext, t: Tournament, number: int, verdict: str) -> None:
    """The admin decides a running game: ``1-0``, ``0-1``, ``draw`` or the winner's
    userid.  It ends as any game ends (mails, standings), unrated."""
    from .games import load_board
    from .turns import end_game

    row = ctx.session.scalar(select(TournamentGame).where(
        TournamentGame.tournament_id == t.id, TournamentGame.board == number))
    if row is None:
        raise TournamentError(f'Board {number} is not a game of tournament "{t.name}"')
    game = repository.get_game(ctx.session, number, for_update=True)
    if game is None or game.status != "active":
        raise TournamentError(f"Board {number} is not running")
    first, second = row.first.userid, row.second.userid if row.second else ""
    word = verdict.lower()
    if word in ("1-0", first):
        winners: tuple[int, ...] = (1,)
    elif word in ("0-1", second):
        winners = (2,)
    elif word in ("draw", "1/2", "0.5-0.5", "½-½"):
        winners = ()
    else:
        raise TournamentError(f'The result is 1-0, 0-1, draw, {first} or {second}, '
                              f'not "{verdict[:40]}"')
    row.kind = "adjudicated"
    reason = "adjudicated by the tournament director"
    mover = next(s.user for s in game.seats if s.seat == game.to_move)
    end_game(ctx, game, load_board(game), Outcome(winners, reason), mover=mover, comment="",
             notices=[f"The tournament director decided this game: {reason}."])


# ------------------------------------------------------------------------ mailing
def standings_text(session: Session, t: Tournament, when: str = "") -> str:
    """The standings mail's body: the table(s), the tie-break line, the round."""
    from ..render.templating import render_body

    tables = tables_of(session, t)
    primary = PRIMARY[t.format]
    return render_body(
        "tournament_standings.txt", tournament=t.name, format=FORMAT_NAMES[t.format],
        status=t.status, when=when, round=t.current_round, rounds=t.rounds,
        # Round robins and championships start every round's games at once.
        all_at_once=t.format in ("roundrobin", "championship"),
        tables=[{"division": table.division + 1, "lines": table_lines(table.rows, primary)}
                for table in tables],
        divisions=len(tables) > 1, tie_break=TIE_BREAK_LINES[primary],
        note=t.note,
    )


def mail_standings(ctx: MailContext, t: Tournament, when: str) -> None:
    """The standings to every entrant still in who has not said ``mail ... off``."""
    subject = f"Abalone tournament {t.name} standings {when}"
    body = standings_text(ctx.session, t, when)
    body += (f'\nYou get these because you are entered in tournament {t.name}; "abalone '
             f'tournament mail {t.name} <userid> <password> off" stops them.\n')
    readers = [e.user for e in entered(ctx.session, t)
               if e.standings_mail and e.user.robot is None]
    # Subscribed mail: List-Unsubscribe and a footer stop it without a password.
    ctx.send_to_users(readers, subject, body, auto_submitted="auto-generated",
                      unsubscribe=lambda user: Unsubscription("t", user.id, user.userid, t.id))


def _announce_start(ctx: MailContext, t: Tournament) -> None:
    readers = _mailed(ctx.session, t)
    body = show_text(ctx.session, t)
    ctx.send_to_users(readers, f"Abalone tournament {t.name} has started", body,
                      auto_submitted="auto-generated")


def show_text(session: Session, t: Tournament) -> str:
    from ..render.templating import render_body
    from ..render.summary import describe_options

    entries = entries_of(session, t)
    rows = games_of(session, t)
    options = game_options(t)
    rounds: dict[int, list[str]] = defaultdict(list)
    for row in rows:
        rounds[row.round].append(_game_line(row, t))
    return render_body(
        "tournament_show.txt", tournament=t.name, format=FORMAT_NAMES[t.format], status=t.status,
        games=t.games_per_pairing, rounds=t.rounds, current=t.current_round,
        signup_until=_when(t.signup_until) if t.signup_until else None,
        min_players=t.min_players, max_players=t.max_players, edition=t.edition,
        championship=t.format == "championship",
        options=describe_options(options, 2),
        players=[_entrant_line(e, t) for e in entries],
        rounds_played=sorted(rounds.items()),
        note=t.note,
    )


def _entrant_line(e: TournamentEntry, t: Tournament) -> str:
    parts = [f"{e.user.userid} ({round(_rating(e))})"]
    if t.format == "championship" and e.seed is not None:  # in at the start
        parts.append(f"division {e.division + 1}")
    if e.status != "entered":
        parts.append(e.status)
    if e.once:
        parts.append("this edition only")
    return ", ".join(parts)


def _game_line(row: TournamentGame, t: Tournament) -> str:
    division = f"division {row.division + 1}, " if t.format == "championship" else ""
    if row.second is None:
        return f"  {division}{row.first.userid}: bye (1 point)"
    result = "playing"
    if row.score_first is not None:
        result = f"{half(row.score_first)}-{half(1 - row.score_first)}"
        if row.kind != "game":
            result += f" ({'no-show' if row.kind == 'noshow' else row.kind})"
    board = f"board {row.board}: " if row.board else ""
    return f"  {division}{board}{row.first.userid} - {row.second.userid}  {result}"


def list_text(session: Session) -> str:
    from ..render.templating import render_body

    open_or_running = list(session.scalars(
        select(Tournament).where(Tournament.status.in_(("signup", "running")))
        .order_by(Tournament.status.desc(), Tournament.name)))
    finished = list(session.scalars(
        select(Tournament).where(Tournament.status == "finished")
        .order_by(Tournament.finished_at.desc()).limit(10)))

    def line(t: Tournament) -> str:
        count = len(entered(session, t))
        when = ""
        if t.status == "signup" and t.signup_until is not None:
            when = f", sign-up until {_when(t.signup_until)}"
        elif t.status == "running":
            when = f", round {t.current_round}" + (f" of {t.rounds}" if t.rounds else "")
        return f"  {t.name:<20} {FORMAT_NAMES[t.format]}, {count} players{when}"

    return render_body(
        "tournament_list.txt",
        signup=[line(t) for t in open_or_running if t.status == "signup"],
        running=[line(t) for t in open_or_running if t.status == "running"],
        finished=[line(t) for t in finished],
    )


# --------------------------------------------------------------------------- clock
@dataclass
class ClockReport:
    started: list[str]
    cancelled: list[str]
    stalled: list[str]


def stalled_games(session: Session, t: Tournament, now: datetime) -> list[tuple[Game, str, int]]:
    """The running games of a tournament whose player to move has waited past the
    game's own forfeit time, by the clock's rule (``GameOptions.forfeit_due``): a player
    on vacation, whom the clock does not forfeit.  (game, the userid to move, days
    waited)."""
    out = []
    for row in games_of(session, t):
        if row.score_first is not None or row.board is None:
            continue
        game = repository.get_game(session, row.board)
        if game is None or game.status != "active":
            continue
        waited = now - game.turn_started_at
        if GameOptions.from_json(game.options).forfeit_due(waited):
            mover = next((s.user.userid for s in game.seats if s.seat == game.to_move), "?")
            out.append((game, mover, waited.days))
    return out


def report_stall(ctx: MailContext, t: Tournament) -> bool:
    """Tell the admin (at most once a day) about a round held up past its limit."""
    stalled = stalled_games(ctx.session, t, ctx.now)
    if not stalled:
        return False
    if t.stall_reported_at is not None and ctx.now - t.stall_reported_at < timedelta(days=1):
        return False
    t.stall_reported_at = ctx.now
    lines = [f"  board {g.number}: {' - '.join(s.user.userid for s in g.seats)}, "
             f"{mover} to move for {days} days" for g, mover, days in stalled]
    body = (f"Round {t.current_round} of tournament {t.name} is held up past its forfeit "
            "time (a player on vacation is never forfeited):\n\n" + "\n".join(lines) +
            f"\n\nDecide a game with: abalone-pbm tournament adjudicate {t.name} BOARD "
            "1-0|0-1|draw\n")
    log.warning("tournament %s: round %d stalled: %s", t.name, t.current_round,
                ", ".join(str(g.number) for g, _, _ in stalled))
    admin = ctx.settings.tournament_admin.strip()
    if admin:
        ctx.send_to(admin, f"Abalone tournament {t.name}: round {t.current_round} stalled",
                    body)
    return True


def clock(database: object, now: datetime, settings: object) -> ClockReport:
    """The clock's tournament work, each tournament in a transaction of its own: close
    the sign-ups that are due (start, or cancel with too few players), move running
    tournaments on, report stalled rounds."""
    from ..config import Settings
    from ..db.session import Database

    assert isinstance(database, Database) and isinstance(settings, Settings)
    report = ClockReport([], [], [])
    with database.read() as session:
        due = list(session.scalars(select(Tournament.id).where(
            Tournament.status == "signup", Tournament.signup_until.is_not(None),
            Tournament.signup_until <= now)))
        running = list(session.scalars(select(Tournament.id).where(
            Tournament.status == "running")))
    for tid in [*due, *running]:
        try:
            with database.write() as session:
                ctx = MailContext(session=session, settings=settings, now=now,
                                  sender=settings.address)
                t = session.get(Tournament, tid)
                if t is None:
                    continue
                if t.status == "signup":
                    try:
                        start(ctx, t)
                        report.started.append(t.name)
                    except TournamentError as error:
                        _cancel(ctx, t, error.message)
                        report.cancelled.append(t.name)
                else:
                    advance(ctx, t)
                    if t.status == "running" and report_stall(ctx, t):
                        report.stalled.append(t.name)
                for mail in ctx.outgoing:
                    mail.auto_submitted = "auto-generated"
                ctx.flush()
        except Exception:
            log.exception("tournament clock: tournament %d failed", tid)
    return report


def _cancel(ctx: MailContext, t: Tournament, why: str) -> None:
    t.status, t.finished_at, t.note = "cancelled", ctx.now, why
    readers = _mailed(ctx.session, t)
    ctx.send_to_users(readers, f"Abalone tournament {t.name} cancelled",
                      render.wrap_text(f"Tournament {t.name} did not start: {why}.") + "\n",
                      auto_submitted="auto-generated")
    log.info("tournament %s cancelled: %s", t.name, why)


# Every game that ends is told to the tournaments, in the transaction that ends it.
turns.GAME_ENDED.append(game_ended)
