"""The perfect player of two-player Jumping Farther & Farther: a move that maximises the mover's
exact future score difference, ties broken at random from the seeded generator.

The values come from :class:`Oracle`: the memo of the solver's full negamax from the empty board
(no pruning, so it holds the exact value of every reachable state whose first move is an orbit
representative; 0.3 s and ~1M states for n = 4), shared by every agent of the process. Other
positions are looked up through the board symmetry that maps them into the table.
"""

from __future__ import annotations

import functools

import numpy as np

from agents.base import BestValueAgent


class Oracle:
    """Exact two-player move values for n x n Jumping (see the module docstring)."""

    def __init__(self, n: int):
        from highway_env.jumping import game as jg
        from highway_env.jumping.solver import full_search

        self.n = n
        self.cells = n * n
        self.rays = jg.rays(n)
        _, _, self.table, _ = full_search(n)
        self.perms = jg.symmetries(n)  # old sq -> new sq

    @classmethod
    @functools.cache
    def get(cls, n: int) -> "Oracle":
        """The process's oracle for n x n boards, built on first use."""
        return cls(n)

    def future(self, occ: int, last: int, jump: int) -> int:
        """Exact future score difference for the player to move in (occ, last, jump)."""
        from highway_env.jumping.solver import _lookup

        if all(occ >> sq & 1 for line in self.rays[last] for sq in line):
            return 0  # no move left
        squares = [sq for sq in range(self.cells) if occ >> sq & 1]
        for p in self.perms:
            o = 0
            for sq in squares:
                o |= 1 << p[sq]
            got = _lookup(self.table, (o * self.cells + p[last]) * self.n + jump)
            if got >= 0:
                return int(got) - 128
        raise KeyError(f"state (occ={occ}, last={last}, jump={jump}) not reachable / not in the solver table")

    def move_values(self, rules_state) -> dict[int, int]:
        """{target square: the mover's exact future score difference after the move}."""
        from highway_env.jumping.solver import move_values

        return move_values(rules_state, future=self.future)


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

    move_values = staticmethod(move_values)

    def __init__(self, game, seed: int | None = None):
        super().__init__(game, seed)
        Oracle.get(game.n)  # the solver's table now, not during the first move
