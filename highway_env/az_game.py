"""Highway as an :class:`agents.game.Game`, on the stateless rules kernel
:mod:`highway_env.highway.batch_rules` (a search leaf is its parent board plus an action, so it needs
operations on arbitrary boards); this module adds what the agents need on top: the feature
observation and random playouts.

A state is a board, (16,) int8 as in :mod:`highway_env.core`. The network sees it from the side to
move (B's board turned by ``core.QUARTER_TURN``). ``HighwayGame(obs=...)``, stored in checkpoints as
``game_config``: ``"features"`` (default), (4, 4, 62) float32, the 16 one-hot number planes then
path-bound features (``FEATURE_CHANNELS``), each commuting with the four symmetries so the replay's
augmentation stays exact; or ``"planes"``, (4, 4, 16) int8, the planes alone (older checkpoints).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.game import Game, GameError, LabelledPositions
from highway_env import core
from highway_env.core import CELLS, NUM_ACTIONS, NUMBERS, SIZE
from highway_env.highway import batch_rules
from highway_env.highway.batch_rules import (FRAME_ACTIONS_INV, ON_PATH, PATHS, actions_of_cell_map,
                                             min_paths, path_ranges, unused_prefix_sums)

#: Scale of the auxiliary margin target: scores = margin / SCORE_SCALE (margins are mostly |m| < 20).
SCORE_SCALE = 10.0


# ----------------------------------------------------------------------------- kernels

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


@nb.njit(cache=True)
def _features_kernel(boards, out):
    """out (N, 16, FEATURE_CHANNELS) zeros -> the feature observation (see FEATURE_CHANNELS)."""
    npaths = PATHS.shape[0]
    half = npaths // 2  # rows < half: the mover's paths in the view frame (A-type), else opponent's
    big = 1 << 30
    v = np.zeros(CELLS, np.int64)
    placed = np.zeros(npaths, np.int64)
    free = np.zeros(npaths, np.int64)
    lo = np.zeros(npaths, np.int64)
    hi = np.zeros(npaths, np.int64)
    max_free = PATHS.shape[1]
    least_sum = np.empty((2, CELLS, 2, max_free + 1), np.int64)  # side, cell, through it, free cells
    add_lo = np.zeros((2, max_free + 1), np.int64)
    add_hi = np.zeros((2, max_free + 1), np.int64)
    small = np.zeros(CELLS + 2, np.int64)
    large = np.zeros(CELLS + 2, np.int64)
    rank_up = np.empty(NUMBERS + 1, np.int64)  # rank of an unused number, smallest first
    rank_dn = np.empty(NUMBERS + 1, np.int64)
    for g in range(boards.shape[0]):
        ply = batch_rules.filled(boards[g])
        side = ply % 2
        for i in range(CELLS):
            v[batch_rules.PLAYER_FRAME[side, i]] = boards[g, i]
        for i in range(CELLS):
            if v[i] != 0:
                out[g, i, v[i] - 1] = 1.0
            else:
                out[g, i, NUMBERS] = 1.0
        used = unused_prefix_sums(v, small, large)
        k = 0
        for n in range(1, NUMBERS + 1):
            if not used[n]:
                rank_up[n] = k
                k += 1
        for n in range(1, NUMBERS + 1):
            if not used[n]:
                rank_dn[n] = k - 1 - rank_up[n]
        m_lo, m_hi, o_lo, o_hi = path_ranges(v, small, large, placed, free, lo, hi)
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
                if not ON_PATH[p, c]:
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
        # After the move a path's bounds are its placed sum plus a term that depends only on its
        # free cells f, on n and on whether it goes through c; so per side, cell, f and through-c
        # the least placed sum of the live paths (least_sum) stands for all of them: the minima are
        # the same integers as over every path, at a few entries per action instead of 40.
        least_sum[:] = big
        f_top = 0
        for p in range(npaths):
            if lo[p] > (m_hi if p < half else o_hi):
                continue
            f = free[p]
            f_top = max(f_top, f)
            side_p = 0 if p < half else 1
            for c in range(CELLS):
                if v[c] == 0:
                    on = 1 if ON_PATH[p, c] else 0
                    least_sum[side_p, c, on, f] = min(least_sum[side_p, c, on, f], placed[p])
        base = NUMBERS + 14
        for n in range(1, NUMBERS + 1):
            if used[n]:
                continue
            ru = rank_up[n]
            rd = rank_dn[n]
            # sums of the f smallest / largest unused numbers once n is used, and what a path
            # through the cell (one free cell less, n placed) adds
            for f in range(f_top + 1):
                add_lo[0, f] = small[f] if ru >= f else small[f + 1] - n
                add_hi[0, f] = large[f] if rd >= f else large[f + 1] - n
                if f > 0:
                    add_lo[1, f] = n + (small[f - 1] if ru >= f - 1 else small[f] - n)
                    add_hi[1, f] = n + (large[f - 1] if rd >= f - 1 else large[f] - n)
            for c in range(CELLS):
                if v[c] != 0:
                    continue
                c_mlo = big
                c_mhi = big
                c_olo = big
                c_ohi = big
                for on in range(2):
                    for f in range(on, f_top + 1):
                        s = least_sum[0, c, on, f]
                        if s < big:
                            c_mlo = min(c_mlo, s + add_lo[on, f])
                            c_mhi = min(c_mhi, s + add_hi[on, f])
                        s = least_sum[1, c, on, f]
                        if s < big:
                            c_olo = min(c_olo, s + add_lo[on, f])
                            c_ohi = min(c_ohi, s + add_hi[on, f])
                out[g, c, base + n - 1] = (c_olo - c_mhi) / MARGIN_SCALE
                out[g, c, base + NUMBERS + n - 1] = (c_ohi - c_mlo) / MARGIN_SCALE


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
        ma, mb = min_paths(b)
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
    #: observation -> channels; checkpoints from before the features carry no game config: "planes"
    OBS = {"features": FEATURE_CHANNELS, "planes": NUMBERS}
    legacy_config = {"obs": "planes"}
    view_options = ("obs",)

    def __init__(self, obs: str = "features"):
        if obs not in self.OBS:
            raise GameError(f"Highway observation must be one of {sorted(self.OBS)}, got {obs!r}")
        self.obs = obs
        self.obs_shape = (SIZE, SIZE, self.OBS[obs])
        inv = [np.asarray(core.inverse_perm(p), dtype=np.int64) for p in core.SYMMETRIES.values()]
        obs_idx = np.arange(CELLS * self.OBS[obs]).reshape(CELLS, self.OBS[obs])
        # new[perm[i]] = old[i]  <=>  new[j] = old[inv[j]]
        self._obs_gather = np.stack([obs_idx[p].reshape(-1) for p in inv])
        self._action_gather = np.stack([actions_of_cell_map(p) for p in inv])

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
        return batch_rules.masks(self._boards(states))

    def apply(self, states, actions):
        b = self._boards(states)
        a = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
        if a.shape != (len(b),):
            raise GameError(f"{len(b)} states but {a.shape[0]} actions")
        out = np.empty_like(b)
        bad = batch_rules.apply_actions(b, a, out)
        if bad >= 0:
            raise GameError(f"state {bad}: {core.illegal_move_error(b[bad], int(a[bad]))}")
        return out

    def terminal(self, states):
        return (self._boards(states) != 0).all(axis=1)

    def to_play(self, states):
        return ((self._boards(states) != 0).sum(axis=1) % 2).astype(np.int8)

    def margins(self, states) -> np.ndarray:
        """(N,) min_b - min_a of full boards (0 elsewhere)."""
        b = self._boards(states)
        min_a = np.empty(len(b), np.int64)
        min_b = np.empty(len(b), np.int64)
        batch_rules.final_min_paths(b, min_a, min_b)
        return min_b - min_a

    def returns(self, states):
        return np.sign(self.margins(states)).astype(np.float32)

    def scores(self, states):
        return (self.margins(states) / SCORE_SCALE).astype(np.float32)

    # -- network view
    def observations(self, states):
        b = self._boards(states)
        if self.obs == "planes":
            return batch_rules.planes(b)
        out = np.zeros((len(b), CELLS, FEATURE_CHANNELS), np.float32)
        _features_kernel(b, out)
        return out.reshape(len(b), *self.obs_shape)

    def view_to_board(self, states):
        return FRAME_ACTIONS_INV[self.to_play(states)]

    def symmetries(self):
        return self._obs_gather, self._action_gather

    # -- solver-labelled positions for grading while training
    def graded_positions(self, n: int) -> LabelledPositions:
        """Up to ``n`` critical positions of the position set's selection part, a fixed sample
        (the same for every run and seed, so runs compare); ``evaluate.py`` grades on the other part."""
        from highway_env.evaluation.position_set import DEFAULT_PATH, load_positions, selection_mask

        ps = load_positions()
        idx = np.flatnonzero(selection_mask(ps.boards) & ps.critical())
        idx = np.sort(np.random.default_rng(12).permutation(idx)[:n])
        return LabelledPositions(ps.boards[idx], ps.values[idx] == ps.value[idx, None],
                                 f"{len(idx)} critical positions of {DEFAULT_PATH.name}'s selection part")

    # -- helpers for baselines
    def margin_bounds(self, states) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) of min_b - min_a that each position still allows (core.Board.bounds().margin)."""
        b = self._boards(states)
        out = np.empty((len(b), 4), np.int64)  # min_a lo, min_a hi, min_b lo, min_b hi
        batch_rules.bounds(b, out)
        return out[:, 2] - out[:, 1], out[:, 3] - out[:, 0]

    def heuristic(self, states):
        lo, hi = self.margin_bounds(states)
        return (lo + hi).astype(np.float64) / 2.0  # midpoint of the margin range, exact when full

    def rollout(self, states, rng):
        b = self._boards(states)
        out = np.empty(len(b), np.int64)
        _rollout_kernel(b, int(rng.integers(0, 2**31 - 1)), out)
        return np.sign(out).astype(np.float32)

