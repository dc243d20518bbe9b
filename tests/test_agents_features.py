"""Highway's feature observation (highway_env.az_game, obs="features"): a plain-Python reference,
symmetry equivariance, B's quarter-turned view, and old ("planes") checkpoints still loading."""

import numpy as np
import pytest

from agents.alphazero import AlphaZeroAgent
from agents.checkpoint import CheckpointError, save_checkpoint
from agents.game import GameError
from agents.network import NetConfig, build_network
from agents.replay import ReplayBuffer, Samples
from highway_env import core
from highway_env.az_game import (FEATURE_CHANNELS, MARGIN_SCALE, NUMBERS, PATH_SCALE, HighwayGame)

G = HighwayGame()


def _boards(seed, n=60):
    rng = np.random.default_rng(seed)
    return [core.random_board(rng, int(k)) for k in rng.integers(0, 17, n)]


def _bounds(view, paths):
    """(lo, hi) of each path's final sum: placed + the k smallest / largest unused numbers."""
    unused = sorted(set(range(1, 17)) - set(view))
    out = []
    for p in paths:
        placed = sum(view[c] for c in p)
        k = sum(1 for c in p if view[c] == 0)
        out.append((placed + sum(unused[:k]), placed + sum(unused[::-1][:k])))
    return out


def reference_features(board: core.Board) -> np.ndarray:
    """(16, FEATURE_CHANNELS) by the definitions, in plain Python."""
    cells = list(board.cells)
    ply = sum(1 for v in cells if v)
    view = [0] * 16
    for i, v in enumerate(cells):
        view[core.QUARTER_TURN[i] if ply % 2 == 1 and ply < 16 else i] = v
    paths = [list(p) for p in core.PATH_TABLE]
    mine, theirs = paths[:20], paths[20:]
    f = np.zeros((16, FEATURE_CHANNELS), np.float64)
    bm, bo = _bounds(view, mine), _bounds(view, theirs)
    m_lo, m_hi = min(b[0] for b in bm), min(b[1] for b in bm)
    o_lo, o_hi = min(b[0] for b in bo), min(b[1] for b in bo)
    for c in range(16):
        if view[c]:
            f[c, view[c] - 1] = 1
        else:
            f[c, 16] = 1
        through_m = [b for p, b in zip(mine, bm) if c in p]
        through_o = [b for p, b in zip(theirs, bo) if c in p]
        f[c, 17] = min(b[0] for b in through_m) / PATH_SCALE
        f[c, 18] = min(b[1] for b in through_m) / PATH_SCALE
        f[c, 19] = min(b[0] for b in through_o) / PATH_SCALE
        f[c, 20] = min(b[1] for b in through_o) / PATH_SCALE
        f[c, 21] = sum(b[0] <= m_hi for b in through_m) / len(through_m)
        f[c, 22] = sum(b[0] <= o_hi for b in through_o) / len(through_o)
        f[c, 23:30] = [m_lo / PATH_SCALE, m_hi / PATH_SCALE, o_lo / PATH_SCALE, o_hi / PATH_SCALE,
                       (o_lo - m_hi) / MARGIN_SCALE, (o_hi - m_lo) / MARGIN_SCALE, ply / 16]
    for n in range(1, 17):
        if n in view:
            continue
        for c in range(16):
            if view[c]:
                continue
            child = list(view)
            child[c] = n
            cm, co = _bounds(child, mine), _bounds(child, theirs)
            f[c, 30 + n - 1] = (min(b[0] for b in co) - min(b[1] for b in cm)) / MARGIN_SCALE
            f[c, 46 + n - 1] = (min(b[1] for b in co) - min(b[0] for b in cm)) / MARGIN_SCALE
    return f


def test_features_match_reference():
    boards = _boards(0)
    obs = G.observations(G.as_states(boards))
    assert obs.shape == (len(boards), 4, 4, FEATURE_CHANNELS) and obs.dtype == np.float32
    for b, o in zip(boards, obs):
        np.testing.assert_allclose(o.reshape(16, -1), reference_features(b), atol=1e-6)


def test_features_are_the_reference_bit_for_bit():
    """Every float of the observation is the reference's, rounded once to float32: the kernel's
    shortcuts (least path sums per free-cell count) must not change a training run's inputs."""
    rng = np.random.default_rng(3)
    boards = [core.random_board(rng, k) for k in range(17) for _ in range(2)]
    obs = G.observations(G.as_states(boards))
    for b, o in zip(boards, obs):
        np.testing.assert_array_equal(o.reshape(16, -1), reference_features(b).astype(np.float32),
                                      err_msg=f"board {b.cells}")


def test_first_channels_are_the_planes():
    boards = _boards(1)
    states = G.as_states(boards)
    planes = HighwayGame(obs="planes").observations(states)
    assert planes.shape == (len(boards), 4, 4, NUMBERS) and planes.dtype == np.int8
    np.testing.assert_array_equal(G.observations(states)[..., :NUMBERS], planes)


def test_features_transform_with_the_board():
    """Features of a transformed board = the features moved by the augmentation's gather (what
    the replay assumes). A's view is the board, so symmetry k of the board is view symmetry k;
    B's view is quarter-turned, where the two diagonal reflections trade places."""
    obs_gather, _ = G.symmetries()
    names = list(core.SYMMETRIES)
    b_view = {"identity": "identity", "half_turn": "half_turn", "transpose": "anti_transpose",
              "anti_transpose": "transpose"}
    for b in _boards(2):
        base = G.observations(G.as_states([b])).reshape(1, -1)
        for name, perm in core.SYMMETRIES.items():
            moved = core.Board(tuple(b.cells[core.inverse_perm(perm)[i]] for i in range(16)))
            got = G.observations(G.as_states([moved])).reshape(-1)
            k = names.index(name if b.to_move == 0 or b.is_terminal() else b_view[name])
            np.testing.assert_allclose(got, base[0, obs_gather[k]], atol=1e-6)


def test_b_view_is_a_quarter_turn():
    """B's features are A's features of the quarter-turned board with the roles swapped: the same
    kernel on the turned board read as if A moved (checked through the reference)."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        b = core.random_board(rng, int(rng.choice([1, 3, 5, 7, 9, 11, 13, 15])))
        turned = [0] * 16
        for i, v in enumerate(b.cells):
            turned[core.QUARTER_TURN[i]] = v
        f = G.observations(G.as_states([b]))[0].reshape(16, -1)
        np.testing.assert_array_equal(f[:, :NUMBERS].argmax(1)[np.array(turned) > 0],
                                      np.array(turned)[np.array(turned) > 0] - 1)
        np.testing.assert_allclose(f, reference_features(b), atol=1e-6)


def test_per_action_planes_match_greedy_heuristic():
    """The per-action margin range midpoint is the greedy baseline's score of the child."""
    for b in [x for x in _boards(4) if not x.is_terminal()]:
        s = G.as_states([b])
        f = G.observations(s)[0].reshape(16, -1)
        view_to_board = G.view_to_board(s)[0]
        legal = np.flatnonzero(np.take_along_axis(G.legal_masks(s), G.view_to_board(s), 1)[0])
        sign = 1 if b.to_move == 0 else -1
        for va in legal[:: max(1, len(legal) // 10)]:
            n, c = va // 16 + 1, va % 16
            mid = (f[c, 30 + n - 1] + f[c, 46 + n - 1]) / 2 * MARGIN_SCALE
            child = G.apply(s, [view_to_board[va]])
            assert mid == pytest.approx(sign * G.heuristic(child)[0], abs=1e-4)


def test_replay_augmentation_keeps_features_consistent():
    boards = [b for b in _boards(5) if not b.is_terminal()]
    states = G.as_states(boards)
    n = len(states)
    rb = ReplayBuffer(G, 100)
    pol = np.zeros((n, 256), np.float16)
    rb.add(Samples(states, pol, np.zeros(n, np.float32), np.zeros(n, np.float32)))
    batch = rb.sample(64, np.random.default_rng(0), augment=True)
    # every augmented observation is the observation of some transformed stored board
    allobs = []
    for b in boards:
        for perm in core.SYMMETRIES.values():
            moved = core.Board(tuple(b.cells[core.inverse_perm(perm)[i]] for i in range(16)))
            allobs.append(G.observations(G.as_states([moved]))[0])
    allobs = np.stack(allobs).reshape(len(allobs), -1)
    for o in batch.obs.reshape(64, -1):
        assert np.abs(allobs - o).max(axis=1).min() < 1e-6


def test_bad_obs_name():
    with pytest.raises(GameError, match="observation"):
        HighwayGame(obs="pixels")


def _net_entry(game):
    cfg = NetConfig(kind="mlp", hidden=16, layers=1, obs_shape=game.obs_shape, num_actions=256)
    net = build_network(cfg)
    return {"game": "highway", "net_config": cfg.to_dict(),
            "search_config": {"kind": "gumbel", "simulations": 4},
            "model": {k: v.detach() for k, v in net.state_dict().items()}}


def test_old_planes_checkpoint_still_loads(tmp_path):
    old = _net_entry(HighwayGame(obs="planes"))  # as written before features: no game_config
    save_checkpoint(tmp_path / "old.pt", old)
    agent = AlphaZeroAgent.from_checkpoint(tmp_path / "old.pt", simulations=4, game=G)
    assert agent.game.config() == {"obs": "planes"}
    a = agent.act("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0")
    assert 0 <= a < 256
    new = {**_net_entry(G), "game_config": G.config()}
    save_checkpoint(tmp_path / "new.pt", new)
    agent = AlphaZeroAgent.from_checkpoint(tmp_path / "new.pt", simulations=0)
    assert agent.game.config() == {"obs": "features"}
    agent.act("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0")


def test_shipped_checkpoint_loads():
    import agents

    az = agents.load_pretrained(simulations=2, seed=0)
    assert az.game.obs_shape[-1] == az.search.evaluator.net.body[0].in_features // 16


def test_mismatched_checkpoint_fails_clearly(tmp_path):
    bad = {**_net_entry(HighwayGame(obs="planes")), "game_config": {"obs": "features"}}
    save_checkpoint(tmp_path / "bad.pt", bad)
    with pytest.raises(CheckpointError, match="observations of shape"):
        AlphaZeroAgent.from_checkpoint(tmp_path / "bad.pt")
    odd = {**_net_entry(G), "game_config": {"obs": "future"}}
    save_checkpoint(tmp_path / "odd.pt", odd)
    with pytest.raises(CheckpointError, match="game options"):
        AlphaZeroAgent.from_checkpoint(tmp_path / "odd.pt")
