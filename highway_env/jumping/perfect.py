"""The perfect player of two-player Jumping Farther & Farther: a move that maximises the mover's
exact future score difference, ties broken at random from the seeded generator.

The values come from :class:`Oracle`: a memo of the solver's negamax (no pruning, so exact values)
keyed on the symmetry-canonical state, shared by every agent of the process and kept across moves
and games. n <= 4 is solved from the empty board up front; larger boards are searched from each
position asked about whose value the memo lacks (its subtree joins the memo): the first move of
n = 5 solves the whole game once (its time and memory are in the README's sibling section), later
positions are looked up. Boards above 5 are solved from the middle of the game only
(:meth:`JumpingPerfect.exact_from_ply`).
"""

from __future__ import annotations

import functools

import numpy as np

from agents.base import BestValueAgent
from highway_env.jumping import game as jg


#: boards solved from the empty board when the oracle is built (n = 4: 0.05 s, 146k states)
UPFRONT_MAX_N = 4
#: boards the perfect player solves from the start (n = 5: the whole game in one memo, see the README)
FROM_START_MAX_N = 5
#: on larger boards, positions with at most this many empty squares are labelled (measured for n = 6,
#: from ply 19: about 1 s a position with a fresh memo, like n = 5 at ply 8;
#: ``bench/bench_jumping_labels.py --n 6``; n = 7's longer rays may make its subtrees larger)
LATE_EMPTY_SQUARES = 17


class Oracle:
    """Exact two-player move values for n x n Jumping (see the module docstring)."""

    def __init__(self, n: int):
        from highway_env.jumping.solver import full_search, new_table, symmetry_tables

        self.n = n
        self.ray_sq, self.ray_len = jg.rays_array(n)
        self.symtab, self.symperm = symmetry_tables(n)
        if n <= UPFRONT_MAX_N:
            _, _, self.table, self.stats = full_search(n)
        else:  # stats[0]: entries in the table (kept at most 3/4 full)
            self.table, self.stats = new_table(1 << 16), np.zeros(3, np.int64)

    @classmethod
    @functools.cache
    def get(cls, n: int) -> "Oracle":
        """The process's oracle for n x n boards, built on first use."""
        return cls(n)

    def future(self, occ: int, last: int, jump: int) -> int:
        """Exact future score difference for the player to move in (occ, last, jump)."""
        from highway_env.jumping.solver import _ABSENT, _canon_key, _lookup, _search

        key = _canon_key(self.n, occ, last, jump, self.symtab, self.symperm)
        got = _lookup(self.table, key)
        if got != _ABSENT:  # a hit: terminal states are never stored, so this one has moves
            return int(got)
        moves = jg.targets(self.n, occ, last)
        if not moves:
            return 0  # no move left
        sq, d = (np.array(c, dtype=np.int64) for c in zip(*moves))
        v, _, self.table = _search(self.n, self.ray_sq, self.ray_len, sq, d, occ, jump, False, self.table, 0,
                                   self.stats, self.symtab, self.symperm, True, key)  # the root joins the memo
        return int(v)

    def move_values(self, rules_state) -> dict[int, int]:
        """{target square: the mover's exact future score difference after the move}."""
        from highway_env.jumping.solver import move_values

        return move_values(rules_state, future=self.future)


def move_values(game, state) -> np.ndarray:
    """(num_actions,) int64 exact value of each move for the mover (a large negative number on
    illegal moves). ``state``: one state array of ``game``."""
    vals = Oracle.get(game.n).move_values(game.to_rules_state(state))
    out = np.full(game.num_actions, -10**6, np.int64)
    out[list(vals)] = list(vals.values())
    return out


class JumpingPerfect(BestValueAgent):
    """The move maximising the mover's exact future score difference, ties at random."""

    move_values = staticmethod(move_values)

    def __init__(self, game, seed: int | None = None):
        super().__init__(game, seed)
        Oracle.get(game.n)  # the solver's table now (n <= 4), not during the first move

    @classmethod
    def exact_from_ply(cls, game) -> int:
        """0 up to n = 5 (whole games); on larger boards the ply from which at most
        ``LATE_EMPTY_SQUARES`` squares are empty (on n = 6 its subtrees are the size of n = 5's at ply 8)."""
        n = game.n
        return 0 if n <= FROM_START_MAX_N else n * n - LATE_EMPTY_SQUARES
