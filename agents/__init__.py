"""Self-play AlphaZero agents and baselines, written against the game protocol in agents.game.

One-line use::

    import agents
    az = agents.load_pretrained()                 # shipped Highway checkpoint
    early = agents.load_pretrained("highway_az_1min")  # the model zoo: agents.pretrained_names()
    bp = agents.load_pretrained("blackpath_5x5_az")    # a sibling game's agent; bp.game is its board
    action = az.act(board)                        # core.Board, 16 ints or a board string
    opp = agents.make_agent("mcts:200", seed=0)   # random | greedy | mcts:N | az:PATH[:SIMS] | perfect[:TIEBREAK]
    agents.register_game("tictactoe", "examples.tictactoe_game:TicTacToeGame")  # your own Game
"""

from __future__ import annotations

import importlib
from pathlib import Path

PRETRAINED = Path(__file__).parent / "pretrained" / "highway_az.pt"

#: The model zoo: name -> checkpoint. ``highway_az`` is the shipped agent; the ``highway_az_<M>min``
#: ones are one default run (``python train.py --seed 1 --snapshot-minutes 1,5``) after 1, 5 and 25
#: minutes of training, for research on learning curves (measured in agents/README.md); then the
#: sibling games' agents (``train.py --game blackpath|jumping``, measured in the README).
SIBLINGS = ("blackpath_4x4_az", "blackpath_5x5_az", "jumping_n4_az", "jumping_n5_az")
ZOO = {"highway_az": PRETRAINED,
       **{f"highway_az_{m}min": PRETRAINED.parent / "zoo" / f"highway_az_{m}min.pt" for m in (1, 5, 25)},
       **{name: PRETRAINED.parent / f"{name}.pt" for name in SIBLINGS}}

#: public name -> the module that defines it; imported on first access, so ``import agents`` (and
#: the solver's use of ``agents.base``) loads neither torch nor numba kernels it does not use
_EXPORTS = {"Agent": "agents.base", "RandomAgent": "agents.base", "GreedyAgent": "agents.base",
            "MCTSAgent": "agents.base", "SearchAgent": "agents.base", "Game": "agents.game",
            "GameError": "agents.game", "CheckpointError": "agents.checkpoint",
            "AgentSpecError": "agents.registry", "make_agent": "agents.registry",
            "register_agent": "agents.registry", "get_game": "agents.games",
            "register_game": "agents.games"}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


def pretrained_names() -> list[str]:
    """The names :func:`load_pretrained` knows (the model zoo), the shipped agent first."""
    return list(ZOO)


def load_pretrained(name: str | None = None, simulations: int | None = None, seed: int | None = None,
                    device: str = "cpu"):
    """A shipped AlphaZero agent by its zoo name (:func:`pretrained_names`); ``None`` is the shipped
    Highway agent, ``highway_az`` (agents/pretrained/highway_az.pt). The agent's ``game`` is the game
    and board it was trained on (e.g. Black Path 5x5 for ``blackpath_5x5_az``). It plays with the
    checkpoint's play search (Highway: PUCT 400); ``simulations`` overrides its simulations (0: the
    raw policy), ``seed`` seeds the search, ``device`` is the torch device of the network. ValueError
    listing the names on an unknown one; ImportError naming the extra without PyTorch."""
    from agents.alphazero import AlphaZeroAgent

    if name is not None and not isinstance(name, str):  # e.g. a call from when simulations came first
        raise TypeError(f"load_pretrained: name must be a zoo name ({', '.join(ZOO)}), got {name!r}; "
                        f"simulations is a keyword argument")
    path = ZOO.get("highway_az" if name is None else name)
    if path is None:
        raise ValueError(f"unknown pretrained agent {name!r}; known: {', '.join(ZOO)}")
    return AlphaZeroAgent.from_checkpoint(path, simulations=simulations, seed=seed, device=device)


__all__ = [*_EXPORTS, "load_pretrained", "pretrained_names", "PRETRAINED", "ZOO"]
