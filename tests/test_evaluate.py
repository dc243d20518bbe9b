"""evaluate.py and highway_env.evaluation: metrics, Elo, the position set, the perfect agent, the CLI."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

import evaluate
from highway_env.core import Board, encode_action, random_board
from highway_env.evaluation import metrics
from highway_env.evaluation.elo import elo_with_ci, fit_bt
from highway_env.evaluation.positions import (DEFAULT_PATH, ILLEGAL, UNKNOWN, PositionSet, label_position,
                                              load_positions, save_positions)


def _tiny_set():
    """Three hand-made positions; only the listed actions are legal."""
    n = 3
    values = np.full((n, 256), ILLEGAL, np.int8)
    margins = np.full((n, 256), ILLEGAL, np.int8)
    # 0: A to move (ply 10), moves 0 -> +1 (margin 3), 1 -> 0 (margin 0): critical
    values[0, [0, 1]] = [1, 0]
    margins[0, [0, 1]] = [3, 0]
    # 1: B to move (ply 11), moves 5 -> -1, 6 -> +1: critical; margins unknown
    values[1, [5, 6]] = [-1, 1]
    margins[1, [5, 6]] = UNKNOWN
    # 2: A to move, every move wins: not critical
    values[2, [7, 8]] = [1, 1]
    margins[2, [7, 8]] = [2, 5]
    return PositionSet(boards=np.zeros((n, 16), np.int8), ply=np.array([10, 11, 10], np.int8), values=values,
                       margins=margins, value=np.array([1, -1, 1], np.int8), margin=np.array([3, UNKNOWN, 5], np.int8),
                       source=np.zeros(n, np.int8), sources=("random",), meta={"version": 0})


def test_accuracy_counts_only_critical_positions():
    ps = _tiny_set()
    assert ps.critical().tolist() == [True, True, False]
    acc = metrics.accuracy(ps, np.array([0, 6, 7]))
    assert (acc["correct"], acc["n"]) == (1, 2)
    assert acc["by_side"]["A"]["rate"] == 1.0 and acc["by_side"]["B"]["rate"] == 0.0
    assert acc["by_ply"][10]["n"] == 1 and acc["by_ply"][11]["correct"] == 0
    with pytest.raises(ValueError, match="illegal action"):
        metrics.move_keeps(ps, np.array([3, 5, 7]))


def test_margin_loss_from_the_movers_side():
    ps = _tiny_set()
    ml = metrics.margin_loss(ps, np.array([1, 5, 7]))
    assert ml["n"] == 2  # position 1 has no margins
    assert ml["mean"] == pytest.approx((3 + 3) / 2)
    assert metrics.margin_loss(ps, np.array([0, 5, 8]))["mean"] == 0


def test_wdl_and_conversion():
    w = metrics.wdl([3, 0, -1, 2])
    assert (w["win"], w["draw"], w["loss"], w["games"], w["score"]) == (2, 1, 1, 4, 0.625)
    c = metrics.conversion([1, 1, 0, -2])
    assert (c["positions"], c["won"], c["rate"]) == (4, 2, 0.5)
    assert c["ci95"][0] < 0.5 < c["ci95"][1]


def test_elo_ordering_and_ci():
    names = ["random", "greedy", "strong"]
    res = [(0, 1, 5, 0, 35), (0, 2, 0, 0, 40), (1, 2, 8, 4, 28)]
    e = elo_with_ci(names, res, bootstrap=200, seed=1)
    assert e["random"]["elo"] == 0
    assert e["random"]["elo"] < e["greedy"]["elo"] < e["strong"]["elo"]
    for n in names[1:]:
        lo, hi = e[n]["ci95"]
        assert lo <= e[n]["elo"] <= hi and hi - lo > 10
    # equal results -> equal ratings
    r = fit_bt(2, [(0, 1, 10, 0, 10)])
    assert abs(r[0] - r[1]) < 1e-6


def test_position_set_loads_and_agrees_with_solver():
    from highway_env.solver import Solver

    ps = load_positions()
    assert len(ps) >= 20000
    assert ps.boards.dtype == np.int8 and ps.values.shape == (len(ps), 256)
    assert (ps.ply == (ps.boards != 0).sum(axis=1)).all()
    # canonical and unique
    assert len({b.tobytes() for b in ps.boards}) == len(ps)
    rng = np.random.default_rng(0)
    s = Solver(tt_bits=18)
    for i in rng.choice(np.flatnonzero(ps.ply >= 10), size=12, replace=False):
        board = Board(tuple(int(v) for v in ps.boards[i]))
        assert board.canonical() == board
        v, m, val, mar = label_position(s, ps.boards[i], True)
        assert np.array_equal(v, ps.values[i]) and val == ps.value[i]
        known = ps.margins[i] != UNKNOWN
        assert np.array_equal(m[known], ps.margins[i][known])


def test_perfect_agent_registered_and_wins_won_positions_vs_random():
    from agents.registry import AgentSpecError, make_agent
    from highway_env.evaluation.tasks import play
    from highway_env.solver.player import PerfectPlayer

    p = make_agent("perfect:hardest", seed=0)
    assert isinstance(p, PerfectPlayer) and p.name == "perfect:hardest"
    assert (p.budget_nodes, p.early_budget_nodes, p.inherit_max_ply) == (300_000, 2_000_000, 6)
    with pytest.raises(AgentSpecError, match="bogus"):
        make_agent("perfect:bogus")
    ps = load_positions()
    won = np.flatnonzero((ps.value == 1) & (ps.ply % 2 == 0) & (ps.ply >= 8))[:4]
    rnd = make_agent("random", seed=1)
    margins, moves, unproven = play((p, rnd), ps.boards[won], [[0, i] for i in range(len(won))])
    assert (margins > 0).all() and unproven == 0 and moves > 0


@pytest.mark.slow
def test_perfect_agent_as_A_wins_from_empty_board_vs_random():
    from agents.registry import make_agent
    from highway_env.evaluation.tasks import play

    p = make_agent("perfect:hardest", seed=0)
    margins, _, unproven = play((p, make_agent("random", seed=2)), np.zeros((2, 16), np.int8), [[0, 0], [0, 1]])
    assert (margins > 0).all() and unproven == 0


@pytest.fixture
def small_set(tmp_path):
    ps = load_positions()
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(np.flatnonzero(ps.ply >= 9), size=60, replace=False))
    sub = ps.subset(idx)
    path = tmp_path / "small.npz"
    save_positions(path, sub)
    return path


def _args(out, small_set, *extra):
    return ["--agent", "random", "--agent", "greedy", "--games", "1", "--rr-games", "4", "--positions", "40",
            "--conversion", "2", "--workers", "1", "--positions-file", str(small_set), "--out", str(out),
            "--store", "none", "--perfect-exact-from-ply", "8", "--perfect-early-budget", "0.05",
            "--no-progress", *extra]


def test_json_schema_and_resume(tmp_path, small_set, capsys, monkeypatch):
    out = tmp_path / "ev"
    assert evaluate.main(_args(out, small_set, "--json", "--no-plots")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["agents"]) == {"random", "greedy"}
    for a in doc["agents"].values():
        assert 0 <= a["accuracy"]["rate"] <= 1
        for k in ("as_A_vs_perfect", "as_B_vs_perfect"):
            assert {"win", "draw", "loss"} <= set(a[k]) and a[k]["games"] == 1
        assert "elo" in a and set(a["elo"]) >= {"elo", "ci95"}
        assert "conversion" in a
    for f in ("summary.json", "agents.csv", "accuracy_by_ply.csv", "report.md"):
        assert (out / f).exists()
    # resume: every task is cached, nothing runs again
    import highway_env.evaluation.tasks as tasks

    def boom(*a, **k):
        raise AssertionError("a finished task ran again")

    monkeypatch.setattr(tasks, "run_task", boom)
    assert evaluate.main(_args(out, small_set, "--json", "--no-plots")) == 0
    doc2 = json.loads(capsys.readouterr().out)
    assert doc2["agents"] == doc["agents"]


def test_frame_and_batched_without_a_policy_are_named_as_unused(capsys):
    for argv, named in ((["--agent", "greedy", "--frame", "player"], "--frame"),
                        (["--agent", "greedy", "--batched", "--frame=player"], "--batched and --frame")):
        evaluate.validate(evaluate.build_parser().parse_args(argv))
        assert f"note: {named} only apply to module:attr" in capsys.readouterr().err, argv
    argv = ["--agent", "greedy"]
    evaluate.validate(evaluate.build_parser().parse_args(argv))
    assert "note:" not in capsys.readouterr().err


def test_abbreviated_flags_count_as_given(capsys):
    """argparse takes --fra for --frame and --gam for --games: a flag given so is given. The note
    once scanned argv for the full names, and --quick overwrote an abbreviated --conversion."""
    for argv, named in ((["--agent", "greedy", "--fra", "player"], "--frame"),
                        (["--agent", "greedy", "--bat"], "--batched")):
        evaluate.validate(evaluate.build_parser().parse_args(argv))
        assert f"note: {named} only apply to module:attr" in capsys.readouterr().err, argv
    args = evaluate.build_parser().parse_args(["--agent", "greedy", "--quick", "--conv", "3", "--games=5"])
    evaluate.validate(args)
    assert (args.games, args.positions, args.conversion) == (5, evaluate.QUICK["positions"], 3)
    args = evaluate.build_parser().parse_args(["--agent", "greedy"])
    evaluate.validate(args)
    assert (args.games, args.positions, args.conversion, args.frame, args.batched) == (20, 1500, 40, "absolute", False)


def test_plots_written(tmp_path, small_set):
    out = tmp_path / "ev"
    assert evaluate.main(_args(out, small_set)) == 0
    for f in ("accuracy_by_ply.png", "wdl_vs_perfect.png", "elo_ladder.png"):
        assert (out / f).stat().st_size > 1000


def test_reply_tree_one_game_per_ply1_reply(tmp_path, small_set, capsys, monkeypatch):
    """--reply-tree: the agent's first move, then one game from each ply-2 position B's replies lead
    to (two chunks of replies here, which must agree on the first move), and the counts add up."""
    import highway_env.evaluation.tasks as tasks
    from agents.registry import get_game

    starts = []
    play = tasks.play
    monkeypatch.setattr(tasks, "play", lambda players, s, seeds: (starts.append(np.array(s)), play(players, s, seeds))[1])
    out = tmp_path / "rt"
    argv = ["--agent", "greedy", "--games", "0", "--rr-games", "0", "--positions", "1", "--conversion", "0",
            "--positions-file", str(small_set), "--positions-v2", "none", "--workers", "1", "--out", str(out),
            "--store", "none", "--perfect-exact-from-ply", "8", "--perfect-early-budget-nodes", "20000",
            "--no-progress", "--no-plots", "--json", "--reply-tree", "--reply-tree-max", "20",
            "--reply-tree-tiebreaks", "hardest,random"]
    assert evaluate.main(argv) == 0
    tree = json.loads(capsys.readouterr().out)["agents"]["greedy"]["reply_tree"]
    assert set(tree) == {"hardest", "random"}
    game = get_game("highway")
    first = tree["hardest"]["first_move"]
    after = game.apply(game.initial_states(1), np.array([first]))
    legal = np.flatnonzero(game.legal_masks(after)[0])
    assert len(legal) == evaluate.REPLIES
    expected = game.apply(np.repeat(after, 20, 0), legal[:20])
    for tb, t in tree.items():
        assert t["first_move"] == first and t["replies"] == legal[:20].tolist()
        assert t["win"] + t["draw"] + t["loss"] == t["games"] == 20
    # per tie-break two tasks (replies 0-14, 15-19), each playing from its ply-2 positions
    assert [len(s) for s in starts] == [15, 5, 15, 5]
    for tb in range(2):
        played = np.concatenate(starts[2 * tb:2 * tb + 2])
        assert (played == expected).all() and (game.to_play(played) == 0).all()
        assert len({p.tobytes() for p in played}) == 20
    assert "tree_hardest_win" in (out / "agents.csv").read_text().splitlines()[0]
    assert "tree vs random W/D/L" in (out / "report.md").read_text()


@pytest.mark.parametrize("argv,needle", [
    (["--agent", "bogus:3"], "bogus"),
    (["--agent", "mcts:x"], "mcts:x"),
    (["--agent", "az:/nonexistent.pt"], "/nonexistent.pt"),
    (["--agent", "random", "--games", "-1"], "--games"),
    ([], "--agent"),
    (["--agent", "random", "--reply-tree-tiebreaks", "hardest,nope"], "nope"),
    (["--agent", "random", "--reply-tree-tiebreaks", "margin,margin"], "margin,margin"),
    (["--agent", "random", "--reply-tree-max", "-1"], "--reply-tree-max"),
])
def test_bad_values_exit_2(argv, needle, capsys):
    try:
        rc = evaluate.main(argv + ["--no-progress"])
    except SystemExit as exc:  # a flag's range is its argparse type
        rc = exc.code
    assert rc == 2
    assert needle in capsys.readouterr().err


def test_default_set_path_is_in_package():
    assert DEFAULT_PATH.name == "positions_v1.npz" and DEFAULT_PATH.parent.name == "data"
    assert encode_action(16, 3) == 243


def test_label_early_agrees_with_brute_force():
    """label_early (book, parent bounds, then the solver) gives every move's exact value."""
    from highway_env.core import random_board
    from highway_env.evaluation.positions import label_early
    from highway_env.solver import Solver, kernel
    from highway_env.solver.book import Book
    from highway_env.solver.player import Oracle

    rng = np.random.default_rng(3)
    for _ in range(4):
        board = random_board(rng, 11)
        margin = int(kernel.brute_force_margin(np.array(board.cells, dtype=np.int64)))
        book = Book()
        book.add(board, margin, margin)  # the book knows the position: children are bounded by it
        values = label_early(board, Oracle(book=book, solver=Solver(tt_bits=12)), deadline=None)
        for a in range(256):
            if not board.is_legal(a):
                assert values[a] == ILLEGAL
                continue
            m = int(kernel.brute_force_margin(np.array(board.apply(a).cells, dtype=np.int64)))
            assert values[a] == (m > 0) - (m < 0)


def test_position_set_covers_every_ply_and_early_labels_hold():
    from highway_env.evaluation.positions import load_first_moves
    from highway_env.solver import Solver

    ps = load_positions()
    assert set(ps.ply.tolist()) == set(range(16))
    crit = ps.critical()
    legal = ps.values != ILLEGAL
    root = np.flatnonzero(ps.ply == 0)
    assert len(root) == 1 and crit[root[0]]
    fm = load_first_moves("proof/first_moves.json")
    if fm is not None:
        assert all(ps.values[root[0], a] == v for a, v in fm.items())
    # a side that is lost keeps the value with every move; the value is the mover's best
    for i in np.flatnonzero((ps.ply >= 1) & (ps.ply <= 3)):
        vals = ps.values[i][legal[i]]
        assert ps.value[i] == (vals.max() if ps.ply[i] % 2 == 0 else vals.min())
    # a few ply-3 labels of critical positions against the solver
    rng = np.random.default_rng(0)
    s = Solver(tt_bits=20)
    idx = np.flatnonzero((ps.ply == 3) & crit)
    assert len(idx) > 0
    for i in rng.choice(idx, size=min(2, len(idx)), replace=False):
        board = Board(tuple(int(v) for v in ps.boards[i]))
        for a in rng.choice(np.flatnonzero(legal[i]), size=3, replace=False):
            assert s.solve(board.apply(int(a))).value == ps.values[i, a]


def test_pool_worker_progress_bars_register_no_semaphore():
    """A pool worker's tqdm bars use no named semaphore: pool.terminate() kills the worker before it
    unlinks one, and the resource tracker then warns of leaked semaphores when evaluate.py ends."""
    import subprocess
    import sys

    code = ("import multiprocessing as mp, multiprocessing.resource_tracker as rt\n"
            "mp.set_start_method('spawn')\n"
            "registered = []\n"
            "rt.register = lambda name, rtype: registered.append(name)\n"
            "from tqdm import tqdm\n"
            "from highway_env.evaluation.tasks import pool_worker_init\n"
            "pool_worker_init()\n"
            "tqdm(total=1).close()\n"
            "assert not registered, registered\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_one_perfect_opponent_for_evaluate_the_benchmark_and_tasks():
    """evaluate.py's --perfect-* defaults and the benchmark's were written out in three places; the
    player a task builds is make_agent("perfect")'s with the task's budgets laid over."""
    from highway_env.benchmark.run import PERFECT
    from highway_env.evaluation.tasks import get_agent
    from highway_env.solver.player import EVALUATION_OPPONENT, OPPONENT_OPTIONS

    args = evaluate.build_parser().parse_args(["--agent", "random"])
    assert dict(evaluate.perfect_options(args), tiebreak=args.perfect_tiebreak) == EVALUATION_OPPONENT == PERFECT
    quiet = dict(EVALUATION_OPPONENT, store=None)
    p = get_agent("perfect", quiet)
    assert (p.tiebreak, p.budget_nodes, p.early_budget_nodes, p.budget) == (
        "hardest", OPPONENT_OPTIONS["budget_nodes"], OPPONENT_OPTIONS["early_budget_nodes"], 0.5)
    assert p.inherit_max_ply == OPPONENT_OPTIONS["inherit_max_ply"] and not p.progress
    seconds = get_agent("perfect:margin", dict(quiet, budget_nodes=0, tiebreak="random"))
    assert (seconds.tiebreak, seconds.budget_nodes, seconds.budget) == ("margin", None, 0.5)
    with pytest.raises(ValueError, match="perfect spec is perfect"):
        get_agent("perfect:margin:x", quiet)


def test_perfect_moves_count_every_game_that_grades_an_agent(tmp_path, small_set, capsys):
    """evaluate.py left the conversions' perfect moves out of summary.json's perfect_moves (the
    report's "every one proven" line) where highway_env.benchmark counted them; one definition now,
    metrics.perfect_moves over metrics.GRADING_GAMES, the round robin's games not among them."""
    from highway_env.benchmark import evaluate as benchmark

    assert metrics.perfect_moves([("vs_perfect", 5, 1), ("conversion", 3, 0), ("reply_tree", 2, 0),
                                  ("match", 7, 7)]) == {"perfect_moves": 10, "perfect_unproven_moves": 1}
    out = tmp_path / "ev"
    assert evaluate.main(["--agent", "random", "--games", "0", "--rr-games", "0", "--positions", "1",
                          "--conversion", "2", "--positions-v2", "none", "--workers", "1", "--store", "none",
                          "--positions-file", str(small_set), "--out", str(out), "--json", "--no-plots",
                          "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    tasks = [json.loads(f.read_text()) for f in (out / "tasks").glob("*.json")]
    conversions = [t["perfect_moves"] for t in tasks if t["kind"] == "conversion"]
    assert len(conversions) == 1 and conversions[0] > 0
    assert summary["perfect_moves"] == conversions[0]
    graded = benchmark("random", positions=1, games=0, conversion=2, margin_games=0, positions_file=small_set,
                       progress=False, perfect_options={"store": None}).summary
    assert graded["perfect_moves"] > 0  # the benchmark's conversions count as evaluate.py's do


def test_v2_seeds_do_not_depend_on_where_the_set_lies(tmp_path, small_set):
    """The seeds of the v2 tasks once hashed the set's absolute path: a random agent's v2 figures
    then changed with the checkout's folder. The shipped set seeds by one fixed name wherever it
    lies (the published figures' seeds); another file by its content."""
    import shutil

    from highway_env.evaluation.position_set import V2_PATH

    def v2_seeds(v2_path):
        args = evaluate.build_parser().parse_args(["--agent", "random", "--games", "0", "--rr-games", "0",
                                                   "--positions", "10", "--conversion", "0",
                                                   "--positions-v2", str(v2_path)])
        tasks, _ = evaluate.make_tasks(args, load_positions(), tmp_path, load_positions(v2_path))
        return [t["seed"] for t in tasks if t.get("yardstick") == "v2"]

    copy = tmp_path / "elsewhere" / "positions_v2.npz"
    copy.parent.mkdir()
    shutil.copy(V2_PATH, copy)
    shipped = v2_seeds(V2_PATH)
    assert shipped and v2_seeds(copy) == shipped
    assert evaluate.v2_seed_name(copy) == evaluate.V2_SEED_NAME
    assert v2_seeds(small_set) != shipped[:1] and evaluate.v2_seed_name(small_set).startswith("sha256:")


def test_a_checkpoint_changed_under_the_same_path_is_not_answered_from_the_cache(tmp_path):
    """Tasks were keyed by the agent spec alone: rerun with the same --out after best.pt had trained
    further, the cache reported the old network's figures as the new one's."""
    import shutil

    ckpt = tmp_path / "best.pt"
    args = evaluate.build_parser().parse_args(["--agent", f"az:{ckpt}:8", "--agent", "random", "--games", "2",
                                               "--rr-games", "2", "--positions", "10", "--conversion", "2"])

    def ids():
        tasks, _ = evaluate.make_tasks(args, load_positions(), tmp_path)
        return {t["id"]: t for t in tasks}

    shutil.copy(Path(evaluate.__file__).parent / "agents" / "pretrained" / "highway_az.pt", ckpt)
    before = ids()
    assert ids().keys() == before.keys()  # the same file: every task is the cached one
    ckpt.write_bytes(ckpt.read_bytes() + b"trained further")
    after = ids()
    uses_it = {i for i, t in before.items() if any(str(ckpt) in str(t.get(k)) for k in ("agent", "a", "b"))}
    assert uses_it and not uses_it & after.keys()  # each task of the changed checkpoint runs again
    assert before.keys() - uses_it <= after.keys()  # the other agent's tasks stay cached
    assert [t["seed"] for t in before.values()] == [t["seed"] for t in after.values()]  # the same games


@pytest.mark.parametrize("content", ["", "garbage", '{"id": "moves-x-1", "kind": "mo', "{}", "[1, 2]", "null",
                                     '{"id": "moves-other-2", "kind": "moves", "actions": [3]}',
                                     '{"id": "moves-x-1", "kind": "moves"}'],
                         ids=["empty", "garbage", "truncated", "empty-dict", "list", "null", "other-task", "no-actions"])
def test_a_damaged_cache_entry_is_run_again_not_a_traceback(tmp_path, content):
    """A task file that parsed but was not this task's result (an emptied or overwritten file) went
    on into the summary: KeyError 'actions'."""
    from highway_env.evaluation.tasks import load_done, save_done, task_path

    task = {"id": "moves-x-1", "kind": "moves", "index": [0]}
    result = {"id": "moves-x-1", "kind": "moves", "actions": [17]}
    save_done(tmp_path, task, result)
    assert load_done(tmp_path, task) == result
    task_path(tmp_path, task).write_text(content)
    assert load_done(tmp_path, task) is None


def test_a_build_work_folder_is_resumed_only_with_its_own_settings(tmp_path, capsys):
    """The default --work (one folder per set version) was resumed whatever the settings: a build
    with another --seed or --per-ply took the earlier build's selection and labels, and recorded
    its own seed in the set's meta."""
    from highway_env.evaluation import positions
    from highway_env.evaluation.position_set import PositionSetError

    rng = np.random.default_rng(0)
    boards = np.array([random_board(rng, 14).cells for _ in range(2)], np.int8)
    work = tmp_path / "work"
    work.mkdir()
    np.savez(work / "selection.npz", boards=boards, ply=np.array([14, 14]), source=np.array([0, 0]),
             seconds=np.float64(1.0))
    settings = dict(per_ply={14: 2}, games_per_source=3, workers=1, margin_min_ply=9, chunk=50, first_moves=None,
                    progress=False)
    ps = positions.build(tmp_path / "a.npz", work, seed=0, **settings)  # an old folder: resumed, with a note
    assert len(ps) == 2 and "did not record its settings" in capsys.readouterr().err
    assert len(positions.build(tmp_path / "a.npz", work, seed=0, **settings)) == 2  # its own settings: resumed
    with pytest.raises(PositionSetError, match=r"holds a build with other settings \(seed 0 there, 1 here\)"):
        positions.build(tmp_path / "b.npz", work, seed=1, **settings)
    (work / "selection.npz").write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(PositionSetError, match="selection .*selection.npz' is damaged"):
        positions.build(tmp_path / "a.npz", work, seed=0, **settings)


def _dies_once(marker: str) -> str:
    """A task whose worker is killed the first time it runs it (kill -9, the out-of-memory killer)."""
    import os
    import signal

    if not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return "done"


def test_an_evaluation_worker_killed_mid_task_is_replaced_not_waited_for(tmp_path):
    """evaluate.py ran its tasks on a multiprocessing.Pool, which waits for ever on a task whose
    worker was killed: `kill -9` of one worker, and the run never ended (150 s measured)."""
    from highway_env.retrying_pool import RetryingPool, WorkerLostError

    pool = RetryingPool(2, retries=1)
    try:
        pending = {pool.submit(_dies_once, str(tmp_path / "killed-once")), pool.submit(abs, -3)}
        got = []
        while pending:
            for task, result in pool.wait_any(pending):
                pending.discard(task)
                got.append(result)
        assert sorted(got, key=str) == [3, "done"] and max(pool.lost.values()) == 1
        # as multiprocessing.Pool's imap (positions build draws and labels with them)
        assert list(pool.imap(abs, [-1, -2, -3, -4])) == [1, 2, 3, 4]
        assert sorted(pool.imap_unordered(abs, [-1, -2, -3])) == [1, 2, 3]
    finally:
        pool.close(kill=True)
    pool = RetryingPool(1, retries=0, what=lambda args: f"running task {args[0]!r}", hint="try fewer --workers")
    try:
        task = pool.submit(_dies_once, str(tmp_path / "killed-again"))
        with pytest.raises(WorkerLostError, match="a worker died 1 times running task .*killed-again'; try fewer"):
            pool.wait_any({task})
    finally:
        pool.close(kill=True)


def test_the_same_seed_gives_the_same_summary(tmp_path, small_set):
    """Two runs with one seed write the same summary.json, but for provenance and wall time (and
    the default name, a timestamp: given here)."""
    docs = []
    for run in ("a", "b"):
        assert evaluate.main(_args(tmp_path / run, small_set, "--agent", "mcts:4", "--positions-v2", "none",
                                   "--games", "0", "--conversion", "0", "--seed", "5", "--name", "same",
                                   "--no-plots")) == 0
        doc = json.loads((tmp_path / run / "summary.json").read_text())
        assert doc.pop("provenance") and doc.pop("wall_seconds") is not None
        docs.append(json.dumps(doc, sort_keys=True))
    assert docs[0] == docs[1] and '"accuracy"' in docs[0]


def test_task_weight_runs_search_agents_moves_chunks_first():
    """The pool takes the longest tasks first: a searching agent's moves chunks, then the games,
    and a greedy or random agent's moves chunks last."""
    kinds = [{"kind": "moves", "agent": "greedy"}, {"kind": "match", "a": "greedy", "b": "random"},
             {"kind": "vs_perfect", "agent": "random"}, {"kind": "moves", "agent": "az:x.pt"},
             {"kind": "conversion", "agent": "greedy"}, {"kind": "moves", "agent": "mcts:50"}]
    order = sorted(kinds, key=lambda t: -evaluate.task_weight(t))
    assert [t["kind"] for t in order] == ["moves", "moves", "vs_perfect", "conversion", "match", "moves"]
    assert [t.get("agent") for t in order[:2]] == ["az:x.pt", "mcts:50"] and order[-1]["agent"] == "greedy"


def _explained(header: str, notes: str) -> bool:
    """Whether some note line holds every word of a table column (``as A W/D/L`` is explained by
    "**as A / as B W/D/L**"; "Elo [95% CI]" by "**Elo**")."""
    words = header.split(" [")[0].split()
    return any(all(w in line for w in words) for line in notes.splitlines() if line.startswith("- "))


def _columns(summary: dict) -> list[str]:
    from highway_env.evaluation import report

    return [h for h in re.split(r"\s{2,}", report.table(summary).splitlines()[0].strip()) if h != "agent"]


@pytest.mark.parametrize("v2", [None, {"file": "v2.npz", "version": 2, "size": 10, "critical": 4}])
def test_every_column_of_the_report_table_is_explained_under_it(v2):
    """A column added to ``report.table`` (or shown for a game that does not measure it) needs a line
    in report.md saying what it is; 'acc v2' once had none."""
    from highway_env.evaluation import report, siblings

    config = {"games": 1, "rr_games": 2, "positions": 3, "conversion": 1, "workers": 1, "seed": 0, "name": "t",
              "perfect_tiebreak": "hardest", "perfect_budget_nodes": 10, "reply_tree_tiebreaks": ["margin"]}
    highway = {"config": config, "agents": {}, "position_set": {"file": "v1.npz", "version": 1, "size": 9},
               "position_set_v2": v2, "perfect_moves": 0}
    sibling = {"config": {**config, "reply_tree_tiebreaks": [], "critical_positions": 1, "random_shares": [0.5],
                          "label_from_ply": 0},
               "agents": {}, "title": "Jumping", "board": "n = 4", "start_value": 2}
    cases = [(highway, report.markdown(highway, []))]
    cases += [(s, siblings.markdown(s, [])) for s in (dict(sibling, scored=True), dict(sibling, scored=False))]
    for summary, text in cases:
        unexplained = [h for h in _columns(summary) if not _explained(h, text)]
        assert not unexplained, (f"report.md of {summary.get('title', 'Highway')} shows column(s) {unexplained} "
                                 "without a note: add one to the notes of report.markdown (Highway) or "
                                 "siblings.markdown (say 'not measured for this game' where it shows '-')")
