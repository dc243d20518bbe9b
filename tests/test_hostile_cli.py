"""Bad input and hostile use of the command lines: one clear line on stderr and exit code 2, shipped
results never overwritten by default, signals and killed workers handled (issue 14)."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from highway_env.core import HighwayError, parse_board
from highway_env.shipped import is_shipped, refuse_shipped
from highway_env.solver.__main__ import main

REPO = Path(__file__).resolve().parent.parent
POSITION = "6,8,3,0,5,11,10,0,15,0,13,12,1,7,4,0"
ENV = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run_cli(capsys, *argv):
    try:
        rc = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc, err, *needles):
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


# ----------------------------------------------------------------------------- solve: limits and --file

@pytest.mark.parametrize("flag, value", [("--time-limit", "inf"), ("--time-limit", "1e13"),
                                         ("--time-limit", "nan"), ("--time-limit", "-3"),
                                         ("--node-limit", "99999999999999999999999"), ("--node-limit", "0")])
def test_out_of_range_limits_are_one_line_errors(capsys, flag, value):
    rc, out, err = run_cli(capsys, "solve", POSITION, flag, value)
    assert_one_line_error(rc, err, flag, "must be positive")
    assert out == ""


@pytest.mark.parametrize("content, needle", [(None, "FileNotFoundError"), ("{broken", "JSONDecodeError"),
                                              ('{"threshold": 2, "replies": []}', "threshold is 2, not 1")])
def test_prove_estimates_that_are_no_certificate_are_one_line_errors(capsys, tmp_path, content, needle):
    path = tmp_path / "estimates.json"
    if content is not None:
        path.write_text(content)
    rc, out, err = run_cli(capsys, "prove", "--estimates", str(path), "--out", str(tmp_path / "cert.json"))
    assert_one_line_error(rc, err, "--estimates", needle)
    assert not (tmp_path / "cert.json").exists()


def test_file_with_a_byte_order_mark_is_read(capsys, tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + POSITION.encode() + b"\n")
    rc, out, err = run_cli(capsys, "solve", "--file", str(path), "--json")
    assert rc == 0 and json.loads(out)["value"] == 1, err


def test_file_errors_name_the_file_line(capsys, tmp_path):
    path = tmp_path / "positions.txt"
    path.write_text(f"# header\n\n{POSITION}\n1,2,3\n")
    rc, out, err = run_cli(capsys, "solve", "--file", str(path))
    assert_one_line_error(rc, err, "positions.txt line 4", "expected 16 comma-separated numbers")
    assert out == ""


def test_an_empty_file_name_is_not_ignored(capsys):
    """solve --file '' was taken as no --file: the positions given beside it were solved, rc 0."""
    rc, out, err = run_cli(capsys, "solve", "--file", "", "--node-limit", "10", POSITION)
    assert_one_line_error(rc, err, "cannot read --file ''")
    assert out == ""


def test_non_utf8_file_is_one_line_error(capsys, tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(POSITION.encode() + b"\n6,8,3,0,5,11,10,0,15,0,13,12,1,7,4,\xe9\n")
    rc, _, err = run_cli(capsys, "solve", "--file", str(path))
    assert_one_line_error(rc, err, "latin1.txt line 2", "not UTF-8", "0xe9")


@pytest.mark.parametrize("where", ["argument", "file"])
def test_a_5000_digit_cell_is_a_short_one_line_error(capsys, tmp_path, where):
    huge = "1" * 5000 + ",0" * 15
    if where == "file":
        path = tmp_path / "huge.txt"
        path.write_text(huge + "\n")
        rc, _, err = run_cli(capsys, "solve", "--file", str(path))
    else:
        rc, _, err = run_cli(capsys, "solve", huge)
    assert_one_line_error(rc, err, "too long")
    assert len(err) < 300


def test_usage_errors_are_one_line(capsys):
    rc, _, err = run_cli(capsys, "frobnicate")
    assert_one_line_error(rc, err, "invalid choice")


# ----------------------------------------------------------------------------- shipped results

def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_shipped_paths_are_refused_unless_named():
    shipped = REPO / "proof" / "certificate.json"
    assert is_shipped(shipped) and is_shipped(REPO / "highway_env" / "data" / "x.npz")
    assert is_shipped(REPO / "results" / "shipped" / "a" / "b.json")
    assert not is_shipped(REPO / "results" / "proof" / "certificate.json")
    assert is_shipped(REPO / "results" / "ablations" / "ablations.md")
    with pytest.raises(HighwayError, match="--force"):
        refuse_shipped(shipped, allowed=False)
    refuse_shipped(shipped, allowed=True)  # named by the user: allowed


def test_every_committed_results_folder_is_shipped():
    """bench_ablations.py's default --out was the committed results/ablations/, which the guard did not
    know: every folder under results/ that git tracks must be in SHIPPED_DIRS, so a new one cannot be
    forgotten."""
    try:
        proc = subprocess.run(["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        proc = None
    if proc is None or proc.returncode != 0 or not proc.stdout.strip():
        if os.environ.get("CI"):
            pytest.fail("CI=true but git cannot list the tracked results/ of this checkout")
        pytest.skip("not a git checkout (an sdist): no list of the committed results/")
    tracked = {Path(f).parts[1] for f in proc.stdout.splitlines() if len(Path(f).parts) > 2}
    assert "shipped" in tracked and "ablations" in tracked
    assert sorted(d for d in tracked if not is_shipped(REPO / "results" / d / "x.json")) == []


def test_bench_ablations_default_output_is_not_shipped(tmp_path, monkeypatch):
    """Its default --out overwrote the committed results/ablations/; named, the path is still allowed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_ablations", REPO / "bench" / "bench_ablations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    outs = []

    def train(name, flags, args):
        outs.append(args.out)
        raise KeyboardInterrupt  # stop before any training

    monkeypatch.setattr(module, "train", train)
    monkeypatch.chdir(tmp_path)
    for argv in ([], ["--out", str(tmp_path / "named")]):
        with pytest.raises(KeyboardInterrupt):
            module.main(argv)
    assert outs[1] == str(tmp_path / "named")
    assert not is_shipped(REPO / outs[0]) and not is_shipped(tmp_path / outs[0])
    assert (tmp_path / outs[0]).is_dir()  # checked writable before the work


@pytest.mark.parametrize("script", ["bench_ablations", "bench_strength"])
def test_bench_training_scripts_give_train_py_their_own_output_folder(capsys, tmp_path, monkeypatch, script):
    """train.py runs in the checkout's root: a relative --out (or '-1', which it took for a flag) was
    another folder to it than to the script, which then found no log.csv (a traceback); a failed
    train.py was a CalledProcessError traceback in bench_ablations."""
    import importlib.util
    import subprocess

    spec = importlib.util.spec_from_file_location(script, REPO / "bench" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out_dirs = []

    def run(cmd, **kwargs):
        out_dirs.append(cmd[cmd.index("--out-dir") + 1])
        raise subprocess.CalledProcessError(2, cmd)

    monkeypatch.setattr(module.subprocess, "run", run)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        module.main(["--out", "-1"])
    assert out_dirs == [str(tmp_path / "-1" / "checkpoints")]
    assert_one_line_error(exc.value.code, capsys.readouterr().err, "error:")


@pytest.mark.parametrize("cwd", [pytest.param("repo", marks=pytest.mark.slow), "tmp"])
def test_prove_without_out_leaves_the_shipped_certificate_alone(tmp_path, cwd):
    shipped = REPO / "proof" / "certificate.json"
    before = _digest(shipped)
    where = REPO if cwd == "repo" else tmp_path
    expected = where / "results" / "proof" / "certificate-t-100-move243.json"
    existed = expected.exists()
    try:
        proc = subprocess.run([sys.executable, "-m", "highway_env.solver", "prove", "--threshold", "-100",
                               "--first-move", "243", "--workers", "1", "--tt-bits", "12", "--no-progress"],
                              cwd=where, env=ENV, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert _digest(shipped) == before
        assert json.loads(expected.read_text())["threshold"] == -100
    finally:
        if not existed and expected.exists() and cwd == "repo":
            expected.unlink()


@pytest.mark.parametrize("module, argv", [
    ("highway_env.solver.__main__", ["prove", "--threshold", "-100", "--first-move", "243", "--workers", "1"]),
    ("highway_env.solver.__main__", ["first-moves", "--workers", "1"]),
    ("highway_env.evaluation.positions", ["build", "--workers", "1"]),
    ("highway_env.evaluation.positions", ["add-early"]),
    ("highway_env.evaluation.positions", ["add-early", ""]),
    ("evaluate", ["--agent", "random"]),
    ("train", ["--iterations", "1"]),
])
def test_an_empty_output_path_is_refused_not_taken_for_the_default(capsys, tmp_path, monkeypatch, module, argv):
    """--out '' was the default output and, being given, allowed to replace a shipped result: prove
    --out '' run from the checkout overwrote proof/certificate.json, positions build --out '' the
    shipped set; evaluate.py --out '' and train.py --out-dir '' wrote to other folders than asked."""
    import importlib

    monkeypatch.chdir(tmp_path)
    flag = "file" if "" in argv else {"train": "--out-dir"}.get(module, "--out")
    argv = argv if "" in argv else [*argv, flag, ""]
    try:
        rc = importlib.import_module(module).main(argv)
    except SystemExit as e:
        rc = e.code
    named = "out_dir must be a folder, not empty" if module == "train" else f"{flag} '' is empty"
    assert_one_line_error(rc, capsys.readouterr().err, named)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("module, argv, flag", [
    ("highway_env.solver.__main__", ["prove", "--out", "c.json", "--estimates", ""], "--estimates"),
    ("highway_env.solver.__main__", ["first-moves", "--out", "f.json", "--certificate", ""], "--certificate"),
    ("highway_env.solver.__main__", ["store", "verify", "--path", " "], "--path"),
    ("highway_env.evaluation.positions", ["build", "--out", "s.npz", "--work", ""], "--work"),
    ("highway_env.evaluation.positions", ["build", "--out", "s.npz", "--first-moves", ""], "--first-moves"),
    ("highway_env.evaluation.positions", ["add-early", "s.npz", "--book", ""], "--book"),
    ("highway_env.evaluation.positions", ["add-early", "s.npz", "--first-moves", ""], "--first-moves"),
    ("evaluate", ["--agent", "random", "--positions-file", ""], "--positions-file"),
    ("evaluate", ["--agent", "random", "--positions-v2", ""], "--positions-v2"),
    ("evaluate", ["--agent", "random", "--store", ""], "--store"),
    ("train", ["--iterations", "1", "--config", ""], "--config"),
])
def test_an_empty_input_or_work_path_is_refused_naming_the_flag(capsys, tmp_path, monkeypatch, module, argv, flag):
    """'' was taken for none or the default: first-moves --certificate '' proved the first move again,
    positions build --work '' resumed the default work folder and --first-moves '' left ply 0 out
    without a note, add-early --book '' read the shipped book, train.py --config '' used no config. An
    empty path is refused at parsing, naming the flag, unless the flag's help gives '' a meaning (none
    does: 'none' and 'default' are the words for those)."""
    import importlib

    monkeypatch.chdir(tmp_path)
    try:
        rc = importlib.import_module(module).main(argv)
    except SystemExit as e:
        rc = e.code
    value = argv[argv.index(flag) + 1]
    assert_one_line_error(rc, capsys.readouterr().err, f"argument {flag}: path {value!r} is empty")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("module, argv", [
    ("highway_env.solver.__main__", ["prove", "--threshold", "-100", "--first-move", "243", "--workers", "1"]),
    ("highway_env.solver.__main__", ["first-moves", "--workers", "1"]),
    ("highway_env.evaluation.positions", ["build", "--workers", "1"]),
])
def test_an_output_file_path_ending_in_a_slash_is_refused(capsys, tmp_path, monkeypatch, module, argv):
    """--out sub/ was written as the file 'sub' (Path drops the slash), which a later resume could
    not read as the folder the user meant."""
    import importlib

    monkeypatch.chdir(tmp_path)
    try:
        rc = importlib.import_module(module).main([*argv, "--out", "sub/"])
    except SystemExit as e:
        rc = e.code
    assert_one_line_error(rc, capsys.readouterr().err, "--out 'sub/' ends with '/', a folder")
    assert not any(tmp_path.iterdir())


def test_first_moves_with_a_corrupt_results_file_is_one_line_error(capsys, tmp_path):
    bad = tmp_path / "first.json"
    bad.write_text('{"moves": [1, 2')
    rc, _, err = run_cli(capsys, "first-moves", "--out", str(bad), "--certificate", "none", "--no-progress")
    assert_one_line_error(rc, err, "cannot resume", "first.json", "move it away")
    bad.write_text('{"moves": [1, 2]}')  # valid JSON, wrong shape
    rc, _, err = run_cli(capsys, "first-moves", "--out", str(bad), "--certificate", "none", "--no-progress")
    assert_one_line_error(rc, err, "cannot resume")


def test_first_moves_with_a_corrupt_certificate_is_one_line_error(capsys, tmp_path):
    cert = tmp_path / "cert.json"
    cert.write_text("[]")
    rc, _, err = run_cli(capsys, "first-moves", "--out", str(tmp_path / "f.json"), "--certificate", str(cert))
    assert_one_line_error(rc, err, "cert.json", "not a proof certificate")


# ----------------------------------------------------------------------------- signals and lost workers

def _children(pid: int) -> list[int]:
    found = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            found += [int(x) for x in Path(path).read_text().split()]
        except OSError:
            pass
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


linux_only = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")


def _start_long_prove(tmp_path):
    """A prove run that takes minutes, with both workers started."""
    proc = subprocess.Popen([sys.executable, "-m", "highway_env.solver", "prove", "--first-move", "243",
                             "--workers", "2", "--tt-bits", "14", "--no-progress"],
                            cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    workers = _children(proc.pid)
    assert len(workers) >= 2, "workers did not start"
    time.sleep(1.0)  # let them start searching
    return proc, workers


def _wait_gone(pids, seconds):
    deadline = time.monotonic() + seconds
    while any(_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if _running(p)]


@linux_only
@pytest.mark.parametrize("sig, code, name", [
    (signal.SIGINT, 130, "Ctrl-C"), pytest.param(signal.SIGTERM, 143, "SIGTERM", marks=pytest.mark.slow)])
def test_a_signal_ends_prove_in_one_line_and_stops_its_workers(tmp_path, sig, code, name):
    proc, workers = _start_long_prove(tmp_path)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert err.count("\n") == 1 and name in err and "Traceback" not in err, err
    assert _wait_gone(workers, 5) == []


_EVALUATE_TERMINATED = """
import os, signal, sys, time
import evaluate

def run_tasks(*args, **kwargs):  # a batch system stops the job while its tasks run
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)

evaluate.run_tasks = run_tasks
sys.exit(evaluate.main(["--agent", "random", "--games", "0", "--rr-games", "0", "--positions", "10",
                        "--conversion", "0", "--workers", "1", "--store", "none", "--no-progress",
                        "--out", sys.argv[1]]))
"""


def test_sigterm_ends_evaluate_in_one_line_as_ctrl_c_does(tmp_path):
    """evaluate.py had no SIGTERM handling (the solver's commands had): killed by the signal, its
    pool torn down half-way ("leaked semaphore objects"), without a word of what was kept."""
    proc = subprocess.run([sys.executable, "-c", _EVALUATE_TERMINATED, str(tmp_path / "ev")], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 143, proc.stderr
    err = proc.stderr.strip()
    assert "interrupted by SIGTERM" in err and "rerun the same command to resume" in err and "Traceback" not in err


@linux_only
@pytest.mark.slow
def test_workers_die_with_a_killed_parent(tmp_path):
    proc, workers = _start_long_prove(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    assert _wait_gone(workers, 5) == [], "orphaned workers still running"


@linux_only
@pytest.mark.parametrize("retries", [1, 0])
def test_a_worker_killed_mid_unit_is_rerun_or_fails_clearly(retries):
    from highway_env.solver.prove import WorkerLostError, _LocalPool

    board = parse_board("0,5,0,0,0,0,0,0,0,0,14,0,0,6,0,8")  # about a second of search
    # the worker is killed right after the submit, while it starts: the unit cannot have finished
    pool = _LocalPool(1, 14, retries=retries)
    try:
        task = pool.submit(board.cells, 1)
        victims = list(pool.executor._processes)  # this pool's workers only (other children may exist)
        assert victims and all(_running(p) for p in victims)
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        if retries:
            [(done, result)] = pool.wait_any({task})
            assert done == task and result["holds"] and pool.lost[task] == 1
        else:
            with pytest.raises(WorkerLostError, match="worker died 1 times"):
                pool.wait_any({task})
    finally:
        pool.close(kill=True)


# ----------------------------------------------------------------------------- the position store

def _late_position_and_children():
    """A position with A to move that A wins, and the value of each of its moves (exact)."""
    from highway_env.solver import Solver

    board = parse_board(POSITION)
    result = Solver(tt_bits=14).solve(board, moves=True)
    assert result.value == 1 and any(m.value < 1 for m in result.moves)
    return board, {m.action: m.value for m in result.moves}


def _tamper(path, key, lo, hi, checksum=None):
    import sqlite3

    conn = sqlite3.connect(path)
    if checksum is None:  # a plain edit: the checksum no longer matches
        conn.execute("UPDATE positions SET lo = ?, hi = ? WHERE key = ?", (lo, hi, key))
    else:  # a forger who recomputes it
        conn.execute("UPDATE positions SET lo = ?, hi = ?, checksum = ? WHERE key = ?", (lo, hi, checksum, key))
    conn.commit()
    conn.close()


def test_an_edited_store_entry_is_ignored_and_replaced(tmp_path):
    from highway_env.solver.store import PositionStore, canonical_key

    path = str(tmp_path / "s.sqlite")
    board = parse_board(POSITION)
    with PositionStore(path) as store:
        store.put(board, 7, 7)
    _tamper(path, canonical_key(board), -9, -9)
    with PositionStore(path) as store:
        assert store.get(board) is None and store.read_status == {"checksum": 1}
        assert len(store) == 0 and list(store.items()) == []
        store.put(board, 7, 7)  # the damaged row is replaced, not merged into a contradiction
    with PositionStore(path) as store:
        assert store.get(board) == (7, 7)


def test_entries_of_another_solver_version_are_ignored(tmp_path, monkeypatch):
    import highway_env.solver.store as store_module

    path = str(tmp_path / "s.sqlite")
    board = parse_board(POSITION)
    with store_module.PositionStore(path) as store:
        store.put(board, 7, 7)
    monkeypatch.setattr(store_module, "SOLVER_VERSION", store_module.SOLVER_VERSION + 1)
    with store_module.PositionStore(path) as store:
        assert store.get(board) is None and store.read_status == {"version": 1}
        store.put(board, 1, 9)
        assert store.get(board) == (1, 9)


def test_a_version_1_store_is_upgraded_and_its_unchecked_rows_ignored(tmp_path):
    import sqlite3

    from highway_env.solver.store import FORMAT_NAME, PositionStore, canonical_key

    path = str(tmp_path / "v1.sqlite")
    board = parse_board(POSITION)
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
                       "CREATE TABLE positions (key TEXT PRIMARY KEY, lo INTEGER NOT NULL, hi INTEGER NOT NULL,"
                       " CHECK (lo <= hi)) WITHOUT ROWID;")
    conn.execute("INSERT INTO meta VALUES ('format', ?), ('version', '1')", (FORMAT_NAME,))
    conn.execute("INSERT INTO positions VALUES (?, -9, -9)", (canonical_key(board),))
    conn.commit()
    conn.close()
    with PositionStore(path) as store:
        assert store.get(board) is None
        store.put(board, 7, 7)
    with PositionStore(path, readonly=True) as store:
        assert store.get(board) == (7, 7)


@pytest.mark.slow  # ~30 s: the player warms up; the fast store-level tests above cover the same rows
def test_a_tampered_store_does_not_mislead_the_perfect_player(tmp_path):
    """Issue 14 item 9: losing moves edited to look winning made the player play one."""
    from highway_env.solver.player import PerfectPlayer
    from highway_env.solver.store import PositionStore, bounds_from_value, canonical_key

    board, values = _late_position_and_children()
    path = str(tmp_path / "s.sqlite")
    with PositionStore(path) as store:
        for action, value in values.items():
            store.put(board.apply(action), *bounds_from_value(value))
    for action, value in values.items():
        if value < 1:
            _tamper(path, canonical_key(board.apply(action)), 1, 1000)
    for seed in range(2):
        player = PerfectPlayer(store=path, book=False, seed=seed, progress=False, tt_bits=14)
        action = player.act(board)
        assert values[action] == 1, (action, player.last_info)
        player.close()


def _verify(capsys, path, *extra):
    return run_cli(capsys, "store", "verify", "--path", str(path), "--sample", "50", *extra)


def test_store_verify_reports_mismatches_and_exits_1(capsys, tmp_path):
    from highway_env.solver.store import (SOLVER_VERSION, PositionStore, bounds_from_value, canonical_key,
                                          entry_checksum)

    board, values = _late_position_and_children()
    path = tmp_path / "s.sqlite"
    with PositionStore(str(path)) as store:
        for action, value in values.items():
            store.put(board.apply(action), *bounds_from_value(value))
    rc, out, err = _verify(capsys, path)
    assert rc == 0 and f"{len(values)} re-solved, 0 mismatches" in out, out + err
    loser = next(a for a, v in values.items() if v == -1)
    key = canonical_key(board.apply(loser))
    _tamper(path, key, 1, 1000, checksum=entry_checksum(key, 1, 1000, SOLVER_VERSION))  # passes the checksum
    rc, out, _ = _verify(capsys, path)
    assert rc == 1 and f"mismatch: {key}" in out and "1 mismatches" in out
    _tamper(path, key, 2, 1000)  # a plain edit: caught by the checksum
    rc, out, _ = _verify(capsys, path)
    assert rc == 1 and "1 with a wrong checksum" in out


@pytest.mark.parametrize("kind", ["directory", "garbage", "missing"])
def test_bad_store_paths_are_one_line_errors(capsys, tmp_path, kind):
    path = tmp_path / "store"
    if kind == "directory":
        path.mkdir()
    elif kind == "garbage":
        path.write_bytes(b"not sqlite at all\x00" * 100)
    rc, _, err = _verify(capsys, path)
    assert_one_line_error(rc, err, str(path))


# ----------------------------------------------------------------------------- the solver's Python API

def test_solver_accepts_what_the_agents_accept_and_names_bad_types():
    import numpy as np

    from highway_env.solver import Solver

    solver = Solver(tt_bits=12)
    cells = [int(v) for v in POSITION.split(",")]
    values = {solver.solve(x).value for x in (POSITION, cells, tuple(cells), np.array(cells), parse_board(POSITION))}
    assert values == {1}
    for bad, name in ((3.5, "float"), (np.zeros(16), "float64"), ({"a": 1}, "dict"), (None, "NoneType")):
        with pytest.raises(TypeError, match=name):
            solver.solve(bad)
    with pytest.raises(HighwayError, match="cell 0"):
        solver.solve([0.5] + [0] * 15)


# ----------------------------------------------------------------------------- sibling games' CLIs

def test_blackpath_solve_stops_at_its_position_limit(capsys):
    from highway_env.blackpath.__main__ import main as blackpath_main

    rc = blackpath_main(["solve", "--rows", "10", "--cols", "10", "--max-positions", "20000"])
    err = capsys.readouterr().err
    assert_one_line_error(rc, err, "gave up after", "--max-positions")
    assert blackpath_main(["solve", "--rows", "4", "--cols", "4", "--json"]) == 0  # the default limit fits
    assert json.loads(capsys.readouterr().out)["winner"] == 1


def test_blackpath_time_limit_and_bad_limits(capsys):
    from highway_env.blackpath.__main__ import main as blackpath_main

    rc = blackpath_main(["solve", "--rows", "10", "--cols", "10", "--time-limit", "0.2"])
    assert_one_line_error(rc, capsys.readouterr().err, "time limit")
    with pytest.raises(SystemExit) as exc:
        blackpath_main(["solve", "--max-positions", "9" * 30])
    assert exc.value.code == 2 and capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("content", [b"garbage\n", bytes(range(256)) * 8, None])
def test_demo_with_a_bad_checkpoint_is_one_line_error(capsys, tmp_path, content):
    from highway_env.demo import main as demo_main

    path = tmp_path / "bad.pt"
    if content is not None:
        path.write_bytes(content)
    rc = demo_main(["--a", f"az:{path}"])
    assert_one_line_error(rc, capsys.readouterr().err, "bad.pt")


def test_demo_png_into_a_missing_folder_makes_it_and_under_a_file_is_refused_before_the_game(capsys, tmp_path):
    """--png checked its folder by hand and refused a missing one, where every other command's output
    (atomic_files.check_writable) makes it; a folder that cannot be made is still refused before the game."""
    from highway_env.demo import main as demo_main

    assert demo_main(["--png", str(tmp_path / "no" / "x.png")]) == 0
    assert (tmp_path / "no" / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    (tmp_path / "a_file").write_text("")
    rc = demo_main(["--png", str(tmp_path / "a_file" / "x.png")])
    out, err = capsys.readouterr()
    assert_one_line_error(rc, err, "--png", "a_file", "cannot write there")
    assert "move" not in out


@pytest.mark.parametrize("module, argv", [
    ("highway_env.jumping.__main__", ["solve", "--max-states", "9" * 30]),
    ("highway_env.jumping.__main__", ["solve", "--n", "x"]),
    ("highway_env.rushhour.__main__", []),
    ("highway_env.blackpath.__main__", ["solve", "--rows", "x"]),
])
def test_sibling_usage_errors_are_one_line(capsys, module, argv):
    import importlib

    with pytest.raises(SystemExit) as exc:
        importlib.import_module(module).main(argv)
    assert_one_line_error(exc.value.code, capsys.readouterr().err, "error:")


@pytest.mark.parametrize("kind", ["directory", "garbage"])
def test_evaluate_with_a_bad_store_path_is_one_line_error(tmp_path, kind):
    store = tmp_path / "store"
    if kind == "directory":
        store.mkdir()
    else:
        store.write_bytes(b"\x00garbage" * 600)
    proc = subprocess.run([sys.executable, str(REPO / "evaluate.py"), "--agent", "random", "--quick", "--no-plots",
                           "--no-progress", "--out", str(tmp_path / "ev")],
                          env={**ENV, "HIGHWAY_ENV_CACHE": str(store)}, capture_output=True, text=True, timeout=300)
    assert_one_line_error(proc.returncode, proc.stderr, str(store))


@pytest.mark.parametrize("argv", [["build", "--games-per-source", "1", "--no-progress"],
                                  ["add-early", "--no-progress"]])
def test_positions_commands_refuse_the_shipped_default_output(capsys, argv):
    from highway_env.evaluation.positions import DEFAULT_PATH, main as positions_main

    before = _digest(DEFAULT_PATH) if DEFAULT_PATH.exists() else None
    rc = positions_main(argv)
    assert_one_line_error(rc, capsys.readouterr().err, "refusing to overwrite", "--force")
    assert (_digest(DEFAULT_PATH) if DEFAULT_PATH.exists() else None) == before


@pytest.mark.parametrize("module, argv, named", [
    ("train", ["--hidden", "x"], "'x'"), ("train", ["--no-such-flag"], "--no-such-flag"),
    ("evaluate", ["--games", "x"], "'x'"), ("evaluate", ["--frame", "sideways"], "sideways"),
    ("highway_env.evaluation.positions", ["info", "--bogus"], "--bogus"),
    ("highway_env.evaluation.positions", ["build", "--per-ply", "99=1"], "99=1"),
])
def test_train_evaluate_positions_usage_errors_are_one_line(capsys, module, argv, named):
    """argparse's default printed the whole usage (40 lines for train.py) above the error."""
    import importlib

    with pytest.raises(SystemExit) as exc:
        importlib.import_module(module).main(argv)
    assert_one_line_error(exc.value.code, capsys.readouterr().err, "error:", named)


@pytest.mark.parametrize("flag, value", [
    ("--perfect-budget", "nan"), ("--perfect-budget", "inf"), ("--perfect-early-budget", "nan"),
    ("--seed", "-1"), ("--games", "99999999999999999999"), ("--rr-games", "99999999999999999999"),
    ("--workers", "100000000"), ("--perfect-budget-nodes", "9" * 30), ("--positions", "99999999999"),
])
def test_evaluate_refuses_non_finite_negative_and_huge_numbers(capsys, flag, value):
    """nan budgets and 10**20 games were accepted (the task list then never finished), and 10**11
    positions (a sibling game plays up to 20 games per position asked for); --seed -1 was a numpy
    traceback."""
    import evaluate

    try:
        rc = evaluate.main(["--agent", "random", "--no-progress", flag, value])
    except SystemExit as exc:  # the ranges are the flags' argparse types, as in every command
        rc = exc.code
    assert_one_line_error(rc, capsys.readouterr().err, flag, "must be")


@pytest.mark.parametrize("module, argv", [
    ("evaluate", ["--name", "../../../x"]), ("evaluate", ["--name", "/abs"]), ("evaluate", ["--name", "a/b"]),
    ("evaluate", ["--name", ""]), ("evaluate", ["--name", ".."]),
    ("train", ["--run", "a\\b"]), ("train", ["--run", ".."]), ("train", ["--resume", "--run", "../t"]),
    ("evaluate", ["--name", "a\nb"]), ("train", ["--run", "a\tb"]),  # a newline split the printed report path
    ("evaluate", ["--name", " "]), ("train", ["--run", "run "]),  # ' ' looks like no folder, 'run ' is not 'run'
])
def test_run_names_are_one_folder_name(capsys, tmp_path, monkeypatch, module, argv):
    """evaluate.py --name made the default --out results/eval-<NAME>, so '../../../x' wrote outside
    results/ and 'a/b' nested; train.py --resume read OUT_DIR/../t/latest.pt before --run was checked.
    Both now refuse a name that is not one folder name before any work."""
    import importlib

    cli = importlib.import_module(module)
    monkeypatch.chdir(tmp_path)  # a run that starts anyway writes here, not in the repository
    monkeypatch.setattr(cli, "check_writable", lambda *a: pytest.fail("the run started"))
    (tmp_path / "t").mkdir()
    flag, name = argv[-2:]
    rc = cli.main(["--agent", "random", "--no-progress", *argv] if module == "evaluate"
                  else ["--out-dir", str(tmp_path / "out"), *argv])
    assert_one_line_error(rc, capsys.readouterr().err, "run name", repr(name))


@pytest.mark.parametrize("damage", ["head", "half", "tail", "flip"])
def test_a_damaged_position_set_is_one_line_error(capsys, tmp_path, damage):
    """A cut or bit-flipped .npz raised zipfile.BadZipFile / zlib.error as a traceback."""
    from highway_env.evaluation.positions import main as positions_main

    raw = bytearray((REPO / "highway_env" / "data" / "positions_v1.npz").read_bytes())
    raw = {"head": raw[:300], "half": raw[:len(raw) // 2], "tail": raw[:-30], "flip": raw}[damage]
    if damage == "flip":
        raw[len(raw) // 3] ^= 0xFF
    path = tmp_path / "cut.npz"
    path.write_bytes(bytes(raw))
    rc = positions_main(["info", str(path)])
    assert_one_line_error(rc, capsys.readouterr().err, "cut.npz", "unreadable")


@pytest.mark.parametrize("flag", ["--positions-file", "--positions-v2"])
@pytest.mark.parametrize("value, named", [("", "path '' is empty"), ("{tmp}", "{tmp}' is a directory")])
def test_an_empty_or_directory_position_set_path_is_named_as_given(capsys, tmp_path, flag, value, named):
    """'' was read as '.', and the error named '.' ("unreadable (IsADirectoryError ...)"); '' is now
    refused while parsing, naming the flag."""
    import evaluate

    try:
        rc = evaluate.main(["--agent", "random", "--no-progress", "--out", str(tmp_path / "o"),
                            flag, value.format(tmp=tmp_path)])
    except SystemExit as e:  # argparse's usage error
        rc = e.code
    assert_one_line_error(rc, capsys.readouterr().err, named.format(tmp=tmp_path))


@pytest.mark.parametrize("game, flag", [("highway", "--out"), ("jumping", "--out"), ("highway", "--store")])
def test_evaluate_output_under_a_file_is_one_line_error(capsys, tmp_path, game, flag):
    """The --out folder was made after the checks (a FileExistsError traceback), the store's folder
    inside PositionStore (a FileNotFoundError traceback)."""
    import evaluate

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    target = blocker if flag == "--out" else blocker / "s.sqlite"
    extra = [] if flag == "--out" else ["--out", str(tmp_path / "ev")]
    rc = evaluate.main(["--game", game, "--agent", "random", "--no-progress", flag, str(target), *extra])
    assert_one_line_error(rc, capsys.readouterr().err, str(target))


@pytest.mark.parametrize("argv, named", [
    (["prove", "--out", "{blocker}/c.json", "--estimates", "none"], "a_file"),
    (["prove", "--out", "{tmp}", "--estimates", "none"], "is a folder"),
    (["first-moves", "--out", "{blocker}/f.json", "--certificate", "none"], "a_file"),
    (["prove", "--first-move", "256"], "--first-move"), (["prove", "--first-move", "-1"], "--first-move"),
    (["prove", "--threshold", "9" * 25], "--threshold"),
])
def test_prove_and_first_moves_refuse_bad_output_and_values_before_work(capsys, tmp_path, monkeypatch, argv, named):
    """These were found only after the search: the output at the end of a proof of hours, an
    impossible first move or a threshold beyond int64 in the workers."""
    import highway_env.solver.prove as prove_module

    def no_work(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(prove_module, "prove", no_work)
    monkeypatch.setattr(prove_module, "first_move_values", no_work)
    (tmp_path / "a_file").write_text("")
    argv = [a.format(blocker=tmp_path / "a_file", tmp=tmp_path) for a in argv]
    rc, out, err = run_cli(capsys, *argv, "--no-progress")
    assert_one_line_error(rc, err, named)


@pytest.mark.parametrize("command", ["first-moves", "prove"])
def test_a_second_process_on_the_same_out_is_refused(capsys, tmp_path, monkeypatch, command):
    """Two first-moves runs given one --out each rewrote the file without the other's moves; two
    proofs, each other's certificate."""
    import highway_env.solver.prove as prove_module
    from highway_env.run_lock import RunInUseError, lock_output

    out = tmp_path / "sub" / "f.json"
    argv = [command, "--out", str(out), "--no-progress", "--certificate" if command == "first-moves" else "--estimates",
            "none"]
    worked = []

    def work(*args, **kwargs):  # the lock is held while the work runs: another process is refused
        with pytest.raises(RunInUseError, match=f"pid {os.getpid()}"):
            lock_output(out)
        worked.append(command)
        raise HighwayError("stop here")

    monkeypatch.setattr(prove_module, "prove", work)
    monkeypatch.setattr(prove_module, "first_move_values", work)
    held = lock_output(out)  # as the first process, still writing, holds it
    try:
        rc, _, err = run_cli(capsys, *argv)
        assert_one_line_error(rc, err, f"--out {str(out)!r} is being written by another process (pid {os.getpid()})")
        assert not worked
    finally:
        held.close()
    rc, _, err = run_cli(capsys, *argv)  # free once the first ends
    assert_one_line_error(rc, err, "stop here")
    assert worked == [command]
    lock_output(out).close()  # and let go when the command ends


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_an_out_through_a_symlink_and_its_target_are_one_output(capsys, tmp_path, monkeypatch, linked):
    """--out LINK and --out TARGET took two locks (one beside each name), so two proofs ran at once
    and split into two files: the link renamed into a file of its own, the target written apart."""
    import highway_env.solver.prove as prove_module
    from highway_env.run_lock import lock_output

    target = tmp_path / "real" / "c.json"
    target.parent.mkdir()
    if linked == "file":
        link = tmp_path / "c.json"
        link.symlink_to(target)
    else:  # a symlinked folder on the way
        (tmp_path / "via").symlink_to(target.parent, target_is_directory=True)
        link = tmp_path / "via" / "c.json"

    def work(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(prove_module, "prove", work)
    held = lock_output(target)  # a proof writing the target
    try:
        rc, _, err = run_cli(capsys, "prove", "--out", str(link), "--estimates", "none", "--no-progress")
        assert_one_line_error(rc, err, f"--out {str(link)!r} is being written by another process (pid {os.getpid()})")
    finally:
        held.close()


def _broken_worker_init(*args) -> None:
    raise ImportError("No module named 'numba'\nsecond line")


@pytest.mark.parametrize("command", ["evaluate", "positions", "prove"])
def test_a_worker_initializer_that_raises_is_one_line_naming_it(capsys, tmp_path, monkeypatch, command):
    """An import error in the workers' initializer read "a worker died 3 times ...; out of memory?",
    after each worker of three pools printed its traceback."""
    import evaluate
    import highway_env.evaluation.positions as positions
    import highway_env.evaluation.tasks as tasks
    import highway_env.solver.prove as prove_module

    monkeypatch.setattr(tasks, "pool_worker_init", _broken_worker_init)  # evaluate.py imports it at its call
    monkeypatch.setattr(positions, "pool_worker_init", _broken_worker_init)
    monkeypatch.setattr(prove_module, "_init_worker", _broken_worker_init)
    rc = {"evaluate": lambda: evaluate.main(["--agent", "random", "--games", "2", "--rr-games", "0", "--chunk", "1",
                                             "--positions", "0", "--workers", "2", "--no-progress",
                                             "--out", str(tmp_path / "ev")]),
          "positions": lambda: positions.main(["build", "--out", str(tmp_path / "p.npz"), "--work", str(tmp_path / "w"),
                                               "--per-ply", "6=2", "--games-per-source", "2", "--perfect-games", "1",
                                               "--workers", "2", "--no-progress"]),
          "prove": lambda: main(["prove", "--first-move", "243", "--workers", "2", "--tt-bits", "14",
                                 "--estimates", "none", "--out", str(tmp_path / "c.json"), "--no-progress"])}[command]()
    assert_one_line_error(rc, capsys.readouterr().err, "the worker initializer test_hostile_cli._broken_worker_init "
                                                       "failed: ImportError: No module named 'numba'")


def test_evaluate_refuses_a_module_attr_that_is_no_policy(capsys):
    """math:pi passed the checks; the run failed with a TypeError traceback after the other agents' work."""
    import evaluate

    rc = evaluate.main(["--agent", "random", "--agent", "math:pi", "--no-progress"])
    assert_one_line_error(rc, capsys.readouterr().err, "math:pi", "give a callable")


@pytest.mark.parametrize("argv, named", [
    (["build", "--out", "{blocker}/x.npz", "--no-progress"], "a_file"),
    (["add-early", "{set}", "--out", "{blocker}/x.npz", "--no-progress"], "a_file"),
    (["add-early", "{set}", "--out", "{tmp}/x.npz", "--time-limit", "nan"], "--time-limit"),
    (["build", "--out", "{tmp}/x.npz", "--seed", "-1"], "--seed"),
    (["build", "--out", "{tmp}/x.npz", "--margin-min-ply", "99"], "--margin-min-ply"),
])
def test_positions_commands_refuse_bad_output_and_values_before_work(capsys, tmp_path, argv, named):
    """An --out under a file failed after the labelling (hours); nan --time-limit and a negative seed
    were accepted."""
    from highway_env.evaluation.positions import main as positions_main

    (tmp_path / "a_file").write_text("")
    argv = [a.format(blocker=tmp_path / "a_file", tmp=tmp_path, set=REPO / "highway_env" / "data" / "positions_v1.npz")
            for a in argv]
    try:
        rc = positions_main(argv)
    except SystemExit as exc:
        rc = exc.code
    assert_one_line_error(rc, capsys.readouterr().err, named)
    assert not (tmp_path / "x.npz").exists()


@pytest.mark.parametrize("given", ["folder", "other_json"])
def test_a_first_moves_file_that_cannot_give_ply_0_is_noted(capsys, tmp_path, monkeypatch, given):
    """positions build --first-moves with a folder or a JSON file of another kind left ply 0 out
    without a word (only a missing file was noted)."""
    import highway_env.evaluation.positions as positions

    def no_build(*args, **kwargs):
        raise HighwayError("stop before the build")

    monkeypatch.setattr(positions, "build", no_build)
    path = tmp_path / "fm"
    path.mkdir() if given == "folder" else path.write_text('{"moves": []}')
    assert positions.main(["build", "--out", str(tmp_path / "x.npz"), "--first-moves", str(path)]) == 2
    assert f"note: --first-moves {str(path)!r} is not a complete first-moves file" in capsys.readouterr().err


@pytest.mark.parametrize("argv, named", [(["--seed", "-1"], "--seed"), (["--png", ""], "--png ''"),
                                         (["--png", "{tmp}"], "not a file name")])
def test_demo_bad_seed_and_png_are_one_line_errors_before_the_game(capsys, tmp_path, argv, named):
    """--seed -1 was reported as "bad agent spec 'greedy'"; --png '' was ignored and a folder as --png
    was an IsADirectoryError traceback after the game."""
    from highway_env.demo import main as demo_main

    try:
        rc = demo_main([a.format(tmp=tmp_path) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    assert_one_line_error(rc, err, named)
    assert "move" not in out


def test_demo_png_of_any_suffix_is_a_png(capsys, tmp_path):
    from highway_env.demo import main as demo_main

    assert demo_main(["--png", str(tmp_path / "board.image")]) == 0
    assert (tmp_path / "board.image").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["board.image"]  # no temp file left


@pytest.mark.parametrize("spec", ["mcts:-1", "mcts:0"])
def test_mcts_spec_below_one_is_told_the_real_minimum(spec):
    from agents.registry import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match=r"N must be >= 1 and <= \d+, got -?\d"):
        make_agent(spec)


@pytest.mark.parametrize("spec, named", [
    ("mcts:" + "1" + "0" * 23, "mcts: N must be >= 1 and <= {max}, got 1" + "0" * 23),
    ("mcts:{above}", "mcts: N must be >= 1 and <= {max}, got {above}"),
    ("mcts:" + "9" * 5000, "mcts: N must be >= 1 and <= {max}, got " + "9" * 40 + "..."),
    ("az:missing.pt:" + "9" * 23, "az: SIMS must be >= 0 and <= {max}, got " + "9" * 23),
], ids=["10**23", "max+1", "5000 digits", "az SIMS"])
def test_huge_simulation_counts_in_specs_are_range_errors(spec, named):
    """mcts:10**23 failed deep in numpy ("Maximum allowed dimension exceeded"), mcts:10**12 asked
    for a 62 TiB array, and a 5000-digit count hit Python's int-from-text limit. The message leads
    with the spec, cut after 100 characters."""
    from agents.registry import MAX_SIMULATIONS, AgentSpecError, make_agent

    spec, named = (t.format(max=MAX_SIMULATIONS, above=MAX_SIMULATIONS + 1) for t in (spec, named))
    with pytest.raises(AgentSpecError) as exc:
        make_agent(spec)
    shown = spec if len(spec) <= 100 else spec[:100] + "..."
    assert str(exc.value) == f"bad agent spec {shown!r}: {named}"


def test_bench_evaluate_passes_on_evaluate_errors_and_paths_from_here(tmp_path, monkeypatch):
    """evaluate.py's own one-line error (here a store path under a file) was followed by the
    driver's KeyError traceback; a relative --store meant a file in the checkout (the driver's
    folder), not in the folder the command was run from."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_evaluate", REPO / "bench" / "bench_evaluate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("")
    assert module.parse_args(["--store", "rel.sqlite"]).store == str(tmp_path / "rel.sqlite")
    with pytest.raises(SystemExit, match=f"failed in {REPO} "):  # a relative checkout is taken from here
        module.run_driver(Path(os.path.relpath(REPO, tmp_path)), "import sys; sys.exit(3)", [], "the driver")
    with pytest.raises(SystemExit) as exc:
        module.main(["--store", "a_file/s.sqlite", "--workers", "1", "--eval-args", "--agent random --games 0"])
    message = str(exc.value)
    assert "Traceback" not in message and "a_file" in message and "(exit 2)" in message, message


@pytest.mark.parametrize("flag, value, named", [("--opponent", "nan", "bad agent spec 'nan'"),
                                               ("--book", "", "opening book path '' is empty"),
                                               ("--book", "{tmp}", "{tmp}' is a directory"),
                                               ("--store", "{tmp}", "{tmp}' is a directory")])
def test_bench_perfect_refuses_a_bad_opponent_book_or_store_in_one_line(capsys, tmp_path, flag, value, named):
    """Each was a traceback at the first game (the book '' named '.')."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_perfect", REPO / "bench" / "bench_perfect.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exc:
        module.main([flag, value.format(tmp=tmp_path), "--games", "1", "--no-baseline"])
    assert_one_line_error(exc.value.code, capsys.readouterr().err, named.format(tmp=tmp_path))


def test_bench_eval_ray_refuses_a_bad_agent_before_starting_ray(capsys, monkeypatch):
    """A bad --agent started a two-node Ray cluster first, then printed evaluate.py's error and a
    second line, exit 1."""
    import importlib.util

    monkeypatch.syspath_prepend(str(REPO / "bench"))  # it imports bench_scale beside it
    spec = importlib.util.spec_from_file_location("bench_eval_ray", REPO / "bench" / "bench_eval_ray.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def no_cluster(*args, **kwargs):
        raise AssertionError("a Ray cluster was started")

    monkeypatch.setattr(module, "start_ray_cluster", no_cluster)
    assert_one_line_error(module.main(["--agent", "nan"]), capsys.readouterr().err, "bad agent spec 'nan'")


@pytest.mark.parametrize("script, flag, value", [
    ("bench_ablations", "--seed", "-1"), ("bench_agents", "--roots", "0"), ("bench_benchmark", "--games", "-1"),
    ("bench_env", "--seconds", "nan"), ("bench_evaluate", "--rounds", "0"), ("bench_train", "--rounds", "0"),
    ("bench_jumping_labels", "--stop-seconds", "inf"), ("bench_jumping_labels", "--n", "0"),
    ("bench_jumping_solve", "--rounds", "0"), ("bench_numba_vs_c", "--tt-bits", "99"),
    ("bench_perfect", "--budget", "nan"), ("bench_scale", "--workers", "0"), ("bench_solver", "--filled", "16"),
    ("bench_strength", "--minutes", "nan"), ("bench_openspiel_mcts", "--uct-c", "nan"),
    ("bench_vector_env", "--num-envs", "0"),
])
def test_bench_scripts_refuse_bad_numbers_in_one_line(capsys, script, flag, value):
    """The bench scripts took nan seconds, negative seeds and counts unchecked (a traceback or a run
    measuring nothing) and printed the whole usage above an error."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(script, REPO / "bench" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exc:
        module.main([flag, value])
    assert_one_line_error(exc.value.code, capsys.readouterr().err, flag, repr(value))


@pytest.mark.parametrize("argv, named", [(["--entropy", "nan"], "--entropy"), (["--entropy", "-1"], "--entropy"),
                                         (["--threads", "100000"], "--threads"), (["--out", "{blocker}"], "a_file")])
def test_recipe_flags_are_checked_before_training(capsys, tmp_path, monkeypatch, argv, named):
    """nan --entropy trained to NaN; an --out under a file failed after the training."""
    monkeypatch.syspath_prepend(str(REPO / "examples"))
    import recipe_common

    (tmp_path / "a_file").write_text("")
    p = recipe_common.parser("test")
    recipe_common.add_model_args(p, lr=1e-3)
    with pytest.raises(SystemExit) as exc:
        recipe_common.parse_args(p, [a.format(blocker=tmp_path / "a_file") for a in argv], {}, {})
    assert_one_line_error(exc.value.code, capsys.readouterr().err, named)


@pytest.mark.parametrize("path", ["", " "])
def test_an_empty_store_path_is_one_line_error(capsys, path):
    """--path '' verified the default store instead (minutes of solving); evaluate.py --store '' said
    "cannot switch to WAL mode (got delete)"."""
    rc, _, err = run_cli(capsys, "store", "verify", "--path", path)
    assert_one_line_error(rc, err, "is empty")


def test_prove_with_a_ray_address_where_no_head_answers_is_one_line_error(capsys, tmp_path):
    """Ray retried the address for minutes, then a ConnectionError traceback."""
    from optional_parts import require_ray
    from ray_helpers import free_port

    require_ray()
    port = free_port()
    rc, _, err = run_cli(capsys, "prove", "--ray-address", f"127.0.0.1:{port}", "--out", str(tmp_path / "c.json"),
                         "--estimates", "none", "--no-progress")
    assert_one_line_error(rc, err, f"--ray-address '127.0.0.1:{port}'", "no Ray head answers")


def test_an_ipv6_ray_address_in_brackets_is_reachable():
    """[::1]:PORT, as Ray writes an IPv6 head's address, was refused as 'no Ray head answers there'
    (the brackets went to the name lookup)."""
    import socket

    from highway_env.ray_address import check_reachable

    try:
        head = socket.create_server(("::1", 0), family=socket.AF_INET6)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with head:
        check_reachable(f"[::1]:{head.getsockname()[1]}")
        check_reachable(f"ray://[::1]:{head.getsockname()[1]}")


@pytest.mark.parametrize("address", ["9" * 20, "127.0.0.1:99999999999999999999", "localhost:70000", "host:0"])
def test_a_ray_address_with_a_port_out_of_range_is_one_line_error(capsys, address):
    """A port past a C long was socket's OverflowError traceback; 70000 was taken modulo 2**16."""
    import evaluate

    rc = evaluate.main(["--agent", "greedy", "--ray-address", address, "--no-progress"])
    assert_one_line_error(rc, capsys.readouterr().err, f"--ray-address {address!r}", "is not in 1..65535")


@pytest.mark.parametrize("address, named", [("http://127.0.0.1:{port}", "is an HTTP address (the dashboard's"),
                                            ("https://head.example:8265", "is an HTTP address"),
                                            ("127.0.0.1", "has no port")])
def test_a_ray_address_that_is_no_head_address_is_one_line_error(capsys, address, named):
    """The dashboard's URL (the address 'ray job submit' takes) was ray.init's ValueError traceback;
    an address without a port said "invalid literal for int() with base 10"."""
    import socket

    import evaluate

    with socket.create_server(("127.0.0.1", 0)) as dashboard:  # something listens there
        address = address.format(port=dashboard.getsockname()[1])
        rc = evaluate.main(["--agent", "greedy", "--ray-address", address, "--no-progress"])
    assert_one_line_error(rc, capsys.readouterr().err, f"--ray-address {address!r} {named}", "6379 by default")


@pytest.mark.parametrize("log, out, named", [("{tmp}/none.csv", "{tmp}/o", "none.csv"),
                                             ("{tmp}/latin1.csv", "{tmp}/o", "latin1.csv"),
                                             ("{tmp}/latin1.csv", "{tmp}/a_file", "a_file"),
                                             ("{tmp}/bare/log.csv", "{tmp}/o", "latest.pt"),
                                             ("{tmp}/zoo/log.csv", "{tmp}/o", "latest.pt")])
def test_bench_strength_bad_log_or_out_exits_2_in_one_line(capsys, tmp_path, log, out, named):
    """A missing log exited 1; a log that is not UTF-8 and an --out under a file were tracebacks; so
    were a log without its run's latest.pt and one beside a model-zoo file (no training config)."""
    import importlib.util
    import shutil

    (tmp_path / "a_file").write_text("")
    (tmp_path / "latin1.csv").write_bytes(b"iteration,grade_accuracy\n1,0.5\xe9\n")
    for run in ("bare", "zoo"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "log.csv").write_text("iteration,minutes,grade_accuracy\n5,0.5,0.9\n")
    shutil.copy(REPO / "agents" / "pretrained" / "zoo" / "highway_az_1min.pt", tmp_path / "zoo" / "latest.pt")
    spec = importlib.util.spec_from_file_location("bench_strength", REPO / "bench" / "bench_strength.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exc:
        module.main(["--log", log.format(tmp=tmp_path), "--out", out.format(tmp=tmp_path)])
    assert_one_line_error(exc.value.code, capsys.readouterr().err, named)


@pytest.mark.parametrize("argv, named", [
    (["build", "--out", "{tmp}/b.json.gz", "--ply", "-1"], "--ply"),
    (["build", "--out", "{tmp}/b.json.gz", "--ply", "1", "--time-limit", "nan"], "--time-limit"),
    (["build", "--out", "{tmp}/b.json.gz", "--ply", "1", "--tt-bits", "99"], "--tt-bits"),
    (["build", "--out", "{tmp}/a_file/b.json.gz", "--ply", "1"], "a_file"),
    (["merge", "{tmp}/a_file", "--out", "{tmp}"], "is a folder"),
    (["frobnicate"], "invalid choice"),
])
def test_book_cli_refuses_bad_values_and_outputs_before_solving(capsys, tmp_path, monkeypatch, argv, named):
    """-1 plies, nan seconds and 2**99 table buckets were accepted, an --out under a file failed after
    the solving, and usage errors printed the whole usage."""
    import highway_env.solver.book as book

    def no_work(*args, **kwargs):
        raise AssertionError("the build started")

    monkeypatch.setattr(book, "build_book", no_work)
    (tmp_path / "a_file").write_text("")
    try:
        rc = book.main([a.format(tmp=tmp_path) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    assert_one_line_error(rc, capsys.readouterr().err, named)


def test_sb3_recipe_save_path_is_checked_before_training(capsys, tmp_path, monkeypatch):
    """--save under a file failed after the training."""
    monkeypatch.syspath_prepend(str(REPO / "examples"))
    import sb3_maskable_ppo_selfplay as recipe

    monkeypatch.setattr(recipe, "train", lambda *a, **k: pytest.fail("the training started"))
    (tmp_path / "a_file").write_text("")
    with pytest.raises(SystemExit) as exc:
        recipe.main(["--tiny", "--save", str(tmp_path / "a_file" / "m.zip")])
    assert_one_line_error(exc.value.code, capsys.readouterr().err, "--save", "a_file")


@pytest.mark.parametrize("argv", [["solve", POSITION], ["prove"], ["book", "build", "--out", "{tmp}/b.json.gz"],
                                  ["bench_numba_vs_c"]])
@pytest.mark.parametrize("edge", ["below", "above"])
def test_tt_bits_flags_and_the_solver_share_one_range(capsys, tmp_path, monkeypatch, argv, edge):
    """The range 10..30 was written in Solver and again in the solver, book and bench parsers, free
    to drift apart; a value just outside the one range is refused everywhere, naming the range."""
    import importlib.util

    import highway_env.solver.book as book
    from highway_env.cli_args import TT_BITS_MAX, TT_BITS_MIN
    from highway_env.solver import Solver

    bits = str(TT_BITS_MIN - 1 if edge == "below" else TT_BITS_MAX + 1)
    allowed = f"in {TT_BITS_MIN}..{TT_BITS_MAX}"
    with pytest.raises(HighwayError, match=f"tt_bits must be {allowed}, got {bits}"):
        Solver(tt_bits=int(bits))
    monkeypatch.setattr(book, "build_book", lambda *a, **k: pytest.fail("the build started"))
    argv = [a.format(tmp=tmp_path) for a in argv] + ["--tt-bits", bits]
    if argv[0] == "book":
        entry = lambda: book.main(argv[1:])  # noqa: E731
    elif argv[0] == "bench_numba_vs_c":
        spec = importlib.util.spec_from_file_location(argv[0], REPO / "bench" / f"{argv[0]}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        entry = lambda: module.main(argv[1:])  # noqa: E731
    else:
        entry = lambda: main(argv)  # noqa: E731
    with pytest.raises(SystemExit) as exc:
        entry()
    assert_one_line_error(exc.value.code, capsys.readouterr().err, "--tt-bits", allowed, repr(bits))


_BAD_GAMES = {  # module text -> what the one-line error names
    "raise RuntimeError('boom at import')\n": "RuntimeError: boom at import",
    "def (:\n": "SyntaxError",
    "from examples.tictactoe_game import TicTacToeGame\n\nclass Game(TicTacToeGame):\n"
    "    def __init__(self, **kw):\n        raise RuntimeError('ctor boom')\n": "RuntimeError: ctor boom",
}


@pytest.mark.parametrize("module", ["train", "evaluate"])
@pytest.mark.parametrize("text", list(_BAD_GAMES), ids=["raises on import", "syntax error", "constructor raises"])
def test_a_game_ref_whose_code_raises_is_one_line_error(capsys, tmp_path, monkeypatch, module, text):
    """--game pkg.mod:Class: a module raising anything but ImportError on import, or a constructor
    raising, was a traceback with exit code 1."""
    import importlib

    name = f"hostile_game_{abs(hash((module, text)))}"
    (tmp_path / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    cli = importlib.import_module(module)
    monkeypatch.setattr(cli, "check_writable", lambda *a: pytest.fail("the run started"))
    argv = ["--game", f"{name}:Game"]
    rc = cli.main([*argv, "--agent", "random", "--no-progress", "--out", str(tmp_path / "o")] if module == "evaluate"
                  else [*argv, "--out-dir", str(tmp_path / "out")])
    assert_one_line_error(rc, capsys.readouterr().err, f"{name}", _BAD_GAMES[text])


@pytest.mark.parametrize("env, named", [('{"py_modules": 3}', "py_modules"), ('{"pip": 5}', "pip"),
                                        ('{"env_vars": {"A": 1}}', "env_vars")])
def test_a_runtime_env_of_wrong_types_is_one_line_error_before_ray_starts(capsys, tmp_path, env, named):
    """Ray checks a runtime_env's types only in ray.init, after a local Ray had started: a TypeError
    traceback from inside Ray, exit code 1."""
    from optional_parts import require_ray

    require_ray()
    rc, _, err = run_cli(capsys, "prove", "--ray-address", "local", "--ray-runtime-env", env,
                         "--out", str(tmp_path / "c.json"), "--estimates", "none", "--no-progress")
    assert_one_line_error(rc, err, f"--ray-runtime-env {env!r}", named)
    assert not (tmp_path / "c.json").exists()


_BAD_POLICIES = '''
class Bot:
    def restart_at(self, state):
        pass

class Raises(Bot):
    def step(self, state):
        raise RuntimeError("bot boom")

class RestartRaises(Bot):
    def restart_at(self, state):
        raise KeyError("restart boom")

    def step(self, state):
        return state.legal_actions()[0]

class Huge(Bot):
    def step(self, state):
        return 10 ** 30

def make_bot():
    raise RuntimeError("factory boom")

def policy(obs):
    raise RuntimeError("policy boom")

raises, restart, huge = Raises(), RestartRaises(), Huge()
'''


@pytest.mark.parametrize("attr, named", [
    ("raises", "Raises raised RuntimeError: bot boom in position"),
    ("restart", "RestartRaises raised KeyError: 'restart boom' in position"),
    ("huge", "action 1000000000000000000000000000000, outside 0..255"),
    ("make_bot", "calling 'make_bot'() raised RuntimeError: factory boom"),
    ("policy", "the policy 'policy' raised RuntimeError: policy boom"),
    (None, "cannot import module '{module}' (RuntimeError: import boom)"),
])
def test_a_graded_bot_or_policy_that_raises_is_one_line_error(capsys, tmp_path, monkeypatch, attr, named):
    """evaluate.py --agent mod:attr: a bot whose step or restart_at raises, a factory or policy that
    raises, a module raising on import were tracebacks with exit code 1; a bot returning 10**30 an
    OverflowError."""
    import evaluate

    if attr not in ("policy", None):
        from optional_parts import require_modules

        require_modules("OpenSpiel", "OpenSpiel extra", ("pyspiel",), 'pip install -e ".[openspiel]"')
    module = f"hostile_bots_{attr}"
    (tmp_path / f"{module}.py").write_text(_BAD_POLICIES if attr else "raise RuntimeError('import boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rc = evaluate.main(["--agent", f"{module}:{attr or 'x'}", "--games", "1", "--positions", "20", "--conversion", "0",
                        "--no-plots", "--no-progress", "--out", str(tmp_path / "o")])
    assert_one_line_error(rc, capsys.readouterr().err, named.format(module=module))


@pytest.mark.parametrize("module, argv, named", [
    ("highway_env.solver.__main__", ["prove", "--ray-address", "local", "--ray-runtime-env"], "--ray-runtime-env"),
    ("evaluate", ["--game", "blackpath", "--agent", "random", "--game-config"], "game config"),
    ("train", ["--game", "blackpath", "--game-config"], "game config"),
])
def test_json_nested_too_deeply_is_a_short_one_line_error(capsys, tmp_path, module, argv, named):
    """cli_args.json_object: '[' * 100000 was a RecursionError traceback from the JSON parser."""
    import importlib

    cli = importlib.import_module(module)
    try:
        rc = cli.main([*argv, "[" * 100_000, *(["--out-dir", str(tmp_path)] if module == "train" else [])])
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err
    assert_one_line_error(rc, err, named, "nested too deeply")
    assert len(err) < 400, err


def test_an_agent_spec_error_names_the_spec_once(capsys):
    """'bad agent spec 'perfect:foo': bad agent spec 'perfect:foo': ...': make_agent's message
    already named it."""
    import evaluate

    rc = evaluate.main(["--game", "examples.tictactoe_game:TicTacToeGame", "--agent", "perfect:foo", "--no-progress"])
    err = capsys.readouterr().err
    assert_one_line_error(rc, err, "bad agent spec 'perfect:foo'", "takes no tie-break")
    assert err.count("bad agent spec") == 1, err


def test_grading_a_bot_class_instead_of_a_bot_says_so():
    """benchmark.evaluate(MCTSBot), the class: it was called on observations as a policy, a
    TypeError from its constructor."""
    from highway_env.benchmark import evaluate

    class MyBot:
        def restart_at(self, state):
            pass

        def step(self, state):
            return 0

    with pytest.raises(TypeError, match="cannot evaluate the class 'MyBot': give an OpenSpiel bot, an instance"):
        evaluate(MyBot, games=0, positions=5, conversion=0, progress=False)


@pytest.mark.parametrize("command", ["prove", "first-moves"])
@pytest.mark.parametrize("flag, value, named", [("--ray-runtime-env", "none", "--ray-runtime-env 'none'"),
                                                ("--ray-node-wait", "600", "--ray-node-wait 600.0")])
def test_a_ray_setting_without_a_ray_address_is_one_line_error(capsys, tmp_path, command, flag, value, named):
    """On this machine a runtime_env or a node wait would be ignored: the user meant a Ray run and
    would not get one."""
    rc, _, err = run_cli(capsys, command, flag, value, "--out", str(tmp_path / "c.json"), "--no-progress")
    assert_one_line_error(rc, err, named, "add --ray-address")
    assert not (tmp_path / "c.json").exists()


def test_a_second_sigterm_does_not_cut_the_cleanup_of_the_first_short():
    """sigterm_as_interrupt (evaluate.py, the solver's commands) raised Terminated again for a
    second SIGTERM while the first one's cleanup ran inside the block (killing the worker pool,
    seconds), leaving it half done; the second is ignored, as train.py ignores it."""
    import os
    import signal

    from highway_env.cli_args import Terminated, sigterm_as_interrupt

    previous = signal.getsignal(signal.SIGTERM)
    cleaned = False
    with pytest.raises(Terminated):
        with sigterm_as_interrupt():
            try:
                os.kill(os.getpid(), signal.SIGTERM)  # its handler runs as os.kill returns
            finally:  # the cleanup, as run_tasks' pool.close(kill=True)
                os.kill(os.getpid(), signal.SIGTERM)
                cleaned = True
    assert cleaned and signal.getsignal(signal.SIGTERM) == previous
