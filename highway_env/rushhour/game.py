"""Rush Hour (Nob Yoshigahara; the Palm game "Traffic!"): boards, moves and a BFS solver.

Board notation (Fogleman's Rush Hour database): 36 characters, row-major, top row first.
``o`` or ``.`` empty, ``x`` wall (fixed), ``A`` the target car, ``B``..``Z`` the other vehicles
(cars of length 2, trucks of length 3; the length and axis are inferred from the contiguous run of
cells of each letter). The target car lies horizontally on the third row (row index 2); the puzzle
is solved when it reaches the right edge (it occupies column 5, the exit), which is how the
published minimal move counts are counted (the final slide of ``A`` to the edge is a move).

A *move* slides one vehicle any number of cells in one direction along its axis; it is written
``(letter, delta)`` (a :class:`Move`) with ``delta`` a non-zero int, positive = right (horizontal
vehicles) or down (vertical ones), or as a string ``"B+2"`` / ``"A-1"`` (``str(move)``,
:func:`parse_move`).

Solver: :func:`solve`, a breadth-first search over the whole reachable component (its size is the
"cluster size" of the database format); a state is the vehicles' positions packed into one int.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, NamedTuple

SIZE = 6
CELLS = SIZE * SIZE
TARGET = "A"
TARGET_ROW = 2
EXIT_COL = SIZE - 1
EMPTY_CHARS = "o."
WALL = "x"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
BITS = 3  # positions are 0..4


class RushHourError(ValueError):
    """A malformed board, line, move or level."""


class IllegalMoveError(RushHourError):
    """A move that is not legal on the given board."""


class Move(NamedTuple):
    """Slide ``vehicle`` by ``delta`` cells (positive: right / down)."""

    vehicle: str
    delta: int

    def __str__(self) -> str:
        return f"{self.vehicle}{self.delta:+d}"


_MOVE_RE = re.compile(r"^\s*([A-Z])\s*([+-]\d+)\s*$")


def parse_move(text: str | Move | tuple) -> Move:
    """``"B+2"`` / ``"A-1"`` / ``("B", 2)`` -> :class:`Move`."""
    if isinstance(text, tuple):
        if len(text) != 2:
            raise RushHourError(f"bad move {text!r}: expected (vehicle, delta)")
        v, d = text
        if not (isinstance(v, str) and len(v) == 1 and v in LETTERS) or int(d) != d or d == 0:
            raise RushHourError(f"bad move {text!r}: expected (letter A-Z, non-zero int)")
        return Move(v, int(d))
    m = _MOVE_RE.match(str(text))
    if not m or int(m.group(2)) == 0:
        raise RushHourError(f"bad move {text!r}: expected e.g. 'B+2' or 'A-1'")
    return Move(m.group(1), int(m.group(2)))


@dataclass(frozen=True)
class Vehicle:
    """A vehicle: ``letter``, ``horizontal``, ``length``, the fixed ``line`` (row if horizontal,
    else column) and ``pos`` (leftmost column if horizontal, else topmost row)."""

    letter: str
    horizontal: bool
    length: int
    line: int
    pos: int

    def cells(self, pos: int | None = None) -> list[int]:
        p = self.pos if pos is None else pos
        if self.horizontal:
            return [self.line * SIZE + p + i for i in range(self.length)]
        return [(p + i) * SIZE + self.line for i in range(self.length)]

    def mask(self, pos: int | None = None) -> int:
        return sum(1 << c for c in self.cells(pos))


class Board:
    """An immutable Rush Hour position: vehicles (sorted by letter, ``A`` first) and walls."""

    __slots__ = ("vehicles", "walls", "_index")

    def __init__(self, vehicles: Iterable[Vehicle], walls: Iterable[int] = ()):
        vs = sorted(vehicles, key=lambda v: v.letter)
        self.vehicles: tuple[Vehicle, ...] = tuple(vs)
        self.walls: frozenset[int] = frozenset(walls)
        self._index = {v.letter: i for i, v in enumerate(vs)}
        self._validate()

    # -- construction / validation -------------------------------------------------------------
    def _validate(self) -> None:
        if len(self._index) != len(self.vehicles):
            raise RushHourError("duplicate vehicle letter")
        occupied: dict[int, str] = {}
        for w in self.walls:
            if not 0 <= w < CELLS:
                raise RushHourError(f"wall cell {w} off the board")
            occupied[w] = WALL
        for v in self.vehicles:
            if v.letter not in LETTERS:
                raise RushHourError(f"bad vehicle letter {v.letter!r}")
            if v.length not in (2, 3):
                raise RushHourError(f"vehicle {v.letter} has length {v.length}; must be 2 or 3")
            if not (0 <= v.line < SIZE and 0 <= v.pos and v.pos + v.length <= SIZE):
                raise RushHourError(f"vehicle {v.letter} does not fit on the board")
            for c in v.cells():
                if c in occupied:
                    raise RushHourError(
                        f"vehicle {v.letter} overlaps {occupied[c]!r} at row {c // SIZE + 1}, "
                        f"column {c % SIZE + 1}")
                occupied[c] = v.letter
        if TARGET not in self._index:
            raise RushHourError("no target car 'A' on the board")
        a = self.vehicles[self._index[TARGET]]
        if not a.horizontal or a.line != TARGET_ROW:
            raise RushHourError("target car 'A' must lie horizontally on the third row")

    @classmethod
    def from_string(cls, text: str) -> "Board":
        """Parse a 36-character board (``o``/``.`` empty, ``x`` wall, ``A``..``Z`` vehicles).

        Whitespace (e.g. one row per line) is ignored."""
        if not isinstance(text, str):
            raise RushHourError(f"board must be a string, not {type(text).__name__}")
        s = "".join(text.split())
        if len(s) != CELLS:
            raise RushHourError(f"board must have {CELLS} cells, got {len(s)}")
        bad = sorted({ch for ch in s if ch not in EMPTY_CHARS + WALL + LETTERS})
        if bad:
            raise RushHourError(
                f"bad character(s) {''.join(bad)!r} in board; use 'o' or '.' for empty, "
                "'x' for a wall, 'A'..'Z' for vehicles")
        walls = [i for i, ch in enumerate(s) if ch == WALL]
        cells: dict[str, list[int]] = {}
        for i, ch in enumerate(s):
            if ch in LETTERS:
                cells.setdefault(ch, []).append(i)
        vehicles = []  # Board() checks the lengths and the target car
        for letter, cs in sorted(cells.items()):
            rows = {c // SIZE for c in cs}
            cols = {c % SIZE for c in cs}
            n = len(cs)
            if len(rows) == 1 and max(cols) - min(cols) == n - 1:
                vehicles.append(Vehicle(letter, True, n, cs[0] // SIZE, min(cols)))
            elif len(cols) == 1 and max(rows) - min(rows) == n - 1:
                vehicles.append(Vehicle(letter, False, n, cs[0] % SIZE, min(rows)))
            else:
                raise RushHourError(
                    f"vehicle {letter} is not a straight contiguous run of cells ({n} cell(s))")
        return cls(vehicles, walls)

    # -- accessors ----------------------------------------------------------------------------
    def __getitem__(self, letter: str) -> Vehicle:
        try:
            return self.vehicles[self._index[letter]]
        except KeyError:
            raise RushHourError(f"no vehicle {letter!r} on the board") from None

    def __contains__(self, letter: object) -> bool:
        return letter in self._index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and (self.vehicles, self.walls) == (other.vehicles,
                                                                            other.walls)

    def __hash__(self) -> int:
        return hash((self.vehicles, self.walls))

    def grid(self) -> list[list[str]]:
        g = [["o"] * SIZE for _ in range(SIZE)]
        for w in self.walls:
            g[w // SIZE][w % SIZE] = WALL
        for v in self.vehicles:
            for c in v.cells():
                g[c // SIZE][c % SIZE] = v.letter
        return g

    def to_string(self) -> str:
        """The 36-character notation (``o`` empty)."""
        return "".join("".join(r) for r in self.grid())

    def __str__(self) -> str:
        return "\n".join("".join(r).replace("o", ".") for r in self.grid())

    def __repr__(self) -> str:
        return f"Board.from_string({self.to_string()!r})"

    def occupancy(self, exclude: str | None = None) -> int:
        m = sum(1 << w for w in self.walls)
        for v in self.vehicles:
            if v.letter != exclude:
                m |= v.mask()
        return m

    def is_solved(self) -> bool:
        a = self[TARGET]
        return a.pos + a.length - 1 == EXIT_COL

    # -- moves --------------------------------------------------------------------------------
    def move_range(self, letter: str) -> tuple[int, int]:
        """(most negative, most positive) legal delta for ``letter`` (0 when blocked)."""
        v = self[letter]
        occ = self.occupancy(exclude=letter)
        lo = 0
        while v.pos + lo - 1 >= 0 and not occ & v.mask(v.pos + lo - 1):
            lo -= 1
        hi = 0
        while v.pos + hi + 1 + v.length <= SIZE and not occ & v.mask(v.pos + hi + 1):
            hi += 1
        return lo, hi

    def legal_moves(self) -> list[Move]:
        """All legal moves, by letter then delta."""
        out = []
        for v in self.vehicles:
            lo, hi = self.move_range(v.letter)
            out.extend(Move(v.letter, d) for d in range(lo, hi + 1) if d)
        return out

    def is_legal(self, move) -> bool:
        try:
            self.move(move)
        except RushHourError:
            return False
        return True

    def move(self, move) -> "Board":
        """The board after ``move`` (a :class:`Move`, ``(letter, delta)`` or ``"B+2"``)."""
        m = parse_move(move)
        if m.vehicle not in self:
            raise IllegalMoveError(f"illegal move {m}: no vehicle {m.vehicle} on the board")
        lo, hi = self.move_range(m.vehicle)
        if not lo <= m.delta <= hi:
            raise IllegalMoveError(
                f"illegal move {m}: vehicle {m.vehicle} can move by {lo}..{hi} only")
        v = self[m.vehicle]
        nv = Vehicle(v.letter, v.horizontal, v.length, v.line, v.pos + m.delta)
        return Board([nv if x.letter == v.letter else x for x in self.vehicles], self.walls)

    def play(self, moves: Iterable) -> "Board":
        b = self
        for m in moves:
            b = b.move(m)
        return b


def parse_board(text: "str | Board") -> Board:
    """A :class:`Board` from a 36-character string (or a Board, returned as is)."""
    return text if isinstance(text, Board) else Board.from_string(text)


class Puzzle(NamedTuple):
    moves: int
    board: Board
    cluster_size: int | None


def parse_line(line: str) -> Puzzle:
    """Parse a Rush Hour database line ``<moves> <36-char board> <cluster size>``.

    The cluster size may be omitted (None)."""
    parts = line.split()
    if len(parts) not in (2, 3):
        raise RushHourError(
            f"bad puzzle line {line.strip()!r}: expected '<moves> <board> <cluster size>'")
    try:
        moves = int(parts[0])
        cluster = int(parts[2]) if len(parts) == 3 else None
    except ValueError:
        raise RushHourError(f"bad puzzle line {line.strip()!r}: moves and cluster size must be "
                            "integers") from None
    return Puzzle(moves, Board.from_string(parts[1]), cluster)


def load_puzzles(lines: Iterable[str]) -> list[Puzzle]:
    """Parse database lines, skipping blank lines and ``#`` comments."""
    return [parse_line(ln) for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


class Card(NamedTuple):
    number: int
    moves: int  # published minimal number of moves
    board: Board


CARDS_FILE = "rushhour_cards40.txt"
NUM_LEVELS = 40


@functools.cache
def _cards() -> tuple[Card, ...]:
    text = resources.files("highway_env").joinpath("data", CARDS_FILE).read_text()
    rows = [ln.split()[:3] for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return tuple(Card(int(num), int(moves), Board.from_string(board)) for num, moves, board in rows)


def load_cards() -> list[Card]:
    """The 40 original cards (= Traffic! levels 1..40) with their published minimal move counts."""
    return list(_cards())


def level(n: int) -> Card:
    """Card / Traffic! level ``n`` (1..40)."""
    try:
        k = int(n)
    except (TypeError, ValueError):
        raise RushHourError(f"level must be an integer 1..{NUM_LEVELS}, got {n!r}") from None
    if k != n or not 1 <= k <= NUM_LEVELS:
        raise RushHourError(f"level must be an integer 1..{NUM_LEVELS}, got {n!r}")
    return load_cards()[k - 1]


# -- solver -----------------------------------------------------------------------------------
class Solution(NamedTuple):
    moves: list[Move] | None  # None when the puzzle cannot be solved
    states: int  # number of states reachable from the start (including it)

    @property
    def num_moves(self) -> int | None:
        return None if self.moves is None else len(self.moves)


def solve(board: "str | Board") -> Solution:
    """Breadth-first search: a minimal solution and the number of reachable states.

    The whole reachable component is explored (so ``states`` is its size); the solution is the
    first solved state reached, hence minimal in moves (each move = one vehicle, any distance)."""
    b = parse_board(board)
    vs = b.vehicles
    n = len(vs)
    shifts = [BITS * i for i in range(n)]
    wall_mask = sum(1 << w for w in b.walls)
    masks = [[v.mask(p) if p + v.length <= SIZE else 0 for p in range(SIZE + 1)] for v in vs]
    maxpos = [SIZE - v.length for v in vs]
    # the cell a vehicle at position p enters one step back / forward
    before = [[m[p - 1] & ~m[p] if p > 0 else 0 for p in range(SIZE)] for m in masks]
    after = [[m[p + 1] & ~m[p] for p in range(SIZE)] for m in masks]
    letters = [v.letter for v in vs]
    ia = letters.index(TARGET)
    goal_pos = maxpos[ia]
    idx = list(range(n))
    keep = (1 << BITS) - 1

    start = sum(v.pos << shifts[i] for i, v in enumerate(vs))
    parent: dict[int, tuple[int, int, int]] = {start: (-1, 0, 0)}
    queue = deque([start])
    found = start if b.is_solved() else -1
    while queue:
        s = queue.popleft()
        pos = [(s >> sh) & keep for sh in shifts]
        occ = wall_mask
        for i in idx:
            occ |= masks[i][pos[i]]
        for i in idx:
            p = pos[i]
            sh = shifts[i]
            # negative direction
            q = p
            while q > 0 and not occ & before[i][q]:
                q -= 1
                t = s - ((p - q) << sh)
                if t not in parent:
                    parent[t] = (s, i, q - p)
                    queue.append(t)
            q = p
            mp = maxpos[i]
            while q < mp and not occ & after[i][q]:
                q += 1
                t = s + ((q - p) << sh)
                if t not in parent:
                    parent[t] = (s, i, q - p)
                    queue.append(t)
                    if found < 0 and i == ia and q == goal_pos:
                        found = t
    if found < 0:
        return Solution(None, len(parent))
    moves: list[Move] = []
    s = found
    while s != start:
        ps, i, d = parent[s]
        moves.append(Move(letters[i], d))
        s = ps
    moves.reverse()
    return Solution(moves, len(parent))
