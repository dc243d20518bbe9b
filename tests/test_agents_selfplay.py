"""Self-play with random openings (agents.selfplay)."""

import numpy as np

from agents.mcts import BatchedMCTS, UniformEvaluator, SearchConfig
from agents.selfplay import play_games, random_openings
from highway_env.az_game import HighwayGame

G = HighwayGame(obs="planes")


def test_random_openings_share_and_length():
    rng = np.random.default_rng(0)
    s = random_openings(G, 400, rng, max_moves=6, share=0.5)
    filled = (s != 0).sum(axis=1)
    assert filled.max() <= 6 and filled.min() == 0
    assert 0.35 < (filled > 0).mean() < 0.65
    assert set(np.unique(filled[filled > 0])) == set(range(1, 7))
    assert (random_openings(G, 10, rng, 0, 0.5) == 0).all()
    assert (random_openings(G, 10, rng, 5, 0.0) == 0).all()


def test_play_games_from_random_openings_records_only_searched_moves():
    search = BatchedMCTS(G, UniformEvaluator(G), SearchConfig(simulations=4, max_considered=4))
    a, r0 = play_games(G, search, 8, np.random.default_rng(1), random_opening=5, random_opening_share=1.0)
    plies = (a.states != 0).sum(axis=1)
    assert len(r0) == 8 and plies.min() >= 1  # the random moves are not recorded
    assert (plies == 15).sum() == 8 and len(a.value) < 16 * 8  # every game to the end
    b, _ = play_games(G, search, 8, np.random.default_rng(1), random_opening=5, random_opening_share=1.0)
    assert np.array_equal(a.states, b.states)  # seeded
    full, _ = play_games(G, search, 3, np.random.default_rng(1))
    assert len(full.value) == 3 * 16
