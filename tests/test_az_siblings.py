"""Black Path and Jumping Farther as agents.game.Game: rules vs the rules modules, symmetries, and the
unchanged AlphaZero trainer, agents and arena running on them."""

import numpy as np
import pytest

from agents.arena import play_match
from agents.config import TrainConfig
from agents.game import GameError, sample_legal
from agents.games import SHIPPED
from agents.registry import get_game, make_agent
from agents.trainer import Trainer
from highway_env.blackpath import game as bp
from highway_env.blackpath.az_game import BlackPathGame
from highway_env.jumping import game as jg
from highway_env.jumping.az_game import JumpingGame

#: every game of agents.games.GAMES but Highway (tested in its own files): a new sibling is tested here too
GAMES = sorted(SHIPPED - {"highway"})
#: the games on square boards with the 8 symmetries and ``transform_states``
SQUARE_GAMES = ["blackpath", "jumping"]


def _playouts(G, seed, n=48):
    """All states of n random games (batched through the protocol), with their move lists."""
    rng = np.random.default_rng(seed)
    s = G.initial_states(n)
    seen = [s.copy()]
    while not G.terminal(s).all():
        live = ~G.terminal(s)
        s = s.copy()
        s[live] = G.apply(s[live], sample_legal(G.legal_masks(s[live]), rng))
        seen.append(s.copy())
    return np.concatenate(seen)


def test_registered_by_name():
    assert isinstance(get_game("blackpath"), BlackPathGame)
    assert isinstance(get_game("jumping"), JumpingGame)


def test_blackpath_matches_rules():
    G = BlackPathGame()
    rng = np.random.default_rng(0)
    assert G.as_states(bp.new_game()).tolist() == G.initial_states(1).tolist()
    for _ in range(60):
        st = bp.new_game(4, 4, "A1:top")
        s = G.as_states(st)
        while True:
            assert G.as_state(st).tolist() == s[0].tolist()
            assert G.terminal(s)[0] == st.is_over
            assert G.legal_masks(s)[0].tolist() == [t in st.legal_tiles() for t in bp.TILES]
            if st.is_over:
                assert G.returns(s)[0] == (1.0 if st.winner == 1 else -1.0)
                assert G.to_rules_state(s[0]) == st
                break
            assert G.to_play(s)[0] == st.to_move - 1
            tile = int(rng.integers(1, 4))
            st = st.play(tile)
            s = G.apply(s, [tile - 1])
    over = G.as_states(st)
    with pytest.raises(GameError):
        G.apply(over, [0])
    s0 = G.initial_states(1)
    with pytest.raises(GameError):
        G.apply(s0, [3])
    assert s0.tolist() == G.initial_states(1).tolist()  # input unchanged


def test_jumping_matches_rules():
    G = JumpingGame()
    rng = np.random.default_rng(1)
    for _ in range(60):
        st = jg.initial_state(4)
        s = G.as_states(st)
        while True:
            assert G.to_rules_state(s[0]) == st
            mask = G.legal_masks(s)[0]
            assert mask.astype(np.int8).tolist() == st.action_mask().tolist()
            assert G.terminal(s)[0] == st.is_terminal()
            if st.is_terminal():
                assert G.returns(s)[0] == np.sign(st.scores[0] - st.scores[1])
                assert G.scores(s)[0] == pytest.approx((st.scores[0] - st.scores[1]) / G.score_scale)
                break
            assert G.to_play(s)[0] == st.to_move
            sq = int(rng.choice(np.flatnonzero(mask)))
            st, _ = st.apply(sq)
            s = G.apply(s, [sq])
    s = G.apply(G.initial_states(1), [0])
    with pytest.raises(GameError):
        G.apply(s, [6])  # (1, 2) is not on a queen line of (0, 0)
    with pytest.raises(GameError):
        G.apply(s, [0])  # filled


@pytest.mark.parametrize("name", SQUARE_GAMES + ["jumping-lookahead"])
def test_symmetries_are_equivariant(name):
    G = JumpingGame(lookahead=True) if name == "jumping-lookahead" else get_game(name)
    states = _playouts(G, 2, n=16)
    live = states[~G.terminal(states)]
    obs_g, act_g = G.symmetries()
    assert obs_g.shape[1] == np.prod(G.obs_shape) and act_g.shape[1] == G.num_actions
    assert np.array_equal(obs_g[0], np.arange(obs_g.shape[1]))
    assert np.array_equal(act_g[0], np.arange(G.num_actions))
    assert len(obs_g) == 8
    rng = np.random.default_rng(3)
    obs = G.observations(states).reshape(len(states), -1)
    for k in range(len(obs_g)):
        t = G.transform_states(states, k)
        assert np.array_equal(G.terminal(t), G.terminal(states))
        assert np.array_equal(G.to_play(t), G.to_play(states))
        term = G.terminal(states)
        assert np.array_equal(G.returns(t[term]), G.returns(states[term]))
        # the view of the transformed state is the gathered view; so is its legal mask
        assert np.array_equal(G.observations(t).reshape(len(t), -1), obs[:, obs_g[k]])
        tl = G.transform_states(live, k)
        assert np.array_equal(G.legal_masks(tl), G.legal_masks(live)[:, act_g[k]])
        # playing the mapped action in the mapped state = mapping the successor
        a = sample_legal(G.legal_masks(live), rng)
        inv = np.argsort(act_g[k])  # old action -> new action
        assert np.array_equal(G.apply(tl, inv[a]), G.transform_states(G.apply(live, a), k))


@pytest.mark.parametrize("n", [3, 4, 5])
def test_jumping_lookahead_planes_count_the_opponents_replies_by_the_rules(n):
    """The lookahead view adds, per legal target, what jumping.game's rules give the opponent after
    that move (plain Python here); the first planes are the plain view's."""
    G, plain = JumpingGame(n=n, lookahead=True), JumpingGame(n=n)
    assert G.rules_config() == plain.rules_config() and G.config() == {"n": n, "lookahead": True}
    states = _playouts(G, 5, n=12)
    obs, base = G.observations(states), plain.observations(states)
    assert np.array_equal(obs[..., :plain.channels], base)
    scale = 4 * (n - 1)
    for s, o in zip(states, obs.reshape(len(states), n * n, -1)):
        st = G.to_rules_state(s)
        legal = dict(jg.targets(n, st.occ, st.last)) if st.last >= 0 else {
            sq: 0 for sq in range(n * n) if not st.occ >> sq & 1}
        expect = np.zeros((n * n, 4), np.float32)
        for t, d in legal.items():
            after = jg.targets(n, st.occ | 1 << t, t)
            scoring = [sq for sq, k in after if d > 0 and k > d]
            expect[t] = (not after, len(after) / scale, len(scoring) / scale, bool(scoring))
        assert np.allclose(o[:, plain.channels:], expect), st
    with pytest.raises(ValueError, match="lookahead must be true or false, got 'yes'"):
        JumpingGame(lookahead="yes")


@pytest.mark.parametrize("name", GAMES)
def test_protocol_shapes_and_rollout(name):
    G = get_game(name)
    s = _playouts(G, 4, n=8)
    assert s.shape[1:] == G.state_shape and s.dtype == G.state_dtype
    assert G.observations(s).shape == (len(s), *G.obs_shape)
    v2b = G.view_to_board(s)
    assert v2b.shape == (len(s), G.num_actions) and v2b.dtype == np.int64
    assert (np.sort(v2b, axis=1) == np.arange(G.num_actions)).all()
    assert not G.legal_masks(s[G.terminal(s)]).any()
    assert G.legal_masks(s[~G.terminal(s)]).any(axis=1).all()
    r = G.rollout(G.initial_states(20), np.random.default_rng(0))
    assert r.shape == (20,) and set(np.unique(r)) <= {-1.0, 0.0, 1.0}
    assert G.heuristic(s).shape == (len(s),)


@pytest.mark.parametrize("name", GAMES)
def test_agents_play_legal_games(name):
    G = get_game(name)
    for a, b in (("random", "greedy"), ("mcts:20", "random")):
        res = play_match(make_agent(a, G, seed=0), make_agent(b, G, seed=1), G, games=4, seed=0)
        assert res.games == 4


@pytest.mark.parametrize("name", GAMES)
def test_tiny_training_run(tmp_path, name):
    cfg = TrainConfig(game=name, run=name, out_dir=str(tmp_path), iterations=2, minutes=0,
                      games_per_iter=8, selfplay_batch=8, simulations=4, max_considered=3,
                      min_replay=20, batch_size=16, hidden=16, layers=1, eval_every=0,
                      workers=0, progress=False, tensorboard=False, checkpoint_every=1)
    out = Trainer(cfg).run()
    assert out["counters"]["iteration"] == 2 and out["counters"]["steps"] > 0
    assert (tmp_path / name / "latest.pt").exists()
    G = get_game(name)
    agent = make_agent(f"az:{tmp_path / name / 'latest.pt'}:4", seed=0)  # the checkpoint names its game
    assert type(agent.game) is type(G)
    res = play_match(agent, make_agent("random", G, seed=1), G, games=2)
    assert res.games == 2
