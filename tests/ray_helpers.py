"""Helpers shared by the Ray tests: a cluster of several nodes on this machine, and a watcher that
acts on the first process a task runs in (to kill it, or to remove its node)."""

import contextlib
import threading
import time
from pathlib import Path

from optional_parts import needs_ray  # noqa: F401  (the Ray tests' marker, imported from here)

try:
    import ray
except ImportError:  # the tests that use it are marked needs_ray: skipped, or failed under CI=true
    ray = None


def on_first_process(match, action, done: list, deadline_s=240.0) -> threading.Thread:
    """A thread that calls ``action(pid)`` once, on the first process for which ``match(pid,
    cmdline)`` holds, and appends the pid to ``done``."""
    def run():
        deadline = time.time() + deadline_s
        while time.time() < deadline:
            for d in Path("/proc").iterdir():
                try:
                    if d.name.isdigit() and match(int(d.name), (d / "cmdline").read_bytes()):
                        action(int(d.name))
                        done.append(int(d.name))
                        return
                except (OSError, ProcessLookupError):  # gone meanwhile
                    continue
            time.sleep(0.02)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def parent_pid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether ``ancestor`` is a parent, grandparent... of ``pid`` (a Ray instance this test started
    has its processes below the test's own, so a watcher never touches another run's workers)."""
    while pid > 1:
        try:
            pid = parent_pid(pid)
        except (OSError, ValueError, IndexError):
            return False
        if pid == ancestor:
            return True
    return False


def runs_task(name: str):
    """A ``match`` for :func:`on_first_process`: a Ray worker running the task function ``name``
    (Ray titles a worker by the task it runs)."""
    return lambda pid, cmd: f"ray::{name}".encode() in cmd


@contextlib.contextmanager
def local_cluster(head_cpus: int = 1, node_cpus: int = 1):
    """A Ray cluster of a head with ``head_cpus`` CPUs and one more node with ``node_cpus`` on this
    machine, yielded as (cluster, that node, the pid of its raylet); shut down afterwards, the
    driver's connection too. A lost node is noticed within about a second (Ray's default takes 15 s)."""
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": head_cpus, "_system_config": {"health_check_initial_delay_ms": 0, "health_check_period_ms": 200,
                                                  "health_check_timeout_ms": 200, "health_check_failure_threshold": 3}})
    try:
        node = cluster.add_node(num_cpus=node_cpus)
        cluster.wait_for_nodes()
        yield cluster, node, node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
    finally:
        ray.shutdown()
        cluster.shutdown()


def free_port() -> int:
    """A port on 127.0.0.1 that nobody listens on (an address where no Ray head answers)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
