"""Margin-aware search (SearchConfig.margin_weight): among moves of equal result it takes the one
with the best margin for the mover, never a worse result for a better margin, and the option
stays off for checkpoints written before it."""

from pathlib import Path

import numpy as np
import pytest

from agents.checkpoint import load_checkpoint
from agents.game import sample_legal
from agents.mcts import BatchedMCTS, SearchConfig
from agents.network import ConfigError
from agents.registry import get_game

G = get_game("highway")
ROOT = Path(__file__).resolve().parents[1]


def _ply14_positions(n=300, seed=0):
    """A-to-move positions with two empty cells and every move's final margin (A's side); the
    reply (B's one number into the one cell left) is forced."""
    rng = np.random.default_rng(seed)
    s = G.initial_states(n)
    for _ in range(14):
        s = G.apply(s, sample_legal(G.legal_masks(s), rng))
    legal = G.legal_masks(s)
    margins = np.full(legal.shape, np.nan)
    for a in range(G.num_actions):
        rows = np.flatnonzero(legal[:, a])
        if len(rows):
            after = G.apply(s[rows], np.full(len(rows), a))
            end = G.apply(after, sample_legal(G.legal_masks(after), rng))
            margins[rows, a] = G.margins(end)
    return s, legal, margins


class _ForcedReplyOracle:
    """Exact value and score of ply-15 positions (one forced move left), for the mover (player 1:
    the leaves' scores are in its frame, the terminal positions below them in player 0's)."""

    def __call__(self, states):
        end = G.apply(states, sample_legal(G.legal_masks(states), np.random.default_rng(0)))
        sign = np.where(G.to_play(states) == 0, 1.0, -1.0)
        m = G.margins(end) * sign
        return np.zeros((len(states), G.num_actions), np.float32), np.sign(m), m / 10.0


def test_best_margin_among_equal_results_and_never_a_worse_result():
    s, legal, margins = _ply14_positions()
    res = np.sign(np.nan_to_num(margins, nan=-99))
    best_res = np.where(legal, res, -2).max(axis=1)
    best_margin = np.nanmax(np.where(res == best_res[:, None], margins, np.nan), axis=1)
    # the interesting ones: moves of the best result differ in margin, or some move is worse
    pick = np.flatnonzero([len(set(margins[i][legal[i]].tolist())) > 1 for i in range(len(s))])
    assert len(pick) > 50 and (best_res[pick] < 0).any() and (best_res[pick] > 0).any()
    for w in (0.0, 0.05, 0.49):
        search = BatchedMCTS(G, _ForcedReplyOracle(), SearchConfig(kind="puct", simulations=64, margin_weight=w))
        a = search.run(s[pick], np.random.default_rng(1), noise=False).actions
        chosen = margins[pick, a]
        assert (np.sign(chosen) == best_res[pick]).all()  # the result first
        if w:
            assert (chosen == best_margin[pick]).all()  # then the margin: wins big, loses small
        else:  # the value alone leaves the margin to chance
            assert (chosen == best_margin[pick]).mean() < 0.9


def test_old_search_configs_search_the_value_alone_and_bad_weights_are_named():
    assert SearchConfig(**{"kind": "puct", "simulations": 8}).margin_weight == 0.0
    for bad in (-0.1, 0.5, 1.0):
        with pytest.raises(ConfigError, match="margin_weight"):
            SearchConfig(margin_weight=bad).validate()


def test_checkpoints_carry_the_weight_and_older_ones_play_without_it(tmp_path):
    import torch

    from agents.alphazero import AlphaZeroAgent
    from agents.config import TrainConfig

    data = load_checkpoint(ROOT / "agents" / "pretrained" / "highway_az.pt")
    assert AlphaZeroAgent.from_checkpoint(ROOT / "agents" / "pretrained" / "highway_az.pt").search.config.margin_weight == 0.1
    del data["search_config"]["margin_weight"]  # a checkpoint written before the option existed
    older = tmp_path / "older.pt"
    torch.save({k: v for k, v in data.items() if k != "sha256"}, older)
    assert AlphaZeroAgent.from_checkpoint(older).search.config.margin_weight == 0.0
    cfg = TrainConfig(margin_weight=0.2)
    assert cfg.play_search_config().margin_weight == 0.2 and cfg.search_config().margin_weight == 0.2
