"""The Black Path Game (Larry Black, 1960; Gardner 1963; *Winning Ways*): rules, notation, replay.

A board of ``rows x cols`` squares. A path starts at one boundary side of one square (by default
the top side of the top-left square ``A1``). The players alternate; a move fills the empty square
at the end of the path with one of three tiles, each made of two segments joining the midpoints
of the square's sides:

* ``T1`` joins top with left and bottom with right;
* ``T2`` joins top with right and bottom with left;
* ``T3`` joins top with bottom and left with right (a crossing).

The path follows the segment of the new tile that starts at the side it entered by and goes on
into the neighbouring square. If that square is already filled, the path follows the segment of
that tile whose end it enters by, and so on, until it reaches an empty square (the next player's
move) or the edge of the board. The player whose tile makes the path run into the edge loses.

Every side is shared by at most two squares and each tile pairs up the four sides of its square,
so the segments form a graph of degree at most 2 and the path, which starts at a boundary side
(degree 1), never visits a side twice: it cannot come back to the starting side either (and if
it could, that side is a boundary side, i.e. the edge). A game therefore always ends, with the
path at the edge, after at most ``rows * cols`` moves; there are no draws.

Notation: squares are ``A1``...: the letter is the column counted from the left, the number the
row counted from the top. A move is ``square-tile``, e.g. ``B2-T3``; a start is ``square:side``,
e.g. ``A1:top``. Players are numbered 1 (moves first) and 2.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field
from itertools import groupby
from typing import Iterable

__all__ = ["BlackPathError", "IllegalMoveError", "SIDES", "TILES", "TILE_NAMES", "EXIT", "State", "Segment",
           "new_game", "parse_square", "square_name", "parse_start", "start_name", "parse_move",
           "move_name", "replay", "boundary_starts"]

#: The notation's limits: a square is one column letter A..Z and a row number of one or two digits
#: (``parse_square``). The agents' adapter allows fewer squares (``az_game``: 120, its int8 state).
MAX_COLS = 26
MAX_ROWS = 99

SIDES = ("top", "right", "bottom", "left")  # side index 0..3
TOP, RIGHT, BOTTOM, LEFT = range(4)
_DELTA = ((-1, 0), (0, 1), (1, 0), (0, -1))  # (drow, dcol) leaving through each side

TILES = (1, 2, 3)
TILE_NAMES = {1: "T1", 2: "T2", 3: "T3"}

#: EXIT[tile][entry_side] = the side the tile's segment from ``entry_side`` leads to (tile 0: empty)
EXIT: tuple[tuple[int, ...], ...] = (
    (-1, -1, -1, -1),
    (LEFT, BOTTOM, RIGHT, TOP),  # T1: top-left, bottom-right
    (RIGHT, TOP, LEFT, BOTTOM),  # T2: top-right, bottom-left
    (BOTTOM, LEFT, TOP, RIGHT),  # T3: top-bottom, left-right
)


class BlackPathError(ValueError):
    """Bad input: an unknown square, tile or side, a bad board size or a malformed move."""


class IllegalMoveError(BlackPathError):
    """A move that the rules forbid (wrong square, game over)."""


# ----------------------------------------------------------------------------- notation

def _check_size(rows: int, cols: int) -> None:
    if not isinstance(rows, int) or not isinstance(cols, int) or isinstance(rows, bool) or isinstance(cols, bool):
        raise BlackPathError(f"rows and cols must be ints, got {rows!r} x {cols!r}")
    if not 1 <= rows <= MAX_ROWS or not 1 <= cols <= MAX_COLS:
        raise BlackPathError(f"board must be 1..{MAX_ROWS} rows x 1..{MAX_COLS} cols, got {rows} x {cols}")


def square_name(square: int, cols: int) -> str:
    """Square index (``row * cols + col``) -> ``"A1"``."""
    r, c = divmod(square, cols)
    return f"{chr(ord('A') + c)}{r + 1}"


_SQUARE_RE = re.compile(r"^([A-Za-z])([0-9]{1,2})$")


def parse_square(text: str, rows: int, cols: int) -> int:
    """``"B3"`` -> square index; raises BlackPathError for a malformed or off-board square."""
    m = _SQUARE_RE.match(str(text).strip())
    if not m:
        raise BlackPathError(f"unknown square {text!r}: expected a column letter and a row number, e.g. 'A1'")
    c = ord(m.group(1).upper()) - ord("A")
    r = int(m.group(2)) - 1
    if not (0 <= c < cols and 0 <= r < rows):
        last = f"{chr(ord('A') + cols - 1)}{rows}"
        raise BlackPathError(f"unknown square {text!r}: the {rows}x{cols} board has squares A1..{last}")
    return r * cols + c


def is_boundary(square: int, side: int, rows: int, cols: int) -> bool:
    r, c = divmod(square, cols)
    dr, dc = _DELTA[side]
    return not (0 <= r + dr < rows and 0 <= c + dc < cols)


def boundary_starts(rows: int, cols: int) -> list[tuple[int, int]]:
    """Every (square, side) with the side on the board's edge, clockwise from A1:top."""
    _check_size(rows, cols)
    out = [(c, TOP) for c in range(cols)]
    out += [(r * cols + cols - 1, RIGHT) for r in range(rows)]
    out += [((rows - 1) * cols + c, BOTTOM) for c in reversed(range(cols))]
    out += [(r * cols, LEFT) for r in reversed(range(rows))]
    return out


def parse_start(text: str, rows: int, cols: int) -> tuple[int, int]:
    """``"A1:top"`` -> (square, side); the side must be on the board's edge."""
    parts = str(text).strip().split(":")
    if len(parts) != 2:
        raise BlackPathError(f"bad start {text!r}: expected square:side, e.g. 'A1:top'")
    square = parse_square(parts[0], rows, cols)
    side_name = parts[1].strip().lower()
    if side_name not in SIDES:
        raise BlackPathError(f"bad start {text!r}: unknown side {parts[1]!r}, expected one of {', '.join(SIDES)}")
    side = SIDES.index(side_name)
    if not is_boundary(square, side, rows, cols):
        raise BlackPathError(f"bad start {text!r}: the {side_name} side of {parts[0].upper()} is not on the board's edge")
    return square, side


def start_name(square: int, side: int, cols: int) -> str:
    return f"{square_name(square, cols)}:{SIDES[side]}"


def move_name(square: int, tile: int, cols: int) -> str:
    return f"{square_name(square, cols)}-{TILE_NAMES[tile]}"


def parse_move(text: str, rows: int, cols: int) -> tuple[int, int]:
    """``"B2-T3"`` -> (square, tile)."""
    parts = str(text).strip().split("-")
    if len(parts) != 2:
        raise BlackPathError(f"bad move {text!r}: expected square-tile, e.g. 'B2-T3'")
    square, tile = parse_square(parts[0], rows, cols), parts[1].strip().upper()
    if tile not in TILE_NAMES.values():
        raise BlackPathError(f"unknown tile {parts[1]!r}: expected T1, T2 or T3")
    return square, int(tile[1])


# ----------------------------------------------------------------------------- rules

@dataclass(frozen=True)
class Segment:
    """One segment of the path: in ``square`` from side ``enter`` to side ``exit``."""

    square: int
    enter: int
    exit: int


def follow(tiles: tuple[int, ...], rows: int, cols: int, square: int, entry: int) -> tuple[int, int, list[Segment]]:
    """Follow the path from (square, entry) through filled squares.

    Returns ``(square, entry, segments)`` where (square, entry) is the empty square reached, or
    ``(-1, side, segments)`` if the path left the board through ``side`` of the last segment's
    square.
    """
    segs: list[Segment] = []
    while True:
        t = tiles[square]
        if t == 0:
            return square, entry, segs
        ex = EXIT[t][entry]
        segs.append(Segment(square, entry, ex))
        r, c = divmod(square, cols)
        dr, dc = _DELTA[ex]
        r, c = r + dr, c + dc
        if not (0 <= r < rows and 0 <= c < cols):
            return -1, ex, segs
        square, entry = r * cols + c, (ex + 2) % 4


@dataclass(frozen=True)
class State:
    """An immutable position. ``tiles[row * cols + col]`` is 0 (empty) or 1..3 (T1..T3).

    ``square``/``entry``: the empty square at the end of the path and the side the path enters it
    by; ``square == -1`` once the game is over. ``ply``: moves made; player ``1 + ply % 2`` moves.
    """

    rows: int = 4
    cols: int = 4
    start_square: int = 0
    start_side: int = TOP
    tiles: tuple[int, ...] = field(default=())
    square: int = 0
    entry: int = TOP
    ply: int = 0

    # -- queries
    @property
    def is_over(self) -> bool:
        return self.square < 0

    @property
    def to_move(self) -> int:
        """1 or 2: the player to move (while the game is on)."""
        return 1 + self.ply % 2

    @property
    def winner(self) -> int | None:
        """1 or 2 once the game is over (the player who did *not* make the last move), else None."""
        return 1 + self.ply % 2 if self.is_over else None  # the last mover, 1 + (ply - 1) % 2, lost

    @property
    def loser(self) -> int | None:
        return None if not self.is_over else 3 - self.winner

    def legal_tiles(self) -> tuple[int, ...]:
        return () if self.is_over else TILES

    def square_name(self, square: int | None = None) -> str:
        return square_name(self.square if square is None else square, self.cols)

    @property
    def start(self) -> str:
        return start_name(self.start_square, self.start_side, self.cols)

    def path(self) -> list[Segment]:
        """Every segment of the path so far, from the start."""
        _, _, segs = follow(self.tiles, self.rows, self.cols, self.start_square, self.start_side)
        return segs

    # -- moves
    def play(self, tile: int) -> "State":
        """Put ``tile`` (1..3) on the square at the end of the path; returns the new state."""
        if self.is_over:
            raise IllegalMoveError("the game is over")
        if tile not in TILES:
            raise BlackPathError(f"unknown tile {tile!r}: expected 1, 2 or 3 (T1..T3)")
        tiles = self.tiles[:self.square] + (tile,) + self.tiles[self.square + 1:]
        sq, entry, _ = follow(tiles, self.rows, self.cols, self.square, self.entry)
        return State(self.rows, self.cols, self.start_square, self.start_side, tiles,
                     sq, entry if sq >= 0 else -1, self.ply + 1)

    def play_move(self, move: str | tuple[int, int]) -> "State":
        """Play ``"B2-T3"`` or ``(square, tile)``; the square must be the path's current square."""
        sq, tile = parse_move(move, self.rows, self.cols) if isinstance(move, str) else move
        if self.is_over:
            raise IllegalMoveError(f"the game is over (player {self.winner} won)")
        if sq != self.square:
            raise IllegalMoveError(f"the path ends in {self.square_name()}, not in {square_name(sq, self.cols)}")
        return self.play(tile)

    def key(self) -> int:
        """The filled board as an int (2 bits a square); with the start it determines the state."""
        return sum(t << (2 * i) for i, t in enumerate(self.tiles))

    def status(self) -> str:
        """One line: whose move and where, or who won."""
        if self.is_over:
            last = self.path()[-1]
            return (f"player {self.loser} ran the path into the edge at "
                    f"{start_name(last.square, last.exit, self.cols)}; player {self.winner} wins")
        return (f"player {self.to_move} to move at {self.square_name()} "
                f"(the path enters by the {SIDES[self.entry]} side)")

    def __str__(self) -> str:
        return to_ansi(self)


def new_game(rows: int = 4, cols: int = 4, start: str | tuple[int, int] = "A1:top") -> State:
    """The empty board with the path at ``start`` (``"A1:top"`` or ``(square, side)``)."""
    _check_size(rows, cols)
    if isinstance(start, str):
        square, side = parse_start(start, rows, cols)
    else:  # a pair of ints; anything else (5, ["a", 1], (0.0, 0)) is named, not a TypeError deep inside
        pair = tuple(start) if isinstance(start, (tuple, list)) else ()
        if not (len(pair) == 2 and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in pair)
                and 0 <= pair[0] < rows * cols and pair[1] in range(4) and is_boundary(*pair, rows, cols)):
            raise BlackPathError(f"bad start {start!r}: give a square:side such as 'A1:top', or a (square, side) "
                                 "pair of ints on the board's edge")
        square, side = int(pair[0]), int(pair[1])
    return State(rows, cols, square, side, (0,) * (rows * cols), square, side, 0)


def replay(moves: str | Iterable[str], rows: int = 4, cols: int = 4, start: str | tuple[int, int] = "A1:top") -> State:
    """Play a list of moves (``"A1-T2 B1-T2 ..."``) from the start; returns the final state.

    Raises BlackPathError for an unknown square or tile, IllegalMoveError for a move on a square
    that is not the path's current square or a move after the end; the message names the move.
    """
    state = new_game(rows, cols, start)
    items = moves.replace(",", " ").split() if isinstance(moves, str) else list(moves)
    for i, m in enumerate(items, 1):
        try:
            state = state.play_move(m)
        except BlackPathError as e:
            raise type(e)(f"move {i} ({m}): {e}") from None
    return state


# ----------------------------------------------------------------------------- text picture

# (row, col) of each side's midpoint in a square's 3x3 character block
_MID = {TOP: (0, 1), RIGHT: (1, 2), BOTTOM: (2, 1), LEFT: (1, 0)}
_ARROW = {TOP: "v", RIGHT: "<", BOTTOM: "^", LEFT: ">"}
# the segment joining two sides in a square's 3x3 block: its (row, col) cells and character off the path
_SEGMENT_CHARS = {frozenset((TOP, BOTTOM)): (((0, 1), (1, 1), (2, 1)), "|"),
                  frozenset((LEFT, RIGHT)): (((1, 0), (1, 1), (1, 2)), "-"),
                  frozenset((TOP, LEFT)): (((0, 0),), "/"), frozenset((BOTTOM, RIGHT)): (((2, 2),), "/"),
                  frozenset((TOP, RIGHT)): (((0, 2),), "\\"), frozenset((BOTTOM, LEFT)): (((2, 0),), "\\")}


def to_ansi(state: State) -> str:
    """The board as text: each square a 3x3 block; ``/``, ``\\``, ``|``, ``-`` draw the tiles'
    segments, ``#`` the segments on the path; ``@`` marks the square to fill, with an arrow on the
    side the path enters by. Then the start, the path and the status line."""
    rows, cols = state.rows, state.cols
    path = state.path()
    on_path = {(s.square, frozenset((s.enter, s.exit))) for s in path}
    blocks = []
    for sq in range(rows * cols):
        g = [[" "] * 3 for _ in range(3)]
        t = state.tiles[sq]
        if t:
            for pair in {frozenset((a, EXIT[t][a])) for a in range(4)}:
                cells, ch = _SEGMENT_CHARS[pair]
                ch = "#" if (sq, pair) in on_path else ch
                for r, c in cells:
                    mark = "+" if g[r][c] in "|-" and ch in "|-" else ch
                    g[r][c] = mark if g[r][c] != "#" else "#"
        elif sq == state.square:
            g[1][1] = "@"
            r, c = _MID[state.entry]
            g[r][c] = _ARROW[state.entry]
        else:
            g[1][1] = "."
        blocks.append(g)
    sep = "   +" + "---+" * cols
    lines = ["    " + "   ".join(chr(ord("A") + c) for c in range(cols)), sep]
    for r in range(rows):
        for k in range(3):
            label = f"{r + 1:>2} " if k == 1 else "   "
            lines.append(label + "|" + "|".join("".join(blocks[r * cols + c][k]) for c in range(cols)) + "|")
        lines.append(sep)
    squares = [name for name, _ in groupby(square_name(s.square, cols) for s in path)]  # once a visit
    if not state.is_over:
        squares.append(state.square_name())
    lines.append(f"start {state.start}; move {state.ply}; path: {' '.join(squares) or '-'}")
    lines.append(state.status())
    return "\n".join(lines)
