"""Self-play AlphaZero agents and baselines, written against the game protocol in agents.game.

One-line use::

    import agents
    az = agents.load_pretrained()                 # shipped Highway checkpoint
    action = az.act(board)                        # core.Board, 16 ints or a board string
    opp = agents.make_agent("mcts:200", seed=0)   # random | greedy | mcts:N | az:PATH[:SIMS]
"""

from __future__ import annotations

from pathlib import Path

from agents.base import Agent, GreedyAgent, MCTSAgent, RandomAgent, SearchAgent
from agents.checkpoint import CheckpointError
from agents.game import Game, GameError
from agents.registry import AgentSpecError, get_game, make_agent, register_agent

PRETRAINED = Path(__file__).parent / "pretrained" / "highway_az.pt"


def load_pretrained(simulations: int | None = None, seed: int | None = None, device: str = "cpu"):
    """The shipped Highway AlphaZero agent (agents/pretrained/highway_az.pt)."""
    from agents.alphazero import AlphaZeroAgent

    return AlphaZeroAgent.from_checkpoint(PRETRAINED, simulations=simulations, seed=seed, device=device)


__all__ = ["Agent", "RandomAgent", "GreedyAgent", "MCTSAgent", "SearchAgent", "Game", "GameError",
           "CheckpointError", "AgentSpecError", "make_agent", "register_agent", "get_game",
           "load_pretrained", "PRETRAINED"]
