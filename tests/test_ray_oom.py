"""A Ray task that its node's memory monitor kills each time it runs: Ray retried it for ever by
default (``task_oom_retries`` -1) and the run hung; now the retries are bounded
(highway_env.ray_tasks.OOM_RETRIES) and the run stops as one whose worker keeps dying does: one
line naming the task and the cause, latest.pt kept, exit 2, on a Ray instance the run starts and
on a cluster it joins alike. The monitor's threshold is lowered for the test's own Ray alone, a few
GiB above the memory in use, so the shared machine never comes near full."""

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from highway_env import ray_tasks
from highway_env.ray_tasks import OOM_RETRIES, RayCluster, RayClusterError

from ray_helpers import needs_ray  # noqa: E402
from test_ray_tasks import _FakeRay  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GiB = 2**30


class _OutOfMemoryError(Exception):
    pass


_OutOfMemoryError.__name__ = "OutOfMemoryError"  # as ray.exceptions names it


class _KilledForMemoryRay(_FakeRay):
    """A Ray not started yet, whose init records the task OOM retries it was started with, and
    whose tasks all end as killed by their node's memory monitor past their retries."""

    class exceptions(_FakeRay.exceptions):  # noqa: N801 - stands for the ray.exceptions module
        OutOfMemoryError = _OutOfMemoryError

    def is_initialized(self):
        return False

    def init(self, **kwargs):
        self.oom_retries = os.environ.get("RAY_task_oom_retries")

    def get(self, ref):
        raise _OutOfMemoryError("1 worker(s) were killed due to the node running low on memory.\nmore lines")


@pytest.fixture
def killed_for_memory(monkeypatch):
    fake = _KilledForMemoryRay(cpus=1, done=True)
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(ray_tasks, "check_reachable", lambda *a: None)
    monkeypatch.setattr(ray_tasks, "check_ray_head", lambda *a: None)
    monkeypatch.delenv("RAY_task_oom_retries", raising=False)  # restored afterwards, as set here
    return fake


def test_ray_starts_with_bounded_oom_retries_and_a_task_killed_past_them_is_one_line(killed_for_memory):
    cluster = RayCluster("auto", noun="self-play chunks", less_memory="fewer --workers")
    assert killed_for_memory.oom_retries == str(OOM_RETRIES)  # set before ray.init, where Ray reads it
    ref = cluster.task(lambda: None).remote()
    with pytest.raises(RayClusterError) as e:
        cluster.get(ref, "self-play chunk 3")
    assert str(e.value) == (f"self-play chunk 3 was killed for memory {OOM_RETRIES + 1} times: give the nodes more "
                            "memory or fewer --workers (last: 1 worker(s) were killed due to the node running low "
                            "on memory.)")


def test_oom_retries_set_before_the_run_are_kept_and_counted(killed_for_memory, monkeypatch):
    monkeypatch.setenv("RAY_task_oom_retries", "1")
    cluster = RayCluster("auto", noun="proof units", less_memory="a smaller --tt-bits")
    assert killed_for_memory.oom_retries == "1"
    with pytest.raises(RayClusterError, match=r"^the unit 7 was killed for memory 2 times: give the nodes more "
                                              r"memory or a smaller --tt-bits \(last: "):
        cluster.get(cluster.task(lambda: None).remote(), "the unit 7")


def _meminfo() -> tuple[int, int]:
    """(total, available) bytes of this machine, as Ray's memory monitor reads them."""
    fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return tuple(int(fields[k].split()[0]) * 1024 for k in ("MemTotal", "MemAvailable"))


def _memory_monitor_env() -> dict:
    """Ray settings that make its memory monitor kill a task once the machine uses 3 GiB more
    than now (a chunk of the first iteration, with torch, stays well below), checking every 100 ms."""
    total, available = _meminfo()
    if available < 6 * GiB:
        pytest.skip(f"{available / GiB:.1f} GiB of memory free, under the 6 GiB this test leaves room for")
    threshold = (total - available + 3 * GiB) / total
    return {"RAY_memory_usage_threshold": f"{threshold:.4f}", "RAY_memory_monitor_refresh_ms": "100"}


# train.py whose chunks, from the second iteration on, take memory until the node's monitor kills
# them; defined in __main__, so that Ray ships this function itself to the worker
_TRAIN_WITH_GREEDY_CHUNKS = textwrap.dedent("""
    import sys, time
    from pathlib import Path

    import agents.parallel as parallel
    import train

    def chunk_or_hog(task, weights):
        if task.seed[1] == 0:
            return parallel.run_chunk(task._replace(weights=weights))
        blocks = []
        while True:  # never more than half a GiB past the monitor's threshold, whatever else runs
            info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
            total, available = (int(info[k].split()[0]) * 1024 for k in ("MemTotal", "MemAvailable"))
            if total - available > {stop_at}:
                break
            blocks.append(b"x" * (64 << 20))
            time.sleep(0.01)
        time.sleep(20)
        raise MemoryError("the memory monitor did not kill this chunk")

    parallel._run_chunk_with = chunk_or_hog
    sys.exit(train.main(sys.argv[1:]))
""")


@needs_ray
@pytest.mark.slow
@pytest.mark.parametrize("where", ["local", "joined"])
def test_train_whose_chunk_is_killed_for_memory_each_time_stops(tmp_path, monkeypatch, where):
    """train.py on a Ray instance it starts, or on a cluster it joins (whose raylets have Ray's
    default, infinite OOM retries: the driver decides): the chunks of its second iteration are
    killed for memory each time; one line, latest.pt of the first iteration kept, exit 2. Before,
    Ray retried them for ever (the driver is ended here after 240 s)."""
    monitor = _memory_monitor_env()
    monkeypatch.delenv("RAY_task_oom_retries", raising=False)
    stop_at = int(float(monitor["RAY_memory_usage_threshold"]) * _meminfo()[0] + GiB // 2)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_task_oom_retry_delay_base_ms": "100"}
    cluster = None
    if where == "local":
        env.update(monitor)
        address = "local"
    else:
        from ray.cluster_utils import Cluster

        for name, value in monitor.items():  # for the raylet the cluster starts here
            monkeypatch.setenv(name, value)
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        address = cluster.address
    flags = ["--games-per-iter", "6", "--selfplay-batch", "6", "--simulations", "6", "--max-considered", "4",
             "--min-replay", "40", "--batch-size", "32", "--hidden", "32", "--layers", "1", "--eval-every", "0",
             "--checkpoint-every", "1", "--learner-threads", "1", "--no-progress", "--no-tensorboard"]
    driver = subprocess.Popen([sys.executable, "-c", _TRAIN_WITH_GREEDY_CHUNKS.replace("{stop_at}", str(stop_at)),
                               "--ray-address", address, "--workers", "1", "--iterations", "5", "--out-dir",
                               str(tmp_path), "--run", "r", *flags], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        _, err = driver.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        driver.send_signal(signal.SIGTERM)  # train.py saves and ends its Ray instance
        _, err = driver.communicate(timeout=60)
        pytest.fail(f"train.py still running after 240 s, its chunk retried for ever: {err[-2000:]}")
    finally:
        if driver.poll() is None:
            driver.kill()
        if cluster is not None:
            cluster.shutdown()
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert driver.returncode == 2 and len(lines) == 1, err[-3000:]
    assert re.match(rf"error: self-play chunk \d+ was killed for memory {OOM_RETRIES + 1} times: give the nodes "
                    r"more memory or fewer --workers \(last: 1 worker\(s\) were killed due to the node running low "
                    r"on memory", lines[0]), lines[0]
    assert (tmp_path / "r" / "latest.pt").exists() and f"saved {tmp_path / 'r' / 'latest.pt'} at iteration 1" in err
