"""Position set v2 (critical positions from strong play): its drawing, its selection without v1's
positions, the shipped file's labels, and evaluate.py's accuracy on it beside v1's."""

import json

import numpy as np
import pytest

import evaluate
from highway_env.evaluation import metrics
from highway_env.evaluation.positions import (STRONG_SOURCES, V2_PATH, _play, _strong_games, canonical_array,
                                              label_position, load_positions, save_positions, select)


@pytest.mark.slow  # loads the shipped network and compiles the search: ~15 s on a loaded machine
def test_strong_games_are_legal_games_that_diverge():
    games = _strong_games((4, [0, 0, 0], "az", 2))
    assert games.shape == (4, 17, 16)
    filled = (games != 0).sum(axis=2)
    assert (filled == np.arange(17)).all()  # one cell more each ply, every game played to the end
    assert len({g[8].tobytes() for g in games}) > 1  # the noise makes lines diverge


def test_candidate_games_go_through_play_out_with_the_draws_of_a_plain_loop():
    """_play was a second game loop; through agents.arena.play_out (history=) it must draw the same
    games from the same seed, or the versioned position sets could not be rebuilt."""
    from agents.game import sample_legal
    from agents.registry import get_game

    game = get_game("highway")

    def policy(states, ply, rng):  # uses the ply and draws over the whole batch, as the v2 games do
        out = sample_legal(game.legal_masks(states), rng)
        flip = rng.random(len(states)) < (0.5 if ply % 2 else 0.2)
        return np.where(flip, sample_legal(game.legal_masks(states), rng), out)

    rng = np.random.default_rng([3, 1])
    states = game.initial_states(7)
    expected = [states.copy()]
    for ply in range(16):
        states = game.apply(states, policy(states, ply, rng))
        expected.append(states.copy())
    games = _play(game, 7, policy, np.random.default_rng([3, 1]))
    assert games.dtype == np.int8 and np.array_equal(games, np.stack(expected, axis=1))


def test_selection_leaves_out_excluded_boards():
    from agents.game import sample_legal
    from agents.registry import get_game

    rng = np.random.default_rng(0)
    game = get_game("highway")
    cands = {name: _play(game, 30, lambda s, p, r: sample_legal(game.legal_masks(s), r), rng)
             for name in STRONG_SOURCES}
    everything, _, _ = select(cands, {9: 100, 10: 100}, seed=0, sources=STRONG_SOURCES)
    drop = {b.tobytes() for b in everything[rng.permutation(len(everything))[: len(everything) // 2]]}
    kept, ply, _ = select(cands, {9: 100, 10: 100}, seed=0, sources=STRONG_SOURCES, exclude=drop)
    assert len(kept) == len(everything) - len(drop) and not {b.tobytes() for b in kept} & drop
    assert (canonical_array(kept) == kept).all() and set(ply.tolist()) <= {9, 10}


@pytest.mark.skipif(not V2_PATH.exists(), reason="set v2 not built")
def test_shipped_v2_is_versioned_new_and_solver_labelled():
    v2, v1 = load_positions(V2_PATH), load_positions()
    assert v2.meta["version"] == 2 and tuple(v2.sources) == STRONG_SOURCES
    assert set(v2.ply.tolist()) <= set(range(5, 12)) and v2.critical().sum() >= 300
    assert not {b.tobytes() for b in v2.boards} & {b.tobytes() for b in v1.boards}
    from highway_env.solver import Solver

    solver = Solver()
    for i in np.flatnonzero(v2.ply >= 10)[:3]:  # late plies: fast to solve again
        values, _, value, _ = label_position(solver, v2.boards[i], False)
        assert (values == v2.values[i]).all() and value == v2.value[i]


def test_evaluate_reports_accuracy_on_v2_beside_v1(tmp_path, capsys):
    ps = load_positions()
    idx = np.flatnonzero(ps.ply >= 10)
    v1 = tmp_path / "v1.npz"
    v2 = tmp_path / "v2.npz"
    save_positions(v1, ps.subset(idx[:40]))
    save_positions(v2, ps.subset(idx[40:100]))
    argv = ["--agent", "greedy", "--games", "0", "--rr-games", "0", "--positions", "0", "--conversion", "0",
            "--workers", "1", "--positions-file", str(v1), "--positions-v2", str(v2), "--out", str(tmp_path / "ev"),
            "--store", "none", "--no-progress", "--no-plots", "--json"]
    assert evaluate.main(argv) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    acc2 = doc["agents"]["greedy"]["accuracy_v2"]
    sub = load_positions(v2)
    assert acc2["n"] == int(sub.critical().sum()) and doc["position_set_v2"]["size"] == 60
    # the same moves graded again: greedy is deterministic on these late positions up to its ties
    assert acc2["rate"] == metrics.accuracy(sub, np.array(
        json.load(open(next((tmp_path / "ev" / "tasks").glob("moves-greedy_v2*.json"))))["actions"]))["rate"]
    assert "acc v2" in out.err


def test_summary_names_the_shipped_v2_file_relative_to_the_checkout(tmp_path):
    """A summary records the shipped set v2 as v1's default is recorded, not by where the checkout lies
    (an absolute path named the machine's folders in every shipped summary)."""
    assert evaluate.shown_path(V2_PATH) == "highway_env/data/positions_v2.npz"
    outside = tmp_path / "v2.npz"
    assert evaluate.shown_path(outside) == str(outside)
    # v1 given by its absolute path is recorded the same way as its default
    v1 = V2_PATH.with_name("positions_v1.npz")
    argv = ["--agent", "random", "--games", "0", "--rr-games", "0", "--positions", "3", "--conversion", "0",
            "--workers", "1", "--positions-file", str(v1), "--positions-v2", "none", "--out", str(tmp_path / "ev"),
            "--store", "none", "--no-progress", "--no-plots"]
    assert evaluate.main(argv) == 0
    doc = json.loads((tmp_path / "ev" / "summary.json").read_text())
    assert doc["position_set"]["file"] == "highway_env/data/positions_v1.npz"
