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


def _kept(buf) -> list[bytes]:
    """The buffer's positions, oldest first."""
    order = np.roll(np.arange(buf.size), -buf.head) if buf.size == buf.capacity else np.arange(buf.size)
    return [buf.states[i].tobytes() for i in order]


def test_a_ring_resumed_at_another_capacity_keeps_the_newest_positions():
    """Resumed with a larger --replay-size, a full ring was copied slot for slot with its head: new
    positions overwrote ones it had room to keep, and it counted slots never written (zero boards,
    zero policies) as positions to train on. With a smaller one, the resume failed."""
    buf = ReplayBuffer(G, 50)
    old, new = _samples(70, 0), _samples(20, 1)
    buf.add(old)  # wrapped: the newest 50 of them, the ring's head mid-way
    bigger = ReplayBuffer(G, 80)
    bigger.load_state_dict(buf.state_dict())
    bigger.add(new)
    assert len(bigger) == 70 and _kept(bigger) == [s.tobytes() for s in np.concatenate([old.states[20:], new.states])]
    assert bigger.policy[:70].astype(np.float32).sum(1).min() > 0.99  # every counted slot holds a position
    smaller = ReplayBuffer(G, 30)
    smaller.load_state_dict(buf.state_dict())
    assert len(smaller) == 30 and _kept(smaller) == [s.tobytes() for s in old.states[40:]]
    smaller.add(new)
    assert _kept(smaller) == [s.tobytes() for s in np.concatenate([old.states[60:], new.states])]
    half = ReplayBuffer(G, 50)
    half.add(_samples(20, 2))
    grown = ReplayBuffer(G, 60)
    grown.load_state_dict(half.state_dict())  # a ring not yet full: as it was
    assert grown.head == 20 and _kept(grown) == _kept(half)
