"""Every mail the server writes, rendered from Jinja2 templates (pure: no database).

The service layer prepares plain data -- a :class:`GameView` (board number, userids by
seat, the moves as ``(ply, seat, text)``, the comment, pending votes, the result and
rating changes...) -- and passes it with the rules :class:`~abalone_pbm.rules.Board`
to one of the ``*_mail`` functions, which return ``(subject, body)``:

========================  ==========================================================
:func:`board_mail`        ``Abalone Board 101 fred`` (`` **`` with a comment); at the
                          end of the game :func:`game_over_mail`
:func:`new_game_mail`     ``New Abalone Board 101 fred``
:func:`game_over_mail`    ``Abalone Board 101`` (the userid part is empty)
:func:`error_mail`        ``Abalone error`` / ``Abalone Board 101 Error``
:func:`nag_mail`          ``Nag: Abalone Board 101 fred``
:func:`help_mail`         ``Abalone help`` / ``Abalone help: move``
:func:`signup_mail`       ``Abalone signup fred``
:func:`text_mail`         any short answer, optionally quoting the original
========================  ==========================================================

:func:`render_board` draws the board exactly like the pbmserv help (seed 001), from the
``board.txt`` template.  Templates are looked up first in ``abalone_pbm/templates``
(where the wheel installs them) and then in the repository's top-level ``templates/``.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import jinja2

import abalone_pbm

from . import protocol
from .rules import Board, Rules, get_layout, layout_names
from .rules.geometry import CELLS, ROW_OF
from .rules.variants import HALVES, pick_variant

WIDTH = 76
RULE = "*" * 72
#: Rounds (rows of the move table) shown while a game is running.
RECENT_ROUNDS = 5
NEUTRAL_MARK = "*"
EMPTY_MARK = "."


# ------------------------------------------------------------------ environment
def template_dirs() -> list[Path]:
    """Where templates are looked for: the installed package first, then the checkout."""
    package = Path(abalone_pbm.__file__).resolve().parent
    candidates = [package / "templates", package.parent / "templates"]
    return [path for path in candidates if path.is_dir()]


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The Jinja2 environment of all mail templates (plain text, strict).

    ``trim_blocks`` and ``lstrip_blocks`` are on, so a ``{% ... %}`` tag on a line of its
    own leaves no blank line behind.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(p) for p in template_dirs()]),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["wrap"] = _wrap
    env.filters["and_list"] = and_list
    env.filters["plural"] = _plural
    return env


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)


def tidy(text: str) -> str:
    """A mail body: no trailing blanks, never two blank lines in a row, no blank lines
    at the start or the end, one final newline."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def _body(name: str, **context: Any) -> str:
    return tidy(render_template(name, **context))


def _wrap(text: str, width: int = 72, indent: str = "") -> str:
    """Fill each paragraph (blocks separated by blank lines) to ``width``; blocks with an
    indented line (examples, tables) are kept as they are."""
    blocks = re.split(r"\n[ \t]*\n", text.strip("\n"))
    out = []
    for block in blocks:
        lines = block.split("\n")
        if any(line[:1] in (" ", "\t") for line in lines):
            out.append("\n".join(indent + line if line else line for line in lines))
        else:
            out.append(
                textwrap.fill(
                    " ".join(line.strip() for line in lines),
                    width,
                    initial_indent=indent,
                    subsequent_indent=indent,
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    return "\n\n".join(out)


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def and_list(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# ----------------------------------------------------------------------- board
def marble_marks(players: int) -> str:
    """The marble symbols of seats 1..players: ``ox`` for two players, digits otherwise."""
    return "ox" if players == 2 else "123456"[:players]


def treasure_marks(marks: str) -> str:
    """The symbols of the treasures (``-thief``) for the marble ``marks``: a letter mark
    in upper case (``o``/``x`` -> ``O``/``X``), else ``A``-``F`` by seat (digits)."""
    return "".join(m.upper() if m.upper() != m else "ABCDEF"[i] for i, m in enumerate(marks))


def render_board(board: Board, *, marks: str | None = None) -> str:
    """The board as the pbmserv help draws it, with its coordinates (no final newline).

    ``marks`` are the symbols of seats 1..n in order (default :func:`marble_marks`:
    ``o`` for player 1 and ``x`` for player 2, digits ``1``-``6`` with more players);
    neutral marbles of the variants (pillar, princess, ball) are ``*``, treasures
    (thief) :func:`treasure_marks`, empty cells ``.``::

                1 2 3 4 5
                / / / / / 6
            A- o o o o o / 7
           B- o o o o o o / 8
          C- . . o o o . . / 9
         D- . . . . . . . . /
        E- . . . . . . . . .
         F- . . . . . . . .
          G- . . x x x . .
           H- x x x x x x
            I- x x x x x
    """
    symbols = marks or marble_marks(board.players)
    if len(symbols) < board.players:
        raise ValueError(f"{board.players} players need {board.players} marks, not {symbols!r}")
    treasures = treasure_marks(symbols)
    rows: list[list[str]] = [[] for _ in range(9)]
    for cell in CELLS:
        owner = board.owner(cell)
        if owner is None:
            mark = EMPTY_MARK
        elif owner == 0:
            mark = NEUTRAL_MARK
        elif board.is_treasure(cell):
            mark = treasures[owner - 1]
        else:
            mark = symbols[owner - 1]
        rows[ROW_OF[cell]].append(mark)
    return render_template("board.txt", rows=[" ".join(r) for r in rows]).rstrip("\n")


def game_variant(board: Board, options: Mapping[str, object] | None = None) -> str | None:
    """The variant of a game: the board's rules, else the challenge options (``{"princess":
    True}``); None for none (or an unclear mix of options)."""
    if board.rules.variant is not None:
        return board.rules.variant
    try:
        return pick_variant(key for key, value in (options or {}).items() if value)
    except ValueError:
        return None


def board_legend(
    board: Board, *, marks: str | None = None, options: Mapping[str, object] | None = None
) -> list[str]:
    """What the special marbles of a variant on the board mean, wrapped, for under the
    board (empty without a variant)::

        * = the princess (neutral): anyone may push it like an opponent marble;
            whoever pushes it off the board wins.
    """
    variant = game_variant(board, options)
    symbols = marks or marble_marks(board.players)
    entries = []
    if variant == "pillar":
        entries.append(
            f"{NEUTRAL_MARK} = the pillar: it never moves; nothing can move onto it, "
            "push it or be pushed onto it."
        )
    elif variant == "princess":
        entries.append(
            f"{NEUTRAL_MARK} = the princess (neutral): anyone may push it like an opponent "
            "marble; whoever pushes it off the board wins."
        )
    elif variant == "soccer":
        own = ", ".join(HALVES[1][:-1]) + " and " + HALVES[1][-1]
        other = ", ".join(HALVES[2][:-1]) + " and " + HALVES[2][-1]
        entries.append(
            f"{NEUTRAL_MARK} = the ball (neutral): anyone may push it like an opponent "
            "marble.  Push it off an edge of your opponent's half to win; off an edge of "
            "your own half and you lose."
        )
        entries.append(
            f"{symbols[0]} defends the {own} edges, {symbols[1]} the {other} edges.  "
            "Off e1 or e9 along row E is a goal for the pusher."
        )
    elif variant == "thief":
        treasures = treasure_marks(symbols)[: board.players]
        names = and_list(list(treasures))
        owners = and_list(list(symbols[: board.players]))
        entries.append(
            f"{names} = the treasures of {owners}: they move like the others, but "
            "whoever pushes off an opponent's treasure wins."
        )
    return [
        line
        for entry in entries
        for line in textwrap.wrap(
            entry, 72, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
        )
    ]


# ---------------------------------------------------------------- plain data
@dataclass(frozen=True)
class Comment:
    """A player's comment shown between rows of asterisks under "<userid> writes:"."""

    userid: str
    text: str


@dataclass(frozen=True)
class Vote:
    """A pending draw offer or undo request: every player must ``accept``."""

    kind: str  # "draw" or "undo"
    proposer: str
    waiting: tuple[str, ...] = ()  # userids who have not answered yet


@dataclass(frozen=True)
class Result:
    """How a game ended: the winners' userids (empty for a draw) and why
    (``"pushed off 6 marbles"``, ``"wilma resigned"``, ``"wilma forfeited"``)."""

    winners: tuple[str, ...]
    reason: str = ""
    #: Stopped by an administrator or by withdrawals: no winner, not rated.
    aborted: bool = False

    @property
    def draw(self) -> bool:
        return not self.winners


@dataclass(frozen=True)
class RatingChange:
    userid: str
    before: float
    after: float
    provisional: bool = False

    @property
    def delta(self) -> int:
        return round(self.after) - round(self.before)


@dataclass(frozen=True)
class GameView:
    """What the mails show about one game, prepared by the service layer.

    ``players``: userids by seat, seat 1 first.  ``moves``: ``(ply, seat, text)`` for
    every move played so far (plies from 1; only the last :data:`RECENT_ROUNDS` rounds
    are printed while the game runs, all of them at the end).  ``options``: the
    challenge options as :class:`abalone_pbm.protocol.Challenge` holds them (names
    without dash; ``True`` or the value).  ``notices``: extra sentences shown first
    (``"wilma resigned."``); ``withdrawn``: userids who withdrew in the first round;
    ``resigned``: userids who resigned but whose marbles stay.  ``result`` and
    ``ratings`` are set when the game is over.  ``ply``: when the mail shows an earlier
    position (``show 101#5``), the move number shown, else None.
    """

    number: int
    players: tuple[str, ...]
    moves: tuple[tuple[int, int, str], ...] = ()
    options: Mapping[str, str | bool] = field(default_factory=dict)
    observers: tuple[str, ...] = ()
    comment: Comment | None = None
    vote: Vote | None = None
    notices: tuple[str, ...] = ()
    withdrawn: tuple[str, ...] = ()
    resigned: tuple[str, ...] = ()
    result: Result | None = None
    ratings: tuple[RatingChange, ...] = ()
    ply: int | None = None
    challenger: str | None = None


# ------------------------------------------------------------------- pieces
def to_move(game: GameView, board: Board) -> str | None:
    """The userid whose turn it is, or None when the game is over."""
    if game.result is not None or board.is_game_over():
        return None
    if 1 <= board.turn <= len(game.players):
        return game.players[board.turn - 1]
    return None


def is_over(game: GameView, board: Board) -> bool:
    return game.result is not None or board.is_game_over()


def board_subject(game: GameView, board: Board) -> str:
    """``Abalone Board 101 fred``, `` **`` appended when a comment is attached; at the end
    of the game the userid part is empty: ``Abalone Board 101`` (``Abalone Board 101 **``)."""
    mover = to_move(game, board)
    subject = f"Abalone Board {game.number}" + (f" {mover}" if mover else "")
    if game.comment is not None and game.comment.text.strip():
        subject += " **"
    return subject


def move_table(
    players: Sequence[str],
    moves: Sequence[tuple[int, int, str]],
    *,
    marks: str | None = None,
    rounds: int | None = None,
    width: int = WIDTH,
) -> list[str]:
    """The moves in columns, one column per player (header: userid and mark).

    A new row starts whenever a seat does not come after the previous one (so skipped
    or resigned seats leave a gap).  Each cell is ``<ply>. <move>``; when that would be
    wider than ``width`` the ply number moves to the start of the row and userids are
    cut to 10 characters.  ``rounds``: keep only the last rounds (rows), with a note.
    """
    if not moves:
        return ["No moves yet."]
    symbols = marks or marble_marks(len(players))
    rows: list[dict[int, tuple[int, str]]] = []
    last_seat = None
    for ply, seat, text in sorted(moves):
        if not rows or last_seat is None or seat <= last_seat:
            rows.append({})
        rows[-1][seat] = (ply, text)
        last_seat = seat
    hidden = 0
    if rounds is not None and len(rows) > rounds:
        hidden = sum(len(r) for r in rows[:-rounds])
        rows = rows[-rounds:]
    seats = range(1, len(players) + 1)
    numw = len(str(max(ply for ply, _, _ in moves)))
    headers = [f"{players[s - 1]} ({symbols[s - 1]})" for s in seats]
    cells = [
        [f"{row[s][0]:>{numw}}. {row[s][1]}" if s in row else "" for s in seats] for row in rows
    ]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lead = "  "
    if len(lead) + sum(widths) + 2 * (len(widths) - 1) > width:
        headers = [players[s - 1][:10] for s in seats]
        cells = [[row[s][1] if s in row else "" for s in seats] for row in rows]
        widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
        firsts = [min(p for p, _ in row.values()) for row in rows]
        lead_width = numw + 2
        lines = [" " * lead_width + "  ".join(h.ljust(w) for h, w in zip(headers, widths))]
        for first, row_cells in zip(firsts, cells):
            label = f"{first}.".rjust(numw + 1) + " "
            lines.append(label + "  ".join(c.ljust(w) for c, w in zip(row_cells, widths)))
    else:
        lines = [lead + "  ".join(h.ljust(w) for h, w in zip(headers, widths))]
        for row_cells in cells:
            lines.append(lead + "  ".join(c.ljust(w) for c, w in zip(row_cells, widths)))
    lines = [line.rstrip() for line in lines]
    if hidden:
        lines.insert(0, f"({_plural(hidden, 'earlier move')} not shown)")
    return lines


def score_table(game: GameView, board: Board, *, marks: str | None = None) -> list[str]:
    """Per player: marbles pushed off and marbles left, then the target (and teams)."""
    symbols = marks or marble_marks(board.players)
    names = [
        f"{game.players[s - 1] if s <= len(game.players) else f'player {s}'} ({symbols[s - 1]})"
        for s in range(1, board.players + 1)
    ]
    namew = max(len(n) for n in names + ["Player"])
    lines = [f"  {'Player'.ljust(namew)}  pushed off  left on board"]
    for seat, name in enumerate(names, start=1):
        userid = game.players[seat - 1] if seat <= len(game.players) else ""
        state = ""
        if userid in game.resigned or not board.is_active(seat):
            state = "  (resigned)"
        lines.append(
            f"  {name.ljust(namew)}  {board.ejected(seat):>10}  {board.marble_count(seat):>13}"
            f"{state}".rstrip()
        )
    rules = board.rules
    if rules.teams:
        for side in range(rules.sides):
            seats = rules.seats_of_side(side)
            members = and_list([game.players[s - 1] for s in seats if s <= len(game.players)])
            lines.append(f"  Team {side + 1} ({members}): {board.side_score(side)} pushed off")
    who = "team" if rules.teams else "player"
    lines.append(f"The first {who} to push off {rules.target} marbles wins.")
    if rules.movelimit is not None:
        left = max(0, rules.movelimit - board.ply)
        lines.append(f"Move limit: {rules.movelimit} moves ({left} left).")
    return lines


def describe_options(options: Mapping[str, object], players: int = 2) -> list[str]:
    """The options of a game in words, one line each (the layout always first)."""
    layout = "bowl" if options.get("bowl") else str(options.get("layout") or "standard")
    try:
        layout_name = get_layout(layout, players).name
    except ValueError:
        layout_name = layout
    lines = [f"Layout: {layout_name}"]
    if options.get("teams"):
        lines.append("Team play: partners sit opposite each other")
    if options.get("ko"):
        lines.append("Ko: no move may recreate a position you created before")
    if options.get("target"):
        lines.append(f"Target: {options['target']} marbles to push off")
    if options.get("movelimit"):
        lines.append(f"Move limit: {options['movelimit']} moves")
    for key, text in (("pillar", "Pillar: an immovable marble stands on e5"),
                      ("princess", "Princess: whoever pushes off the neutral marble on e5 wins"),
                      ("soccer", "Soccer: push the ball from e5 off an opponent's edges"),
                      ("thief", "Thief: push off an opponent's treasure marble to win")):
        if options.get(key):
            lines.append(text)
    times = []
    if options.get("nagtime"):
        times.append(f"reminders after {_plural(int(str(options['nagtime'])), 'day')}")
    if options.get("forfeittime"):
        times.append(f"forfeit after {_plural(int(str(options['forfeittime'])), 'day')}")
    if options.get("totaltime"):
        times.append(f"{_plural(int(str(options['totaltime'])), 'day')} per player in all")
    if times:
        lines.append("Time: " + ", ".join(times))
    return lines


def _vote_line(vote: Vote) -> str:
    what = "proposes a draw" if vote.kind == "draw" else "asks to take back the last move"
    line = f"{vote.proposer} {what}."
    if vote.waiting:
        line += f"  Waiting for {and_list(list(vote.waiting))} to accept or reject."
    return line


def _notices(game: GameView) -> list[str]:
    lines = list(game.notices)
    for userid in game.withdrawn:
        lines.append(
            f"{userid} withdrew before the end of the first round; "
            "the game goes on without them."
        )
    if game.vote is not None:
        lines.append(_vote_line(game.vote))
    return lines


def _result_line(game: GameView, board: Board) -> str:
    result = game.result
    if result is None:
        outcome = board.outcome()
        if outcome is None:
            return ""
        winners = tuple(game.players[s - 1] for s in outcome.winners if s <= len(game.players))
        result = Result(winners, outcome.reason)
    reason = f" ({result.reason})" if result.reason else ""
    if result.aborted:
        return f"The game was aborted{reason}; it is not rated."
    if result.draw:
        return f"The game is over: it is a draw{reason}."
    verb = "wins" if len(result.winners) == 1 else "win"
    return f"The game is over: {and_list(list(result.winners))} {verb}{reason}."


def _turn_line(game: GameView, board: Board, marks: str) -> str:
    mover = to_move(game, board)
    if mover is None:
        return _result_line(game, board)
    mark = marks[board.turn - 1]
    return f"It is {mover}'s turn ({mark}); the next move is move #{_next_ply(game, board)}."


def _example_move(board: Board) -> str:
    """A legal move of the position, to show how a move is written."""
    if not board.is_game_over():
        for move in board.legal_moves:
            return str(move)
    return "c3-c5,d4"


def _next_ply(game: GameView, board: Board) -> int:
    if game.ply is not None:
        return game.ply + 1
    if game.moves:
        return max(ply for ply, _, _ in game.moves) + 1
    return board.ply + 1


def _role(game: GameView, board: Board, recipient: str | None) -> str:
    if recipient is None:
        return "other"
    if recipient == to_move(game, board):
        return "mover"
    if recipient in game.players and recipient not in game.resigned:
        return "player"
    if recipient in game.observers:
        return "observer"
    return "other"


def _game_context(
    game: GameView,
    board: Board,
    *,
    recipient: str | None,
    marks: str | None,
    all_moves: bool | None = None,
    rounds: int = RECENT_ROUNDS,
) -> dict[str, Any]:
    symbols = marks or marble_marks(board.players)
    over = is_over(game, board)
    show_all = over if all_moves is None else all_moves
    # The variant's special marbles are explained right under the board.
    legend = board_legend(board, marks=symbols, options=game.options)
    diagram = render_board(board, marks=symbols)
    if legend:
        diagram += "\n\n" + "\n".join(legend)
    return {
        "game": game,
        "number": game.number,
        "players": [
            {"seat": s, "userid": u, "mark": symbols[s - 1]}
            for s, u in enumerate(game.players, start=1)
        ],
        "notices": _notices(game),
        "status": _turn_line(game, board, symbols),
        "over": over,
        "result_line": _result_line(game, board) if over else "",
        "moves": move_table(
            game.players, game.moves, marks=symbols, rounds=None if show_all else rounds
        ),
        "diagram": diagram,
        "legend": legend,
        "scores": score_table(game, board, marks=symbols),
        "observers": list(game.observers),
        "comment": game.comment if game.comment and game.comment.text.strip() else None,
        "rule": RULE,
        "recipient": recipient,
        "role": _role(game, board, recipient),
        "mover": to_move(game, board),
        "next_ply": _next_ply(game, board),
        "example": _example_move(board) if not over else "",
        "ratings": [
            {
                "userid": r.userid,
                "before": round(r.before),
                "after": round(r.after),
                "delta": f"{r.delta:+d}",
                "provisional": r.provisional,
            }
            for r in game.ratings
        ],
        "options": describe_options(game.options, board.players),
        "history_ply": game.ply,
        "target": board.rules.target,
    }


# ------------------------------------------------------------------ the mails
def board_mail(
    game: GameView,
    board: Board,
    *,
    recipient: str | None = None,
    marks: str | None = None,
    rounds: int = RECENT_ROUNDS,
) -> tuple[str, str]:
    """The board after a move (also for ``show``): ``(subject, body)``.

    ``recipient`` is the userid the copy is for (None for someone who is not in the
    game); it decides the "how to reply" part: the player to move is told to reply
    with a move, the other players which answers they can reply with, observers how to
    stop watching.  When the game is over this is :func:`game_over_mail`.
    """
    if is_over(game, board) and game.ply is None:
        return game_over_mail(game, board, recipient=recipient, marks=marks)
    context = _game_context(game, board, recipient=recipient, marks=marks, rounds=rounds)
    return board_subject(game, board), _body("board_mail.txt", **context)


def new_game_mail(
    game: GameView, board: Board, *, recipient: str | None = None, marks: str | None = None
) -> tuple[str, str]:
    """``New Abalone Board 101 fred``: the players with their marks, the options, the
    starting board and how to move.  ``game.challenger`` is named when set."""
    context = _game_context(game, board, recipient=recipient, marks=marks)
    first = to_move(game, board) or game.players[0]
    subject = f"New Abalone Board {game.number} {first}"
    return subject, _body("new_game.txt", **context)


def game_over_mail(
    game: GameView, board: Board, *, recipient: str | None = None, marks: str | None = None
) -> tuple[str, str]:
    """``Abalone Board 101`` (`` **`` with a comment): who won, every move, the final board
    and how the ratings changed (``game.result`` and ``game.ratings``; without a result
    the rules' outcome is used)."""
    context = _game_context(game, board, recipient=recipient, marks=marks, all_moves=True)
    return board_subject(game, board), _body("game_over.txt", **context)


def nag_mail(
    game: GameView,
    board: Board,
    *,
    days: int,
    forfeit_in: int | None = None,
    recipient: str | None = None,
    marks: str | None = None,
) -> tuple[str, str]:
    """``Nag: Abalone Board 101 fred``: a reminder for the player to move, who has not
    moved for ``days`` days and forfeits in ``forfeit_in`` days (None: not said)."""
    mover = to_move(game, board) or ""
    context = _game_context(game, board, recipient=recipient or mover, marks=marks)
    context.update(days=days, forfeit_in=forfeit_in)
    return f"Nag: Abalone Board {game.number} {mover}".rstrip(), _body("nag.txt", **context
    )


def error_mail(
    message: str,
    *,
    original_subject: str,
    original_body: str = "",
    syntax: str | None = None,
    game: GameView | None = None,
    board: Board | None = None,
    recipient: str | None = None,
    marks: str | None = None,
) -> tuple[str, str]:
    """An error answer: ``Abalone error``, or ``Abalone Board 101 Error`` with the
    unchanged board when ``game`` and ``board`` are given.

    The body: the error text, the syntax line (``syntax``: a bare usage or a full
    ``Syntax is "..."`` line, as :class:`~abalone_pbm.protocol.CommandSyntaxError` has
    it), the board, then the original mail quoted with ``> `` and every password masked.
    """
    if syntax and not syntax.startswith("Syntax is"):
        syntax = f'Syntax is "{syntax}"'
    context: dict[str, Any] = {
        "message": message.rstrip(),
        "syntax": syntax or "",
        "quoted": protocol.quote_original(original_subject, original_body),
        "has_game": game is not None and board is not None,
    }
    if game is not None and board is not None:
        context.update(
            _game_context(
                game,
                board,
                recipient=recipient,
                marks=marks,
            )
        )
        context["comment"] = None
        subject = f"Abalone Board {game.number} Error"
    else:
        subject = "Abalone error"
    return subject, _body("error.txt", **context)


def syntax_error_mail(
    error: protocol.CommandSyntaxError, *, original_subject: str, original_body: str = ""
) -> tuple[str, str]:
    """:func:`error_mail` for a :class:`~abalone_pbm.protocol.CommandSyntaxError`."""
    return error_mail(
        error.message,
        syntax=error.syntax,
        original_subject=original_subject,
        original_body=original_body,
    )


#: Help topics besides the commands, with the template of each (aliases after the first six).
HELP_TOPICS = {
    "rules": "help_rules.txt",
    "notation": "help_notation.txt",
    "layouts": "help_layouts.txt",
    "variants": "help_variants.txt",
    "robots": "help_robots.txt",
    "reply": "help_reply.txt",
    "abalone": "help_rules.txt",
    "moves": "help_notation.txt",
    "options": "help_variants.txt",
}
TOPIC_NAMES = ("rules", "notation", "layouts", "variants", "robots", "reply")


def help_mail(
    topics: Sequence[str] = (),
    *,
    game: bool = False,
    robots: Sequence[tuple[str, str]] = (),
    server_address: str = "abalone@localhost",
) -> tuple[str, str]:
    """Help, made from the command registry of :mod:`abalone_pbm.protocol.registry`.

    ``help`` (no topics): every command with its syntax and a summary; ``abalone help``
    (``game=True``): the rules, the notation and the game commands.  Topics are command
    names (``signup``, ``move``, ``change password``) or ``rules``, ``notation``,
    ``layouts``, ``variants``, ``robots`` (``robots``: (userid, description) of the
    computer players), ``reply``.
    """
    words = [t.lower() for t in topics]
    sections: list[str] = []
    titles: list[str] = []
    unknown: list[str] = []
    i = 0
    while i < len(words):
        spec = None
        for length in (3, 2, 1):
            candidate = " ".join(words[i : i + length])
            if len(words) - i >= length:
                spec = protocol.find_command(candidate)
                if spec is not None:
                    break
        if spec is not None:
            sections.append(_body("help_command.txt", spec=spec).rstrip("\n"))
            titles.append(spec.short_name)
            i += length
            continue
        topic = words[i]
        if topic in HELP_TOPICS:
            sections.append(_help_topic(topic, robots, server_address).rstrip("\n"))
            titles.append(topic)
        else:
            unknown.append(topic)
        i += 1
    if not sections and not unknown:
        name = "help_abalone.txt" if game else "help.txt"
        body = _body(
            name,
            server=protocol.server_commands(),
            games=protocol.game_commands(),
            topics=TOPIC_NAMES,
            address=server_address,
            rules=_help_topic("rules", robots, server_address).rstrip("\n") if game else "",
            notation=_help_topic("notation", robots, server_address).rstrip("\n")
            if game
            else "",
        )
        return "Abalone help", body
    if unknown:
        sections.append(
            _body("help_unknown.txt",
                unknown=unknown,
                server=protocol.server_commands(),
                games=protocol.game_commands(),
                topics=TOPIC_NAMES,
            ).rstrip("\n")
        )
    subject = "Abalone help" + (": " + ", ".join(titles) if titles else "")
    return subject, tidy("\n\n".join(sections))


def _help_topic(topic: str, robots: Sequence[tuple[str, str]], address: str) -> str:
    context: dict[str, Any] = {"robots": list(robots), "address": address}
    if topic == "layouts":
        context["layouts"] = _layout_diagrams()
    return _body(HELP_TOPICS[topic], **context)


def _layout_diagrams() -> list[dict[str, Any]]:
    out = []
    for name in ("standard", "bowl"):
        for players in range(2, 7):
            board = Board.from_layout(name, Rules(players=players))
            out.append({"title": f"{name}, {players} players", "diagram": render_board(board)})
    for name in layout_names()[2:]:
        board = Board.from_layout(name)
        layout = get_layout(name)
        out.append(
            {"title": f"{name}: {layout.description}".rstrip(": "), "diagram": render_board(board)}
        )
    return out


def signup_mail(
    userid: str, addresses: Sequence[str], *, server_address: str = "abalone@localhost"
) -> tuple[str, str]:
    """The confirmation of ``signup``: welcome, where mail goes, how to play."""
    body = _body("signup.txt", userid=userid, addresses=list(addresses), address=server_address
    )
    return f"Abalone signup {userid}", body


def text_mail(
    subject: str,
    text: str,
    *,
    original_subject: str | None = None,
    original_body: str = "",
) -> tuple[str, str]:
    """A short answer (``Vacation is on for fred.``) with the original quoted if given."""
    quoted = (
        protocol.quote_original(original_subject, original_body)
        if original_subject is not None
        else ""
    )
    return subject, _body("text.txt", text=text.rstrip(), quoted=quoted)


__all__ = [
    "Comment",
    "GameView",
    "RatingChange",
    "Result",
    "Vote",
    "and_list",
    "board_legend",
    "board_mail",
    "board_subject",
    "describe_options",
    "environment",
    "error_mail",
    "game_over_mail",
    "help_mail",
    "marble_marks",
    "move_table",
    "nag_mail",
    "new_game_mail",
    "render_board",
    "render_template",
    "score_table",
    "signup_mail",
    "syntax_error_mail",
    "template_dirs",
    "text_mail",
    "to_move",
    "treasure_marks",
]
