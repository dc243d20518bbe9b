"""Highway as an :class:`agents.game.Game`: the batched rules the AlphaZero code trains on.

A state is a board, (16,) int8, 0 = empty, exactly as in :mod:`highway_env.core`. The side to move
follows from the number of filled cells. The network sees the board from the side to move, B's
board turned by ``core.QUARTER_TURN`` so that the mover always plays top-left to bottom-right. Two
observations (``HighwayGame(obs=...)``, stored in checkpoints as ``game_config``):

* ``"features"`` (default), (4, 4, 62) float32: the 16 one-hot number planes, then features of the
  path bounds computed in numba from the mover's view (see ``FEATURE_CHANNELS``): per cell the
  bounds and live share of both sides' paths through it, the global bounds and margin range, and
  per action (number, cell) the margin range after that move. Every feature is a function of the
  view board that commutes with the four symmetries, so the replay's augmentation (a permutation
  of the cells of every channel) stays exact.
* ``"planes"``, (4, 4, 16) int8: the one-hot planes alone, as :meth:`BatchedHighway.observation`
  and the PettingZoo env give them; checkpoints written before the features use it.

Why small kernels of its own instead of calling :class:`BatchedHighway`: search needs *stateless*
operations on arbitrary boards (leaf = parent board + action), and loading boards into a
BatchedHighway validates every row in Python (~10 us a board), which would dominate a search round.
The kernels here are tested against core (tests/test_agents_game.py); BatchedHighway is used for
the fast random play of rollouts and in tests as a second reference.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.game import Game, GameError
from highway_env import core
from highway_env.core import CELLS, NUM_ACTIONS, NUMBERS, SIZE

_QT = np.asarray(core.QUARTER_TURN, dtype=np.int64)  # board cell -> cell in B's view
_QT_INV = np.asarray(core.inverse_perm(core.QUARTER_TURN), dtype=np.int64)  # view cell -> board cell
_PATHS = core.PATH_TABLE  # (40, 7); rows 0..19 A-paths, 20..39 B-paths

#: Scale of the auxiliary margin target: scores = margin / SCORE_SCALE (margins are mostly |m| < 20).
SCORE_SCALE = 10.0


def _action_map(cell_map: np.ndarray) -> np.ndarray:
    """(256,) action -> action with the cell part mapped by cell_map (number unchanged)."""
    return (np.arange(NUMBERS)[:, None] * CELLS + cell_map[None, :]).reshape(-1)


_VIEW_TO_BOARD = np.stack([np.arange(NUM_ACTIONS), _action_map(_QT_INV)])  # (2, 256) by side to move


# ----------------------------------------------------------------------------- kernels

@nb.njit(cache=True)
def _ply(boards, g):
    k = 0
    for i in range(CELLS):
        if boards[g, i] != 0:
            k += 1
    return k


@nb.njit(cache=True)
def _legal_kernel(boards, out):
    for g in range(boards.shape[0]):
        used = np.zeros(NUMBERS, np.bool_)
        empty = np.zeros(CELLS, np.bool_)
        for i in range(CELLS):
            v = boards[g, i]
            if v == 0:
                empty[i] = True
            else:
                used[v - 1] = True
        for n in range(NUMBERS):
            for c in range(CELLS):
                out[g, n * CELLS + c] = (not used[n]) and empty[c]


@nb.njit(cache=True)
def _apply_kernel(boards, actions, out):
    """out <- boards with actions played; returns the index of the first illegal action or -1."""
    for g in range(boards.shape[0]):
        a = actions[g]
        if a < 0 or a >= NUM_ACTIONS:
            return g
        cell = a % CELLS
        num = a // CELLS + 1
        if boards[g, cell] != 0:
            return g
        for i in range(CELLS):
            if boards[g, i] == num:
                return g
            out[g, i] = boards[g, i]
        out[g, cell] = num
    return -1


@nb.njit(cache=True)
def _observe_kernel(boards, qt, out):
    """out (N, 16, 16) zeros -> one-hot planes in the mover's frame (B's board quarter-turned)."""
    for g in range(boards.shape[0]):
        ply = _ply(boards, g)
        flip = ply % 2 == 1 and ply < CELLS
        for i in range(CELLS):
            v = boards[g, i]
            if v != 0:
                out[g, qt[i] if flip else i, v - 1] = 1


#: Feature observation ("features", the default): channels of the (4, 4, C) view, in order.
#: 0-15 one-hot numbers (the "planes" observation of v1 checkpoints is exactly these 16), then
#: per cell: empty; min lower / upper bound of the mover's paths through the cell, the same for the
#: opponent's paths; share of the mover's / opponent's paths through the cell that are still live
#: (lower bound <= the side's best upper bound, i.e. the path can still be its cheapest);
#: broadcast over the board: the mover's best lower / upper bound, the opponent's, the margin range
#: (opponent's min - mover's min: lo, hi) and the ply; then per action (number n, cell c), as 16
#: planes each: the margin range lo / hi (mover's side) after writing n in c (0 where illegal).
#: A path's bounds: placed sum + the k smallest / largest unused numbers (k = its empty cells).
#: Path sums are scaled by 1/PATH_SCALE, margins by 1/MARGIN_SCALE.
FEATURE_CHANNELS = NUMBERS + 7 + 7 + 2 * NUMBERS
PATH_SCALE = 50.0
MARGIN_SCALE = 20.0


def _path_cell_table(paths: np.ndarray) -> np.ndarray:
    t = np.zeros((paths.shape[0], CELLS), np.bool_)
    for p in range(paths.shape[0]):
        t[p, paths[p]] = True
    return t


_ON_PATH = _path_cell_table(_PATHS)


@nb.njit(cache=True)
def _features_kernel(boards, qt, paths, on_path, out):
    """out (N, 16, FEATURE_CHANNELS) zeros -> the feature observation (see FEATURE_CHANNELS)."""
    npaths = paths.shape[0]
    half = npaths // 2  # rows < half: the mover's paths in the view frame (A-type), else opponent's
    plen = paths.shape[1]
    big = 1 << 30
    v = np.zeros(CELLS, np.int64)
    placed = np.zeros(npaths, np.int64)
    free = np.zeros(npaths, np.int64)
    lo = np.zeros(npaths, np.int64)
    hi = np.zeros(npaths, np.int64)
    live = np.zeros(npaths, np.int64)
    for g in range(boards.shape[0]):
        ply = _ply(boards, g)
        flip = ply % 2 == 1 and ply < CELLS
        for i in range(CELLS):
            v[qt[i] if flip else i] = boards[g, i]
        used = np.zeros(NUMBERS + 1, np.bool_)
        for i in range(CELLS):
            used[v[i]] = True
            if v[i] != 0:
                out[g, i, v[i] - 1] = 1.0
            else:
                out[g, i, NUMBERS] = 1.0
        small = np.zeros(CELLS + 2, np.int64)
        large = np.zeros(CELLS + 2, np.int64)
        rank_up = np.full(NUMBERS + 1, -1, np.int64)  # rank of an unused number, smallest first
        rank_dn = np.full(NUMBERS + 1, -1, np.int64)
        k = 0
        for n in range(1, NUMBERS + 1):
            if not used[n]:
                small[k + 1] = small[k] + n
                rank_up[n] = k
                k += 1
        k = 0
        for n in range(NUMBERS, 0, -1):
            if not used[n]:
                large[k + 1] = large[k] + n
                rank_dn[n] = k
                k += 1
        m_lo = big
        m_hi = big
        o_lo = big
        o_hi = big
        for p in range(npaths):
            s = 0
            f = 0
            for j in range(plen):
                x = v[paths[p, j]]
                if x == 0:
                    f += 1
                else:
                    s += x
            placed[p] = s
            free[p] = f
            lo[p] = s + small[f]
            hi[p] = s + large[f]
            if p < half:
                m_lo = min(m_lo, lo[p])
                m_hi = min(m_hi, hi[p])
            else:
                o_lo = min(o_lo, lo[p])
                o_hi = min(o_hi, hi[p])
        # per cell: min bounds and live share of each side's paths through it
        for c in range(CELLS):
            a_lo = big
            a_hi = big
            b_lo = big
            b_hi = big
            a_live = 0
            a_n = 0
            b_live = 0
            b_n = 0
            for p in range(npaths):
                if not on_path[p, c]:
                    continue
                if p < half:
                    a_lo = min(a_lo, lo[p])
                    a_hi = min(a_hi, hi[p])
                    a_n += 1
                    if lo[p] <= m_hi:
                        a_live += 1
                else:
                    b_lo = min(b_lo, lo[p])
                    b_hi = min(b_hi, hi[p])
                    b_n += 1
                    if lo[p] <= o_hi:
                        b_live += 1
            out[g, c, NUMBERS + 1] = a_lo / PATH_SCALE
            out[g, c, NUMBERS + 2] = a_hi / PATH_SCALE
            out[g, c, NUMBERS + 3] = b_lo / PATH_SCALE
            out[g, c, NUMBERS + 4] = b_hi / PATH_SCALE
            out[g, c, NUMBERS + 5] = a_live / a_n
            out[g, c, NUMBERS + 6] = b_live / b_n
            out[g, c, NUMBERS + 7] = m_lo / PATH_SCALE
            out[g, c, NUMBERS + 8] = m_hi / PATH_SCALE
            out[g, c, NUMBERS + 9] = o_lo / PATH_SCALE
            out[g, c, NUMBERS + 10] = o_hi / PATH_SCALE
            out[g, c, NUMBERS + 11] = (o_lo - m_hi) / MARGIN_SCALE
            out[g, c, NUMBERS + 12] = (o_hi - m_lo) / MARGIN_SCALE
            out[g, c, NUMBERS + 13] = ply / CELLS
        # per action: the margin range after writing n in c. A move only raises a path's lower
        # bound and lowers its upper bound, so a path whose lower bound exceeds its side's best
        # upper bound (not live) cannot be the minimum of either after any move: skip those.
        nlive = 0
        for p in range(npaths):
            if lo[p] <= (m_hi if p < half else o_hi):
                live[nlive] = p
                nlive += 1
        base = NUMBERS + 14
        for n in range(1, NUMBERS + 1):
            if used[n]:
                continue
            ru = rank_up[n]
            rd = rank_dn[n]
            for c in range(CELLS):
                if v[c] != 0:
                    continue
                c_mlo = big
                c_mhi = big
                c_olo = big
                c_ohi = big
                for q in range(nlive):
                    p = live[q]
                    f = free[p]
                    s = placed[p]
                    if on_path[p, c]:
                        f -= 1
                        s += n
                    # sums of the f smallest / largest unused numbers once n is used
                    sl = small[f] if ru >= f else small[f + 1] - n
                    sh = large[f] if rd >= f else large[f + 1] - n
                    if p < half:
                        c_mlo = min(c_mlo, s + sl)
                        c_mhi = min(c_mhi, s + sh)
                    else:
                        c_olo = min(c_olo, s + sl)
                        c_ohi = min(c_ohi, s + sh)
                out[g, c, base + n - 1] = (c_olo - c_mhi) / MARGIN_SCALE
                out[g, c, base + NUMBERS + n - 1] = (c_ohi - c_mlo) / MARGIN_SCALE


@nb.njit(cache=True)
def _min_paths(cells):
    """(min_a, min_b) of a full board (16,) by dynamic programming over the grid."""
    da = np.empty(CELLS, np.int64)
    db = np.empty(CELLS, np.int64)
    for r in range(SIZE):
        for c in range(SIZE):
            i = r * SIZE + c
            v = np.int64(cells[i])
            if r == 0 and c == 0:
                da[i] = v
            elif r == 0:
                da[i] = da[i - 1] + v
            elif c == 0:
                da[i] = da[i - SIZE] + v
            else:
                da[i] = v + min(da[i - SIZE], da[i - 1])
    for rr in range(SIZE):
        r = SIZE - 1 - rr
        for c in range(SIZE):
            i = r * SIZE + c
            v = np.int64(cells[i])
            if r == SIZE - 1 and c == 0:
                db[i] = v
            elif r == SIZE - 1:
                db[i] = db[i - 1] + v
            elif c == 0:
                db[i] = db[i + SIZE] + v
            else:
                db[i] = v + min(db[i + SIZE], db[i - 1])
    return da[CELLS - 1], db[SIZE - 1]


@nb.njit(cache=True)
def _margins_kernel(boards, out):
    """out[g] = min_b - min_a of each full board (0 for boards with empty cells)."""
    for g in range(boards.shape[0]):
        if _ply(boards, g) < CELLS:
            out[g] = 0
            continue
        ma, mb = _min_paths(boards[g])
        out[g] = mb - ma


@nb.njit(cache=True)
def _bounds_kernel(boards, paths, lo_out, hi_out):
    """Margin bounds (min_b - min_a) of each board, as core.Board.bounds()."""
    npaths = paths.shape[0]
    half = npaths // 2
    for g in range(boards.shape[0]):
        used = np.zeros(NUMBERS + 1, np.bool_)
        for i in range(CELLS):
            used[boards[g, i]] = True
        small = np.zeros(CELLS + 1, np.int64)  # prefix sums of the k smallest unused
        large = np.zeros(CELLS + 1, np.int64)
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
        a_lo = 1 << 30
        a_hi = 1 << 30
        b_lo = 1 << 30
        b_hi = 1 << 30
        for p in range(npaths):
            placed = 0
            free = 0
            for j in range(paths.shape[1]):
                v = boards[g, paths[p, j]]
                if v == 0:
                    free += 1
                else:
                    placed += v
            lo = placed + small[free]
            hi = placed + large[free]
            if p < half:
                a_lo = min(a_lo, lo)
                a_hi = min(a_hi, hi)
            else:
                b_lo = min(b_lo, lo)
                b_hi = min(b_hi, hi)
        lo_out[g] = b_lo - a_hi
        hi_out[g] = b_hi - a_lo


@nb.njit(cache=True)
def _rollout_kernel(boards, seed, out):
    """out[g] = margin after filling board g with a uniformly random sequence of legal moves.

    A uniformly random legal move sequence fills the empty cells with a uniformly random subset
    arrangement of the unused numbers, so one shuffle per board is enough."""
    np.random.seed(seed)
    cells = np.empty(CELLS, np.int64)
    for g in range(boards.shape[0]):
        b = boards[g].astype(np.int64)
        used = np.zeros(NUMBERS + 1, np.bool_)
        free = 0
        for i in range(CELLS):
            used[b[i]] = True
            if b[i] == 0:
                cells[free] = i
                free += 1
        nums = np.empty(NUMBERS, np.int64)
        k = 0
        for n in range(1, NUMBERS + 1):
            if not used[n]:
                nums[k] = n
                k += 1
        # Fisher-Yates on the unused numbers, then place the first `free` of them
        for i in range(k - 1, 0, -1):
            j = np.random.randint(0, i + 1)
            nums[i], nums[j] = nums[j], nums[i]
        for i in range(free):
            b[cells[i]] = nums[i]
        ma, mb = _min_paths(b)
        out[g] = mb - ma


# ----------------------------------------------------------------------------- the game

class HighwayGame(Game):
    """Highway for the AlphaZero code. Positions can be given as ``core.Board`` or 16 ints."""

    name = "highway"
    perfect_player = "highway_env.solver.player:PerfectPlayer.from_spec"
    num_actions = NUM_ACTIONS
    state_shape = (CELLS,)
    state_dtype = np.int8
    max_game_length = CELLS
    score_scale = SCORE_SCALE
    #: observation variants: "features" (default: one-hot planes + path-bound features, float32,
    #: see FEATURE_CHANNELS) and "planes" (the 16 one-hot planes, int8; checkpoints before the
    #: features, which carry no game config, use it)
    OBS = {"features": FEATURE_CHANNELS, "planes": NUMBERS}
    legacy_config = {"obs": "planes"}

    def __init__(self, obs: str = "features"):
        if obs not in self.OBS:
            raise GameError(f"Highway observation must be one of {sorted(self.OBS)}, got {obs!r}")
        self.obs = obs
        self.obs_shape = (SIZE, SIZE, self.OBS[obs])
        inv = [np.asarray(core.inverse_perm(p), dtype=np.int64) for p in core.SYMMETRIES.values()]
        obs_idx = np.arange(CELLS * self.OBS[obs]).reshape(CELLS, self.OBS[obs])
        # new[perm[i]] = old[i]  <=>  new[j] = old[inv[j]]
        self._obs_gather = np.stack([obs_idx[p].reshape(-1) for p in inv])
        self._action_gather = np.stack([_action_map(p) for p in inv])

    def config(self) -> dict:
        return {"obs": self.obs}

    # -- conversions
    def as_state(self, state) -> np.ndarray:
        if isinstance(state, core.Board):
            return np.asarray(state.cells, dtype=np.int8)
        if isinstance(state, str):
            return np.asarray(core.parse_board(state).cells, dtype=np.int8)
        a = np.asarray(state)
        if a.shape != (CELLS,):
            raise GameError(f"a Highway state is 16 cells, got shape {a.shape}")
        core.Board(tuple(int(v) for v in a))  # validates, raising core.HighwayError
        return a.astype(np.int8)


    @staticmethod
    def _boards(states) -> np.ndarray:
        s = np.ascontiguousarray(states, dtype=np.int8)
        if s.ndim != 2 or s.shape[1] != CELLS:
            raise GameError(f"Highway states must have shape (N, {CELLS}), got {s.shape}")
        return s

    # -- rules
    def initial_states(self, n: int) -> np.ndarray:
        return np.zeros((n, CELLS), np.int8)

    def legal_masks(self, states):
        b = self._boards(states)
        out = np.empty((len(b), NUM_ACTIONS), np.bool_)
        _legal_kernel(b, out)
        return out

    def apply(self, states, actions):
        b = self._boards(states)
        a = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
        if a.shape != (len(b),):
            raise GameError(f"{len(b)} states but {a.shape[0]} actions")
        out = np.empty_like(b)
        bad = _apply_kernel(b, a, out)
        if bad >= 0:
            board = core.Board(tuple(int(v) for v in b[bad]))
            try:
                board.apply(int(a[bad]))
            except core.HighwayError as e:
                raise GameError(f"state {bad}: {e}") from None
        return out

    def terminal(self, states):
        return (self._boards(states) != 0).all(axis=1)

    def to_play(self, states):
        return ((self._boards(states) != 0).sum(axis=1) % 2).astype(np.int8)

    def margins(self, states) -> np.ndarray:
        """(N,) min_b - min_a of full boards (0 elsewhere)."""
        b = self._boards(states)
        out = np.empty(len(b), np.int64)
        _margins_kernel(b, out)
        return out

    def returns(self, states):
        return np.sign(self.margins(states)).astype(np.float32)

    def scores(self, states):
        return (self.margins(states) / SCORE_SCALE).astype(np.float32)

    # -- network view
    def observations(self, states):
        b = self._boards(states)
        if self.obs == "planes":
            out = np.zeros((len(b), CELLS, NUMBERS), np.int8)
            _observe_kernel(b, _QT, out)
        else:
            out = np.zeros((len(b), CELLS, FEATURE_CHANNELS), np.float32)
            _features_kernel(b, _QT, _PATHS, _ON_PATH, out)
        return out.reshape(len(b), *self.obs_shape)

    def view_to_board(self, states):
        return _VIEW_TO_BOARD[self.to_play(states)]

    def symmetries(self):
        return self._obs_gather, self._action_gather

    # -- helpers for baselines
    def margin_bounds(self, states) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) of min_b - min_a that each position still allows (core.Board.bounds().margin)."""
        b = self._boards(states)
        lo = np.empty(len(b), np.int64)
        hi = np.empty(len(b), np.int64)
        _bounds_kernel(b, _PATHS, lo, hi)
        return lo, hi

    def heuristic(self, states):
        lo, hi = self.margin_bounds(states)
        return (lo + hi).astype(np.float64) / 2.0  # midpoint of the margin range, exact when full

    def rollout(self, states, rng):
        b = self._boards(states)
        out = np.empty(len(b), np.int64)
        _rollout_kernel(b, int(rng.integers(0, 2**31 - 1)), out)
        return np.sign(out).astype(np.float32)

