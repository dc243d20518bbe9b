"""The Highway game protocol (highway_env.az_game) against the plain rules in core."""

import numpy as np
import pytest

from agents.game import GameError, sample_legal
from agents.games import SHIPPED
from highway_env import core
from highway_env.az_game import SCORE_SCALE, HighwayGame
from highway_env.batched import BatchedHighway

G = HighwayGame()


def _boards(seed, n=40):
    rng = np.random.default_rng(seed)
    return [core.random_board(rng, int(k)) for k in rng.integers(0, 17, n)]


def test_rules_match_core():
    boards = _boards(0)
    states = G.as_states(boards)
    masks = G.legal_masks(states)
    for b, s, m in zip(boards, states, masks):
        assert np.array_equal(m, b.legal_mask().astype(bool))
        assert G.terminal(s[None])[0] == b.is_terminal()
        if not b.is_terminal():
            assert G.to_play(s[None])[0] == b.to_move
            a = int(np.flatnonzero(m)[len(b.legal_actions()) // 2])
            assert G.apply(s[None], [a])[0].tolist() == list(b.apply(a).cells)
        else:
            o = b.outcome()
            assert G.margins(s[None])[0] == o.margin
            assert G.returns(s[None])[0] == o.value
            assert G.scores(s[None])[0] == pytest.approx(o.margin / SCORE_SCALE)
        lo, hi = G.margin_bounds(s[None])
        assert (lo[0], hi[0]) == b.bounds().margin


def test_apply_rejects_illegal_and_keeps_input():
    s = G.as_states([core.Board.from_string("5," + ",".join(["0"] * 15))])
    before = s.copy()
    with pytest.raises(GameError, match="state 0"):
        G.apply(s, [core.encode_action(5, 3)])  # number 5 already used
    with pytest.raises(GameError):
        G.apply(s, [core.encode_action(2, 0)])  # cell 0 occupied
    G.apply(s, [core.encode_action(2, 1)])
    assert np.array_equal(s, before)


def test_view_matches_batched_engine():
    boards = [b for b in _boards(1) if not b.is_terminal()]
    env = BatchedHighway.from_boards(boards)
    states = G.as_states(boards)
    assert np.array_equal(HighwayGame(obs="planes").observations(states), env.observation())
    assert np.array_equal(G.observations(states)[..., :16], env.observation())  # features start so
    # view_to_board maps view actions to board actions as the engine does
    v2b = G.view_to_board(states)
    view_mask = np.take_along_axis(G.legal_masks(states), v2b, axis=1)
    assert np.array_equal(view_mask, env.legal_mask(player_view=True))
    acts = sample_legal(view_mask, np.random.default_rng(0))
    assert np.array_equal(v2b[np.arange(len(acts)), acts], env.actions_from_player_view(acts))


def test_symmetries_are_consistent_augmentations():
    """Each view-frame symmetry maps (obs, legal mask, policy) of a position to those of a
    symmetric position, with the policy permuted exactly like the mask and the board."""
    obs_g, act_g = G.symmetries()
    assert np.array_equal(obs_g[0], np.arange(obs_g.shape[1]))
    assert np.array_equal(act_g[0], np.arange(256))
    rng = np.random.default_rng(2)
    for b in _boards(3, 20):
        if b.is_terminal():
            continue
        s = G.as_states([b])
        obs = G.observations(s).reshape(-1)
        v2b = G.view_to_board(s)[0]
        mask = G.legal_masks(s)[0][v2b]
        # a policy concentrated on one legal view action
        j = int(rng.choice(np.flatnonzero(mask)))
        pol = np.zeros(256)
        pol[j] = 1.0
        found = 0
        for k in range(len(obs_g)):
            t_obs, t_mask, t_pol = obs[obs_g[k]], mask[act_g[k]], pol[act_g[k]]
            # the transformed sample must be the view of some symmetric board (several may match
            # when the board is itself symmetric; one of them must match in every respect)
            ok = False
            for perm in core.SYMMETRIES.values():
                tb = G.as_states([b.transform(perm)])
                if not np.array_equal(G.observations(tb).reshape(-1), t_obs):
                    continue
                tv2b = G.view_to_board(tb)[0]
                same_mask = np.array_equal(G.legal_masks(tb)[0][tv2b], t_mask)
                # the policy's action, played on the symmetric board, gives the symmetric child
                child = b.apply(int(v2b[j]))
                tchild = G.apply(tb, [tv2b[int(np.argmax(t_pol))]])[0]
                ok = ok or (same_mask and tchild.tolist() == list(child.transform(perm).cells))
            found += ok
        assert found == len(obs_g)


def test_rollout_and_heuristic():
    s = G.as_states(_boards(4, 30))
    r = G.rollout(s, np.random.default_rng(0))
    assert set(np.unique(r)) <= {-1.0, 0.0, 1.0}
    full = G.terminal(s)
    assert np.array_equal(r[full], G.returns(s[full]))
    assert np.array_equal(G.heuristic(s[full]), G.margins(s[full]).astype(float))


def test_sample_legal():
    m = np.zeros((3, 5), bool)
    m[0, [1, 3]] = True
    m[1, 4] = True
    a = sample_legal(m, np.random.default_rng(0))
    assert a[0] in (1, 3) and a[1] == 4 and a[2] == -1


def test_sample_legal_is_the_rules_kernels_random_legal():
    """The two were copies kept the same by a test (agents may not import the rules kernel); now one
    function in the layer-1 helper both import, checked against a plain-numpy reference in
    tests/test_batch_rules.py. From one generator the random agent's moves are the vector env's."""
    from highway_env.highway.batch_rules import random_legal
    from highway_env.legal_sampling import random_legal as shared

    assert sample_legal is shared and random_legal is shared
    rng = np.random.default_rng(5)
    masks = rng.random((1000, 256)) < rng.choice([0.0, 0.004, 0.05, 0.5, 1.0], (1000, 1))
    ours, kernels = np.random.default_rng(6), np.random.default_rng(6)
    np.testing.assert_array_equal(sample_legal(masks, ours), random_legal(masks.astype(np.int8), kernels))
    assert ours.random() == kernels.random()  # one draw per row, the generators in step


#: every game of ``agents.games.GAMES`` at its default options (a shipped game is not checked when
#: built, so this is its only check), and other options worth checking
CONTRACT_CASES = [*((name, None) for name in sorted(SHIPPED)), ("highway", {"obs": "planes"}),
                  ("blackpath", {"rows": 3, "cols": 5, "start": "E2:right"}), ("jumping", {"n": 3})]


@pytest.mark.parametrize("name, options", CONTRACT_CASES)
def test_every_shipped_game_passes_the_contract_a_plugged_in_game_must_pass(name, options):
    """check_contract refuses results outside [-1, 1] and movers other than 0 / 1: the shipped games,
    the models for a user's own, must pass it (a game built on one is checked the same way; a game
    added to ``GAMES`` is shipped, which ``get_game`` does not check)."""
    from agents.game import check_contract
    from agents.games import get_game

    check_contract(get_game(name, options), games=8, seed=1)
