"""Everything the board templates (``_game.txt``, ``_reply.txt``) show of one game:
the subject, the status lines, the diagram with its legend, the tables, and who the
copy is for."""

from __future__ import annotations

from typing import Any

from ..rules import Board
from .board_text import render_board
from .legend import board_legend
from .marks import marble_marks
from .shared import shared
from .summary import describe_options, move_table, score_table
from .text import RULE, and_list
from .views import RECENT_ROUNDS, GameView, Result, Unreachable, Vote, is_over, to_move


def board_subject(game: GameView, board: Board) -> str:
    """``Abalone Board 101 fred``, `` **`` appended when a comment is attached; at the end
    of the game the userid part is empty: ``Abalone Board 101`` (``Abalone Board 101 **``)."""
    mover = to_move(game, board)
    subject = f"Abalone Board {game.number}" + (f" {mover}" if mover else "")
    if game.comment is not None and game.comment.text.strip():
        subject += " **"
    return subject


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
    lines.extend(_unreachable_line(player) for player in game.unreachable)
    return lines


def _unreachable_line(player: Unreachable) -> str:
    """A player whose mail bounces: the game goes on, and the usual timeout decides."""
    line = (f"Mail to {player.userid} bounces since {player.since}: the server no longer "
            f"mails {player.userid}.  The game goes on as usual")
    if player.forfeit_by is not None:
        return line + f"; unless {player.userid} moves by {player.forfeit_by}, " \
                      f"{player.userid} forfeits."
    return line + f": the usual timeouts apply when it is {player.userid}'s turn."


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


def game_context(
    game: GameView,
    board: Board,
    *,
    recipient: str | None,
    marks: str | None,
    all_moves: bool | None = None,
    rounds: int = RECENT_ROUNDS,
) -> dict[str, Any]:
    """What the board templates show: the same for every recipient (computed once per
    ``shared.same_board`` block) but for ``recipient`` and their ``role``."""
    key = ("game_context", id(game), id(board), marks, all_moves, rounds)
    context = dict(shared(key, lambda: _common_context(game, board, marks, all_moves, rounds)))
    context["recipient"] = recipient
    context["role"] = _role(game, board, recipient)
    return context


def _common_context(
    game: GameView, board: Board, marks: str | None, all_moves: bool | None, rounds: int
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
        # A "*" after a move: the server played it (queued, computer player, forfeit).
        "automatic_moves": any(text.endswith("*") for _, _, text in game.moves),
        "diagram": diagram,
        "legend": legend,
        "scores": score_table(game, board, marks=symbols),
        "observers": list(game.observers),
        "comment": game.comment if game.comment and game.comment.text.strip() else None,
        "rule": RULE,
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
