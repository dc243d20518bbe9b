"""The perfect Black Path player: the exact solver's winning tile when there is one.

:class:`BlackPathPerfect` implements :class:`agents.base.Agent` on the state arrays of
:class:`highway_env.blackpath.az_game.BlackPathGame`: it plays a tile that wins with perfect play
(chosen at random among the winning ones, from the seeded generator) and, from a lost position, a
random tile. :func:`move_values` gives every tile's exact value for the mover (+1 wins, -1 loses):
the labels of the evaluation's move accuracy. The solver (``solver.solve_state``) takes well under
a millisecond a position on a 4x4 board. ``make_agent("perfect", BlackPathGame())`` builds one.
"""

from __future__ import annotations

import numpy as np

from agents.base import BestValueAgent


def move_values(game, state) -> np.ndarray:
    """(3,) int: +1 for each tile (action 0..2) that wins for the mover, -1 for the others.
    ``state``: one state array of ``game`` (a live position)."""
    from highway_env.blackpath.solver import solve_state

    r = solve_state(game.to_rules_state(state))
    out = np.full(game.num_actions, -1, np.int64)
    out[[t - 1 for t in r.winning_tiles]] = 1
    return out


class BlackPathPerfect(BestValueAgent):
    """A winning tile if any (random among them), else a random tile."""

    name = "perfect"

    def move_values(self, state) -> np.ndarray:
        return move_values(self.game, state)
