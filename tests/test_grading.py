"""Solver-graded training: the accuracy column, best.pt chosen by it, and the position set's split
between the trainer's selection part and the part evaluate.py reports on."""

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from agents.checkpoint import load_checkpoint
from agents.grading import Grader
from agents.network import ConfigError, NetConfig, build_network
from agents.registry import get_game
from agents.trainer import Trainer
from test_train import tiny  # noqa: E402  (pytest puts tests/ on the path)

ROOT = Path(__file__).resolve().parents[1]


def test_accuracy_column_and_best_checkpoint_by_it(tmp_path):
    t = Trainer(tiny(tmp_path, grade_every=1, grade_positions=200, best_by="accuracy"))
    t.run()
    rows = list(csv.DictReader(open(tmp_path / "t" / "log.csv")))
    acc = [float(r["grade_accuracy"]) for r in rows]
    assert len(acc) == 4 and all(0.0 < a < 1.0 for a in acc)  # an untrained net: some, not all
    # best.pt holds the network with the best graded accuracy (graded again here, from the file)
    ck = load_checkpoint(tmp_path / "t" / "best.pt")
    net = build_network(NetConfig.from_dict(ck["net_config"]))
    net.load_state_dict(ck["model"])
    assert t.grader.accuracy(net) == pytest.approx(max(acc), abs=1e-5)
    assert load_checkpoint(tmp_path / "t" / "latest.pt")["grading"]["best"] == max(acc)
    # the strength curve is drawn from this log, not measured again
    spec = importlib.util.spec_from_file_location("bench_strength", ROOT / "bench" / "bench_strength.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--log", str(tmp_path / "t" / "log.csv"), "--out", str(tmp_path / "curve")]) == 0
    curve = list(csv.DictReader(open(tmp_path / "curve" / "strength.csv")))
    assert [float(r["accuracy"]) for r in curve] == [round(a, 4) for a in acc]
    assert 0.5 < float(curve[0]["greedy_accuracy"]) < 1.0


def test_selection_part_is_disjoint_from_what_evaluate_reports():
    from highway_env.benchmark.run import sample_plan
    from highway_env.evaluation.position_set import load_positions, selection_mask

    ps = load_positions()
    graded = get_game("highway").graded_positions(10_000)
    assert len(graded.states) > 500  # the whole selection part's critical positions
    plan = sample_plan(ps, 0, 10_000, seed=0)  # everything evaluate.py can grade or play out
    reported = {bytes(b) for b in ps.boards[np.concatenate([plan["sample"], plan["conversion"]])]}
    assert len(plan["sample"]) > 0.8 * len(ps) and not {bytes(b) for b in graded.states} & reported
    assert not selection_mask(ps.boards[plan["sample"]]).any()
    # the split is a function of the board: the same for any seed, order or subset
    perm = np.random.default_rng(1).permutation(len(ps))[:500]
    assert (selection_mask(ps.boards[perm]) == selection_mask(ps.boards)[perm]).all()
    # every graded position is critical: some legal move keeps the value and some does not
    legal = get_game("highway").legal_masks(graded.states)
    assert not (graded.keeps & ~legal).any()
    assert (graded.keeps.any(axis=1) & (graded.keeps.sum(axis=1) < legal.sum(axis=1))).all()


def test_games_without_a_position_set_skip_grading_with_a_note():
    g = Grader(get_game("blackpath"), every=5, positions=100)
    assert not g.available and "blackpath" in g.note and "no solver-labelled position set" in g.note
    assert not g.due(5, final=True)


@pytest.mark.parametrize("kw, name", [({"best_by": "elo"}, "best_by"),
                                      ({"best_by": "accuracy", "grade_every": 0}, "best_by"),
                                      ({"grade_positions": 0}, "grade_positions"),
                                      ({"grade_simulations": -1}, "grade_simulations")])
def test_bad_grading_options_are_named(tmp_path, kw, name):
    with pytest.raises(ConfigError, match=name):
        tiny(tmp_path, **kw).validate()
