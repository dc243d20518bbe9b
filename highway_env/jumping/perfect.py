"""The perfect player of two-player Jumping Farther & Farther, backed by the exact solver.

:class:`JumpingPerfect` implements :class:`agents.base.Agent` on the state arrays of
:class:`highway_env.jumping.az_game.JumpingGame`: it plays a move that maximises the mover's exact
future score difference (points it scores from now on minus the opponent's), ties broken at random
from the seeded generator.

The values come from :class:`Oracle`: the solver's full search from the empty board
(``solver._search``: plain negamax, no pruning, so its memo holds the exact future value of every
reachable non-terminal state whose first move is one of the symmetry orbit representatives; 0.3 s
and ~1M states for n = 4), kept in memory and shared by every agent of the process. A position
whose first move was elsewhere is looked up through the board symmetry mapping it into the table.
Boards above n = 4 are too large for that: there the same search runs from each position asked
about (and its subtree joins the shared memo), which is fast late in the game and out of reach in
the first plies (measured in the README's sibling section).
:meth:`Oracle.move_values` agrees with the pure-Python ``solver.move_values`` (checked in tests).
"""

from __future__ import annotations

import numpy as np

from agents.base import BestValueAgent

_ORACLES: dict[int, "Oracle"] = {}


#: boards whose whole game tree :class:`Oracle` solves up front (n = 4: 0.3 s, ~1M states); larger
#: ones (n = 5: billions of states, beyond memory here) are solved lazily from each position asked
FULL_SOLVE_MAX_N = 4


class Oracle:
    """Exact two-player move values for n x n Jumping (see the module docstring)."""

    def __init__(self, n: int):
        from highway_env.jumping import game as jg
        from highway_env.jumping.solver import _search

        self.n = n
        self.cells = n * n
        self.ray_sq, self.ray_len = jg.rays_array(n)
        self.rays = jg.rays(n)
        self.table = np.zeros(1 << 16, dtype=np.int64)
        self.stats = np.zeros(3, dtype=np.int64)  # stats[0]: entries in the table (kept at most half full)
        if n <= FULL_SOLVE_MAX_N:
            roots = np.array(jg.orbit_representatives(n), dtype=np.int64)
            _, _, self.table = _search(n, self.ray_sq, self.ray_len, roots, np.zeros_like(roots), 0, 0, False,
                                       self.table, 0, self.stats)
        self.perms = [np.asarray(p, dtype=np.int64) for p in jg.symmetries(n)]  # old sq -> new sq

    @classmethod
    def get(cls, n: int) -> "Oracle":
        if n not in _ORACLES:
            _ORACLES[n] = cls(n)
        return _ORACLES[n]

    def _moves(self, occ: int, last: int) -> list[tuple[int, int]]:
        """[(target square, jump length)] from ``last``."""
        return [(sq, k + 1) for line in self.rays[last] for k, sq in enumerate(line) if not occ >> sq & 1]

    def future(self, occ: int, last: int, jump: int) -> int:
        """Exact future score difference for the player to move in (occ, last, jump)."""
        from highway_env.jumping.solver import _grow, _insert, _lookup, _search

        moves = self._moves(occ, last)
        if not moves:
            return 0
        squares = [sq for sq in range(self.cells) if occ >> sq & 1]
        for p in self.perms:
            o = 0
            for sq in squares:
                o |= 1 << int(p[sq])
            got = _lookup(self.table, (o * self.cells + int(p[last])) * self.n + jump)
            if got >= 0:
                return int(got) - 128
        if self.n <= FULL_SOLVE_MAX_N:
            raise KeyError(f"state (occ={occ}, last={last}, jump={jump}) not reachable / not in the solver table")
        sq, d = (np.array(c, dtype=np.int64) for c in zip(*moves))
        v, _, self.table = _search(self.n, self.ray_sq, self.ray_len, sq, d, occ, jump, False, self.table, 0,
                                   self.stats)
        if self.stats[0] + 1 >= len(self.table) // 2:
            self.table = _grow(self.table)
        _insert(self.table, (occ * self.cells + last) * self.n + jump, v)
        self.stats[0] += 1
        return int(v)

    def move_values(self, rules_state) -> dict[int, int]:
        """{target square: the mover's points now minus the opponent's future minus ...}: the exact
        future score difference for the mover after each legal move (as ``solver.move_values``)."""
        s = rules_state
        out = {}
        for sq, d in s.legal_moves():
            gain = 1 if (s.jump > 0 and d > s.jump) else 0
            out[sq] = gain - self.future(s.occ | 1 << sq, sq, d)
        return out


def move_values(game, state) -> np.ndarray:
    """(num_actions,) int64 exact value of each move for the mover (a large negative number on
    illegal moves). ``state``: one state array of ``game``."""
    vals = Oracle.get(game.n).move_values(game.to_rules_state(state))
    out = np.full(game.num_actions, -10**6, np.int64)
    for sq, v in vals.items():
        out[sq] = v
    return out


class JumpingPerfect(BestValueAgent):
    """The move maximising the mover's exact future score difference, ties at random."""

    name = "perfect"

    def __init__(self, game, seed: int | None = None):
        super().__init__(game, seed)
        Oracle.get(game.n)  # the solver's table now, not during the first move

    def move_values(self, state) -> np.ndarray:
        return move_values(self.game, state)
