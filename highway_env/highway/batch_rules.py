"""Highway's rules as stateless numba functions over batches of boards (Pgx style).

A batch is an (N, 16) int8 array of boards as in :mod:`highway_env.core` (the reference
``tests/test_batch_rules.py`` checks every function against); the side to move follows from the filled
cells. Functions write into arrays the caller allocates, so the same code serves
:mod:`highway_env.batched`, :mod:`highway_env.az_game` (whose search needs arbitrary boards) and the envs.

The paths are one (40, 7) cell index table, ``PATHS`` (rows 0..19 A's, 20..39 B's), and their
bounds one reduction over it (``path_ranges``); the cheapest paths of a full board come from a
16-cell dynamic programme (``min_paths``), several times cheaper than summing the 40 paths. The
player frame (each side plays top-left to bottom-right; B's board turned by ``core.QUARTER_TURN``)
is ``PLAYER_FRAME`` / ``FRAME_ACTIONS`` and their inverses, indexed by the side to move.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from highway_env import core
from highway_env.core import CELLS, NUM_ACTIONS, NUM_A_PATHS, NUMBERS, SIZE
from highway_env.legal_sampling import kth_legal, random_legal  # in the rules' API; one draw with agents'

__all__ = [
    "PATHS", "ON_PATH", "PLAYER_FRAME", "PLAYER_FRAME_INV", "FRAME_ACTIONS", "FRAME_ACTIONS_INV", "FRAMES",
    "check_frame", "PLANES_SHAPE", "PLANES_DTYPE",
    "actions_of_cell_map", "filled", "is_legal", "min_paths", "unused_prefix_sums", "path_ranges",
    "legal_masks", "are_legal", "apply_actions", "kth_legal", "random_legal", "observe_planes", "planes",
    "final_min_paths", "bounds",
]

# ----------------------------------------------------------------------------- tables

#: (40, 7) int64 cell indices of every path: rows 0..19 A-paths, 20..39 B-paths.
PATHS = np.ascontiguousarray(core.PATH_TABLE, dtype=np.int64)
#: (40, 16) bool: ON_PATH[p, cell] is True when path p goes through the cell.
ON_PATH = np.zeros((len(PATHS), CELLS), np.bool_)
ON_PATH[np.arange(len(PATHS))[:, None], PATHS] = True


def actions_of_cell_map(cell_map) -> np.ndarray:
    """(256,) int64: action -> the action with its cell moved by ``cell_map`` (number unchanged)."""
    cells = np.asarray(cell_map, dtype=np.int64)
    return (np.arange(NUMBERS)[:, None] * CELLS + cells[None, :]).reshape(-1)


#: (2, 16) int64: PLAYER_FRAME[p, cell] = where player p (0 = A, 1 = B) sees the cell: identity for
#: A, core.QUARTER_TURN for B, so that both sides play top-left to bottom-right.
PLAYER_FRAME = np.stack([np.arange(CELLS, dtype=np.int64), np.asarray(core.QUARTER_TURN, np.int64)])
#: (2, 16) int64: cell in player p's frame -> board cell.
PLAYER_FRAME_INV = np.argsort(PLAYER_FRAME, axis=1)
#: (2, 256) int64: board action -> the same move in player p's frame.
FRAME_ACTIONS = np.stack([actions_of_cell_map(f) for f in PLAYER_FRAME])
#: (2, 256) int64: action in player p's frame -> board action.
FRAME_ACTIONS_INV = np.stack([actions_of_cell_map(f) for f in PLAYER_FRAME_INV])
#: The frames an env or a policy takes actions in: "absolute" (mask and actions on the real board)
#: or "player" (observation, mask and actions all in the mover's frame).
FRAMES = ("absolute", "player")
#: What a Highway agent observes: one-hot number planes (row, column, number - 1), ``observe_planes``'s.
PLANES_SHAPE = (SIZE, SIZE, NUMBERS)
PLANES_DTYPE = np.int8


def check_frame(frame) -> str:
    """``frame`` if it is one of FRAMES, else HighwayError (a ValueError) naming it."""
    if not isinstance(frame, str) or frame not in FRAMES:
        raise core.HighwayError(f"frame must be one of {FRAMES}, got {frame!r}")
    return frame


for _t in (PATHS, ON_PATH, PLAYER_FRAME, PLAYER_FRAME_INV, FRAME_ACTIONS, FRAME_ACTIONS_INV):
    _t.flags.writeable = False  # numba compiles them in as constants: they must never change
del _t

_BIG = 1 << 30  # above any path sum

# ----------------------------------------------------------------------------- one board


@nb.njit(cache=True, inline="always")
def filled(board):
    """Number of filled cells of one board (16,) = moves made; odd means B to move."""
    k = 0
    for i in range(CELLS):
        if board[i] != 0:
            k += 1
    return k


@nb.njit(cache=True)
def is_legal(boards, g, action):
    """Whether ``action`` = (number - 1) * 16 + cell is legal on board ``g`` of ``boards``: in
    range, its cell empty and its number not yet on the board. (The batch and an index, not a row:
    numba pays for a row view more than for the check.)"""
    if action < 0 or action >= NUM_ACTIONS or boards[g, action % CELLS] != 0:
        return False
    num = np.int8(action // CELLS + 1)  # int8 like the board: the scan compiles to one vector compare
    seen = False
    for i in range(CELLS):
        seen |= boards[g, i] == num
    return not seen


@nb.njit(cache=True, inline="always")
def _cheapest(board, r, dr):
    """Cheapest path from (r, 0) to the last column moving right or dr rows, on a full board: a
    dynamic programme one row at a time (A: r = 0, dr = +1; B: r = 3, dr = -1)."""
    i = r * SIZE
    x0 = np.int64(board[i])
    x1 = x0 + board[i + 1]
    x2 = x1 + board[i + 2]
    x3 = x2 + board[i + 3]
    for _ in range(SIZE - 1):
        r += dr
        i = r * SIZE
        x0 = x0 + board[i]
        x1 = min(x1, x0) + board[i + 1]
        x2 = min(x2, x1) + board[i + 2]
        x3 = min(x3, x2) + board[i + 3]
    return x3


@nb.njit(cache=True, inline="always")
def min_paths(board):
    """(min_a, min_b): the cheapest A-path and B-path sums of one full board (16,)."""
    return _cheapest(board, 0, 1), _cheapest(board, SIZE - 1, -1)


@nb.njit(cache=True)
def unused_prefix_sums(board, small, large):
    """small[k] / large[k] <- sum of the k smallest / largest numbers not on ``board`` (k = 0..free).
    Arrays of at least 17 entries; returns the (NUMBERS + 1,) used-number flags (index = number)."""
    used = np.zeros(NUMBERS + 1, np.bool_)
    for i in range(CELLS):
        used[board[i]] = True
    small[0] = 0
    large[0] = 0
    k = 0
    for n in range(1, NUMBERS + 1):
        if not used[n]:
            small[k + 1] = small[k] + n
            k += 1
    k = 0
    for n in range(NUMBERS, 0, -1):
        if not used[n]:
            large[k + 1] = large[k] + n
            k += 1
    return used


@nb.njit(cache=True)
def path_ranges(board, small, large, placed, free, lo, hi):
    """Per path p (rows of PATHS): placed[p] = sum of its numbers, free[p] = its empty cells, and
    lo[p] / hi[p] = the least / greatest sum it can end with (placed + the free[p] smallest /
    largest unused numbers, from ``unused_prefix_sums``). Returns the side minima (a_lo, a_hi,
    b_lo, b_hi): the range of the cheapest A-path and of the cheapest B-path, core.Board.bounds()."""
    a_lo = _BIG
    a_hi = _BIG
    b_lo = _BIG
    b_hi = _BIG
    for p in range(PATHS.shape[0]):
        s = 0
        f = 0
        for j in range(PATHS.shape[1]):
            x = board[PATHS[p, j]]
            if x == 0:
                f += 1
            else:
                s += x
        placed[p] = s
        free[p] = f
        lo[p] = s + small[f]
        hi[p] = s + large[f]
        if p < NUM_A_PATHS:
            a_lo = min(a_lo, lo[p])
            a_hi = min(a_hi, hi[p])
        else:
            b_lo = min(b_lo, lo[p])
            b_hi = min(b_hi, hi[p])
    return a_lo, a_hi, b_lo, b_hi


# ----------------------------------------------------------------------------- batches


@nb.njit(cache=True)
def legal_masks(boards, player_view, out):
    """out (N, 256) bool <- legal actions (unused number x empty cell); all False on a full board.
    With ``player_view`` the cells are in the frame of the side to move (PLAYER_FRAME)."""
    empty = np.zeros(CELLS, np.bool_)
    unused = np.zeros(NUMBERS + 1, np.bool_)  # index = number; [0] is the empty cells' marker
    for g in range(boards.shape[0]):
        side = filled(boards[g]) % 2 if player_view else 0
        unused[:] = True
        for i in range(CELLS):
            v = boards[g, i]
            empty[PLAYER_FRAME[side, i]] = v == 0
            unused[v] = False
        for n in range(NUMBERS):  # a row per number, copied or cleared without a branch per cell
            if unused[n + 1]:
                for c in range(CELLS):
                    out[g, n * CELLS + c] = empty[c]
            else:
                for c in range(CELLS):
                    out[g, n * CELLS + c] = False


@nb.njit(cache=True)
def are_legal(boards, actions, out):
    """out[g] <- whether actions[g] is legal on board g (:func:`is_legal`): one action per game
    checked without building the (N, 256) masks."""
    for g in range(boards.shape[0]):
        out[g] = is_legal(boards, g, actions[g])


@nb.njit(cache=True)
def apply_actions(boards, actions, out):
    """out <- boards with actions[g] played in board g; returns the first g whose action is out of
    range or illegal (out is then partly written) or -1."""
    for g in range(boards.shape[0]):
        a = actions[g]
        if not is_legal(boards, g, a):
            return g
        for i in range(CELLS):  # element by element: a row view per game costs more than the copy
            out[g, i] = boards[g, i]
        out[g, a % CELLS] = a // CELLS + 1
    return -1


@nb.njit(cache=True)
def observe_planes(boards, out, seat=-1):
    """out (N, 16 cells, 16 planes) or (N, 4, 4, 16) (one board: (4, 4, 16) too), C-contiguous, zeros
    on entry <- one-hot numbers (plane k = number k+1) of each board in player ``seat``'s frame (0 =
    A, 1 = B: PLAYER_FRAME), by default (-1) the side to move's (a full board in A's). What every
    Highway env, the OpenSpiel observer, the benchmark and ``batched.py`` show."""
    flat = out.reshape(boards.shape[0], CELLS * NUMBERS)
    for g in range(boards.shape[0]):
        side = filled(boards[g]) % 2 if seat < 0 else seat
        for i in range(CELLS):
            v = boards[g, i]
            if v != 0:
                flat[g, PLAYER_FRAME[side, i] * NUMBERS + v - 1] = 1


def masks(boards, player_view: bool = False) -> np.ndarray:
    """(N, 256) bool, fresh: :func:`legal_masks` of ``boards`` (N, 16) int8."""
    out = np.empty((len(boards), NUM_ACTIONS), np.bool_)
    legal_masks(boards, player_view, out)
    return out


def planes(boards, seat: int = -1) -> np.ndarray:
    """(N, 4, 4, 16) int8, fresh: :func:`observe_planes` of ``boards`` (N, 16) int8 for ``seat``."""
    out = np.zeros((len(boards), *PLANES_SHAPE), PLANES_DTYPE)
    observe_planes(boards, out, seat)
    return out


@nb.njit(cache=True)
def final_min_paths(boards, min_a, min_b):
    """min_a[g], min_b[g] <- the cheapest A- and B-path of each full board (0 where not full)."""
    for g in range(boards.shape[0]):
        if filled(boards[g]) < CELLS:
            min_a[g] = 0
            min_b[g] = 0
        else:
            ma, mb = min_paths(boards[g])
            min_a[g] = ma
            min_b[g] = mb


@nb.njit(cache=True)
def bounds(boards, out):
    """out (N, 4) <- (min_a lo, min_a hi, min_b lo, min_b hi) of each board, as core.Board.bounds();
    the margin min_b - min_a then lies in [min_b lo - min_a hi, min_b hi - min_a lo]."""
    npaths = PATHS.shape[0]
    small = np.zeros(CELLS + 2, np.int64)
    large = np.zeros(CELLS + 2, np.int64)
    placed = np.zeros(npaths, np.int64)
    free = np.zeros(npaths, np.int64)
    lo = np.zeros(npaths, np.int64)
    hi = np.zeros(npaths, np.int64)
    for g in range(boards.shape[0]):
        unused_prefix_sums(boards[g], small, large)
        a_lo, a_hi, b_lo, b_hi = path_ranges(boards[g], small, large, placed, free, lo, hi)
        out[g, 0] = a_lo
        out[g, 1] = a_hi
        out[g, 2] = b_lo
        out[g, 3] = b_hi
