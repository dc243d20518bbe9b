"""The Black Path Game as an :class:`agents.game.Game`, so the AlphaZero code trains on it unchanged.

A state is a small int8 array of ``rows * cols + 3`` entries::

    tiles[rows * cols]   0 = empty, 1..3 = T1..T3 (as ``State.tiles``)
    square               the empty square at the end of the path, -1 once the game is over
    entry                the side (0..3 = top, right, bottom, left) the path enters it by, -1 when over
    ply                  moves made; player ``ply % 2`` (0 = the first player) is to move

The start square/side is a property of the game object (default 4x4 from ``A1:top``); the rest of
the game depends only on the tiles and the path's end (the path never comes back to its start, a
boundary side), so it is not stored. Actions 0..2 are the tiles T1..T3 placed on the path's square.

Results: the player whose tile runs the path into the edge loses, so a finished game was lost by
the last mover: ``returns`` is +1 (player 0 won) when ``ply`` is even, -1 when it is odd. No draws.

View: Black Path is impartial (both players have the same moves and the same goal), so the
position seen from the side to move is just the board: (rows, cols, 7) planes, 3 one-hot tile
planes and 4 planes marking the path's square by its entry side. ``view_to_board`` is the identity.

Symmetries: the board's dihedral symmetries (8 on a square board, 4 otherwise) map a position to an
equivalent one (same value for the mover) when applied to squares, sides, tiles and actions
together: a reflection swaps T1 and T2 (and their actions), T3 is invariant. They are valid for the
network's view even though the transformed position may start elsewhere (the start does not matter
for the rest of the game). ``transform_states`` applies one to states; tests check equivariance.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.game import Game, GameError
from highway_env.blackpath import game as bp

_EXIT = np.asarray(bp.EXIT, dtype=np.int64)  # (4, 4): tile 0..3, entry side -> exit side
_DELTA = np.asarray(bp._DELTA, dtype=np.int64)  # (4, 2) (drow, dcol) leaving through each side
#: each side's image under the transpose (4), the flip of the rows (1), the flip of the columns (2)
_SIDE_IMAGE = {4: np.array([bp.LEFT, bp.BOTTOM, bp.RIGHT, bp.TOP]),
               1: np.array([bp.BOTTOM, bp.RIGHT, bp.TOP, bp.LEFT]),
               2: np.array([bp.TOP, bp.LEFT, bp.BOTTOM, bp.RIGHT])}
NUM_TILES = 3
CHANNELS = NUM_TILES + 4


@nb.njit(cache=True)
def _apply_kernel(states, actions, rows, cols, exit_tab, delta, out):
    """out <- states with actions played; returns the index of the first illegal action or -1."""
    cells = rows * cols
    for g in range(states.shape[0]):
        for i in range(states.shape[1]):
            out[g, i] = states[g, i]
        a = actions[g]
        sq = np.int64(states[g, cells])
        entry = np.int64(states[g, cells + 1])
        if a < 0 or a >= 3 or sq < 0 or sq >= cells or entry < 0 or entry > 3 or states[g, sq] != 0:
            return g
        out[g, sq] = a + 1
        steps = 0
        while True:
            t = out[g, sq]
            if t == 0:
                out[g, cells] = sq
                out[g, cells + 1] = entry
                break
            ex = exit_tab[t, entry]
            r = sq // cols + delta[ex, 0]
            c = sq % cols + delta[ex, 1]
            steps += 1
            if r < 0 or r >= rows or c < 0 or c >= cols or steps > 4 * cells:
                out[g, cells] = -1
                out[g, cells + 1] = -1
                break
            sq = r * cols + c
            entry = (ex + 2) % 4
        out[g, cells + 2] = states[g, cells + 2] + 1
    return -1


def _dihedral(rows: int, cols: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """[(square perm old->new, side map old->new, tile map old->new (index 0..3))] of the board's
    symmetries, identity first (k & 4: transpose, k & 1: flip rows, k & 2: flip columns, in that
    order, as ``highway_env.jumping.game.symmetries``)."""
    out = []
    for k in range(8):
        if k & 4 and rows != cols:
            continue
        grid, side = np.arange(rows * cols).reshape(rows, cols), np.arange(4)  # grid[new square] = old one
        for bit, flip in ((4, np.transpose), (1, np.flipud), (2, np.fliplr)):
            if k & bit:
                grid, side = flip(grid), _SIDE_IMAGE[bit][side]
        perm = np.argsort(grid, axis=None)
        tile = np.zeros(4, np.int64)
        for t in range(1, 4):
            for t2 in range(1, 4):
                if all(_EXIT[t2, side[a]] == side[_EXIT[t, a]] for a in range(4)):
                    tile[t] = t2
        assert sorted(tile[1:].tolist()) == [1, 2, 3]
        out.append((perm, side, tile))
    return out


class BlackPathGame(Game):
    """Black Path for the AlphaZero code; positions can also be given as ``blackpath.game.State``."""

    name = "blackpath"
    title = "Black Path"
    perfect_player = "highway_env.blackpath.perfect:BlackPathPerfect.from_spec"

    def __init__(self, rows: int = 4, cols: int = 4, start="A1:top"):
        s0 = bp.new_game(rows, cols, start)
        if rows * cols > 120:
            raise GameError(f"the agents' int8 state holds boards of at most 120 squares, got {rows} x {cols} = "
                            f"{rows * cols}: take fewer rows or columns")
        self.rows, self.cols = rows, cols
        self.start_square, self.start_side = s0.start_square, s0.start_side
        self.cells = rows * cols
        self.num_actions = NUM_TILES
        self.state_shape = (self.cells + 3,)
        self.obs_shape = (rows, cols, CHANNELS)
        self.max_game_length = self.cells
        self._syms = _dihedral(rows, cols)
        obs_g, act_g = [], []
        for perm, side, tile in self._syms:  # the gathers: new index -> old, the inverse of old -> new
            chmap = np.concatenate([tile[1:] - 1, NUM_TILES + side])  # old channel -> new channel
            obs_g.append(np.argsort((perm[:, None] * CHANNELS + chmap).ravel()))
            act_g.append(np.argsort(tile[1:] - 1))
        self._symmetries = np.stack(obs_g), np.stack(act_g)

    def config(self) -> dict:
        return {"rows": self.rows, "cols": self.cols,
                "start": bp.start_name(self.start_square, self.start_side, self.cols)}

    def describe(self) -> str:
        return f"{self.rows}x{self.cols} from start square {self.start_square} side {self.start_side}"

    def plies(self, states):
        return self.checked_states(states)[:, self.cells + 2].astype(np.int64)

    # -- conversions
    def as_state(self, state) -> np.ndarray:
        if isinstance(state, bp.State):
            if (state.rows, state.cols) != (self.rows, self.cols):
                raise GameError(f"a {state.rows}x{state.cols} position for a {self.rows}x{self.cols} game")
            return np.asarray([*state.tiles, state.square, state.entry if state.square >= 0 else -1,
                               state.ply], dtype=np.int8)
        return super().as_state(state)

    def to_rules_state(self, state) -> bp.State:
        """One state array -> ``blackpath.game.State`` (with this game's start)."""
        *tiles, sq, entry, ply = (int(v) for v in np.asarray(state))
        return bp.State(self.rows, self.cols, self.start_square, self.start_side,
                        tuple(tiles), sq, entry, ply)

    # -- rules
    def initial_states(self, n: int) -> np.ndarray:
        s = np.zeros((n, *self.state_shape), np.int8)
        s[:, self.cells] = self.start_square
        s[:, self.cells + 1] = self.start_side
        return s

    def terminal(self, states):
        return self.checked_states(states)[:, self.cells] < 0

    def legal_masks(self, states):
        live = ~self.terminal(states)
        return np.repeat(live[:, None], NUM_TILES, axis=1)

    def apply(self, states, actions):
        s, a = self.checked_moves(states, actions)
        out = np.empty_like(s)
        bad = _apply_kernel(s, a, self.rows, self.cols, _EXIT, _DELTA, out)
        if bad >= 0:
            why = "the game is over" if s[bad, self.cells] < 0 else f"action {int(a[bad])} is not 0..2"
            raise GameError(f"state {bad}: illegal move ({why})")
        return out

    def to_play(self, states):
        return (self.checked_states(states)[:, self.cells + 2] % 2).astype(np.int8)

    def returns(self, states):
        s = self.checked_states(states)
        r = np.where(s[:, self.cells + 2] % 2 == 0, 1.0, -1.0)  # the last mover lost
        return np.where(s[:, self.cells] < 0, r, 0.0).astype(np.float32)

    # -- network view
    def observations(self, states):
        s = self.checked_states(states)
        n = len(s)
        out = np.zeros((n, self.cells, CHANNELS), np.int8)
        tiles = s[:, :self.cells].astype(np.int64)
        g, sq = np.nonzero(tiles)
        out[g, sq, tiles[g, sq] - 1] = 1
        live = np.flatnonzero(s[:, self.cells] >= 0)
        out[live, s[live, self.cells].astype(np.int64), NUM_TILES + s[live, self.cells + 1].astype(np.int64)] = 1
        return out.reshape(n, *self.obs_shape)

    def symmetries(self):
        return self._symmetries

    def transform_states(self, states, k: int) -> np.ndarray:
        """States mapped by the k-th symmetry (row k of :meth:`symmetries`): an equivalent position
        for the mover. Used by the tests to check the gathers."""
        s = self.checked_states(states)
        perm, side, tile = self._syms[k]
        out = s.copy()
        out[:, perm] = tile[s[:, :self.cells].astype(np.int64)]
        live = s[:, self.cells] >= 0
        out[live, self.cells] = perm[s[live, self.cells].astype(np.int64)]
        out[live, self.cells + 1] = side[s[live, self.cells + 1].astype(np.int64)]
        return out

    # -- helpers for baselines
    def heuristic(self, states):
        """Exact result on finished games, 0 elsewhere (so greedy never loses at once if it can)."""
        return self.returns(states).astype(np.float64)
