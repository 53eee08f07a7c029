"""The lines of a game's summary: the moves in columns, the scores, the options."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..rules import Board, get_layout
from .marks import marble_marks
from .text import WIDTH, and_list, plural
from .views import GameView


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
    if rounds is not None and len(rows) > rounds:
        rows = rows[-rounds:]
    # Plies are numbered from 1, so every ply before the first one shown is hidden (the
    # caller may have read only the last moves of a long game).
    hidden = min(ply for row in rows for ply, _ in row.values()) - 1
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
        lines.insert(0, f"({plural(hidden, 'earlier move')} not shown)")
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
        times.append(f"reminders after {plural(int(str(options['nagtime'])), 'day')}")
    if options.get("forfeittime"):
        times.append(f"forfeit after {plural(int(str(options['forfeittime'])), 'day')}")
    if options.get("totaltime"):
        times.append(f"{plural(int(str(options['totaltime'])), 'day')} per player in all")
    if times:
        lines.append("Time: " + ", ".join(times))
    if options.get("think"):
        lines.append(f"Computer players think {options['think']} s a move")
    return lines
