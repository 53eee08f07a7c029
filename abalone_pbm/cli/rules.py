"""The rules tools: ``moves`` (every legal move of positions) and ``perft`` (counting
move sequences, a check of the move generator)."""

from __future__ import annotations

import argparse
import sys
import time

from ..rules import Board, PositionError, Rules, get_layout, perft, starting_position
from ..rules.perft import divide
from ..rules.variants import variant_names


def _rules_from_args(args: argparse.Namespace, players: int) -> Rules:
    return Rules(players=players, teams=args.teams, target=args.target, variant=args.variant)


def _board_from_text(text: str, args: argparse.Namespace) -> Board:
    parts = text.split()
    players = len(parts[2].split(",")) if len(parts) in (3, 4) else 2
    return Board(text, _rules_from_args(args, players))


def cmd_moves(args: argparse.Namespace) -> int:
    """Print every legal move of each position with the position after it."""
    texts: list[str] = []
    for item in args.positions:
        if item == "-":
            texts.extend(line.strip() for line in sys.stdin if line.strip())
        else:
            texts.append(item)
    status = 0
    out = sys.stdout
    for text in texts:
        try:
            board = _board_from_text(text, args)
        except (PositionError, ValueError) as error:
            print(f"abalone-pbm moves: {text!r}: {error}", file=sys.stderr)
            out.write("\n")
            status = 1
            continue
        lines = []
        for move in board.generate_legal_moves():
            board.push(move)
            lines.append(f"{move}\t{board.position()}")
            board.pop()
        lines.sort()
        for line in lines:
            out.write(line + "\n")
        out.write("\n")
    return status


def cmd_perft(args: argparse.Namespace) -> int:
    """Count move sequences of a given length from a layout or a position."""
    try:
        if "/" in args.start:
            board = _board_from_text(args.start, args)
        else:
            layout = get_layout(args.start, args.players)
            board = Board(
                starting_position(layout, args.variant), _rules_from_args(args, args.players)
            )
    except (PositionError, ValueError) as error:
        print(f"abalone-pbm perft: {error}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    if args.divide:
        counts = divide(board, args.depth)
        for move, count in sorted(counts.items()):
            print(f"{move}\t{count}")
        total = sum(counts.values())
    else:
        total = perft(board, args.depth)
    print(total)
    if args.time:
        print(f"{time.perf_counter() - started:.3f} s", file=sys.stderr)
    return 0


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--teams", action="store_true", help="partners play as teams (4 or 6)")
    parser.add_argument("--target", type=int, default=6, help="marbles to push off to win")
    parser.add_argument("--variant", choices=variant_names(), default=None,
                        help="a neutral-marble variant (positions may then hold * or a-f)")


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    moves = sub.add_parser("moves", help="list the legal moves of positions")
    moves.add_argument("positions", nargs="+", metavar="POSITION",
                       help="a position text, or - to read one per line from stdin")
    _add_rule_options(moves)
    moves.set_defaults(handler=cmd_moves)

    perft_parser = sub.add_parser("perft", help="count move sequences (a generator check)")
    perft_parser.add_argument("start", metavar="LAYOUT-or-POSITION")
    perft_parser.add_argument("depth", type=int)
    perft_parser.add_argument("--players", type=int, default=2, help="players of a layout")
    perft_parser.add_argument("--divide", action="store_true", help="counts per first move")
    perft_parser.add_argument("--time", action="store_true", help="time taken, on stderr")
    _add_rule_options(perft_parser)
    perft_parser.set_defaults(handler=cmd_perft)
