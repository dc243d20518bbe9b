"""Batched search: legality under broken priors, forced wins, Gumbel root, PUCT noise."""


import numpy as np
import pytest

from agents.game import GameError
from agents.mcts import BatchedMCTS, RolloutEvaluator, SearchConfig, UniformEvaluator, pick_from_visits
from agents.mcts_kernels import considered_visits_table
from highway_env import core
from highway_env.az_game import HighwayGame

G = HighwayGame()


class ConstEvaluator:
    def __init__(self, fill):
        self.fill = fill

    def __call__(self, states):
        n = len(states)
        return np.full((n, 256), self.fill, np.float32), np.full(n, self.fill, np.float32)


def _positions(seed, n, filled):
    rng = np.random.default_rng(seed)
    return G.as_states([core.random_board(rng, filled) for _ in range(n)])


@pytest.mark.parametrize("fill", [np.nan, 0.0, -np.inf, np.inf])
@pytest.mark.parametrize("kind", ["puct", "gumbel", "uct"])
def test_broken_priors_never_give_illegal_moves(fill, kind):
    states = _positions(0, 16, 9)
    search = BatchedMCTS(G, ConstEvaluator(fill), SearchConfig(kind=kind, simulations=24))
    res = search.run(states, np.random.default_rng(0))
    legal = G.legal_masks(states)
    assert legal[np.arange(16), res.actions].all()
    assert np.isfinite(res.policy).all()
    assert np.allclose(res.policy.sum(1), 1.0, atol=1e-5)
    assert (res.policy[~legal] == 0).all()


def _best_value(board: core.Board) -> int:
    """Exact minimax value (+1/0/-1 for the mover) by brute force."""
    if board.is_terminal():
        v = board.outcome().value
        return v if board.to_move == 0 else -v  # to_move on a full board is 0; fixed below
    return max(-_value_after(board.apply(a)) for a in board.legal_actions())


def _value_after(child: core.Board) -> int:
    """Value for the player to move in child (who is the opponent of the one who just moved)."""
    if child.is_terminal():
        v = child.outcome().value  # for A
        mover = (child.ply - 1) % 2  # the player who made the last move
        return -(v if mover == 0 else -v)
    return _best_value(child)


def _winning_endgames(n_wanted, empty, seed=0):
    """Positions with `empty` cells left where the mover has a forced win but not every move wins."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < n_wanted:
        b = core.random_board(rng, 16 - empty)
        if _best_value(b) != 1:
            continue
        wins = [a for a in b.legal_actions() if -_value_after(b.apply(a)) == 1]
        if len(wins) < len(b.legal_actions()) // 2:
            found.append((b, set(wins)))
    return found


@pytest.mark.parametrize("kind", ["puct", "uct", "gumbel"])
def test_search_finds_forced_win(kind):
    cases = _winning_endgames(6, empty=3)
    states = G.as_states([b for b, _ in cases])
    ev = RolloutEvaluator(G, np.random.default_rng(1)) if kind == "uct" else UniformEvaluator(G)
    cfg = SearchConfig(kind=kind, simulations=3000 if kind != "gumbel" else 1500,
                       max_considered=32 if kind == "gumbel" else 16)
    res = BatchedMCTS(G, ev, cfg).run(states, np.random.default_rng(0), noise=False)
    for (b, wins), a in zip(cases, res.actions):
        assert int(a) in wins, (b.to_string(), int(a), wins)


def test_gumbel_root_policy_targets():
    states = _positions(5, 8, 4)
    res = BatchedMCTS(G, UniformEvaluator(G), SearchConfig(kind="gumbel", simulations=32,
                                                           max_considered=8)).run(states, np.random.default_rng(0))
    legal = G.legal_masks(states)
    assert legal[np.arange(8), res.actions].all()
    assert np.allclose(res.policy.sum(1), 1, atol=1e-5) and (res.policy >= 0).all()
    assert (res.policy[~legal] == 0).all() and (res.policy[legal] > 0).all()  # full support
    # sequential halving: 32 simulations over 8 considered actions, the chosen one among the most visited
    assert (res.visits.sum(1) == 32).all()
    assert ((res.visits > 0).sum(1) == 8).all()
    chosen = res.visits[np.arange(8), res.actions]
    assert (chosen == res.visits.max(1)).all()


def test_considered_visits_table_matches_mctx():
    t = considered_visits_table(4, 8)
    assert t[4].tolist() == [0, 0, 0, 0, 1, 1, 2, 2]
    assert t[1].tolist() == list(range(8))


def test_puct_noise_and_temperature_are_seeded():
    states = _positions(6, 4, 2)
    s = BatchedMCTS(G, UniformEvaluator(G), SearchConfig(kind="puct", simulations=40))
    a = s.run(states, np.random.default_rng(3), temperature=1.0)
    b = s.run(states, np.random.default_rng(3), temperature=1.0)
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.visits, b.visits)
    assert G.legal_masks(states)[np.arange(4), a.actions].all()


def test_pick_from_visits():
    v = np.array([[0, 3, 3, 0], [0, 0, 1, 0]], np.float32)
    a = pick_from_visits(v, 0.0, np.random.default_rng(0))
    assert a[0] in (1, 2) and a[1] == 2
    for seed in range(20):
        a = pick_from_visits(v, 1.0, np.random.default_rng(seed))
        assert v[np.arange(2), a].min() > 0


def test_terminal_root_is_refused():
    full = G.as_states([core.random_board(np.random.default_rng(0), 16)])
    with pytest.raises(GameError, match="terminal"):
        BatchedMCTS(G, UniformEvaluator(G)).run(full, np.random.default_rng(0))


def test_network_evaluator_scores_in_eval_mode_and_leaves_the_nets_mode():
    """A net in training mode (a trainer's) is evaluated in eval mode and handed back in training
    mode; a net in eval mode gives the same numbers; the logits are the net's view-frame logits
    moved to the board frame."""
    torch = pytest.importorskip("torch")
    from agents.mcts import NetworkEvaluator
    from agents.network import NetConfig, build_network

    torch.manual_seed(0)
    net = build_network(NetConfig(kind="resnet", channels=8, blocks=1, obs_shape=G.obs_shape,
                                  num_actions=G.num_actions))  # BatchNorm: the two modes differ
    states = _positions(3, 6, 5)
    net.train()
    logits, value, score = NetworkEvaluator(G, net)(states)
    assert net.training and all(m.training for m in net.modules())
    net.eval()
    with torch.inference_mode():
        view_logits, v, s = net(torch.from_numpy(G.observations(states)))
    expect = np.empty_like(logits)
    np.put_along_axis(expect, G.view_to_board(states), view_logits.numpy(), axis=1)
    again = NetworkEvaluator(G, net)(states)
    assert not net.training
    for got in ((logits, value, score), again):
        np.testing.assert_array_equal(got[0], expect)
        np.testing.assert_array_equal(got[1], v.numpy())
        np.testing.assert_array_equal(got[2], s.numpy())


@pytest.mark.parametrize("kind", ["puct", "gumbel", "uct"])
def test_edge_pools_that_start_small_and_grow_give_the_same_search(kind, monkeypatch):
    """The pools start with room for the roots' most legal actions per node and grow where a
    game's positions gain actions: the edges keep their numbers, so the search is the same as one
    with room for every action from the start (as before) or for one edge."""
    from agents import mcts

    states = _positions(3, 12, 2)

    def search():
        evaluator = RolloutEvaluator(G, np.random.default_rng(5))
        res = BatchedMCTS(G, evaluator, SearchConfig(kind=kind, simulations=40)).run(states, np.random.default_rng(7))
        return [np.asarray(x) for x in res]

    roomy = search()
    pools = mcts._Pools
    for edges in (1, lambda nodes: nodes * G.num_actions):
        monkeypatch.setattr(mcts, "_Pools", lambda game, nodes, max_edges, e=edges: pools(
            game, nodes, e(nodes) if callable(e) else e))
        for a, b in zip(search(), roomy):
            np.testing.assert_array_equal(a, b)


def test_network_evaluator_puts_view_logits_on_board_actions_for_any_integer_map():
    """The view-to-board map may be a read-only broadcast of another integer type (a user's game):
    logits[b, view_to_board[b, j]] = view logits[b, j], as numpy's assignment did."""
    import torch

    from agents.mcts import NetworkEvaluator

    class Reversed:
        num_actions = 7

        def observations(self, states):
            return np.zeros((len(states), 3), np.float32)

        def view_to_board(self, states):
            return np.broadcast_to(np.arange(7, dtype=np.int32)[::-1], (len(states), 7))

    class Net(torch.nn.Module):
        def forward(self, obs):
            n = len(obs)
            return torch.arange(7.0).repeat(n, 1), torch.zeros(n), torch.zeros(n)

    logits, values, scores = NetworkEvaluator(Reversed(), Net())(np.zeros((2, 1)))
    np.testing.assert_array_equal(logits, np.tile(np.arange(7.0)[::-1], (2, 1)))
    assert logits.dtype == np.float32 and values.shape == scores.shape == (2,)
