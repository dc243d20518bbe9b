"""Self-play AlphaZero agents and baselines, written against the game protocol in agents.game.

One-line use::

    import agents
    az = agents.load_pretrained()                 # shipped Highway checkpoint
    action = az.act(board)                        # core.Board, 16 ints or a board string
    opp = agents.make_agent("mcts:200", seed=0)   # random | greedy | mcts:N | az:PATH[:SIMS]
"""

from __future__ import annotations

import importlib
from pathlib import Path

PRETRAINED = Path(__file__).parent / "pretrained" / "highway_az.pt"

#: public name -> the module that defines it; imported on first access, so ``import agents`` (and
#: the solver's use of ``agents.base``) loads neither torch nor numba kernels it does not use
_EXPORTS = {"Agent": "agents.base", "RandomAgent": "agents.base", "GreedyAgent": "agents.base",
            "MCTSAgent": "agents.base", "SearchAgent": "agents.base", "Game": "agents.game",
            "GameError": "agents.game", "CheckpointError": "agents.checkpoint",
            "AgentSpecError": "agents.registry", "make_agent": "agents.registry",
            "register_agent": "agents.registry", "get_game": "agents.games"}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


def load_pretrained(simulations: int | None = None, seed: int | None = None, device: str = "cpu"):
    """The shipped Highway AlphaZero agent (agents/pretrained/highway_az.pt)."""
    from agents.alphazero import AlphaZeroAgent

    return AlphaZeroAgent.from_checkpoint(PRETRAINED, simulations=simulations, seed=seed, device=device)


__all__ = [*_EXPORTS, "load_pretrained", "PRETRAINED"]
