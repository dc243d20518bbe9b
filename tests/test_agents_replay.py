"""Replay buffer: ring behaviour, persistence, and symmetry augmentation with consistent targets."""

import numpy as np

from agents.replay import ReplayBuffer, Samples
from highway_env import core
from highway_env.az_game import HighwayGame

G = HighwayGame()


def _samples(n, seed=0):
    rng = np.random.default_rng(seed)
    states = G.as_states([core.random_board(rng, int(k)) for k in rng.integers(0, 16, n)])
    v2b = G.view_to_board(states)
    view_mask = np.take_along_axis(G.legal_masks(states), v2b, axis=1)
    # policy target: a random distribution over the legal view actions
    pol = rng.random((n, 256)) * view_mask
    pol /= pol.sum(1, keepdims=True)
    return Samples(states, pol.astype(np.float16), rng.choice([-1.0, 0, 1], n).astype(np.float32),
                   rng.normal(size=n).astype(np.float32))


def test_ring_and_persistence():
    buf = ReplayBuffer(G, 50)
    buf.add(_samples(30, 0))
    buf.add(_samples(30, 1))
    assert len(buf) == 50 and buf.added == 60 and buf.head == 10
    other = ReplayBuffer(G, 50)
    other.load_state_dict(buf.state_dict())
    a = buf.sample(16, np.random.default_rng(0))
    b = other.sample(16, np.random.default_rng(0))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_augmented_policy_stays_on_legal_moves_and_matches_a_symmetric_board():
    buf = ReplayBuffer(G, 200)
    s = _samples(200, 2)
    buf.add(s)
    batch = buf.sample(128, np.random.default_rng(1), augment=True)
    assert np.allclose(batch.policy.sum(1), 1, atol=1e-2)
    assert (batch.policy[~batch.mask] == 0).all()
    # every augmented observation is the view of a symmetric copy of a stored state, and its mask
    # is that copy's legal mask in the view frame
    views = {}
    for st in s.states:
        b = core.Board(tuple(int(v) for v in st))
        for perm in core.SYMMETRIES.values():
            t = G.as_states([b.transform(perm)])
            key = G.observations(t).tobytes()
            views[key] = np.take_along_axis(G.legal_masks(t), G.view_to_board(t), axis=1)[0]
    for obs, mask in zip(batch.obs, batch.mask):
        assert np.array_equal(views[obs[None].tobytes()], mask)
    # and augmentation really changes samples
    plain = buf.sample(128, np.random.default_rng(1), augment=False)
    assert not np.array_equal(plain.obs, batch.obs)
