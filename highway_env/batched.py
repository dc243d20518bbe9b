"""A batched Highway engine: many games held as arrays and stepped together (Pgx style), for fast
random play; checked against :mod:`highway_env.core` by ``tests/test_batched.py``.

    env = BatchedHighway(4096, seed=0, autoreset=True)
    res = env.step(env.random_actions())   # one move in every game; res.done, res.value (+1/0/-1 for A)

``step`` is atomic (every action is checked first; an illegal one raises
:class:`core.IllegalMoveError` naming the game), ignores the actions of terminal games and reports
the games that ended with that call; with ``autoreset`` those are then reset to the empty board, so
the batch never holds a finished game (unless one is loaded with ``set_boards``; ``reset(env.terminal)``
clears those).
``observation()``, ``legal_mask(player_view=True)`` and ``actions_from_player_view`` work in the side
to move's frame (B's board turned by ``core.QUARTER_TURN``), as the PettingZoo env does.

The rules are those of :mod:`highway_env.highway.batch_rules`; this engine adds the "decks" of empty
cells and unused numbers per game, so that a uniform legal move is drawn in O(1) from one raw 64-bit
word of a seeded numpy ``Generator``. Threads (``parallel=True``) pay only on large batches and idle
cores (every step waits at a barrier), so they are off by default. Throughput: ``python bench/bench_env.py``.
"""

from __future__ import annotations

import copy
from typing import Iterable, NamedTuple

import numba as nb
import numpy as np

from highway_env.core import CELLS, NUM_ACTIONS, NUMBERS, Board, HighwayError, illegal_move_error
from highway_env.highway import batch_rules
from highway_env.highway.batch_rules import FRAME_ACTIONS, FRAME_ACTIONS_INV, min_paths

__all__ = ["BatchedHighway", "StepResult", "Outcomes"]


class StepResult(NamedTuple):
    """What ``step`` reports; every array has shape (N,), results are 0 where ``done`` is False."""

    done: np.ndarray  # bool: the game ended with this step
    min_a: np.ndarray  # int16: cheapest A-path of the final board
    min_b: np.ndarray  # int16: cheapest B-path
    margin: np.ndarray  # int16: min_b - min_a (positive: A won)
    value: np.ndarray  # int8: +1 A won, 0 draw, -1 B won (reward of A; B's is its negative)


class Outcomes(NamedTuple):
    """Results of the games that are terminal now; every array has shape (N,), 0 where not terminal."""

    terminal: np.ndarray  # bool
    min_a: np.ndarray  # int16
    min_b: np.ndarray  # int16
    margin: np.ndarray  # int16
    value: np.ndarray  # int8


# ----------------------------------------------------------------------------- kernels
# State per game g: boards[g] (cell -> number or 0), ply[g], and the random sampler's two decks:
# cells_left[g, :16-ply] are the empty cells and nums_left[g, :16-ply] the unused numbers (1..16), in
# some order; cell_pos[g, cell] / num_pos[g, number-1] give a live entry's position in its deck
# (entries of used cells and numbers are stale). Legality is the rules kernel's, never the decks'.


@nb.njit(cache=True, inline="always")
def _reset_game(g, boards, ply, cells_left, nums_left, cell_pos, num_pos):
    for i in range(CELLS):
        boards[g, i] = 0
        cells_left[g, i] = i
        cell_pos[g, i] = i
        nums_left[g, i] = i + 1
        num_pos[g, i] = i
    ply[g] = 0


@nb.njit(cache=True)
def _first_illegal(boards, ply, actions):
    """Index of the first non-terminal game whose action is out of range or illegal, else -1."""
    for g in range(boards.shape[0]):
        if ply[g] < CELLS and not batch_rules.is_legal(boards, g, actions[g]):
            return g
    return -1


@nb.njit(cache=True, inline="always")
def _apply_rows(lo, hi, boards, ply, cells_left, nums_left, cell_pos, num_pos, actions, autoreset,
                done, min_a, min_b, margin, value):
    """Apply the (already checked) actions of games lo..hi-1 and write the results (zeros on
    entry) of those that end."""
    for g in range(lo, hi):
        if ply[g] >= CELLS:
            continue
        a = actions[g]
        cell = a & 15  # a in 0..255 here
        ni = a >> 4  # number - 1
        last = CELLS - 1 - ply[g]  # position of the last live deck entry
        boards[g, cell] = ni + 1
        # swap-remove the cell and the number: the last live entry of each deck takes their place
        i = cell_pos[g, cell]
        moved = cells_left[g, last]
        cells_left[g, i] = moved
        cell_pos[g, moved] = i
        j = num_pos[g, ni]
        moved = nums_left[g, last]
        nums_left[g, j] = moved
        num_pos[g, moved - 1] = j
        ply[g] += 1
        if ply[g] == CELLS:
            done[g] = True
            ma, mb = min_paths(boards[g])
            min_a[g] = ma
            min_b[g] = mb
            margin[g] = mb - ma
            value[g] = (mb > ma) - (mb < ma)
            if autoreset:
                _reset_game(g, boards, ply, cells_left, nums_left, cell_pos, num_pos)


# Performance notes: a per-game njit call taking many arrays costs ~140 ns a game (reference
# counting of every array argument), so the per-game work sits in loops, not in called functions;
# and the random-action loop runs over range(n) from 0 (with a (lo, hi) start LLVM cannot prove the
# index non-negative, keeps numba's wrap-around handling and that kernel got 1.7x slower).


@nb.njit(cache=True)
def _step_serial(boards, ply, cells_left, nums_left, cell_pos, num_pos, actions, autoreset,
                 done, min_a, min_b, margin, value):
    """Check every action, then apply them all; returns the first bad game (nothing applied) or -1."""
    bad = _first_illegal(boards, ply, actions)
    if bad < 0:
        _apply_rows(0, boards.shape[0], boards, ply, cells_left, nums_left, cell_pos, num_pos,
                    actions, autoreset, done, min_a, min_b, margin, value)
    return bad


@nb.njit(cache=True, parallel=True)
def _step_parallel(nchunks, boards, ply, cells_left, nums_left, cell_pos, num_pos, actions,
                   autoreset, done, min_a, min_b, margin, value):
    """_step_serial with the games applied in nchunks blocks on numba's threads."""
    bad = _first_illegal(boards, ply, actions)
    if bad < 0:
        n = boards.shape[0]
        for t in nb.prange(nchunks):
            _apply_rows(n * t // nchunks, n * (t + 1) // nchunks, boards, ply, cells_left, nums_left,
                        cell_pos, num_pos, actions, autoreset, done, min_a, min_b, margin, value)
    return bad


# Random actions. The legal actions are (unused number) x (empty cell), so a uniform pair is a
# uniform action: from one raw 64-bit word per game, the high 32 bits pick the number and the low 32
# the cell, index = (half * m) >> 32 with m = 16 - ply; -1 for a full board.


@nb.njit(cache=True, inline="always")
def _random_game(g, ply, cells_left, nums_left, raw, out):
    m = np.uint64(CELLS - ply[g])
    if m == 0:
        out[g] = -1
        return
    r = raw[g]
    kc = ((r & np.uint64(0xFFFFFFFF)) * m) >> np.uint64(32)
    kn = ((r >> np.uint64(32)) * m) >> np.uint64(32)
    out[g] = (nums_left[g, kn] - 1) * CELLS + cells_left[g, kc]


@nb.njit(cache=True)
def _random_serial(ply, cells_left, nums_left, raw, out):
    for g in range(ply.shape[0]):
        _random_game(g, ply, cells_left, nums_left, raw, out)


@nb.njit(cache=True, parallel=True)
def _random_parallel(ply, cells_left, nums_left, raw, out):
    for g in nb.prange(ply.shape[0]):
        _random_game(g, ply, cells_left, nums_left, raw, out)


@nb.njit(cache=True)
def _load_games(cells, idx, boards, ply, cells_left, nums_left, cell_pos, num_pos):
    """Game idx[j] <- position cells[j], its ply and decks recomputed."""
    for j in range(len(idx)):
        g = idx[j]
        used = np.zeros(NUMBERS + 1, np.bool_)
        k = 0
        for i in range(CELLS):
            boards[g, i] = cells[j, i]
            used[cells[j, i]] = True
            if cells[j, i] == 0:
                cells_left[g, k] = i
                cell_pos[g, i] = k
                k += 1
        ply[g] = CELLS - k
        k = 0
        for n in range(1, NUMBERS + 1):
            if not used[n]:
                nums_left[g, k] = n
                num_pos[g, n - 1] = k
                k += 1


# ----------------------------------------------------------------------------- the engine

def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class BatchedHighway:
    """``num_envs`` games of Highway stepped together. See the module docstring for the semantics.

    Args:
        num_envs: number of games N (>= 1).
        seed: seed of the engine's ``np.random.Generator`` (used by ``random_actions``); None =
            fresh entropy. Same seed, same calls -> same games.
        autoreset: reset each game to the empty board as soon as it ends in ``step``.
        parallel: split ``step``/``random_actions`` over numba's threads (``prange``). Worth it
            only for large batches on otherwise idle cores; see the module doc.
    """

    def __init__(self, num_envs: int, seed: int | None = None, *, autoreset: bool = False,
                 parallel: bool = False):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise HighwayError(f"num_envs must be a positive integer, got {num_envs!r}")
        n = int(num_envs)
        self.num_envs = n
        self.autoreset = bool(autoreset)
        self.parallel = bool(parallel)
        self.rng = np.random.default_rng(seed)
        self._boards = np.zeros((n, CELLS), np.int8)
        self._ply = np.zeros(n, np.int8)
        self._cells_left = np.zeros((n, CELLS), np.int8)
        self._nums_left = np.zeros((n, NUMBERS), np.int8)
        self._cell_pos = np.zeros((n, CELLS), np.int8)
        self._num_pos = np.zeros((n, NUMBERS), np.int8)
        self.reset()

    # -- construction and copying
    @classmethod
    def from_boards(cls, boards, seed: int | None = None, **kwargs) -> "BatchedHighway":
        """An engine holding the given positions (``core.Board``s, 16-int sequences or an (N, 16) array)."""
        cells = _as_cells(boards)
        env = cls(len(cells), seed=seed, **kwargs)
        env._load(cells, np.arange(len(cells)))
        return env

    def copy(self) -> "BatchedHighway":
        """An independent copy (arrays and random generator state included)."""
        return copy.deepcopy(self)

    # -- state
    @property
    def boards(self) -> np.ndarray:
        """(N, 16) int8, read-only view; 0 = empty."""
        return _readonly(self._boards)

    @property
    def ply(self) -> np.ndarray:
        """(N,) int8 moves made (= filled cells), read-only view."""
        return _readonly(self._ply)

    @property
    def to_play(self) -> np.ndarray:
        """(N,) int8: 0 = A, 1 = B to move (0 on a full board)."""
        return self._ply % 2

    @property
    def terminal(self) -> np.ndarray:
        """(N,) bool: the board is full and the game over."""
        return self._ply >= CELLS

    def __len__(self) -> int:
        return self.num_envs

    def __repr__(self) -> str:
        return (f"BatchedHighway(num_envs={self.num_envs}, autoreset={self.autoreset}, "
                f"parallel={self.parallel}, terminal={int(self.terminal.sum())})")

    # -- reset and loading
    def _indices(self, mask) -> np.ndarray:
        if mask is None:
            return np.arange(self.num_envs)
        m = np.asarray(mask)
        if m.dtype == np.bool_:
            if m.shape != (self.num_envs,):
                raise HighwayError(f"a boolean mask must have shape ({self.num_envs},), got {m.shape}")
            return np.flatnonzero(m)
        if m.dtype.kind not in "iu":
            raise HighwayError(f"games must be given as a boolean mask or integer indices, got dtype {m.dtype}")
        m = m.reshape(-1).astype(np.int64)
        bad = (m < -self.num_envs) | (m >= self.num_envs)
        if bad.any():
            raise HighwayError(f"game index {int(m[bad][0])} out of range for {self.num_envs} games")
        return m % self.num_envs

    def reset(self, mask=None, seed: int | None = None) -> None:
        """Reset all games (mask None) or those selected by a (N,) bool mask / index array to the
        empty board. ``seed`` (if given) reseeds the engine's random generator first."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        idx = self._indices(mask)
        self._load(np.zeros((len(idx), CELLS), np.int8), idx)

    def set_boards(self, boards, indices=None) -> None:
        """Load positions (``core.Board``s, 16-int sequences or an (k, 16) array; each checked by
        core) into the games ``indices`` (default: all, then exactly N boards are needed)."""
        cells = _as_cells(boards)
        idx = self._indices(indices)
        if len(idx) != len(cells):
            raise HighwayError(f"{len(cells)} boards given for {len(idx)} games")
        self._load(cells, idx)

    def _load(self, cells: np.ndarray, idx: np.ndarray) -> None:
        _load_games(np.ascontiguousarray(cells, dtype=np.int8), np.asarray(idx, np.int64), self._boards,
                    self._ply, self._cells_left, self._nums_left, self._cell_pos, self._num_pos)

    def board(self, i: int) -> Board:
        """Game ``i`` as a ``core.Board``."""
        return Board(tuple(int(v) for v in self._boards[self._indices([i])[0]]))

    def to_boards(self) -> list[Board]:
        """All games as ``core.Board``s."""
        return [Board(tuple(row)) for row in self._boards.tolist()]

    # -- moves
    def legal_mask(self, player_view: bool = False) -> np.ndarray:
        """(N, 256) bool, True where the action is legal (all False for terminal games).

        With ``player_view`` the mask is in the frame of ``observation()``: for games with B to move
        the cells are turned by QUARTER_TURN (see ``actions_from_player_view``)."""
        return batch_rules.masks(self._boards, bool(player_view))

    def actions_from_player_view(self, actions) -> np.ndarray:
        """Map (N,) actions chosen in ``observation()``'s frame back to board actions (negative
        values, e.g. -1 for terminal games, pass through)."""
        return self._map_actions(actions, FRAME_ACTIONS_INV)

    def actions_to_player_view(self, actions) -> np.ndarray:
        """Map (N,) board actions into ``observation()``'s frame (inverse of the above)."""
        return self._map_actions(actions, FRAME_ACTIONS)

    def _map_actions(self, actions, table: np.ndarray) -> np.ndarray:
        a = _as_actions(actions, self.num_envs)
        out = a.copy()
        ok = (a >= 0) & (a < NUM_ACTIONS)
        out[ok] = table[self.to_play[ok], a[ok]]
        return out

    def random_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """(N,) int64: a uniformly random legal action per game, -1 for terminal games.

        Draws exactly N raw 64-bit words from ``rng`` (default: the engine's own generator) whatever
        the state, so a seeded run is reproducible."""
        gen = self.rng if rng is None else rng
        raw = gen.bit_generator.random_raw(self.num_envs)
        out = np.empty(self.num_envs, np.int64)
        kernel = _random_parallel if self.parallel else _random_serial
        kernel(self._ply, self._cells_left, self._nums_left, raw, out)
        return out

    def step(self, actions) -> StepResult:
        """Play one action in every non-terminal game (terminal games ignore theirs).

        Raises ``IllegalMoveError``/``HighwayError`` naming the first game whose action is illegal or
        out of range; then no game has changed."""
        a = _as_actions(actions, self.num_envs)
        n = self.num_envs
        res = StepResult(np.zeros(n, np.bool_), np.zeros(n, np.int16), np.zeros(n, np.int16),
                         np.zeros(n, np.int16), np.zeros(n, np.int8))
        args = (self._boards, self._ply, self._cells_left, self._nums_left, self._cell_pos,
                self._num_pos, a, self.autoreset) + res
        bad = _step_parallel(nb.get_num_threads(), *args) if self.parallel else _step_serial(*args)
        if bad >= 0:
            self._raise_illegal(bad, int(a[bad]))
        return res

    def _raise_illegal(self, g: int, action: int):
        e = illegal_move_error(self._boards[g], action)
        raise type(e)(f"game {g}: {e}")

    # -- results and observations
    def outcomes(self) -> Outcomes:
        """Results of the terminal games (arrays of shape (N,), 0 where the game is not over)."""
        n = self.num_envs
        terminal = self.terminal
        min_a = np.empty(n, np.int16)
        min_b = np.empty(n, np.int16)
        batch_rules.final_min_paths(self._boards, min_a, min_b)
        margin = min_b - min_a
        return Outcomes(terminal, min_a, min_b, margin, np.sign(margin).astype(np.int8))

    def observation(self) -> np.ndarray:
        """(N, 4, 4, 16) int8 one-hot number planes from the side to move's view (B's board turned
        by QUARTER_TURN); plane k is number k+1. Terminal games are shown as they are (A's frame)."""
        return batch_rules.planes(self._boards)


# ----------------------------------------------------------------------------- input helpers

def _as_actions(actions, n: int) -> np.ndarray:
    a = np.asarray(actions)
    if a.shape != (n,):
        raise HighwayError(f"expected {n} actions (shape ({n},)), got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise HighwayError(f"actions must be integers, got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise HighwayError(f"action {int(a.max())} out of range 0..{NUM_ACTIONS - 1}")
    return np.ascontiguousarray(a, dtype=np.int64)


def _as_cells(boards) -> np.ndarray:
    """(k, 16) int8 from Boards / sequences / an array, each row validated by core.Board."""
    if isinstance(boards, Board):
        boards = [boards]
    if isinstance(boards, np.ndarray):
        if boards.ndim != 2 or boards.shape[1] != CELLS:
            raise HighwayError(f"a board array must have shape (k, {CELLS}), got {boards.shape}")
        if boards.dtype.kind not in "iu":
            raise HighwayError(f"board arrays must hold integers, got dtype {boards.dtype}")
        rows: Iterable = boards.tolist()
    else:
        rows = boards
    cells = []
    for i, row in enumerate(rows):
        try:
            cells.append(row.cells if isinstance(row, Board) else Board(tuple(row)).cells)
        except HighwayError as e:
            raise type(e)(f"board {i}: {e}") from None
        except TypeError:
            raise HighwayError(f"board {i}: expected a core.Board or 16 integers, got {row!r}") from None
    if not cells:
        raise HighwayError("no boards given")
    return np.asarray(cells, dtype=np.int8).reshape(len(cells), CELLS)
