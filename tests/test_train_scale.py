"""Training at scale (issue 13): the learner's threads and device, the evaluation beside training,
Ray with its runtime_env, resources and retries, and a Ray node lost mid-run."""

import csv
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import torch

from agents.background_eval import BackgroundEvaluator, evaluate_net
from agents.checkpoint import load_checkpoint
from agents.config import TrainConfig
from agents.network import ConfigError, build_network
from agents.trainer import Trainer

from ray_helpers import (descends_from, free_port, local_cluster, needs_ray,  # noqa: E402
                         on_first_process, parent_pid, ray, runs_task)
from test_train import _same, tiny  # noqa: E402  (pytest puts tests/ on the path)

ROOT = Path(__file__).resolve().parents[1]


def _eval_columns(run_dir: Path) -> list[dict]:
    with open(run_dir / "log.csv", newline="") as f:
        return [{k: v for k, v in r.items() if k.startswith("eval_") and v} for r in csv.DictReader(f)]


# ------------------------------------------------------------------ the learner

def test_learner_threads_do_not_change_the_weights(tmp_path):
    from agents.selfplay import run_chunk

    a = Trainer(tiny(tmp_path, "one"))
    samples = run_chunk(a._tasks(0, a.actor_weights)[0]._replace(games=4)).samples
    b = Trainer(tiny(tmp_path, "two", learner_threads=2))
    assert torch.get_num_threads() == 2
    for t in (a, b):
        t.replay.add(samples)
        torch.set_num_threads(t.cfg.learner_thread_count())
        t.train_steps(6)
    assert _same(a, b)


def test_learner_thread_count_leaves_cores_to_the_workers(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert TrainConfig(workers=4, eval_every=10).learner_thread_count() == 8  # capped
    assert TrainConfig(workers=12, eval_every=10).learner_thread_count() == 3  # 16 - 12 - evaluator
    assert TrainConfig(workers=12, eval_every=0).learner_thread_count() == 4
    assert TrainConfig(workers=12, eval_every=10, eval_background=False).learner_thread_count() == 4
    assert TrainConfig(workers=12, ray_address="auto").learner_thread_count() == 8  # workers elsewhere
    assert TrainConfig(workers=64).learner_thread_count() == 1
    assert TrainConfig(workers=64, learner_threads=5).learner_thread_count() == 5
    with pytest.raises(ConfigError, match="learner_threads"):
        TrainConfig(learner_threads=-1).validate()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error where no GPU is seen")
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_cuda_asked_for_but_absent_names_the_value(tmp_path, device):
    with pytest.raises(ConfigError, match=f"device '{device}'.*no CUDA GPU"):
        Trainer(tiny(tmp_path, device=device))
    with pytest.raises(ConfigError, match="'gpu'"):
        tiny(tmp_path, device="gpu").validate()
    with pytest.raises(ConfigError, match="'cuda:x'"):
        Trainer(tiny(tmp_path, device="cuda:x"))


# ------------------------------------------------------------------ the evaluation beside training

def test_background_evaluation_gives_the_in_loop_results(tmp_path):
    """The learner does not wait for the evaluation, yet the log rows, best.pt and the weights are
    those of the in-loop run."""
    a = Trainer(tiny(tmp_path, "inline"))
    a.run()
    b = Trainer(tiny(tmp_path, "beside", eval_background=True))
    out = b.run()
    _same_run(tmp_path, a, b, out)


def _same_run(tmp_path, a, b, out):
    assert _same(a, b) and out["eval"] == a.last_eval and b.best_score == a.best_score
    rows = _eval_columns(tmp_path / "beside")
    assert rows == _eval_columns(tmp_path / "inline") and rows[1] and rows[3] and not rows[0]
    best_a, best_b = (load_checkpoint(tmp_path / r / "best.pt")["model"] for r in ("inline", "beside"))
    assert all(torch.equal(best_a[k], best_b[k]) for k in best_a)
    assert load_checkpoint(tmp_path / "beside" / "latest.pt")["eval_pending"] == []


@pytest.mark.slow
def test_evaluation_pending_at_a_checkpoint_runs_after_resume(tmp_path):
    a = Trainer(tiny(tmp_path, "inline"))
    a.run()
    b = Trainer(tiny(tmp_path, "beside", eval_background=True))
    b.run(stop_after=2)
    saved = load_checkpoint(tmp_path / "beside" / "latest.pt")
    assert [i for i, _ in saved["eval_pending"]] == [2]  # submitted just before the save
    b = Trainer(tiny(tmp_path, "beside", eval_background=True), resume=True)
    _same_run(tmp_path, a, b, b.run())


def test_killed_evaluation_process_is_restarted_with_the_same_result(tmp_path):
    cfg = tiny(tmp_path, eval_games=2, eval_opponents="random")
    t = Trainer(cfg)
    weights = {k: v.numpy().copy() for k, v in t.net.state_dict().items()}
    expected = evaluate_net(cfg, t.game, t.net, cfg.eval_agents(), 3)
    ev = BackgroundEvaluator(cfg)
    try:
        ev.submit(3, weights)
        os.kill(ev._proc.pid, signal.SIGKILL)
        assert ev.wait() == [(3, expected)] and ev.restarts == 1 and ev.pending() == {}
    finally:
        ev.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stall watch reads /proc")
def test_stopped_evaluation_process_is_restarted_and_never_blocks_submit(tmp_path):
    """Stopped with SIGSTOP, the evaluation process would block submit() once its pipe is full
    and wait() for ever; it is killed and restarted, and evaluates what was pending."""
    cfg = tiny(tmp_path, eval_games=2, eval_opponents="random")
    t = Trainer(cfg)
    weights = {k: v.numpy().copy() for k, v in t.net.state_dict().items()}
    expected = [(i, evaluate_net(cfg, t.game, t.net, cfg.eval_agents(), i)) for i in (3, 4)]
    ev = BackgroundEvaluator(cfg, stall_seconds=2.0)
    try:
        ev.submit(3, weights)
        os.kill(ev._proc.pid, signal.SIGSTOP)
        ev.submit(4, weights)  # more than a pipe holds: returns once the stopped process is killed
        assert ev.wait() == expected and ev.stalled >= 1 and ev.restarts >= 1 and ev.pending() == {}
    finally:
        ev.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stall watch reads /proc")
def test_an_evaluation_process_whose_answer_waits_unread_is_not_taken_for_stopped(tmp_path):
    """Its answer sent, the process idles until the trainer's next poll, which may come long after
    (a long iteration): that is no stop, and nothing is evaluated twice."""
    import multiprocessing.connection

    cfg = tiny(tmp_path, eval_games=2, eval_opponents="random")
    t = Trainer(cfg)
    weights = {k: v.numpy().copy() for k, v in t.net.state_dict().items()}
    ev = BackgroundEvaluator(cfg, stall_seconds=1.0)
    try:
        ev.submit(3, weights)
        assert multiprocessing.connection.wait([ev._conn], timeout=120)  # answered, not read
        time.sleep(3.0)
        assert ev.stalled == 0 and [i for i, _ in ev.wait()] == [3] and ev.restarts == 0
    finally:
        ev.close()


# ------------------------------------------------------------------ Ray

def test_ray_runtime_env_ships_the_packages_and_sizes_the_tasks(tmp_path):
    from agents.parallel import CHUNK_TASK_MEMORY, shipped_runtime_env

    env = shipped_runtime_env({})
    assert [Path(p).name for p in env["py_modules"]] == ["highway_env", "agents"]
    assert all((Path(p) / "__init__.py").is_file() for p in env["py_modules"])
    assert shipped_runtime_env({"pip": ["numba"]})["pip"] == ["numba"]
    assert shipped_runtime_env(None) is None
    assert TrainConfig(ray_runtime_env="none", ray_address="auto").ray_runtime_env_dict() is None
    assert TrainConfig(ray_runtime_env='{"env_vars": {"A": "1"}}',
                       ray_address="auto").ray_runtime_env_dict() == {"env_vars": {"A": "1"}}
    for bad in ("[1]", "{oops"):
        with pytest.raises(ConfigError, match="ray_runtime_env"):
            TrainConfig(ray_runtime_env=bad, ray_address="auto").validate()
    # on this machine a runtime_env would be ignored: an error, not silence
    with pytest.raises(ConfigError, match="ray_runtime_env 'none' is for runs on Ray: add ray_address"):
        TrainConfig(ray_runtime_env="none").validate()
    assert 256 * 2**20 <= CHUNK_TASK_MEMORY <= 4 * 2**30


@needs_ray
def test_ray_address_that_does_not_answer_is_a_clear_error(tmp_path, capsys):
    import train

    port = free_port()
    rc = train.main(["--ray-address", f"127.0.0.1:{port}", "--iterations", "1", "--out-dir", str(tmp_path),
                     "--no-progress", "--no-tensorboard", "--eval-every", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and f"127.0.0.1:{port}" in err and "no Ray head" in err and not ray.is_initialized()


def test_ray_with_no_cpu_left_is_a_clear_error_not_a_hang(monkeypatch):
    """collect() on a cluster whose nodes with CPUs are all gone raises after the timeout."""
    import sys

    from agents.parallel import RayPool

    class NoNodeLeft:  # the few calls the pool makes, answered as by a joined cluster without CPUs
        def is_initialized(self):
            return True

        def remote(self, **options):
            return lambda fn: fn

        def wait(self, refs, num_returns, timeout):
            time.sleep(0.01)
            return [], list(refs)

        def cluster_resources(self):
            return {"memory": 1e9}

    monkeypatch.setitem(sys.modules, "ray", NoNodeLeft())
    pool = RayPool("auto", no_cpu_timeout=0.2)
    pool._refs = ["chunk0", "chunk1"]
    t0 = time.time()
    with pytest.raises(RuntimeError, match=r"no Ray node with a CPU .*for 0.2 s \(2 self-play chunks waiting"):
        pool.collect()
    assert time.time() - t0 < 5


_playing = runs_task("_run_chunk_with")


@needs_ray
def test_ray_worker_killed_mid_chunk_is_retried_with_the_same_weights(tmp_path):
    """On local Ray with train.py's runtime_env: a worker process killed while it plays a chunk
    has its task retried, and training ends with the weights of a run without Ray; the workers
    import the packages shipped as py_modules (a node without them installed could join)."""
    from agents.parallel import shipped_runtime_env

    a = Trainer(tiny(tmp_path, "calm", iterations=2, eval_every=0))
    a.run()
    ray.init(address="local", num_cpus=1, include_dashboard=False, runtime_env=shipped_runtime_env({}))
    try:
        b = Trainer(tiny(tmp_path, "ray", iterations=2, eval_every=0, workers=1, ray_address="local"))
        killed = []
        killer = on_first_process(lambda pid, cmd: _playing(pid, cmd) and descends_from(pid, os.getpid()),
                                  lambda pid: os.kill(pid, signal.SIGKILL), killed)
        b.run()
        killer.join()
        assert killed and b.counters["iteration"] == 2 and b.counters["games"] == a.counters["games"]
        assert _same(a, b)

        def shipped_package_dirs() -> list[str]:  # defined here: Ray sends it by value
            import os
            import sys

            return [p for p in sys.path if "runtime_resources" in p and any(
                os.path.isfile(os.path.join(p, pkg, "__init__.py")) for pkg in ("agents", "highway_env"))]

        assert len(ray.get(ray.remote(shipped_package_dirs).remote())) == 2
    finally:
        ray.shutdown()


@needs_ray
@pytest.mark.slow
def test_ray_node_lost_mid_run_training_finishes_with_every_game(tmp_path):
    """A 2-node Ray cluster on this machine; the second node is killed while it plays: the run ends
    with every iteration's games and the weights of an undisturbed run."""
    a = Trainer(tiny(tmp_path, "calm", iterations=3, eval_every=0, workers=2))
    a.run()
    with local_cluster() as (cluster, node, raylet):
        b = Trainer(tiny(tmp_path, "lost", iterations=3, eval_every=0, workers=2,
                         ray_address=cluster.address))
        removed = []
        remover = on_first_process(lambda pid, cmd: _playing(pid, cmd) and parent_pid(pid) == raylet,
                                   lambda pid: cluster.remove_node(node, allow_graceful=False), removed)
        b.run()
        remover.join()
        assert removed and b.counters["iteration"] == 3
        assert b.counters["games"] == a.counters["games"] == 3 * 12
        assert _same(a, b)
