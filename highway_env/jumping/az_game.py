"""Jumping Farther & Farther (two players) as an :class:`agents.game.Game` for the AlphaZero code.

A state is a small int8 array of ``n * n + 5`` entries, the fields of ``jumping.game.State``::

    occ[n * n]   1 = filled, 0 = empty
    last         square of the last integer placed, -1 before the first move
    jump         length of the last jump, 0 before the second move
    score0       points of player 0 (player 1 in the rules' numbering: places the odd integers)
    score1       points of player 1 (even integers)
    ply          integers placed; player ``ply % 2`` is to move

Actions are the target squares (``n * n``). The game ends when the last integer has no empty square
on its queen lines; ``returns`` is the sign of score0 - score1 (draws give 0) and ``scores`` the
margin divided by :attr:`JumpingGame.score_scale`.

View: (n, n, 5 + n) planes from the side to move: filled squares, the last square, the legal
targets, the targets that would score, the last jump length one-hot (n constant planes for 0..n-1)
and the mover's lead (own minus opponent's points) / score_scale as a constant plane. Actions are
squares for both players, so ``view_to_board`` is the identity. With ``lookahead`` (a view option:
the rules are the same) four more planes give, per legal target, what the opponent meets after the
move there: the move ends the game (no empty square on the target's lines), the opponent's legal
replies and its scoring replies (longer jumps) as fractions of the most a square can have, and
whether it has a scoring reply at all. They are one ply of search an MLP would otherwise have to
learn: Jumping's margin hinges on the opponent's next jump.

Symmetries: the 8 dihedral symmetries of the square preserve queen lines and distances, so they map
positions to equivalent ones; the policy is permuted like the squares (``transform_states`` applies
one to states; tests check the gathers against it).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.game import Game, GameError
from highway_env.jumping import game as jg

LOOKAHEAD_PLANES = 4


@nb.njit(cache=True)
def _lines_kernel(states, cells, ray_sq, ray_len, legal, dist):
    """legal[g]: the empty squares on the last square's lines (every empty square before the first
    move); dist[g, sq]: the jump length from the last square to sq on one of its lines, else 0."""
    for g in range(states.shape[0]):
        last = states[g, cells]
        for i in range(cells):
            legal[g, i] = last < 0 and states[g, i] == 0
            dist[g, i] = 0
        if last < 0:
            continue
        for d in range(8):
            for k in range(ray_len[last, d]):
                sq = ray_sq[last, d, k]
                legal[g, sq] = states[g, sq] == 0
                dist[g, sq] = k + 1


@nb.njit(cache=True)
def _lookahead_kernel(states, cells, ray_sq, ray_len, legal, dist, out):
    """out[g, t, :] for each legal target t: (the game ends after t, the opponent's replies, its
    scoring replies (jump longer than dist[g, t]), any scoring reply); replies as counts."""
    for g in range(states.shape[0]):
        for t in range(cells):
            if not legal[g, t]:
                continue
            replies = 0
            scoring = 0
            for d in range(8):
                for k in range(ray_len[t, d]):
                    sq = ray_sq[t, d, k]
                    if states[g, sq] == 0:
                        replies += 1
                        # placing 2 never scores: the jump to t is then the first (dist 0 before move 1)
                        if dist[g, t] > 0 and k + 1 > dist[g, t]:
                            scoring += 1
            out[g, t, 0] = replies == 0
            out[g, t, 1] = replies
            out[g, t, 2] = scoring
            out[g, t, 3] = scoring > 0


@nb.njit(cache=True)
def _apply_kernel(states, actions, cells, ray_sq, ray_len, out):
    """out <- states with actions played; returns the index of the first illegal action or -1."""
    for g in range(states.shape[0]):
        for i in range(states.shape[1]):
            out[g, i] = states[g, i]
        t = actions[g]
        if t < 0 or t >= cells or states[g, t] != 0:
            return g
        last = states[g, cells]
        d = 0
        if last >= 0:
            for dd in range(8):
                for k in range(ray_len[last, dd]):
                    if ray_sq[last, dd, k] == t:
                        d = k + 1
            if d == 0:
                return g
            # a state with no empty square on the last lines is over: no move is legal
        jump = states[g, cells + 1]
        ply = states[g, cells + 4]
        out[g, t] = 1
        out[g, cells] = t
        out[g, cells + 1] = d
        if jump > 0 and d > jump:
            out[g, cells + 2 + ply % 2] += 1
        out[g, cells + 4] = ply + 1
    return -1


class JumpingGame(Game):
    """Two-player Jumping Farther & Farther; positions can also be given as ``jumping.game.State``."""

    name = "jumping"
    title = "Jumping Farther & Farther"
    perfect_player = "highway_env.jumping.perfect:JumpingPerfect.from_spec"
    view_options = ("value", "lookahead")

    def __init__(self, n: int = 4, value: str = "result", lookahead: bool = False):
        if value not in ("result", "margin"):
            raise ValueError(f"value must be 'result' (the value target is win/draw/loss) or 'margin' "
                             f"(tanh of the margin / score_scale), got {value!r}")
        if not isinstance(lookahead, (bool, np.bool_)):
            raise ValueError(f"lookahead must be true or false, got {lookahead!r}")
        self.value = value
        self.lookahead = bool(lookahead)
        self.n = n = jg.check_n(n)
        self.cells = n * n
        self.num_actions = self.cells
        self.state_shape = (self.cells + 5,)
        self.channels = 5 + n + (LOOKAHEAD_PLANES if self.lookahead else 0)
        # the most replies a square can have (its queen lines), the lookahead planes' scale
        self._max_replies = float(max(1, 4 * (n - 1)))
        self.obs_shape = (n, n, self.channels)
        self.max_game_length = self.cells
        self.score_scale = float(max(1, self.cells // 4))
        self._ray_sq, self._ray_len = jg.rays_array(n)
        self._perms = np.array(jg.symmetries(n), dtype=np.int64)  # [k, old sq] = new sq
        inv = np.argsort(self._perms, axis=1)  # new[j] = old[inv[k, j]]
        obs_idx = np.arange(self.cells * self.channels).reshape(self.cells, self.channels)
        self._symmetries = obs_idx[inv].reshape(len(inv), -1), inv

    def config(self) -> dict:
        # options at their defaults are left out, so older checkpoints' configs still compare equal
        return {"n": self.n, **({"value": self.value} if self.value != "result" else {}),
                **({"lookahead": True} if self.lookahead else {})}

    def describe(self) -> str:
        return f"n = {self.n}"

    def plies(self, states):
        return self.checked_states(states)[:, self.cells + 4].astype(np.int64)

    # -- conversions
    def as_state(self, state) -> np.ndarray:
        if isinstance(state, jg.State):
            if state.n != self.n:
                raise GameError(f"an n={state.n} position for an n={self.n} game")
            occ = [(state.occ >> i) & 1 for i in range(self.cells)]
            return np.asarray([*occ, state.last, state.jump, *state.scores, state.ply], dtype=np.int8)
        return super().as_state(state)

    def to_rules_state(self, state) -> jg.State:
        *occ, last, jump, score0, score1, ply = (int(v) for v in np.asarray(state))
        occ = sum(1 << i for i, filled in enumerate(occ) if filled)
        return jg.State(self.n, occ, last, jump, (score0, score1), ply)

    # -- rules
    def initial_states(self, n: int) -> np.ndarray:
        s = np.zeros((n, *self.state_shape), np.int8)
        s[:, self.cells] = -1
        return s

    def _lines(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal, dist = np.empty((len(s), self.cells), np.bool_), np.empty((len(s), self.cells), np.int64)
        _lines_kernel(s, self.cells, self._ray_sq, self._ray_len, legal, dist)
        return legal, dist

    def legal_masks(self, states):
        return self._lines(self.checked_states(states))[0]

    def terminal(self, states):
        return ~self.legal_masks(states).any(axis=1)

    def apply(self, states, actions):
        s, a = self.checked_moves(states, actions)
        out = np.empty_like(s)
        bad = _apply_kernel(s, a, self.cells, self._ray_sq, self._ray_len, out)
        if bad >= 0:
            raise GameError(f"state {bad}: square {int(a[bad])} is not a legal move")
        return out

    def to_play(self, states):
        return (self.checked_states(states)[:, self.cells + 4] % 2).astype(np.int8)

    def margins(self, states) -> np.ndarray:
        """(N,) score0 - score1."""
        s = self.checked_states(states).astype(np.int64)
        return s[:, self.cells + 2] - s[:, self.cells + 3]

    def returns(self, states):
        # "margin": the value head learns the score difference that the accuracy is graded on
        if self.value == "margin":
            return np.tanh(self.scores(states)).astype(np.float32)
        return np.sign(self.margins(states)).astype(np.float32)

    def scores(self, states):
        return (self.margins(states) / self.score_scale).astype(np.float32)

    # -- network view
    def observations(self, states):
        s = self.checked_states(states)
        N, c, n = len(s), self.cells, self.n
        out = np.zeros((N, c, self.channels), np.float32)
        out[:, :, 0] = s[:, :c]
        live = np.flatnonzero(s[:, c] >= 0)
        out[live, s[live, c].astype(np.int64), 1] = 1
        legal, dist = self._lines(s)
        out[:, :, 2] = legal
        jump = s[:, c + 1].astype(np.int64)
        out[:, :, 3] = legal & (jump[:, None] > 0) & (dist > jump[:, None])
        out[np.arange(N), :, 4 + np.clip(jump, 0, n - 1)] = 1
        lead = self.margins(s) * np.where(s[:, c + 4] % 2 == 0, 1, -1)
        out[:, :, 4 + n] = (lead / self.score_scale)[:, None]
        if self.lookahead:
            ahead = np.zeros((N, c, LOOKAHEAD_PLANES), np.float32)
            _lookahead_kernel(s, c, self._ray_sq, self._ray_len, legal, dist, ahead)
            ahead[:, :, 1:3] /= self._max_replies
            out[:, :, 5 + n:] = ahead
        return out.reshape(N, *self.obs_shape)

    def symmetries(self):
        return self._symmetries

    def transform_states(self, states, k: int) -> np.ndarray:
        """States mapped by the k-th symmetry (row k of :meth:`symmetries`)."""
        s = self.checked_states(states)
        p, c = self._perms[k], self.cells
        out = s.copy()
        out[:, p] = s[:, :c]
        live = s[:, c] >= 0
        out[live, c] = p[s[live, c].astype(np.int64)]
        return out

    # -- helpers for baselines
    def heuristic(self, states):
        """The current margin score0 - score1 (exact on finished games)."""
        return self.margins(states).astype(np.float64)
