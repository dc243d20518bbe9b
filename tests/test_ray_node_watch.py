"""The Ray node of this machine lost mid-run (highway_env.ray_node_watch): its raylet killed, Ray
2.60 ended the driver from its C++ core with exit code 1 and no message of ours; now one line
says what happened, what is kept and how to resume, printed by the driver (which then stops with
exit code 2) or, where Ray ended it first, by the notice process beside it."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from highway_env import ray_tasks
from highway_env.ray_tasks import RayCluster, RayLocalNodeLost

from ray_helpers import needs_ray  # noqa: E402
from test_ray_tasks import _FakeRay  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _driver(logs: Path, ending: str) -> subprocess.CompletedProcess:
    """A process that starts an EndNotice and then ends as ``ending`` says: 'raylet' or 'head' as
    Ray's core ends a driver whose node, or cluster head, is gone (its log line, then _exit(1)),
    'kill' by SIGKILL, 'settled' after saying it ends by itself."""
    lines = {"raylet": "[W connection.cc:216] The connection to the plasma store is failed. Terminate the process.",
             "head": "[E rpc_client.h:204] Failed to connect to GCS within 60 seconds. GCS may have been killed."}
    code = textwrap.dedent(f"""
        import os, signal
        from highway_env.ray_node_watch import EndNotice
        notice = EndNotice({str(logs)!r}, "nothing kept yet")
        notice.say("kept: here")
        ending = {ending!r}
        if ending in {lines!r}:
            with open(os.path.join({str(logs)!r}, f"python-core-driver-01000000_{{os.getpid()}}.log"), "w") as f:
                f.write({lines!r}[ending])
            os._exit(1)
        if ending == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        notice.settle()
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("ending, printed", [
    ("raylet", "error: the Ray node of this machine is gone (its raylet ended: killed, or out of memory?), and Ray "
               "ended this run (exit code 1); kept: here\n"),
    ("head", "error: the Ray cluster's head stopped answering (its GCS ended: the head node lost, out of memory, or "
             "'ray stop') for a minute, and Ray ended this run (exit code 1); kept: here\n"),
    ("kill", ""), ("settled", "")], ids=["raylet", "head", "kill", "settled"])
def test_the_notice_speaks_only_after_ray_ended_the_driver(tmp_path, ending, printed):
    r = _driver(tmp_path, ending)  # its stderr is read to the end: the notice process's too
    assert r.returncode == {"kill": -9, "settled": 0}.get(ending, 1)
    assert r.stderr == printed


class _RayOfThisMachine(_FakeRay):
    """A joined cluster whose tasks never finish, with a node of this machine (for its logs folder)."""

    def __init__(self, logs: Path):
        super().__init__(cpus=1)
        node = types.SimpleNamespace(get_logs_dir_path=lambda: str(logs))
        self._private = types.SimpleNamespace(worker=types.SimpleNamespace(_global_node=node))

    def put(self, obj):
        return ("object", obj)


def test_a_lost_raylet_stops_the_wait_with_one_line(tmp_path, monkeypatch, capsys):
    """The raylet (a process standing for it) dies while the driver waits: one line at once, naming
    its pid and what is kept, and the wait raises an error marked as said (no second line)."""
    raylet = subprocess.Popen(["sleep", "60"])
    monkeypatch.setitem(sys.modules, "ray", _RayOfThisMachine(tmp_path))
    monkeypatch.setattr(ray_tasks, "local_raylet_pid", lambda ray: raylet.pid)
    kept = ["nothing yet"]
    cluster = RayCluster("auto", noun="self-play chunks", kept=lambda: kept[0])
    try:
        kept[0] = "latest.pt keeps the last checkpoint: continue with --resume"  # a checkpoint written since
        raylet.kill()
        t0 = time.time()
        with pytest.raises(RayLocalNodeLost, match=f"raylet, pid {raylet.pid}, ended") as e:
            cluster.wait([("ref", 0, ())])
        assert e.value.reported and time.time() - t0 < 10
        err = capsys.readouterr().err
        assert err == (f"error: the Ray node of this machine is gone (its raylet, pid {raylet.pid}, ended: killed, "
                       "or out of memory?), so the run stops: no self-play chunks can run or be collected any more; "
                       "latest.pt keeps the last checkpoint: continue with --resume\n")
        with pytest.raises(RayLocalNodeLost):  # nothing more goes into an object store that is gone
            cluster.put(b"weights")
    finally:
        cluster.close()
        raylet.wait()


@needs_ray
@pytest.mark.slow
def test_train_whose_raylet_is_killed_says_so_and_resumes(tmp_path):
    """train.py on a Ray instance it started; its raylet is killed after the first checkpoint: one
    line naming it and the resume command, exit code 2, latest.pt kept; the command it names resumes."""
    flags = ["--games-per-iter", "12", "--selfplay-batch", "6", "--simulations", "6", "--max-considered", "4",
             "--min-replay", "40", "--batch-size", "32", "--hidden", "32", "--layers", "1", "--eval-every", "0",
             "--checkpoint-every", "2", "--learner-threads", "1", "--no-progress", "--no-tensorboard"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    driver = subprocess.Popen([sys.executable, "train.py", "--ray-address", "local", "--workers", "1", "--iterations",
                               "60", "--out-dir", str(tmp_path), "--run", "r", *flags], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    latest = tmp_path / "r" / "latest.pt"
    deadline = time.time() + 180
    while not latest.exists() and time.time() < deadline and driver.poll() is None:
        time.sleep(0.2)
    import psutil

    raylets = [p for p in psutil.Process(driver.pid).children() if p.name() == "raylet"]
    assert latest.exists() and raylets
    raylets[0].send_signal(signal.SIGKILL)
    _, err = driver.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert driver.returncode in (1, 2) and len(lines) == 1, err[-3000:]  # 1: Ray's core ended it first
    assert f"raylet, pid {raylets[0].pid}, ended" in lines[0] and f"{latest} keeps the last checkpoint" in lines[0]
    resume = lines[0].split("continue with ")[1].split()
    assert resume[:3] == ["python", "train.py", "--resume"]
    r = subprocess.run([sys.executable, *resume[1:], "--iterations", str(6), "--ray-address", ""], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "done: 6 iterations" in r.stdout, r.stderr[-3000:]


class _MismatchedRay(_FakeRay):
    """ray.init as Ray 2.60 answers a driver of another Ray or Python version than the cluster's."""

    def is_initialized(self):
        return False

    def init(self, **kwargs):
        raise RuntimeError("Version mismatch: The cluster was started with:\n    Ray: 2.60.0\n    Python: 3.11.7\n"
                           "This process on node 10.0.0.2 was started with:\n    Ray: 2.59.0\n    Python: 3.11.7\n")


def test_a_version_mismatch_is_one_line_naming_both(monkeypatch):
    """Ray's RuntimeError came out as a traceback from train.py, evaluate.py and prove."""
    monkeypatch.setitem(sys.modules, "ray", _MismatchedRay())
    with pytest.raises(ray_tasks.RayClusterError) as e:
        RayCluster("auto")
    assert str(e.value) == ("--ray-address 'auto': Version mismatch: The cluster was started with: Ray: 2.60.0 Python: "
                            "3.11.7 This process on node 10.0.0.2 was started with: Ray: 2.59.0 Python: 3.11.7; run "
                            "with the cluster's Ray and Python versions")


@needs_ray
@pytest.mark.slow
def test_an_address_where_no_ray_head_but_something_answers_is_one_line(capsys):
    """A port that accepts connections but is no Ray head (another service, a worker node's port):
    Ray retried it for minutes (over 120 s measured); now one line within about 15 s."""
    import socket

    from highway_env.ray_tasks import RayClusterError

    with socket.create_server(("127.0.0.1", 0)) as other:
        address = f"127.0.0.1:{other.getsockname()[1]}"
        t0 = time.time()
        with pytest.raises(RayClusterError, match=f"--ray-address '{address}': something answers there, but no Ray "
                                                  "head"):
            RayCluster(address)
    assert time.time() - t0 < 60 and capsys.readouterr().err == ""  # Ray's C++ lines of each try kept out


@needs_ray
@pytest.mark.slow
def test_a_real_version_mismatch_is_one_line(tmp_path):
    """A driver whose Ray says another version than the cluster's (ray.__version__ is what Ray compares)."""
    from ray_helpers import local_cluster

    with local_cluster() as (cluster, node, raylet):
        code = textwrap.dedent(f"""
            import sys
            import ray
            ray.__version__ = "2.0.0"
            import evaluate
            sys.exit(evaluate.main(["--agent", "greedy", "--positions", "10", "--games", "0", "--rr-games", "0",
                                    "--conversion", "0", "--positions-v2", "none", "--store", "none", "--no-plots",
                                    "--no-progress", "--out", {str(tmp_path / "e")!r}, "--ray-address",
                                    {cluster.address!r}]))
        """)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    errors = [line for line in r.stderr.splitlines() if "error" in line.lower()]
    assert r.returncode == 2 and len(errors) == 1, r.stderr[-3000:]
    assert "Version mismatch: The cluster was started with: Ray: " in errors[0] and "Ray: 2.0.0" in errors[0]
