"""The rules of Highway in one small module: board, moves, paths, outcome, symmetries, text I/O.
Plain Python on purpose: the readable reference that the envs, the solver and the fast kernels are
tested against.

Board: 16 cells, cell = r*4 + c, row 0 on top. Each cell holds 0 (empty) or a number 1..16, each
number used at most once. Player A (index 0) moves first; the side to move follows from the number of
filled cells. An action is a (number, cell) pair encoded as ``(number - 1) * 16 + cell``.
"""

from __future__ import annotations

import itertools
import operator
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

SIZE = 4
CELLS = SIZE * SIZE
NUMBERS = CELLS  # the pieces are 1..16
NUM_ACTIONS = NUMBERS * CELLS
PATH_LEN = 2 * SIZE - 1
PLAYER_NAMES = ("A", "B")
VERDICTS = {1: "A wins", 0: "draw", -1: "B wins"}  # by game value (+1: A wins)


class HighwayError(ValueError):
    """Bad input to the rules: a malformed board, an illegal or out-of-range action."""


class IllegalMoveError(HighwayError):
    """An action that is well formed but not legal in the position."""


def cell_index(row: int, col: int) -> int:
    return row * SIZE + col


def cell_rc(cell: int) -> tuple[int, int]:
    return divmod(cell, SIZE)


# ----------------------------------------------------------------------------- actions

def integral(value, what: str = "value") -> int:
    """``value`` as a Python int when it is integral: an int, a numpy integer scalar or a 0-d integer
    array. Floats (even 3.0), bools, strings and everything else raise ``HighwayError`` naming the
    value, so that 3.7, True or "5" are never silently read as 3, 1 or 5."""
    if isinstance(value, (bool, np.bool_)):
        raise HighwayError(f"{what} must be an integer, got the bool {value!r}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        return int(value)
    raise HighwayError(f"{what} must be an integer (int, numpy integer or 0-d integer array), "
                       f"got {value!r} of type {type(value).__name__}")


def encode_action(number: int, cell: int) -> int:
    """(number, cell) -> action in 0..255."""
    if not 1 <= number <= NUMBERS:
        raise HighwayError(f"number {number!r} out of range 1..{NUMBERS}")
    if not 0 <= cell < CELLS:
        raise HighwayError(f"cell {cell!r} out of range 0..{CELLS - 1}")
    return (number - 1) * CELLS + cell


def decode_action(action: int) -> tuple[int, int]:
    """action in 0..255 -> (number, cell)."""
    action = integral(action, "action")
    if not 0 <= action < NUM_ACTIONS:
        raise HighwayError(f"action {action!r} out of range 0..{NUM_ACTIONS - 1}")
    return action // CELLS + 1, action % CELLS


def action_str(action: int) -> str:
    number, cell = decode_action(action)
    r, c = cell_rc(cell)
    return f"{number}@r{r}c{c}"


# ----------------------------------------------------------------------------- paths

def _monotone_paths(start: tuple[int, int], step_a: tuple[int, int], step_b: tuple[int, int]):
    """Every walk from ``start`` of SIZE - 1 steps ``step_a`` and SIZE - 1 steps ``step_b``, sorted."""
    paths = []
    for where_a in itertools.combinations(range(2 * SIZE - 2), SIZE - 1):
        r, c = start
        cells = [cell_index(r, c)]
        for i in range(2 * SIZE - 2):
            dr, dc = step_a if i in where_a else step_b
            r, c = r + dr, c + dc
            cells.append(cell_index(r, c))
        paths.append(tuple(cells))
    return tuple(sorted(paths))


#: The 20 A-paths, (0,0) -> (3,3) moving right or down; each a tuple of 7 cells.
A_PATHS: tuple[tuple[int, ...], ...] = _monotone_paths((0, 0), (0, 1), (1, 0))
#: The 20 B-paths, (3,0) -> (0,3) moving up or right.
B_PATHS: tuple[tuple[int, ...], ...] = _monotone_paths((SIZE - 1, 0), (-1, 0), (0, 1))
#: Both as one (40, 7) index table: rows 0..19 are A's, 20..39 B's (Pgx style: one gather, one sum).
PATH_TABLE = np.array(A_PATHS + B_PATHS, dtype=np.int64)
NUM_A_PATHS = len(A_PATHS)
#: each path's cells gathered in one C-level call (``Board.path_sums``: every game's end in the envs)
_A_PATH_GATHERS = tuple(operator.itemgetter(*p) for p in A_PATHS)
_B_PATH_GATHERS = tuple(operator.itemgetter(*p) for p in B_PATHS)


# ----------------------------------------------------------------------------- symmetries

def _perm(fn) -> tuple[int, ...]:
    """perm[cell] = image of cell under (r, c) -> fn(r, c)."""
    return tuple(cell_index(*fn(*cell_rc(cell))) for cell in range(CELLS))


#: The four symmetries that map A-paths to A-paths and B-paths to B-paths; perm[cell] = image cell.
SYMMETRIES: dict[str, tuple[int, ...]] = {
    "identity": _perm(lambda r, c: (r, c)),
    "half_turn": _perm(lambda r, c: (SIZE - 1 - r, SIZE - 1 - c)),
    "transpose": _perm(lambda r, c: (c, r)),
    "anti_transpose": _perm(lambda r, c: (SIZE - 1 - c, SIZE - 1 - r)),
}
#: A quarter turn clockwise, (r, c) -> (c, 3 - r): maps A-paths onto B-paths and back, swapping roles.
QUARTER_TURN: tuple[int, ...] = _perm(lambda r, c: (c, SIZE - 1 - r))


def inverse_perm(perm: Sequence[int]) -> tuple[int, ...]:
    """inv with inv[perm[i]] = i: the cells in the order of their images."""
    return tuple(sorted(range(len(perm)), key=perm.__getitem__))


def transform_action(action: int, perm: Sequence[int]) -> int:
    """The action that corresponds to ``action`` on a board transformed by ``perm``."""
    number, cell = decode_action(action)
    return encode_action(number, perm[cell])


#: (gather of the image's cells, perm) per symmetry: ``gather(cells)`` is the transformed board's
#: cells in one C-level call (the solver's position keys take it thousands of times a move)
_SYMMETRY_GATHERS = tuple((operator.itemgetter(*inverse_perm(perm)), perm) for perm in SYMMETRIES.values())


def canonical_cells(cells: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(canonical cells, perm): the least (lexicographically) of the position's images under the four
    symmetries and the symmetry that gives it, ``Board(cells).transform(perm).cells``; the first in
    :data:`SYMMETRIES`' order among equals. The one symmetry reduction every position key uses."""
    cells = tuple(map(int, cells))
    best, best_perm = None, None
    for gather, perm in _SYMMETRY_GATHERS:
        t = gather(cells)
        if best is None or t < best:
            best, best_perm = t, perm
    return best, best_perm


# ----------------------------------------------------------------------------- outcome

@dataclass(frozen=True)
class Outcome:
    """Result of a full board. margin = min_b - min_a (positive: A won)."""

    min_a: int
    min_b: int
    a_paths: tuple[tuple[int, ...], ...]  # every A-path of cost min_a (cells)
    b_paths: tuple[tuple[int, ...], ...]  # every B-path of cost min_b

    @property
    def margin(self) -> int:
        """min_b - min_a: positive when A won, by how much (the score the margin-aware agents play for)."""
        return self.min_b - self.min_a

    @property
    def value(self) -> int:
        """+1 A wins, 0 draw, -1 B wins."""
        return (self.margin > 0) - (self.margin < 0)

    @property
    def winner(self) -> str | None:
        """'A', 'B', or None for a draw."""
        return {1: "A", -1: "B", 0: None}[self.value]


@dataclass(frozen=True)
class Bounds:
    """What a partial board still allows: each path's sum lies in [lo, hi] whatever is played."""

    min_a: tuple[int, int]  # (lowest, highest) possible cheapest A-path
    min_b: tuple[int, int]
    margin: tuple[int, int]  # (lowest, highest) possible min_b - min_a


# ----------------------------------------------------------------------------- the board

# Board's quick check: every cell a plain int (not a bool, not a numpy integer) in 0..16
_INT_ONLY = {int}
_CELL_VALUES = frozenset(range(NUMBERS + 1))


@dataclass(frozen=True, slots=True)
class Board:
    """A position: 16 cells, 0 = empty. Immutable and cheap to copy; ``apply`` returns a new board."""

    cells: tuple[int, ...] = (0,) * CELLS

    def __post_init__(self):
        """Raise HighwayError naming the problem unless cells is 16 values in 0..16 without repeats."""
        cells = self.cells
        # the usual case, 16 plain ints that pass, in a few C-level calls; anything else takes the
        # loop below, which names the problem
        if type(cells) is tuple and len(cells) == CELLS and set(map(type, cells)) == _INT_ONLY:
            values = set(cells)
            if values <= _CELL_VALUES and len(values) == CELLS - cells.count(0) + (0 in values):
                return
        if not isinstance(cells, tuple):
            raise HighwayError(f"board cells must be a tuple, got {type(cells).__name__}")
        if len(cells) != CELLS:
            raise HighwayError(f"a board has {CELLS} cells, got {len(cells)}")
        seen = {}
        for i, v in enumerate(cells):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise HighwayError(f"cell {i} holds {v!r}, not an integer")
            if not 0 <= v <= NUMBERS:
                raise HighwayError(f"cell {i} holds {v}, out of range 0..{NUMBERS} (0 = empty)")
            if v and v in seen:
                raise HighwayError(f"number {v} appears twice, at cells {seen[v]} and {i}")
            seen[v] = i

    # -- basic facts
    @property
    def ply(self) -> int:
        """Number of moves made so far (= filled cells)."""
        return CELLS - self.cells.count(0)

    @property
    def to_move(self) -> int:
        """0 (A) or 1 (B); meaningless once the board is full."""
        return self.ply % 2

    def is_terminal(self) -> bool:
        """True once all 16 cells are filled: the game always ends after exactly 16 moves."""
        return 0 not in self.cells

    def empty_cells(self) -> list[int]:
        """The empty cells (0..15, ascending): where the next number may go."""
        return [i for i, v in enumerate(self.cells) if v == 0]

    def unused_numbers(self) -> list[int]:
        """The numbers 1..16 not yet on the board, ascending: what the next move may write."""
        used = set(self.cells)
        return [n for n in range(1, NUMBERS + 1) if n not in used]

    # -- moves
    def legal_actions(self) -> list[int]:
        """Every legal action, ``(number - 1) * 16 + cell`` for each unused number and empty cell, ascending."""
        empty = self.empty_cells()
        return [(n - 1) * CELLS + c for n in self.unused_numbers() for c in empty]

    def legal_mask(self) -> np.ndarray:
        """int8 array of shape (256,), 1 where the action is legal."""
        unused = np.zeros(NUMBERS, dtype=np.int8)
        unused[[n - 1 for n in self.unused_numbers()]] = 1
        empty = np.fromiter((v == 0 for v in self.cells), dtype=np.int8, count=CELLS)
        return np.outer(unused, empty).reshape(-1)

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` (0..255) writes an unused number into an empty cell."""
        number, cell = decode_action(action)
        return self.cells[cell] == 0 and number not in self.cells

    def apply(self, action: int) -> "Board":
        """The board after ``action``; raises :class:`IllegalMoveError` naming the cell or number if it is
        illegal (this board is unchanged: boards are immutable)."""
        number, cell = decode_action(action)
        if self.cells[cell] != 0:
            raise IllegalMoveError(
                f"illegal action {action} ({number} at cell {cell}): cell {cell} already holds {self.cells[cell]}"
            )
        if number in self.cells:
            raise IllegalMoveError(
                f"illegal action {action} ({number} at cell {cell}): number {number} is already on the board"
            )
        cells = list(self.cells)
        cells[cell] = number
        return Board(tuple(cells))

    # -- paths and results
    def path_sums(self) -> tuple[list[int], list[int]]:
        """Sums of placed numbers along each A-path and each B-path (empty cells count 0)."""
        c = self.cells
        return [sum(g(c)) for g in _A_PATH_GATHERS], [sum(g(c)) for g in _B_PATH_GATHERS]

    def outcome(self) -> Outcome:
        """Result of the full board; raises on a partial one (use ``bounds`` there)."""
        if not self.is_terminal():
            raise HighwayError(f"outcome() needs a full board; {self.cells.count(0)} cells are empty")
        sums_a, sums_b = self.path_sums()
        min_a, min_b = min(sums_a), min(sums_b)
        return Outcome(min_a=min_a, min_b=min_b,
                       a_paths=tuple(p for p, s in zip(A_PATHS, sums_a) if s == min_a),
                       b_paths=tuple(p for p, s in zip(B_PATHS, sums_b) if s == min_b))

    def path_ranges(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """For each A-path and B-path, the (lo, hi) its final sum can reach: placed sum plus the k
        smallest / k largest unused numbers, k = its empty cells."""
        unused = self.unused_numbers()  # ascending
        prefix_small = [0, *itertools.accumulate(unused)]
        prefix_large = [0, *itertools.accumulate(reversed(unused))]

        def ranges(paths):
            out = []
            for p in paths:
                placed = sum(self.cells[i] for i in p)
                k = sum(1 for i in p if self.cells[i] == 0)
                out.append((placed + prefix_small[k], placed + prefix_large[k]))
            return out

        return ranges(A_PATHS), ranges(B_PATHS)

    def bounds(self) -> Bounds:
        """The ranges the cheapest A-path, the cheapest B-path and the margin can still reach, whatever is
        played: sound bounds from :meth:`path_ranges` (the solver's pruning and the envs' infos use them)."""
        ra, rb = self.path_ranges()
        min_a = (min(lo for lo, _ in ra), min(hi for _, hi in ra))
        min_b = (min(lo for lo, _ in rb), min(hi for _, hi in rb))
        return Bounds(min_a=min_a, min_b=min_b, margin=(min_b[0] - min_a[1], min_b[1] - min_a[0]))

    # -- symmetries
    def transform(self, perm: Sequence[int]) -> "Board":
        """The board with the number at cell i moved to cell perm[i]."""
        cells = [0] * CELLS
        for i, v in enumerate(self.cells):
            cells[perm[i]] = v
        return Board(tuple(cells))

    def canonical(self) -> "Board":
        """The representative of the board under the four symmetries (the lexicographically least;
        :func:`canonical_cells`)."""
        return Board(canonical_cells(self.cells)[0])

    # -- text
    def to_string(self) -> str:
        """16 comma-separated numbers in row-major order, 0 = empty."""
        return ",".join(str(v) for v in self.cells)

    def to_grid(self) -> str:
        """Four lines of four right-aligned fields, '.' = empty."""
        return "\n".join(" ".join(f"{v:>2}" if v else " ." for v in self.cells[r * SIZE:(r + 1) * SIZE])
                         for r in range(SIZE))

    def __str__(self) -> str:
        return self.to_grid()

    @classmethod
    def from_string(cls, text: str) -> "Board":
        """The board of ``text`` in either form :func:`parse_board` reads (16 comma-separated numbers, or
        the 4-line grid)."""
        return parse_board(text)


def illegal_move_error(cells: Sequence[int], action: int) -> HighwayError:
    """The error ``Board(cells).apply(action)`` raises, naming why: the reason a fast kernel's mask
    refused the action, for its own message."""
    try:
        Board(tuple(int(v) for v in cells)).apply(action)
    except HighwayError as e:
        return e
    raise AssertionError(f"action {action} is legal on {cells!r}: the mask and the rules disagree")


_TOKEN = re.compile(r"[^\s,]+")


def parse_board(text: str) -> Board:
    """Parse '16 comma-separated numbers, 0 = empty' or the 4-line grid form ('.' or 0 = empty).

    Raises HighwayError naming the problem: wrong count, a non-number, out of range, a duplicate.
    """
    if not isinstance(text, str):
        raise HighwayError(f"a board string must be str, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise HighwayError("empty board string: expected 16 comma-separated numbers (0 = empty)")
    if "\n" in stripped:
        lines = [ln for ln in stripped.splitlines() if ln.strip()]
        if len(lines) != SIZE:
            raise HighwayError(f"a grid board has {SIZE} lines, got {len(lines)}: {text!r}")
        tokens = []
        for r, line in enumerate(lines):
            row = _TOKEN.findall(line)
            if len(row) != SIZE:
                raise HighwayError(f"grid line {r + 1} has {len(row)} fields, expected {SIZE}: {line!r}")
            tokens.extend(row)
    else:
        tokens = [t.strip() for t in stripped.split(",")]
        if len(tokens) != CELLS:
            raise HighwayError(f"expected {CELLS} comma-separated numbers, got {len(tokens)}: {text!r}")
    tokens = ["0" if tok in (".", "_", "-") else tok for tok in tokens]
    for i, tok in enumerate(tokens):
        if not re.fullmatch(r"\d+", tok):
            raise HighwayError(f"cell {i} is {tok!r}, not a number")
    return Board(tuple(map(int, tokens)))


def random_board(rng: np.random.Generator, filled: int) -> Board:
    """A position reached by ``filled`` uniformly random moves."""
    if not 0 <= filled <= CELLS:
        raise HighwayError(f"filled must be in 0..{CELLS}, got {filled}")
    cells = [0] * CELLS
    numbers = rng.permutation(NUMBERS)[:filled] + 1
    where = rng.permutation(CELLS)[:filled]
    for n, c in zip(numbers, where):
        cells[int(c)] = int(n)
    return Board(tuple(cells))
