"""Solver-graded training: the network's move accuracy on solver-labelled critical positions
(:meth:`agents.game.Game.graded_positions`, never those the evaluation reports on), measured while
it trains, and the choice of ``best.pt`` by it. Only the labels are read: the replay stays
self-play only. Why the graded moves are those of a small search, not the raw policy: agents/README.md.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from agents.game import Game, LabelledPositions
from agents.mcts import BatchedMCTS, NetworkEvaluator, SearchConfig


def kept_share(labelled: LabelledPositions, actions: np.ndarray) -> float:
    """Share of the positions where ``actions`` (board actions, one per position) keep the value."""
    return float(labelled.keeps[np.arange(len(actions)), actions].mean())


class Grader:
    """Grades a network every ``every`` iterations and remembers the best accuracy seen.

    ``available`` is False (and ``note`` says why) when the game has no labelled positions; the
    trainer then skips grading."""

    def __init__(self, game: Game, every: int, positions: int, search: SearchConfig | None = None,
                 device: str = "cpu"):
        self.game, self.every, self.search, self.device = game, every, search, device
        self.labelled = game.graded_positions(positions) if every else None
        self.available = self.labelled is not None and len(self.labelled.states) > 0
        if not every:
            self.note = "solver grading is off (--grade-every 0)"
        elif not self.available:
            self.note = (f"solver grading is off: game {game.name!r} has no solver-labelled position set "
                         "(Game.graded_positions); best.pt is chosen by the evaluation score")
        else:
            self.note = f"solver grading every {every} iterations on {self.labelled.source}"
        self.best = -math.inf
        self.last: float | None = None

    def due(self, iteration: int, final: bool) -> bool:
        return self.available and (iteration % self.every == 0 or final)

    def accuracy(self, net: torch.nn.Module) -> float:
        """Share of the positions where the network's move keeps the value: its raw policy's move,
        or with ``search`` the move of that search (no noise, deterministic)."""
        states, evaluator = self.labelled.states, NetworkEvaluator(self.game, net, self.device)
        if self.search is None:
            actions = evaluator.policy_moves(states)
        else:
            actions = BatchedMCTS(self.game, evaluator, self.search).run(states, np.random.default_rng(0),
                                                                         noise=False).actions
        self.last = kept_share(self.labelled, actions)
        return self.last

    def improved(self, accuracy: float) -> bool:
        """Record ``accuracy``; True when it is at least the best so far (ties: the later network)."""
        improved, self.best = accuracy >= self.best, max(self.best, accuracy)
        return improved

    def state_dict(self) -> dict:
        return {"best": self.best, "last": self.last}

    def load_state_dict(self, d: dict) -> None:
        self.best = d.get("best", -math.inf)
        self.last = d.get("last")
