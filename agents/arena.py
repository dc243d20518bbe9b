"""Games between agents, all played in lock step so batched agents act on many at once: the one game
loop of the arena, the evaluation and the sibling games' evaluation."""

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


def play_out(game: Game, states: np.ndarray, players, seats: np.ndarray, rngs, game_rngs=None,
             per_game=(False, False), history: list | None = None) -> np.ndarray:
    """Play the games ``states`` (changed in place) to the end and return them. ``players[0]`` moves
    for side ``seats[i]`` of game i and ``players[1]`` for the other side; each draws from its
    generator ``rngs[k]`` (the two may be one). A player with ``per_game[k]`` moves in one game at a
    time with that game's generator ``game_rngs[i]``, so its choices do not depend on which games
    share the batch. ``history``, if given, gets a copy of ``states`` before the first move and after
    each round (every live game has moved once): the position sets draw their candidates from it."""
    while True:
        if history is not None:
            history.append(states.copy())
        live = ~game.terminal(states)
        if not live.any():
            return states
        mover = game.to_play(states)
        for k, who in enumerate(players):
            idx = np.flatnonzero(live & ((mover == seats) if k == 0 else (mover != seats)))
            if not len(idx):
                continue
            if per_game[k]:
                acts = np.array([who.act(states[i], game_rngs[i]) for i in idx], np.int64)
            else:
                acts = who.act_batch(states[idx], rngs[k])
            states[idx] = game.apply(states[idx], acts)


def play_match(agent: Agent, opponent: Agent, game: Game, games: int, seed: int = 0) -> MatchResult:
    """``games`` games; ``agent`` is player 0 in the even-numbered ones and player 1 in the others.
    Reproducible: each side draws from its own generator seeded from ``seed``."""
    rngs = [np.random.default_rng([seed, 0]), np.random.default_rng([seed, 1])]
    seat = np.arange(games) % 2  # the player `agent` controls in each game
    states = play_out(game, game.initial_states(games), (agent, opponent), seat, rngs)
    r = game.returns(states) * np.where(seat == 0, 1, -1)
    first = r[seat == 0]
    return MatchResult(int((r > 0).sum()), int((r == 0).sum()), int((r < 0).sum()),
                       (int((first > 0).sum()), int((first == 0).sum()), int((first < 0).sum())))
