"""Self-play: many games at once, every move chosen by one batched search over all live games;
``run_chunk`` is the picklable entry point the worker pools call."""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np
import torch

from agents.game import Game, sample_legal
from agents.mcts import BatchedMCTS, NetworkEvaluator, SearchConfig
from agents.network import NetConfig, build_network
from agents.replay import Samples


class ChunkTask(NamedTuple):
    """One unit of self-play work, plain data so it can go to another process or a Ray node."""

    game: str
    net_config: dict
    weights: dict  # state dict as numpy arrays
    search_config: dict
    games: int
    seed: tuple  # (master seed, iteration, chunk) -> the chunk's generator
    temperature_moves: int
    game_config: dict = {}  # the game's options (Game.config()), e.g. its observation variant
    random_opening: int = 0  # see play_games
    random_opening_share: float = 0.0


class ChunkResult(NamedTuple):
    samples: Samples
    games: int
    outcomes: tuple  # (player 0 wins, draws, player 1 wins)


def random_openings(game: Game, n_games: int, rng: np.random.Generator, max_moves: int,
                    share: float) -> np.ndarray:
    """Start positions: a ``share`` of the games begin with 1..max_moves (uniform) random moves, so
    that the replay also holds the losing side's and drawn positions (self-play of a strong policy
    keeps to a few lines that one side wins)."""
    states = game.initial_states(n_games)
    if max_moves <= 0 or share <= 0:
        return states
    k = np.where(rng.random(n_games) < share, rng.integers(1, max_moves + 1, n_games), 0)
    for step in range(int(k.max(initial=0))):
        idx = np.flatnonzero((k > step) & ~game.terminal(states))
        if not len(idx):  # every game ended or done with its opening: a longer N changes nothing
            break
        states[idx] = game.apply(states[idx], sample_legal(game.legal_masks(states[idx]), rng))
    return states


def play_games(game: Game, search: BatchedMCTS, n_games: int, rng: np.random.Generator,
               temperature_moves: int = 0, random_opening: int = 0,
               random_opening_share: float = 0.0) -> tuple[Samples, np.ndarray]:
    """Play ``n_games`` games concurrently; returns the positions (targets in the view frame) and
    the final results for player 0. With ``random_opening`` > 0 a ``random_opening_share`` of the
    games starts after 1..random_opening random moves (not recorded, see :func:`random_openings`)."""
    states = random_openings(game, n_games, rng, random_opening, random_opening_share)
    ply = np.zeros(n_games, np.int64)
    rec_game, rec_player = [np.zeros(0, np.int64)], [np.zeros(0, np.int8)]  # empty if no move is searched
    rec_states = [np.zeros((0, *game.state_shape), game.state_dtype)]
    rec_policy = [np.zeros((0, game.num_actions), np.float32)]
    live = ~game.terminal(states)
    while live.any():
        idx = np.flatnonzero(live)
        s = states[idx]
        temp = np.where(ply[idx] < temperature_moves, 1.0, 0.0)
        res = search.run(s, rng, noise=True, temperature=temp)
        rec_game.append(idx)
        rec_states.append(s)
        rec_policy.append(np.take_along_axis(res.policy, game.view_to_board(s), axis=1))
        rec_player.append(game.to_play(s))
        states[idx] = game.apply(s, res.actions)
        ply[idx] += 1
        live = ~game.terminal(states)
    result0 = game.returns(states)
    score0 = game.scores(states)
    gi = np.concatenate(rec_game)
    sign = np.where(np.concatenate(rec_player) == 0, 1.0, -1.0).astype(np.float32)
    samples = Samples(np.concatenate(rec_states), np.concatenate(rec_policy).astype(np.float16),
                      (result0[gi] * sign).astype(np.float32), (score0[gi] * sign).astype(np.float32))
    return samples, result0


@contextlib.contextmanager
def torch_threads(n: int):
    """Run the block with ``n`` torch threads (self-play and evaluation use one wherever they run,
    so their results never depend on the learner's thread count)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_CACHE: dict = {}


def _net_for(task: ChunkTask):
    key = (task.game, repr(sorted(task.game_config.items())), repr(sorted(task.net_config.items())))
    if key not in _CACHE:
        from agents.registry import get_game

        _CACHE.clear()
        _CACHE[key] = (get_game(task.game, task.game_config), build_network(NetConfig.from_dict(task.net_config)))
    return _CACHE[key]


def run_chunk(task: ChunkTask) -> ChunkResult:
    """Play one chunk of self-play games (in whatever process calls it)."""
    game, net = _net_for(task)
    search = BatchedMCTS(game, NetworkEvaluator(game, net), SearchConfig(**task.search_config))
    rng = np.random.default_rng(list(task.seed))
    # the weights' copy too: with the learner's threads it took 30-60 ms (0.5 on one) on a loaded machine
    with torch_threads(1):
        # torch.tensor copies: arrays from a pipe or Ray's object store may be read-only, which
        # torch.from_numpy warns about ("The given NumPy array is not writable")
        net.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in task.weights.items()})
        net.eval()
        samples, r0 = play_games(game, search, task.games, rng, task.temperature_moves,
                                 task.random_opening, task.random_opening_share)
    outcomes = (int((r0 > 0).sum()), int((r0 == 0).sum()), int((r0 < 0).sum()))
    return ChunkResult(samples, task.games, outcomes)
