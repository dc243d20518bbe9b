"""The AlphaZero agent: a trained network plus search, loadable from a checkpoint."""

from __future__ import annotations

import numpy as np

from highway_env.extras import require_torch

# every way to an AlphaZero agent (az:PATH, agents.load_pretrained) imports this module first:
# without PyTorch it fails here with the extra to install
torch = require_torch("the AlphaZero agents (az:PATH, agents.load_pretrained)")

from agents.base import SearchAgent  # noqa: E402  (after the check: the imports below need torch)
from agents.checkpoint import CheckpointError, load_checkpoint
from agents.game import Game
from agents.games import class_ref, game_class, same_game
from agents.mcts import NetworkEvaluator, SearchConfig
from agents.network import NetConfig, build_network
from highway_env.cli_args import MAX_SIMULATIONS, first_line


def checkpoint_game(data: dict, path, game: Game | None = None) -> Game:
    """The game a checkpoint's network was trained on, with its options (``game_config``; older
    checkpoints without one get the default game if its observation shape fits the network, else
    the game's ``legacy_config``). A ``game`` given by the caller is rebuilt with those options when
    they differ only in its ``view_options`` (the network's observation); a game with other rules
    (another board size) is a CheckpointError naming both."""
    config = data.get("game_config")
    shape = tuple(data["net_config"].get("obs_shape", ()))
    key = data["game"]  # a shipped game's name or a "module:Class" reference (agents.games.game_key)
    if game is not None and not same_game(key, game):
        raise CheckpointError(f"checkpoint {str(path)!r} is an agent of {key!r}, not of {game.name!r} "
                              f"({class_ref(type(game))})")
    try:
        cls = type(game) if game is not None else game_class(key)
    except ValueError as e:
        raise CheckpointError(f"checkpoint {str(path)!r}: cannot rebuild its game: {e}") from None
    name = cls.name
    if config is None:  # written before game options: the default game if its input fits, else legacy
        base = game if game is not None else cls()
        config = base.config() if tuple(base.obs_shape) == shape else dict(base.legacy_config)
    try:
        trained = cls(**config)
    except Exception as e:  # TypeError, ValueError; a user's game may refuse in its own way
        raise CheckpointError(f"checkpoint {str(path)!r}: its game options {config} do not fit "
                              f"this version of {name!r}: {type(e).__name__}: {first_line(e)}") from e
    if game is not None and game.rules_config() != trained.rules_config():
        raise CheckpointError(f"checkpoint {str(path)!r} was trained on {name!r} with "
                              f"{trained.rules_config()}, not on this game ({game.rules_config()})")
    if game is None or game.config() != trained.config():
        game = trained
    if shape != tuple(game.obs_shape):
        raise CheckpointError(f"checkpoint {str(path)!r}: its network takes observations of shape "
                              f"{shape}, but game {game.name!r} with options {game.config()} gives "
                              f"{tuple(game.obs_shape)}")
    return game


class AlphaZeroAgent(SearchAgent):
    """Network-guided search (Gumbel or PUCT, as trained unless ``search`` says otherwise).

    ``simulations=0`` plays the network's policy alone (argmax over the legal moves)."""

    def __init__(self, game: Game, net: torch.nn.Module, search: SearchConfig, seed=None,
                 device: str = "cpu", name: str = "az"):
        self.net = net.to(device).eval()
        self.simulations = search.simulations
        super().__init__(game, NetworkEvaluator(game, self.net, device), search, seed=seed, name=name)

    @classmethod
    def from_checkpoint(cls, path, simulations: int | None = None, game: Game | None = None,
                        seed=None, device: str = "cpu", search: SearchConfig | None = None):
        ok = simulations is None or (isinstance(simulations, (int, np.integer)) and not isinstance(simulations, bool)
                                     and 0 <= simulations <= MAX_SIMULATIONS)
        if not ok:  # a negative count would play 1 simulation, a string fail in int()
            raise ValueError(f"simulations must be an integer in 0..{MAX_SIMULATIONS} (0: the raw policy) or None, "
                             f"got {simulations!r}")
        data = load_checkpoint(path)
        game = checkpoint_game(data, path, game)
        net = build_network(NetConfig.from_dict(data["net_config"]))
        try:
            net.load_state_dict(data["model"])
        except RuntimeError as e:  # torch lists every key on its own line: one line, cut short
            detail = " ".join(line.strip() for line in str(e).splitlines())
            raise CheckpointError(f"checkpoint {str(path)!r}: weights do not fit its net config: "
                                  f"{detail[:300]}") from e
        search = search or SearchConfig(**data.get("search_config", {}))
        if simulations is not None:
            search = SearchConfig(**{**search.to_dict(), "simulations": max(int(simulations), 1)})
        agent = cls(game, net, search, seed=seed, device=device, name=f"az:{path}")
        if simulations == 0:
            agent.simulations = 0
        return agent

    def act_batch(self, states, rng=None):
        states = self.game.as_states(states)
        if self.simulations == 0:
            return self.search.evaluator.policy_moves(states)
        return super().act_batch(states, rng)
