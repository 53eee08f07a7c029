"""The mutable ``Board``: position, legal moves, ``push``/``pop`` and the outcome.

The position is kept as one integer bitboard per player (see ``geometry``), so
generating moves is a handful of shifts and masks per direction rather than a
walk over cells.  Index 0 of the marble list is reserved for neutral marbles of
the variants; seats are numbered 1..players.

The variants (``Rules(variant=...)``, see ``variants``) are played by
:class:`VariantBoard`, a subclass that ``Board(...)`` picks by itself when the rules
name a variant.  The plain ``Board`` never looks at special marbles, so the
standard game pays nothing for them.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator

from .geometry import (
    AXES,
    BOARD_MASK,
    CELL_NAMES,
    CELLS,
    GRID_MASK,
    OFFSETS,
    iter_bits,
)
from . import movegen
from .layouts import ROW_LENGTHS, Layout, get_layout
from .moves import Move
from .notation import parse_move
from .variants import NEUTRAL_CHAR, TREASURE_CHARS, Variant, get_variant

MAX_PLAYERS = 6


class PositionError(ValueError):
    """A position text that cannot be read."""


@dataclass(frozen=True)
class Rules:
    """The options of one game that the rules depend on."""

    players: int = 2
    teams: bool = False
    target: int = 6
    movelimit: int | None = None
    ko: bool = False
    #: A neutral-marble variant: ``pillar``, ``princess``, ``soccer``, ``thief`` or None.
    variant: str | None = None

    def __post_init__(self) -> None:
        if not 2 <= self.players <= MAX_PLAYERS:
            raise ValueError(f"a game has 2 to 6 players, not {self.players}")
        if self.teams and self.players not in (4, 6):
            raise ValueError("team play needs 4 or 6 players")
        if self.target < 1:
            raise ValueError("the target must be at least one marble")
        if self.movelimit is not None and self.movelimit < 1:
            raise ValueError("the move limit must be at least one move")
        if self.variant is not None:
            get_variant(self.variant).check_players(self.players, self.teams)

    def side_of(self, seat: int) -> int:
        """The side (team, or the player alone) a seat plays for, from 0."""
        return (seat - 1) % (self.players // 2) if self.teams else seat - 1

    def seats_of_side(self, side: int) -> tuple[int, ...]:
        return tuple(s for s in range(1, self.players + 1) if self.side_of(s) == side)

    @property
    def sides(self) -> int:
        return self.players // 2 if self.teams else self.players


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the winning seats (empty for a draw) and why."""

    winners: tuple[int, ...]
    reason: str

    @property
    def draw(self) -> bool:
        return not self.winners


#: What ``pop`` restores: the marble and ejection lists before the move, the player
#: to move, the Zobrist key and the occupied cells.  A tuple, one made per move;
#: ``push`` gives the board new lists rather than editing these, so a record never
#: changes once made.
_Undo = tuple[list[int], list[int], int, int, int]


def _zobrist_table() -> tuple[list[list[int]], list[int]]:
    rng = random.Random(0xABA1)
    cells = [[rng.getrandbits(64) for _ in range(GRID_MASK.bit_length())] for _ in range(7)]
    turns = [rng.getrandbits(64) for _ in range(7)]
    return cells, turns


ZOBRIST_CELLS, ZOBRIST_TURN = _zobrist_table()
#: XORed in (besides the owner's marble) for a treasure on a cell (thief).
_TREASURE_RNG = random.Random(0x7EA5)
ZOBRIST_TREASURE = [_TREASURE_RNG.getrandbits(64) for _ in range(GRID_MASK.bit_length())]
class Board:
    """An Abalone position with its move history; ``push`` plays, ``pop`` takes back.

    With ``Rules(variant=...)`` the board is a :class:`VariantBoard`.
    """

    #: The variant's neutral marbles that nothing may move (the pillar); 0 without.
    _fixed = 0
    #: Treasure marbles (thief), a subset of the players' marbles; 0 without.
    _treasure = 0
    #: Whether the neutral marble is pushed only as the first pushed marble (soccer).
    _ball_first_only = False
    #: What decided the game in a variant ("*1": player 1 pushed off the princess).
    _event: str | None = None

    def __new__(
        cls, position: str | None = None, rules: Rules | None = None, *, ply: int = 0
    ) -> Board:
        if cls is Board and rules is not None and rules.variant is not None:
            return object.__new__(VariantBoard)
        return object.__new__(cls)

    def __init__(
        self, position: str | None = None, rules: Rules | None = None, *, ply: int = 0
    ) -> None:
        """Set up ``position``; ``ply`` is the number of moves already made before it."""
        if position is None:
            players = rules.players if rules else 2
            variant_name = rules.variant if rules else None
            position = starting_position(get_layout("standard", players), variant_name)
        marbles, turn, ejected, treasure, event = _parse_position(position)
        players = len(ejected) - 1
        if rules is None:
            rules = Rules(players=players)
        elif rules.players != players:
            raise PositionError(f"the position has {players} players, the rules {rules.players}")
        variant = get_variant(rules.variant) if rules.variant is not None else None
        _check_specials(marbles[0], treasure, event, variant, players)
        self.rules = rules
        #: The rules looked up on every move, as plain attributes.
        self._teams = rules.teams
        self._ko = rules.ko
        self._target = rules.target
        self._movelimit = rules.movelimit
        #: The side of each seat (index 0 unused) and the seats of each side, looked
        #: up on every outcome check.
        self._side_of_seat = (0,) + tuple(rules.side_of(s) for s in range(1, players + 1))
        self._seats_of_side = tuple(rules.seats_of_side(x) for x in range(rules.sides))
        #: The variant played (None for the standard game).
        self.variant = variant
        self.players = players
        self._marbles = marbles
        self._ejected = ejected
        #: Every marble on the board (kept up to date by push and pop).
        self._all = 0
        for bits in marbles:
            self._all |= bits
        if variant is not None:
            self._treasure = treasure
            self._event = event
            self._fixed = 0 if variant.pushable else marbles[0]
            self._ball_first_only = variant.neutral_pushed_only_first
        self.turn = turn
        self.move_stack: list[Move] = []
        self._stack: list[_Undo] = []
        self._resigned = 0  # bit per seat
        self._key = self._compute_key()
        self._ko_keys: list[tuple[int, tuple[int, ...]]] = []
        #: The same entries counted, so that a repetition is found without a scan.
        self._ko_seen: Counter[tuple[int, tuple[int, ...]]] = Counter()
        self._start_marbles = [m.bit_count() for m in marbles]
        self._base_ply = ply
        self._probing_ko = False

    # ----------------------------------------------------------------- set-up
    @classmethod
    def from_layout(cls, name: str = "standard", rules: Rules | None = None) -> Board:
        rules = rules or Rules()
        return cls(starting_position(get_layout(name, rules.players), rules.variant), rules)

    def copy(self) -> Board:
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._marbles = list(self._marbles)
        clone._ejected = list(self._ejected)
        clone.move_stack = list(self.move_stack)
        # Undo records are never edited (push makes new lists): they can be shared.
        clone._stack = list(self._stack)
        clone._ko_keys = list(self._ko_keys)
        clone._ko_seen = Counter(self._ko_seen)
        return clone

    # ------------------------------------------------------------ inspection
    def position(self) -> str:
        """The position text: rows A-I, the player to move, ejections per player."""
        flat = []
        for cell in CELLS:
            flat.append(self._char_at(cell))
        rows, start = [], 0
        for length in ROW_LENGTHS:
            rows.append("".join(flat[start : start + length]))
            start += length
        counts = ",".join(str(n) for n in self._ejected[1:])
        event = f" {self._event}" if self._event is not None else ""
        return f"{'/'.join(rows)} {self.turn} {counts}{event}"

    def _char_at(self, cell: int) -> str:
        for seat in range(1, self.players + 1):
            if self._marbles[seat] >> cell & 1:
                if self._treasure >> cell & 1:
                    return TREASURE_CHARS[seat - 1]
                return str(seat)
        if self._marbles[0] >> cell & 1:
            return NEUTRAL_CHAR
        return "."

    def owner(self, cell: int) -> int | None:
        """The seat whose marble is on ``cell``, 0 for a neutral marble, None if empty."""
        for seat, bits in enumerate(self._marbles):
            if bits >> cell & 1:
                return seat
        return None

    def marbles(self, seat: int) -> int:
        """Bit mask of the seat's marbles (seat 0: the neutral marbles of a variant)."""
        return self._marbles[seat]

    @property
    def treasures(self) -> int:
        """Bit mask of the treasure marbles (thief); each is also a marble of its seat."""
        return self._treasure

    def is_treasure(self, cell: int) -> bool:
        return bool(self._treasure >> cell & 1)

    @property
    def event(self) -> str | None:
        """What ended a variant game (see ``variants``), or None."""
        return self._event

    def marble_count(self, seat: int) -> int:
        return self._marbles[seat].bit_count()

    def ejected(self, seat: int) -> int:
        """Marbles this seat has pushed off the board."""
        return self._ejected[seat]

    @property
    def ejected_counts(self) -> tuple[int, ...]:
        return tuple(self._ejected[1:])

    def lost(self, seat: int) -> int:
        """Marbles of this seat that have been pushed off since the start of play."""
        return self._start_marbles[seat] - self._marbles[seat].bit_count()

    @property
    def ply(self) -> int:
        """Moves made since the start of the game (for the move limit)."""
        return self._base_ply + len(self.move_stack)

    def zobrist_hash(self) -> int:
        return self._key

    def is_active(self, seat: int) -> bool:
        return not self._resigned >> seat & 1

    def _compute_key(self) -> int:
        key = ZOBRIST_TURN[self.turn]
        for seat, bits in enumerate(self._marbles):
            table = ZOBRIST_CELLS[seat]
            while bits:
                low = bits & -bits
                key ^= table[low.bit_length() - 1]
                bits ^= low
        bits = self._treasure
        while bits:
            low = bits & -bits
            key ^= ZOBRIST_TREASURE[low.bit_length() - 1]
            bits ^= low
        return key

    # -------------------------------------------------------------- masks
    def side_masks(self, seat: int) -> tuple[int, int, int]:
        """(own, partners', enemy) marble masks for the seat."""
        own = self._marbles[seat]
        friends = 0
        if self._teams:
            side = self.rules.side_of(seat)
            for other in range(1, self.players + 1):
                if other != seat and self.rules.side_of(other) == side:
                    friends |= self._marbles[other]
        return own, friends, self._all & ~own & ~friends

    def _occupied(self) -> int:
        return self._all

    # ------------------------------------------------------- move generation
    @property
    def legal_moves(self) -> LegalMoves:
        return LegalMoves(self)

    def generate_legal_moves(self) -> Iterator[Move]:
        if self.is_game_over():
            return iter(())
        moves = self._generate(self.turn)
        if self.rules.ko:
            moves = [m for m in moves if not self.repeats(m)]
        return iter(moves)

    def _generate(self, seat: int) -> list[Move]:
        if self.rules.teams:
            return self._generate_general(seat)
        return self._generate_fast(seat)

    def _generate_fast(self, seat: int) -> list[Move]:
        own, _, enemy = self.side_masks(seat)
        lead_only = self._marbles[0] if self._ball_first_only else 0
        return movegen.moves(own, enemy, self._fixed, lead_only)

    @staticmethod
    def _append_side_steps(own: int, empty: int, append: Callable[[Move], None]) -> None:
        """Add every side-step of the lines of ``own`` into ``empty`` cells with ``append``."""
        for axis in AXES:
            o = OFFSETS[axis]
            t2 = own & (own >> o)  # tails whose next cell along the axis is own
            if not t2:
                continue
            t3 = t2 & (t2 >> o)
            e2 = empty & (empty >> o)
            e3 = e2 & (e2 >> o)
            for d in range(6):
                if d == axis or d == axis + 3:
                    continue
                s = OFFSETS[d]
                for tails, room, length in ((t2, e2, 2), (t3, e3, 3)):
                    if not tails:
                        continue
                    ok = (tails << s if s > 0 else tails >> -s) & room
                    while ok:
                        low = ok & -ok
                        c = low.bit_length() - 1 - s
                        ok ^= low
                        cells = (1 << c) | (1 << (c + o))
                        if length == 3:
                            cells |= 1 << (c + 2 * o)
                        append(Move(cells, d))

    def _generate_general(self, seat: int) -> list[Move]:
        """Cell-by-cell generator; handles partner marbles in team play.

        Also serves as the reference the fast generator is tested against.
        """
        own, friends, enemy = self.side_masks(seat)
        occupied = own | friends | enemy | self._fixed
        empty = BOARD_MASK & ~occupied
        mine = own | friends
        lead_only = self._marbles[0] if self._ball_first_only else 0
        moves: list[Move] = []
        rear_cells = own
        while rear_cells:
            low = rear_cells & -rear_cells
            rear = low.bit_length() - 1
            rear_cells ^= low
            for d in range(6):
                o = OFFSETS[d]
                cells = 0
                has_partner = False
                front = rear
                for length in (1, 2, 3):
                    if length > 1:
                        front += o
                        if not mine >> front & 1:
                            break
                        has_partner = has_partner or not (own >> front & 1)
                    cells |= 1 << front
                    target = front + o
                    if empty >> target & 1:
                        if not has_partner:
                            moves.append(Move(cells, d))
                        continue
                    if length == 1 or not (enemy >> target & 1):
                        continue
                    run, after = 0, target
                    # A lead-only marble (the ball) behind a pushed one stops the run:
                    # it is occupied, so the push is blocked.
                    while enemy >> after & 1 and not (run and lead_only >> after & 1):
                        run += 1
                        after += o
                    if run < length and not (occupied >> after & 1):
                        moves.append(Move(cells, d))
        self._append_side_steps(own, empty, moves.append)
        return moves

    def count_legal_moves(self) -> int:
        """Number of legal moves, counted with set operations where the rules allow."""
        if self._teams or self._ko:
            return sum(1 for _ in self.generate_legal_moves())
        if self.outcome() is not None:
            return 0
        marbles = self._marbles
        own = marbles[self.turn]
        fixed = self._fixed
        lead_only = marbles[0] if self._ball_first_only else 0
        return movegen.count_moves(own, self._all & ~own & ~fixed, fixed, lead_only)

    # ------------------------------------------------------------ playing
    def push(self, move: Move) -> None:
        """Play a move (trusted to be legal; use ``parse_move`` for user input)."""
        seat = self.turn
        before = self._marbles
        occupied = self._all
        self._stack.append((before, self._ejected, seat, self._key, occupied))
        self.move_stack.append(move)
        marbles = self._marbles = before.copy()
        cells, o = move.cells, OFFSETS[move.direction]
        key = self._key
        table = ZOBRIST_CELLS
        own = marbles[seat]
        if move.is_inline:
            rear, front = move.rear, move.front
            target = front + o
            if not (occupied >> target & 1) and (own & cells) == cells:
                # Into an empty cell: the rear marble takes the place ahead of the front.
                change = (1 << rear) | (1 << target)
                marbles[seat] = own ^ change
                self._all = occupied ^ change
                row = table[seat]
                key ^= row[rear] ^ row[target]
            else:
                end = target
                while occupied >> end & 1:
                    end += o
                # The rear cell empties; the far end fills unless its marble went off.
                self._all = occupied ^ (1 << rear) | (BOARD_MASK & (1 << end))
                # Shift every marble from the far end back to the rear, one step.
                cell = end - o
                while True:
                    for who in range(len(marbles)):
                        if marbles[who] >> cell & 1:
                            break
                    marbles[who] ^= 1 << cell
                    key ^= table[who][cell]
                    dest = cell + o
                    if BOARD_MASK >> dest & 1:
                        marbles[who] |= 1 << dest
                        key ^= table[who][dest]
                    else:
                        ejected = self._ejected = self._ejected.copy()
                        ejected[seat] += 1
                    if cell == rear:
                        break
                    cell -= o
        else:
            marbles[seat] = own ^ cells ^ move.moved
            self._all = occupied ^ cells ^ move.moved
            row = table[seat]
            bits = cells
            while bits:
                low = bits & -bits
                c = low.bit_length() - 1
                key ^= row[c] ^ row[c + o]
                bits ^= low
        nxt = self._next_seat(seat)
        self.turn = nxt
        self._key = key ^ ZOBRIST_TURN[seat] ^ ZOBRIST_TURN[nxt]
        if self._ko:
            # _next_seat may probe moves (ko), which rebinds self._marbles: read it afresh.
            self._remember_ko((seat, (*self._marbles, nxt)))

    def pop(self) -> Move:
        """Take back the last move and return it."""
        self._marbles, self._ejected, self.turn, self._key, self._all = self._stack.pop()
        if self._ko:
            self._ko_seen[self._ko_keys.pop()] -= 1
        return self.move_stack.pop()

    def _remember_ko(self, entry: tuple[int, tuple[int, ...]]) -> None:
        """The position a seat's move made, for the ko rule."""
        self._ko_keys.append(entry)
        self._ko_seen[entry] += 1

    def peek(self) -> Move | None:
        return self.move_stack[-1] if self.move_stack else None

    def _next_seat(self, seat: int) -> int:
        """The next seat in turn order that is still playing and has marbles.

        A seat whose marbles are all blocked is passed over as well.
        """
        players = self.players
        marbles = self._marbles
        candidate = seat
        empty = -1
        for _ in range(players):
            candidate = candidate % players + 1
            bits = marbles[candidate]
            if self._resigned >> candidate & 1 or not bits:
                continue
            if candidate == seat:
                return candidate
            if self._ko:
                if self._has_legal_move(candidate):
                    return candidate
                continue
            # Most often a marble has an empty neighbour: then it can move.
            if empty < 0:
                empty = BOARD_MASK & ~self._all
            if _has_step(bits, empty) or self._generate(candidate):
                return candidate
        return seat if self._marbles[seat] else self.turn

    def _has_legal_move(self, seat: int) -> bool:
        """Whether ``seat`` could move now, the ko rule included."""
        if not self._can_move(seat):
            return False
        if not self.rules.ko or self._probing_ko:
            return True
        # Under ko every move of the seat may repeat one of its own earlier positions;
        # try them (the probe's own pushes do not probe again).
        saved_turn = self.turn
        self.turn, self._probing_ko = seat, True
        try:
            return any(not self.repeats(m) for m in self._generate(seat))
        finally:
            self.turn, self._probing_ko = saved_turn, False

    def _can_move(self, seat: int) -> bool:
        if _has_step(self._marbles[seat], BOARD_MASK & ~self._occupied()):
            return True
        return bool(self._generate(seat))

    def resign(self, seat: int) -> None:
        """Take a seat out of the turn order; its marbles stay on the board."""
        self._resigned |= 1 << seat
        if self.turn == seat:
            self.turn = self._next_seat(seat)
            self._key = self._compute_key()

    def reinstate(self, seat: int) -> None:
        self._resigned &= ~(1 << seat)

    # ------------------------------------------------------------ the outcome
    def side_score(self, side: int) -> int:
        ejected = self._ejected
        return sum(ejected[s] for s in self._seats_of_side[side])

    def outcome(self) -> Outcome | None:
        """The result if the game is over, else None."""
        ejected = self._ejected
        if self._teams:
            scores = [sum(ejected[s] for s in seats) for seats in self._seats_of_side]
        else:
            scores = ejected[1:]
        best = max(scores)
        if best >= self._target:
            side = scores.index(best)
            return Outcome(self._seats_of_side[side], f"pushed off {self._target} marbles")
        # The sides that can still move; two are enough to go on (checked cheaply
        # first: a marble with an empty neighbour).
        marbles = self._marbles
        empty = BOARD_MASK & ~self._all
        side_of = self._side_of_seat
        resigned = self._resigned
        first = -1
        for s in range(1, self.players + 1):
            bits = marbles[s]
            side = side_of[s]
            if side == first or resigned >> s & 1 or not bits:
                continue
            if _has_step(bits, empty) or self._generate(s):
                if first >= 0:
                    break  # a second side can move
                first = side
        else:
            if first < 0:
                return Outcome((), "no one can move")
            return Outcome(self._seats_of_side[first], "the last one able to play")
        limit = self._movelimit
        if limit is not None and self.ply >= limit:
            if scores.count(best) > 1:
                return Outcome((), f"move limit of {limit} reached with equal scores")
            side = scores.index(best)
            return Outcome(
                self._seats_of_side[side],
                f"move limit of {limit} reached with the most marbles pushed off",
            )
        return None

    def is_game_over(self) -> bool:
        return self.outcome() is not None

    # ------------------------------------------------------------- ko rule
    def repeats(self, move: Move) -> bool:
        """Whether ``move`` recreates a position its mover made before (the ko rule;
        always False without it)."""
        if not self.rules.ko:
            return False
        self.push(move)
        entry = self._ko_keys[-1]
        self.pop()
        return self._ko_seen[entry] > 0

    # ------------------------------------------------------------- notation
    def parse_move(self, text: str) -> Move:
        """Read a move in pbmserv notation and check it, explaining any refusal."""
        return parse_move(self, text)

    def push_text(self, text: str) -> Move:
        move = self.parse_move(text)
        self.push(move)
        return move

    def __str__(self) -> str:
        return self.position()

    def __repr__(self) -> str:
        return f"Board({self.position()!r})"


class LegalMoves:
    """A lazy view of the legal moves of a board."""

    def __init__(self, board: Board) -> None:
        self._board = board

    def __iter__(self) -> Iterator[Move]:
        return self._board.generate_legal_moves()

    def __len__(self) -> int:
        return self._board.count_legal_moves()

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def __contains__(self, move: object) -> bool:
        return isinstance(move, Move) and any(m == move for m in self)

    def count(self) -> int:
        return len(self)


def _has_step(own: int, empty: int) -> bool:
    """Whether one of ``own`` marbles has an empty neighbour (then it can move)."""
    for o in OFFSETS:
        if (own << o if o > 0 else own >> -o) & empty:
            return True
    return False


def starting_position(layout: Layout, variant: str | None = None) -> str:
    """The position text of a layout before the first move, with the special marbles of
    ``variant`` (ValueError, in a sentence for the players, where it makes no sense)."""
    rows = layout.position_rows()
    if variant is not None:
        rules_of = get_variant(variant)
        rules_of.check_players(layout.players, False)
        special = rules_of.special_cells(layout)
        flat = [special.get(cell, char) for cell, char in zip(CELLS, "".join(layout.rows))]
        cut, start = [], 0
        for length in ROW_LENGTHS:
            cut.append("".join(flat[start : start + length]))
            start += length
        rows = "/".join(cut)
    return f"{rows} 1 {','.join('0' * layout.players)}"


def _check_specials(
    neutral: int, treasure: int, event: str | None, variant: Variant | None, players: int
) -> None:
    """A position's special marbles and event must be the variant's (PositionError)."""
    if neutral:
        where = " ".join(CELL_NAMES[c] for c in iter_bits(neutral))
        if variant is None or not variant.neutral:
            played = f"{variant.name} has" if variant else "the game has no variant with"
            raise PositionError(
                f"the position has a neutral marble ({NEUTRAL_CHAR}) on {where}, "
                f"but {played} none (a pillar, princess or ball)"
            )
        if neutral.bit_count() > 1:
            raise PositionError(f"the position has more than one {NEUTRAL_CHAR} ({where})")
    if treasure and (variant is None or not variant.treasures):
        where = " ".join(CELL_NAMES[c] for c in iter_bits(treasure))
        played = f"{variant.name} has" if variant else "the game has no variant with"
        raise PositionError(
            f"the position has treasures (a-f) on {where}, but {played} none (thief)"
        )
    if event is not None:
        if variant is None:
            raise PositionError(
                "a position is '<rows A-I separated by /> <player to move> <ejected counts>'; "
                f"a fourth field ({event!r}) is only for the end of a variant game"
            )
        try:
            variant.check_event(event, players)
        except ValueError as error:
            raise PositionError(str(error)) from None


def _parse_position(text: str) -> tuple[list[int], int, list[int], int, str | None]:
    """(marbles by seat, 0 = neutral; the player to move; ejected counts, from index 1;
    the treasure mask; the variant's event or None)."""
    parts = text.split()
    if len(parts) not in (3, 4):
        raise PositionError(
            "a position is '<rows A-I separated by /> <player to move> <ejected counts>'"
        )
    rows_text, turn_text, ejected_text = parts[:3]
    event = parts[3] if len(parts) == 4 else None
    rows = rows_text.split("/")
    if len(rows) != 9:
        raise PositionError(f"a position has 9 rows separated by '/', not {len(rows)}")
    for letter, row, length in zip("ABCDEFGHI", rows, ROW_LENGTHS):
        if len(row) != length:
            raise PositionError(f"row {letter} has {length} cells, not {len(row)}: {row!r}")
    try:
        ejected = [0] + [int(n) for n in ejected_text.split(",")]
    except ValueError:
        raise PositionError(f"bad ejected counts {ejected_text!r}") from None
    players = len(ejected) - 1
    if not 2 <= players <= MAX_PLAYERS:
        raise PositionError(f"the ejected counts name {players} players; 2 to 6 can play")
    if any(n < 0 for n in ejected):
        raise PositionError("ejected counts cannot be negative")
    if not turn_text.isdigit() or not 1 <= int(turn_text) <= players:
        raise PositionError(f"the player to move must be 1 to {players}, not {turn_text!r}")
    marbles = [0] * (players + 1)
    treasure = 0
    letters = TREASURE_CHARS[:players]
    for cell, char in zip(CELLS, "".join(rows)):
        if char == ".":
            continue
        if char == NEUTRAL_CHAR:
            marbles[0] |= 1 << cell
        elif char in letters:
            seat = letters.index(char) + 1
            if marbles[seat] & treasure:
                raise PositionError(f"player {seat} has more than one treasure ({char})")
            marbles[seat] |= 1 << cell
            treasure |= 1 << cell
        elif char.isdigit() and 1 <= int(char) <= players:
            marbles[int(char)] |= 1 << cell
        else:
            raise PositionError(
                f"{CELL_NAMES[cell]} holds {char!r}; use '.' or 1 to {players} "
                f"(variants: {NEUTRAL_CHAR} or a to {letters[-1]})"
            )
    return marbles, int(turn_text), ejected, treasure, event


class VariantBoard(Board):
    """The board of a variant game; ``Board(position, Rules(variant=...))`` makes one.

    It adds to ``Board``: treasures that follow their marbles in ``push``/``pop`` (and
    in the Zobrist key and the ko rule), fixed neutral marbles (the pillar) that are
    neither pushed nor entered, neutral marbles that do not count as pushed off, and
    the variant's event (who pushed off what) in the outcome and the position text.
    """

    variant: Variant

    def __init__(
        self, position: str | None = None, rules: Rules | None = None, *, ply: int = 0
    ) -> None:
        if rules is None or rules.variant is None:
            raise ValueError("a VariantBoard needs Rules(variant=...)")
        super().__init__(position, rules, ply=ply)
        self._special_stack: list[tuple[int, str | None]] = []

    def copy(self) -> Board:
        clone = super().copy()
        assert isinstance(clone, VariantBoard)
        clone._special_stack = list(self._special_stack)
        return clone

    # ---------------------------------------------------------- generation
    def side_masks(self, seat: int) -> tuple[int, int, int]:
        own, friends, enemy = super().side_masks(seat)
        return own, friends, enemy & ~self._fixed

    # ------------------------------------------------------------- playing
    def push(self, move: Move) -> None:
        seat = self.turn
        before = self._marbles
        self._stack.append((before, self._ejected, seat, self._key, self._all))
        marbles = self._marbles = before.copy()
        self._ejected = self._ejected.copy()
        self._special_stack.append((self._treasure, self._event))
        self.move_stack.append(move)
        o = OFFSETS[move.direction]
        line = iter_bits(move.cells)
        if move.is_inline:
            # The line and the marbles in front of it each move one step, front first.
            rear, front = (line[0], line[-1]) if o > 0 else (line[-1], line[0])
            occupied = self._occupied()
            end = front + o
            while occupied >> end & 1:
                end += o
            order = list(range(end - o, rear - o, -o))
        else:
            order = line  # a side-step: every target is empty
        key, treasure = self._key, self._treasure
        for cell in order:
            for who in range(len(marbles)):
                if marbles[who] >> cell & 1:
                    break
            marbles[who] ^= 1 << cell
            key ^= ZOBRIST_CELLS[who][cell]
            special = treasure >> cell & 1
            if special:
                treasure ^= 1 << cell
                key ^= ZOBRIST_TREASURE[cell]
            dest = cell + o
            if BOARD_MASK >> dest & 1:
                marbles[who] |= 1 << dest
                key ^= ZOBRIST_CELLS[who][dest]
                if special:
                    treasure |= 1 << dest
                    key ^= ZOBRIST_TREASURE[dest]
            else:
                if who:
                    self._ejected[seat] += 1
                event = self.variant.on_eject(seat, who, cell, move.direction, bool(special))
                if event is not None:
                    self._event = event
        self._treasure = treasure
        self._key = key
        occupied = 0
        for bits in marbles:
            occupied |= bits
        self._all = occupied
        nxt = self._next_seat(seat)
        self.turn = nxt
        self._key = key ^ ZOBRIST_TURN[seat] ^ ZOBRIST_TURN[nxt]
        if self._ko:
            self._remember_ko((seat, (*self._marbles, self._treasure, nxt)))

    def pop(self) -> Move:
        self._treasure, self._event = self._special_stack.pop()
        return super().pop()

    # ---------------------------------------------------------- the outcome
    def outcome(self) -> Outcome | None:
        """The variant's result once its event happened, else the normal rules'."""
        if self._event is not None:
            winners, reason = self.variant.result(self._event, self.rules)
            return Outcome(winners, reason)
        return super().outcome()


__all__ = [
    "Board",
    "LegalMoves",
    "Outcome",
    "PositionError",
    "Rules",
    "VariantBoard",
    "starting_position",
]
