"""The perfect Black Path player (``make_agent("perfect", BlackPathGame())``): a tile that wins with
perfect play, random among the winning ones (from a lost position, any tile). :func:`move_values`
gives the labels of the evaluation's move accuracy.
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

    move_values = staticmethod(move_values)
