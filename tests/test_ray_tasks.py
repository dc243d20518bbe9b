"""Work on a Ray cluster (highway_env.ray_tasks): the proof that stops instead of hanging when the
cluster has no CPU node left, a task lost too often named, and evaluate.py on a cluster giving the
summary of a local run, also when a node is lost mid-evaluation."""

import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

import evaluate
from highway_env.core import Board
from highway_env.ray_tasks import RayClusterError, shipped_runtime_env
from highway_env.solver.prove import ProofConfig, prove

from ray_helpers import (descends_from, free_port, local_cluster, needs_ray, on_first_process,  # noqa: E402
                         parent_pid, runs_task)
from test_evaluate import small_set  # noqa: E402,F401  (a fixture)

ROOT = Path(__file__).resolve().parents[1]


class _Lost(Exception):
    pass


class _FakeRay:
    """The calls a pool makes, answered as by a joined cluster whose tasks never finish and which
    has no CPU (``cpus=0``), or whose tasks are all lost (``get`` raises WorkerCrashedError)."""

    class exceptions:  # noqa: N801 - stands for the ray.exceptions module
        WorkerCrashedError = NodeDiedError = ObjectLostError = OutOfMemoryError = LocalRayletDiedError = _Lost

    def __init__(self, cpus=0, done=False, memory=1e12):
        self.cpus, self.done, self.memory, self.cancelled = cpus, done, memory, []

    def is_initialized(self):
        return True

    def remote(self, **options):
        outer = self

        class Remote:
            def remote(self, *args):
                return ("ref", len(outer.cancelled), args)

        return lambda fn: Remote()

    def wait(self, refs, num_returns, timeout):
        time.sleep(0.01)
        return (list(refs), []) if self.done else ([], list(refs))

    def cluster_resources(self):
        return {"CPU": self.cpus}

    def nodes(self):
        return [{"Alive": True, "Resources": {"CPU": self.cpus, "memory": self.memory}},
                {"Alive": False, "Resources": {"CPU": 8, "memory": 1e12}}]  # a node lost

    def get(self, ref):
        raise _Lost("The worker died unexpectedly while executing this task.\nmore lines")

    def cancel(self, ref, force=False):
        self.cancelled.append(ref)


def test_the_ray_module_loads_neither_ray_nor_torch():
    from test_imports import _run

    r = _run("import sys, highway_env.ray_tasks, highway_env.solver.prove; "
             "assert not {'ray', 'torch'} & set(sys.modules), 'ray or torch was imported'")
    assert r.returncode == 0, r.stderr


def _root() -> Board:
    """A position with two numbers placed, A to move: a proof of a few units."""
    return Board().apply(0).apply(17)


def test_proof_on_a_cluster_without_cpu_stops_with_an_error(monkeypatch):
    """The proof's pool waited on ray.wait without a timeout: with every CPU node gone it hung."""
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(cpus=0))
    t0 = time.time()
    with pytest.raises(RayClusterError, match=r"no Ray node with a CPU has been left for 0.2 s \(\d+ proof units "
                                              r"waiting\); add nodes to the cluster, give an autoscaler longer to add "
                                              r"them with --ray-node-wait SECONDS, or prove without --ray-addr"):
        prove(ProofConfig(ray_address="auto", root=_root(), ray_no_cpu_timeout=0.2), progress=False)
    assert time.time() - t0 < 5


def test_units_larger_than_every_node_stop_the_proof_with_an_error(monkeypatch):
    """Ray waits for ever for a node with the memory a task asks for (its table here)."""
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(cpus=4, memory=2**30))
    with pytest.raises(RayClusterError, match=r"no Ray node has 1 CPU and 1.51 GiB of memory, what each of the \d+ "
                                              r"proof units waiting asks for, for 0.2 s; add larger nodes, give an "
                                              r"autoscaler longer to add them with --ray-node-wait SECONDS, or "):
        prove(ProofConfig(ray_address="auto", root=_root(), tt_bits=25, ray_no_cpu_timeout=0.2), progress=False)


def test_a_unit_lost_more_often_than_its_retries_is_named(monkeypatch):
    """Ray's WorkerCrashedError, after the retries, was raised raw; it now names the unit."""
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(cpus=1, done=True))
    with pytest.raises(RayClusterError, match=r"^the unit [\d,]+ was lost with its Ray worker or node more often "
                                              r"than its retries allow \(_Lost: The worker died unexpectedly "
                                              r"while executing this task.\);"):
        prove(ProofConfig(ray_address="auto", root=_root()), progress=False)


def _eval_argv(out, positions_file, *extra):
    return ["--agent", "greedy", "--positions", "40", "--games", "1", "--rr-games", "0", "--conversion", "0",
            "--positions-file", str(positions_file), "--positions-v2", "none", "--store", "none",
            "--name", "same", "--out", str(out), "--no-plots", "--no-progress", "--json", *extra]


@pytest.mark.parametrize("extra, named", [(["--ray-address", "local", "--ray-runtime-env", "[1]"],
                                           "--ray-runtime-env"),
                                          (["--ray-runtime-env", "{}"], "add --ray-address"),
                                          (["--ray-node-wait", "600"], "--ray-node-wait 600.0 is for runs on Ray"),
                                          (["--game", "jumping", "--ray-address", "local"], "--game highway")])
def test_evaluate_bad_ray_options_are_one_line_errors(tmp_path, small_set, capsys, extra, named):  # noqa: F811
    assert evaluate.main(_eval_argv(tmp_path / "e", small_set, *extra)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err, err


class _TaskError(Exception):
    """Stands for ray.exceptions.RayTaskError: the exception a task raised on its node (``cause``),
    with the node's traceback in its message."""

    def __init__(self, cause):
        super().__init__(f"ray::run_shipped() (pid=1, ip=10.0.0.2)\nTraceback (most recent call last):\n"
                         f"  File \"store.py\", line 1\n{type(cause).__name__}: {cause}")
        self.cause = cause


class _FailingRay(_FakeRay):
    """A joined cluster on which every task's own code raises (a node that cannot create the store)."""

    class exceptions(_FakeRay.exceptions):  # noqa: N801
        RayTaskError = _TaskError

    def put(self, obj):
        return ("object", len(obj))

    def remote(self, **options):
        return lambda fn: type("Remote", (), {"remote": lambda self, *args: object()})()

    def get(self, ref):
        raise _TaskError(PermissionError(13, "Permission denied", "/node/only/store.sqlite"))


def test_evaluate_task_failing_on_its_node_is_a_one_line_error(tmp_path, small_set, capsys, monkeypatch):  # noqa: F811
    """A task whose own code failed on a Ray node (a --store path the node cannot create) ended
    evaluate.py with Ray's traceback; now one line names the task and the node's error."""
    monkeypatch.setitem(sys.modules, "ray", _FailingRay(cpus=1, done=True))
    out = tmp_path / "e"
    rc = evaluate.main(_eval_argv(out, small_set, "--games", "0", "--ray-address", "auto"))
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith("error: evaluation task moves-greedy-") and (
        "failed on its Ray node: PermissionError: [Errno 13] Permission denied: '/node/only/store.sqlite'" in err)
    assert "Traceback" not in err and f"kept in {out}/tasks" in err


class _NodeWithoutCode(_FailingRay):
    """A joined cluster whose nodes cannot import what a task needs (--ray-runtime-env none on nodes
    without the packages), or whose task has a bug of its own (``error``)."""

    def __init__(self, error):
        super().__init__(cpus=1, done=True)
        self.error = error

    def get(self, ref):
        raise _TaskError(self.error)


@pytest.mark.parametrize("error", [ModuleNotFoundError("No module named 'agents'"),
                                   ValueError("'mygame:Game': cannot import module 'mygame' (ModuleNotFoundError: "
                                              "No module named 'mygame')")])
def test_code_missing_on_a_node_is_one_line_saying_how_to_ship_it(monkeypatch, error):
    """train.py --ray-runtime-env none on nodes without the code: a 52-line traceback of the node's
    import error, exit code 1."""
    from agents.parallel import RayPool
    from highway_env.ray_tasks import RayTaskFailed

    monkeypatch.setitem(sys.modules, "ray", _NodeWithoutCode(error))
    pool = RayPool("auto")
    pool._refs = ["chunk0"]
    with pytest.raises(RayTaskFailed, match=rf"^self-play chunk 0 failed on its Ray node: {type(error).__name__}: "
                                            r".*No module named .*; the node lacks code the task imports: leave "
                                            r"--ray-runtime-env out, or give a JSON object rather than 'none', to "
                                            r"ship the packages and the game's module, or install them on every node$"):
        pool.collect()
    monkeypatch.setitem(sys.modules, "ray", _NodeWithoutCode(ZeroDivisionError("a bug in the chunk")))
    pool = RayPool("auto")
    pool._refs = ["chunk0"]
    with pytest.raises(_TaskError):  # the task's own bug: raised with the node's traceback
        pool.collect()


def test_the_node_wait_of_each_command_reaches_its_cluster(tmp_path, small_set, monkeypatch, capsys):  # noqa: F811
    """--ray-node-wait (an autoscaler may take longer than the 2-minute default to add nodes) on a
    cluster without CPU: evaluate, prove and train stop after that many seconds."""
    import train
    from agents.parallel import make_pool

    from highway_env.solver.__main__ import main as solver_main

    monkeypatch.setitem(sys.modules, "ray", _FailingRay(cpus=0))  # its tasks never finish: no CPU
    assert evaluate.main(_eval_argv(tmp_path / "e", small_set, "--ray-address", "auto", "--ray-node-wait", "0.3")) == 2
    assert "no Ray node with a CPU has been left for 0.3 s" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", _FakeRay(cpus=0))
    assert solver_main(["prove", "--ray-address", "auto", "--ray-node-wait", "0.4", "--out", str(tmp_path / "c.json"),
                        "--estimates", "none", "--no-progress"]) == 2
    assert "no Ray node with a CPU has been left for 0.4 s" in capsys.readouterr().err
    config = train.config_from_args(train.build_parser().parse_args(["--ray-address", "auto", "--ray-node-wait", "0.5"]))
    pool = make_pool(1, config.ray_address, {}, (), config.ray_node_wait)
    with pytest.raises(RayClusterError, match="no Ray node with a CPU has been left for 0.5 s"):
        pool._cluster.wait([("ref", 0, ())])


def test_a_train_node_wait_needs_a_ray_address():
    from agents.config import TrainConfig
    from agents.network import ConfigError

    TrainConfig(ray_address="auto", ray_node_wait=600).validate()
    with pytest.raises(ConfigError, match="ray_node_wait 600 is for runs on Ray: add ray_address"):
        TrainConfig(ray_node_wait=600).validate()
    with pytest.raises(ConfigError, match=r"ray_node_wait must be in \(0, "):
        TrainConfig(ray_address="auto", ray_node_wait=0).validate()


@needs_ray
def test_evaluate_where_no_ray_head_answers_is_a_one_line_error(tmp_path, small_set, capsys):  # noqa: F811
    port = free_port()
    t0 = time.time()
    assert evaluate.main(_eval_argv(tmp_path / "e", small_set, "--ray-address", f"127.0.0.1:{port}")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--ray-address '127.0.0.1:{port}'" in err and "no Ray head answers" in err
    assert time.time() - t0 < 30 and not (tmp_path / "e" / "tasks").exists()  # before any work


def _summary(capsys) -> dict:
    doc = json.loads(capsys.readouterr().out)
    doc.pop("wall_seconds")
    return doc


@pytest.fixture
def tiny_az(tmp_path):
    """An az: agent from a checkpoint file of its own (a copy of the shipped network), raw policy."""
    path = tmp_path / "ckpt" / "tiny.pt"
    path.parent.mkdir()
    shutil.copy(ROOT / "agents" / "pretrained" / "highway_az.pt", path)
    return path


@needs_ray
@pytest.mark.slow
def test_evaluate_on_a_two_node_cluster_gives_the_local_summary(tmp_path, small_set, tiny_az, capsys):  # noqa: F811
    """Each task is seeded: on two Ray nodes the summary is the one of local processes; the
    checkpoint and the position set reach the tasks as node-local copies named by content hash."""
    extra = ("--agent", f"az:{tiny_az}:0", "--rr-games", "2", "--conversion", "2", "--workers", "2")
    assert evaluate.main(_eval_argv(tmp_path / "local", small_set, *extra)) == 0
    local = _summary(capsys)
    with local_cluster() as (cluster, node, raylet):
        assert evaluate.main(_eval_argv(tmp_path / "ray", small_set, *extra, "--ray-address", cluster.address)) == 0
        on_ray = _summary(capsys)
    assert on_ray == local
    assert sorted(p.name for p in (tmp_path / "ray" / "tasks").iterdir()) == sorted(
        p.name for p in (tmp_path / "local" / "tasks").iterdir())
    for f in (tiny_az, small_set):
        sha = hashlib.sha256(f.read_bytes()).hexdigest()
        assert (Path(tempfile.gettempdir()) / "highway_env-ray-files" / sha / f.name).read_bytes() == f.read_bytes()


@needs_ray
@pytest.mark.slow
def test_evaluate_with_a_node_lost_mid_run_gives_the_local_summary(tmp_path, small_set, capsys):  # noqa: F811
    """The second node is killed while it runs a task: its tasks run again on the head, and the
    summary is the one of an undisturbed local run."""
    extra = ("--games", "2", "--rr-games", "0", "--agent", "random", "--chunk", "1", "--workers", "2")
    assert evaluate.main(_eval_argv(tmp_path / "local", small_set, *extra)) == 0
    local = _summary(capsys)
    with local_cluster() as (cluster, node, raylet):
        removed = []
        remover = on_first_process(lambda pid, cmd: runs_task("run_shipped")(pid, cmd) and parent_pid(pid) == raylet,
                                   lambda pid: cluster.remove_node(node, allow_graceful=False), removed)
        assert evaluate.main(_eval_argv(tmp_path / "ray", small_set, *extra, "--ray-address", cluster.address)) == 0
        remover.join()
        on_ray = _summary(capsys)
    assert removed and on_ray == local


@needs_ray
@pytest.mark.slow
def test_proof_stops_when_the_cluster_loses_its_only_cpu_node(tmp_path):
    """A head without CPUs and one node with one: the node is killed while it solves, the unit
    waits for a CPU that never comes, and the proof stops with an error naming the wait."""
    with local_cluster(head_cpus=0) as (cluster, node, raylet):
        removed = []
        remover = on_first_process(lambda pid, cmd: runs_task("solve_task")(pid, cmd) and parent_pid(pid) == raylet,
                                   lambda pid: cluster.remove_node(node, allow_graceful=False), removed)
        t0 = time.time()
        with pytest.raises(RayClusterError, match=r"no Ray node with a CPU has been left for 1 s \(\d+ proof units"):
            prove(ProofConfig(ray_address=cluster.address, tt_bits=16, ray_no_cpu_timeout=1), progress=False)
        remover.join()
        assert removed and time.time() - t0 < 120


@pytest.mark.slow
def test_the_position_store_changes_no_result(tmp_path, small_set, capsys):  # noqa: F811
    """On Ray each node opens its own store: that is sound only because the store is a cache. The
    summary without a store, with an empty one and with the one the first run filled is the same,
    also where early moves of the perfect player are budgeted (unproven)."""
    extra = ("--agent", "random", "--games", "2", "--conversion", "3", "--workers", "2",  # fresh processes
             "--perfect-exact-from-ply", "8", "--perfect-early-budget-nodes", "20000")
    store = tmp_path / "solved.sqlite"
    summaries = []
    for run, where in (("none", "none"), ("cold", store), ("warm", store)):
        assert evaluate.main([*_eval_argv(tmp_path / run, small_set, *extra), "--store", str(where)]) == 0
        summaries.append(_summary(capsys))
    assert summaries[0] == summaries[1] == summaries[2] and summaries[0]["perfect_moves"] > 0
    import sqlite3

    assert sqlite3.connect(store).execute("SELECT count(*) FROM positions").fetchone()[0] > 100


def test_a_users_game_module_is_shipped_beside_the_packages():
    import highway_env

    base = shipped_runtime_env({})["py_modules"]
    assert shipped_runtime_env({}, ("highway_env.az_game",))["py_modules"] == base  # already shipped
    assert shipped_runtime_env({}, ("numpy",))["py_modules"] == base  # installed: a dependency, not shipped
    game = shipped_runtime_env({}, ("examples.tictactoe_game",))["py_modules"]
    assert game == base + [str(Path(highway_env.__file__).resolve().parents[1] / "examples")]
    assert shipped_runtime_env(None, ("examples.tictactoe_game",)) is None  # 'none': nothing shipped


def _decisions(certificate: dict) -> dict:
    """What a proof decides: the first move, and each B reply's value and A's answer (nodes and
    seconds depend on which worker's table a unit met, so they differ between runs)."""
    return {"first_move": certificate["first_move"],
            "abandoned": [t["action"] for t in certificate["abandoned_first_moves"]],
            "replies": [(r["action"], r["orbit"], r["holds"], r.get("a_answer")) for r in certificate["replies"]]}


@needs_ray
@pytest.mark.slow
def test_proof_with_a_node_lost_mid_run_decides_as_a_local_run(tmp_path):
    """Two nodes of one CPU; the second is removed while it solves a unit: its units run again on
    the head and the certificate decides every reply as a local proof does."""
    config = dict(root=_root(), tt_bits=16, unit_nodes=20_000)
    local = prove(ProofConfig(workers=2, **config), progress=False)
    with local_cluster() as (cluster, node, raylet):
        removed = []
        remover = on_first_process(lambda pid, cmd: runs_task("solve_task")(pid, cmd) and parent_pid(pid) == raylet,
                                   lambda pid: cluster.remove_node(node, allow_graceful=False), removed)
        on_ray = prove(ProofConfig(ray_address=cluster.address, **config), progress=False)
        remover.join()
    assert removed and _decisions(on_ray) == _decisions(local)


def test_chunks_that_leave_cluster_cpus_idle_are_noted(monkeypatch):
    """--workers sizes the chunks (1 by default: 2 chunks of 128 games): on a 64-CPU cluster 62 CPUs
    idled without a word."""
    from agents.parallel import RayPool

    monkeypatch.setitem(sys.modules, "ray", _FakeRay(cpus=64))
    assert RayPool("auto").idle_cpus_note(2) == ("note: 2 self-play chunks an iteration on a Ray cluster of 64 CPUs "
                                                 "leave 62 idle; --workers 64 plays one chunk per CPU (other chunks, "
                                                 "so other games)")
    assert RayPool("auto").idle_cpus_note(64) is None


@needs_ray
@pytest.mark.slow
def test_ctrl_c_leaves_no_task_running_on_the_cluster(tmp_path, small_set):  # noqa: F811
    """evaluate.py interrupted while its tasks run on a 2-node cluster: exit 130, and no worker of
    its tasks is left running (Ray ends a job's workers with its driver; nothing calls ray.cancel)."""
    import os
    import signal
    import subprocess

    import psutil

    argv = _eval_argv(tmp_path / "e", small_set, "--agent", "mcts:300", "--games", "4", "--chunk", "1")
    with local_cluster() as (cluster, node, raylet):
        driver = subprocess.Popen([sys.executable, "evaluate.py", *argv, "--ray-address", cluster.address], cwd=ROOT,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        running = []
        on_first_process(lambda pid, cmd: runs_task("run_shipped")(pid, cmd) and descends_from(pid, os.getpid()),
                         lambda pid: driver.send_signal(signal.SIGINT), running).join()
        _, err = driver.communicate(timeout=120)
        assert running and driver.returncode == 130 and "interrupted: finished tasks are kept" in err


        def tasks_left() -> list[int]:  # on this test's cluster only: other runs may share the machine
            left = []
            for p in psutil.process_iter(["cmdline"]):
                cmd = " ".join(p.info["cmdline"] or []).encode()
                if runs_task("run_shipped")(p.pid, cmd) and descends_from(p.pid, os.getpid()):
                    left.append(p.pid)
            return left

        deadline = time.time() + 10
        while tasks_left() and time.time() < deadline:
            time.sleep(0.5)
        assert not tasks_left(), "a task of the interrupted run still runs on the cluster"
