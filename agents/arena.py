"""Matches between agents, all games played in lock step so batched agents act on many at once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.base import Agent
from agents.game import Game


@dataclass
class MatchResult:
    wins: int
    draws: int
    losses: int
    as_first: tuple = (0, 0, 0)  # (wins, draws, losses) of the games where the agent was player 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """(wins + draws / 2) / games, of the first agent."""
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)

    def __str__(self) -> str:
        w, d, l = self.as_first
        return (f"{self.wins}W {self.draws}D {self.losses}L (score {self.score:.3f}; "
                f"as first player {w}W {d}D {l}L)")


def play_match(agent: Agent, opponent: Agent, game: Game, games: int, seed: int = 0,
               start_states=None) -> MatchResult:
    """``games`` games; ``agent`` is player 0 in the even-numbered ones and player 1 in the others.
    Reproducible: each side draws from its own generator seeded from ``seed``."""
    rngs = [np.random.default_rng([seed, 0]), np.random.default_rng([seed, 1])]
    states = game.initial_states(games) if start_states is None else game.as_states(start_states).copy()
    seat = np.arange(games) % 2  # the player `agent` controls in each game
    players = (agent, opponent)
    while True:
        live = ~game.terminal(states)
        if not live.any():
            break
        mover = game.to_play(states)
        for k, who in enumerate(players):
            idx = np.flatnonzero(live & ((mover == seat) if k == 0 else (mover != seat)))
            if len(idx):
                states[idx] = game.apply(states[idx], who.act_batch(states[idx], rngs[k]))
    r = game.returns(states) * np.where(seat == 0, 1, -1)
    first = r[seat == 0]
    return MatchResult(int((r > 0).sum()), int((r == 0).sum()), int((r < 0).sum()),
                       (int((first > 0).sum()), int((first == 0).sum()), int((first < 0).sum())))
