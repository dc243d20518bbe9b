"""The agent interface and the baseline agents (random, greedy, rollout MCTS).

An agent implements ``act`` (one position) or ``act_batch`` (many); each defaults to the other.
Randomness comes from the ``rng`` argument or the agent's own generator seeded at construction.
"""

from __future__ import annotations

import numpy as np

from agents.game import Game, sample_legal


class Agent:
    """Base class: ``act(state, rng) -> int`` and ``act_batch(states, rng) -> (N,) int64``.

    States are the game's state arrays (for Highway also ``core.Board`` objects or board strings);
    actions are board-frame actions of the game."""

    name = "agent"

    def __init__(self, game: Game, seed: int | None = None):
        self.game = game
        self.rng = np.random.default_rng(seed)

    def act(self, state, rng: np.random.Generator | None = None) -> int:
        """The action (board frame) this agent plays in ``state``; randomness from ``rng``, else the
        agent's own generator (seeded at construction, so a fixed seed gives the same moves)."""
        if type(self).act_batch is Agent.act_batch:
            raise NotImplementedError(f"{type(self).__name__} must implement act or act_batch")
        return int(self.act_batch(self.game.as_states(state), rng)[0])

    def act_batch(self, states, rng: np.random.Generator | None = None) -> np.ndarray:
        """The actions for a batch of states, (N,) int64: one call for many positions or games, which is
        how the arena, the evaluation and self-play drive agents (searches batch their network calls)."""
        states = self.game.as_states(states)
        return np.array([self.act(s, rng) for s in states], dtype=np.int64)

    def _rng(self, rng):
        return self.rng if rng is None else rng

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class RandomAgent(Agent):
    """A uniformly random legal move."""

    name = "random"

    def act_batch(self, states, rng=None):
        states = self.game.as_states(states)
        return sample_legal(self.game.legal_masks(states), self._rng(rng))


class GreedyAgent(Agent):
    """One ply: the move whose resulting position has the best static evaluation
    (``game.heuristic``, for Highway the middle of the still possible margin range) for the mover;
    ties broken at random."""

    name = "greedy"

    def act_batch(self, states, rng=None):
        g, rng = self.game, self._rng(rng)
        states = g.as_states(states)
        masks = g.legal_masks(states)
        rows, actions = np.nonzero(masks)
        children = g.apply(states[rows], actions)
        sign = np.where(g.to_play(states) == 0, 1.0, -1.0)
        score = g.heuristic(children) * sign[rows]
        # per row: the best score, random among ties (a random key breaks them)
        key = rng.random(len(rows))
        order = np.lexsort((key, score, rows))  # sorted by row, then score, then key
        last = np.r_[rows[order][1:] != rows[order][:-1], True]
        out = np.full(len(states), -1, np.int64)
        out[rows[order][last]] = actions[order][last]
        return out


class BestValueAgent(Agent):
    """Plays a move of best value for the mover, random among ties. A subclass sets ``move_values``
    (a static method): ``(game, state) -> (num_actions,)`` each move's value for the mover, illegal
    moves below every legal one (e.g. from a sibling game's exact solver)."""

    name = "perfect"
    move_values: staticmethod

    @classmethod
    def from_spec(cls, args: list, game: Game, seed: int | None = None) -> "BestValueAgent":
        """``make_agent("perfect")`` for a game whose exact player this is: ties are always broken
        at random, so the only tie-break accepted is ``random``."""
        if args and args != ["random"]:
            raise ValueError(f"perfect for {game.name} takes no tie-break (ties are random), got {args}")
        return cls(game, seed=seed)

    @classmethod
    def exact_from_ply(cls, game: Game) -> int:
        """The earliest ply whose positions this player values exactly in reasonable time on
        ``game``'s board (0: from the start, so it plays whole games)."""
        return 0

    def act(self, state, rng: np.random.Generator | None = None) -> int:
        rng = self._rng(rng)
        v = self.move_values(self.game, self.game.as_states(state)[0])
        best = np.flatnonzero(v == v.max())
        return int(best[rng.integers(len(best))])


class SearchAgent(Agent):
    """An agent that plays the move of a :class:`~agents.mcts.BatchedMCTS` search (no root noise,
    temperature 0; the Gumbel search then picks deterministically)."""

    def __init__(self, game: Game, evaluator, search, seed=None, name="search"):
        from agents.mcts import BatchedMCTS  # numba kernels: only agents that search pay for them

        super().__init__(game, seed)
        self.search = BatchedMCTS(game, evaluator, search)
        self.name = name

    def act_batch(self, states, rng=None):
        states = self.game.as_states(states)
        return self.search.run(states, self._rng(rng), noise=False, temperature=0.0).actions


class MCTSAgent(SearchAgent):
    """Plain MCTS, the ``mcts:N`` baseline: ``simulations`` per move, UCT selection (exploration constant
    ``c_uct``, default 1.4, on values in [-1, 1]) and one random rollout per leaf; no network."""

    def __init__(self, game: Game, simulations: int = 200, seed=None, c_uct: float = 1.4):
        from agents.mcts import RolloutEvaluator, SearchConfig

        super().__init__(game, None, SearchConfig(kind="uct", simulations=simulations, c_puct=c_uct),
                         seed=seed, name=f"mcts:{simulations}")
        self.search.evaluator = RolloutEvaluator(game, self.rng)

    def act_batch(self, states, rng=None):
        """As :meth:`Agent.act_batch`; a given ``rng`` also drives the rollouts from then on."""
        if rng is not None:
            self.search.evaluator.rng = rng
        return super().act_batch(states, rng)
