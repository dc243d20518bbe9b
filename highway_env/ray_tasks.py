"""Work as Ray tasks on a cluster, in one place for the three jobs that scale past one machine:
self-play chunks (``train.py --ray-address``, :class:`agents.parallel.RayPool`), proof units
(``python -m highway_env.solver prove --ray-address``) and evaluation tasks (``evaluate.py
--ray-address``).

Every task of these jobs is seeded or exact, so one lost with its worker or node (killed, out of
memory, the node gone) is run again elsewhere with the same result (Ray's ``max_retries``); an
exception raised by the task's own code is not retried (it would fail again). Waiting never hangs:
with no node with a CPU left for ``no_cpu_timeout`` seconds, or a task lost more often than its
retries allow, a :class:`RayClusterError` names what was waiting; so does a task that its node's
memory monitor kills each time it runs (:data:`OOM_RETRIES`). The packages travel with the
tasks (:func:`shipped_runtime_env`), and files a task reads on the driver's machine travel through
the object store (:meth:`RayCluster.ship_files`, :func:`node_local_copy`), so a node needs neither
the project nor a shared filesystem. The loss of the driver's own node, or of the cluster's head,
which Ray answers by ending the driver without a word, is said in one line naming what is kept
(:mod:`highway_env.ray_node_watch`). Ray is imported only when a cluster is used.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

from highway_env.atomic_files import atomic_write_bytes
from highway_env.cli_args import first_line, json_object, positive_float
from highway_env.core import HighwayError
from highway_env.extras import is_installed
from highway_env.ray_address import check_ray_head, check_reachable
from highway_env.ray_node_watch import EndNotice, RayletWatch, local_raylet_pid


class RayClusterError(HighwayError, RuntimeError):
    """Work on Ray that cannot go on: no ray package, no head at the address, no node with a CPU
    left, a task lost more often than its retries allow. The message is one line naming the
    address or the task. (Also a RuntimeError: callers of the self-play pool catch it as one.)"""


# The model zoo's checkpoints (agents/pretrained, most of the bytes) stay behind: no task loads them
# by name, and a checkpoint a task plays travels as a file (RayCluster.ship_files).
_SHIPPED_EXCLUDES = ["pretrained", "__pycache__", "*.pyc", "*.nbi", "*.nbc"]
#: how long a run waits for a node that can run its tasks (none with a CPU, or none with the CPU
#: and memory a task asks for) before it stops with an error; an autoscaling cluster may need more
NODE_WAIT_SECONDS = 120.0
#: the --ray-node-wait flag's help, the same for every command
NODE_WAIT_HELP = (f"with --ray-address: the seconds the run waits while no node can run a task (none with a CPU, or "
                  f"none with the CPU and memory a task asks for) before it stops with an error (default "
                  f"{NODE_WAIT_SECONDS:g}; raise it for a cluster whose autoscaler takes longer to add nodes)")
#: the --ray-runtime-env flag's help, the same for every command
RUNTIME_ENV_HELP = ("Ray runtime_env of the tasks: '' (default) ships the highway_env and agents packages to the "
                    "nodes (py_modules; a node needs only the dependencies: numpy, numba, ..., and torch for "
                    "self-play and AlphaZero agents), a JSON "
                    "object is merged over that (e.g. '{\"pip\": [\"numba\"]}'), 'none' ships nothing (every "
                    "node has the packages installed); only with --ray-address")
#: what a task that could not import code on its node suggests
_SHIP_CODE = ("the node lacks code the task imports: leave --ray-runtime-env out, or give a JSON object "
              "rather than 'none', to ship the packages and the game's module, or install them on every node")
#: what a RayClusterError about a wait that ran out suggests beside adding nodes
_WAIT_LONGER = "give an autoscaler longer to add them with --ray-node-wait SECONDS"

#: how often a task killed by its node's memory monitor runs again before the run stops. Ray counts
#: these kills apart from ``max_retries`` and by default retries them for ever (``task_oom_retries``
#: -1), so a task that needs more memory than its node has would hang the run; this bounds them as
#: a lost worker's retries are (3). The owner of a task, this driver, decides its retries with its
#: own config, read from ``RAY_task_oom_retries`` when Ray starts in the process: set here before
#: ``ray.init``, for a Ray instance started here and a cluster joined alike (a cluster whose head
#: sets ``task_oom_retries`` in its ``--system-config`` keeps its own count; a value of that
#: variable set before the run is kept too)
OOM_RETRIES = 3
_OOM_RETRIES_ENV = "RAY_task_oom_retries"

# Exceptions of ray.get meaning the task did not fail: its worker or node was lost, and Ray has
# already retried it ``max_retries`` times.
_LOST = ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OutOfMemoryError", "LocalRayletDiedError")


def shipped_runtime_env(extra: dict | None, modules: tuple[str, ...] = ()) -> dict | None:
    """The default Ray runtime_env: the highway_env and agents packages as py_modules (Ray zips
    them once and unpacks them on every node, so a node needs only their dependencies, pyproject's
    ``dependencies``), with ``extra`` merged over it; ``extra=None`` ships nothing. ``modules``
    names more code the tasks import (a user's game, ``--game pkg.mod:Class``): the top-level
    package of each is shipped too, unless it is installed (in site-packages, as a dependency)."""
    if extra is None:
        return None
    import agents
    import highway_env

    shipped = [os.path.dirname(highway_env.__file__), os.path.dirname(agents.__file__)]
    for name in modules:
        path = _top_level_path(name)
        if path and path not in shipped:
            shipped.append(path)
    base = {"py_modules": shipped, "excludes": list(_SHIPPED_EXCLUDES)}
    return {**base, **extra}


def _top_level_path(module: str) -> str | None:
    """The folder (or single file) of ``module``'s top-level package, None where it is installed in
    site-packages or has no single place on disk."""
    top = importlib.import_module(module.split(".")[0])
    # a namespace package lists its folder once per sys.path entry that leads to it ('' and $PWD)
    paths = list(dict.fromkeys(os.path.realpath(p) for p in getattr(top, "__path__", None) or []))
    path = paths[0] if len(paths) == 1 else getattr(top, "__file__", None) if not paths else None
    if not path or is_installed(path):
        return None
    return os.path.abspath(path)


def check_ray_only(option: str, value, address: str | None, address_option: str = "--ray-address") -> None:
    """HighwayError where ``option`` (a Ray setting) is given without a Ray ``address``: a run on
    this machine would ignore it, silently."""
    if not address:
        raise HighwayError(f"{option} {value!r} is for runs on Ray: add {address_option} (auto, local or "
                           f"HOST:PORT), or leave {option} out to run on this machine")


def runtime_env_from_text(text: str, option: str = "--ray-runtime-env", *, address: str | None,
                          address_option: str = "--ray-address") -> dict | None:
    """The extra runtime_env a command line gives: {} for '' (ship the packages), None for 'none'
    (ship nothing: every node has them installed), else a JSON object merged over the packages;
    HighwayError names ``option`` and a value that is none of these, or one given without a Ray
    ``address`` (a run on this machine would ignore it, silently)."""
    text = text.strip()
    if text:
        check_ray_only(option, text, address, address_option)
    if text in ("", "none"):
        return {} if not text else None
    try:
        extra = json_object(text, option, """'{"pip": ["numba"]}' (or '': ship the packages, 'none': nothing)""")
    except ValueError as e:
        raise HighwayError(str(e)) from None
    try:  # Ray checks the fields' types only once it has started or joined a cluster: check them now
        from ray.runtime_env import RuntimeEnv
    except ImportError:
        return extra  # the run's import_ray says to install ray
    try:
        RuntimeEnv(**extra)
    except (TypeError, ValueError) as e:
        raise HighwayError(f"{option} {text!r} is no Ray runtime_env: {first_line(e)}") from None
    return extra


def add_ray_task_flags(parser) -> None:
    """``--ray-runtime-env`` and ``--ray-node-wait``, the Ray settings of a command that also has
    ``--ray-address`` (read back with :func:`ray_task_settings`)."""
    parser.add_argument("--ray-runtime-env", default="", metavar="JSON", help=RUNTIME_ENV_HELP)
    parser.add_argument("--ray-node-wait", type=positive_float, default=None, metavar="SECONDS", help=NODE_WAIT_HELP)


def ray_task_settings(args) -> tuple[dict | None, float]:
    """(extra runtime_env, node wait in seconds) from :func:`add_ray_task_flags`' flags and
    ``args.ray_address``; HighwayError for a bad runtime_env or a setting given without an address."""
    if args.ray_node_wait is not None:
        check_ray_only("--ray-node-wait", args.ray_node_wait, args.ray_address)
    env = runtime_env_from_text(args.ray_runtime_env, address=args.ray_address)
    return env, args.ray_node_wait or NODE_WAIT_SECONDS


def import_ray(option: str = "--ray-address"):
    try:
        import ray
    except ImportError:
        raise RayClusterError(f"{option} needs the ray package: pip install 'highway-boardgame[ray]' "
                              "(or pip install ray)") from None
    return ray


class RayTaskFailed(RayClusterError):
    """A task's own code raised on its node (not retried: it would fail again)."""


class RayLocalNodeLost(RayClusterError):
    """The Ray node of this machine (its raylet) is gone: no task can be sent or collected any
    more. ``reported``: its one line was printed already, when the loss was seen (Ray may end the
    process soon after, from its C++ core), so a command prints it no second time."""

    def __init__(self, message: str, reported: bool = False):
        super().__init__(message)
        self.reported = reported


class RayCluster:
    """A connection to the Ray cluster at ``address`` ('local' starts one in this process with
    ``local_cpus`` CPUs, 'auto' or host:port joins one) for tasks called ``noun`` in messages
    ('self-play chunks'). A head that does not answer is a RayClusterError at once (Ray itself
    retries for minutes). ``runtime_env`` applies when this object starts or joins Ray; a Ray the
    caller had initialised already is used as it is and left running by :meth:`close`.

    The raylet of this machine's node is watched (:mod:`highway_env.ray_node_watch`): when it dies
    one line says so, ending with ``kept`` (what the command keeps and how to resume; a function
    is called again each wait, as a run's checkpoint changes), and waiting stops with a
    :class:`RayLocalNodeLost`, or, where Ray's core ends the process first (exit code 1, also a
    minute after the head stops answering), the notice process beside it prints such a line."""

    def __init__(self, address: str, runtime_env: dict | None = None, *, noun: str = "tasks",
                 fallback: str = "run without --ray-address", option: str = "--ray-address",
                 local_cpus: int | None = None, no_cpu_timeout: float = NODE_WAIT_SECONDS, log_to_driver: bool = True,
                 poll_seconds: float = 1.0, kept="", less_memory: str = "fewer --workers"):
        ray = import_ray(option)
        self.ray, self.noun, self.fallback, self.kept = ray, noun, fallback, kept
        self.less_memory = less_memory  # what asks less memory of a node, beside more memory
        self.no_cpu_timeout, self.poll_seconds = no_cpu_timeout, poll_seconds
        self.demand = {"CPU": 0, "memory": 0}  # the most one task asks for
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:
            try:
                check_reachable(address, option)
                check_ray_head(address, option)
            except HighwayError as e:
                raise RayClusterError(str(e)) from None
            os.environ.setdefault(_OOM_RETRIES_ENV, str(OOM_RETRIES))  # before Ray reads its config
            try:  # "local" starts a new instance even where another Ray cluster runs on this machine
                ray.init(address=address, include_dashboard=False, runtime_env=runtime_env,
                         log_to_driver=log_to_driver,
                         **({"num_cpus": local_cpus} if address == "local" and local_cpus else {}))
            # ConnectionError: no head; RuntimeError: another Ray or Python version than the cluster's;
            # ValueError: an address Ray refuses (ray:// without the ray[client] extra)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise RayClusterError(f"{option} {address!r}: {' '.join(str(e).split())}"
                                      + ("; run with the cluster's Ray and Python versions" if "mismatch" in str(e)
                                         else "")) from None
        self._notice = self._watch = None
        logs = _logs_dir(ray)
        if logs:
            self._notice = EndNotice(logs, self._kept_now())
        raylet = local_raylet_pid(ray)
        if raylet:
            self._watch = RayletWatch(raylet, self._report_local_node_lost)

    def _kept_now(self) -> str:
        return self.kept() if callable(self.kept) else self.kept  # a checkpoint may have been written since

    def _local_node_lost(self, pid: int | None, cause: str = "") -> str:
        kept = self._kept_now()
        return (f"the Ray node of this machine is gone ({f'its raylet, pid {pid}, ended' if pid else cause}: "
                f"killed, or out of memory?), so the run stops: no {self.noun} can run or be collected any more"
                + (f"; {kept}" if kept else ""))

    def _report_local_node_lost(self, pid: int) -> None:
        """Printed from the watch's thread at once: the main thread may be busy (training) when Ray
        ends the process, which it does the next time the process touches the object store."""
        print(f"error: {self._local_node_lost(pid)}", file=sys.stderr, flush=True)
        if self._notice is not None:
            self._notice.settle()

    def _check_local_node(self) -> None:
        if self._watch is not None and self._watch.lost:
            raise RayLocalNodeLost(self._local_node_lost(self._watch.lost), reported=True)
        if self._notice is not None:
            self._notice.say(self._kept_now())

    def task(self, fn, *, num_cpus: int = 1, memory: int | None = None, max_retries: int = 3):
        """``fn`` as a Ray remote function declaring its CPUs and memory (so that a node runs no
        more of them than fit), retried ``max_retries`` times when its worker or node is lost."""
        opts = {"num_cpus": num_cpus, "max_retries": max_retries, "retry_exceptions": False}
        self.demand = {"CPU": max(self.demand["CPU"], num_cpus), "memory": max(self.demand["memory"], memory or 0)}
        return self.ray.remote(**opts, **({"memory": memory} if memory else {}))(fn)

    def put(self, obj):
        self._check_local_node()  # the object store went with the raylet: Ray would end the process
        return self.ray.put(obj)

    def wait(self, refs, num_returns: int = 1) -> list:
        """The refs of ``refs`` that are finished, at least ``num_returns`` of them (every one
        finished by then). Raises RayClusterError when no node with a CPU, or none with the CPUs
        and memory a task asks for, has been left for ``no_cpu_timeout`` seconds (a lost node's
        tasks, or tasks larger than every node, would wait for ever)."""
        refs = list(refs)
        if not refs:
            return []
        num_returns = min(num_returns, len(refs))
        stuck_since = None
        while True:
            self._check_local_node()
            ready, waiting = self.ray.wait(refs, num_returns=num_returns, timeout=self.poll_seconds)
            if len(ready) >= num_returns:
                if waiting:  # the others finished meanwhile come along
                    ready += self.ray.wait(waiting, num_returns=len(waiting), timeout=0)[0]
                return ready
            cpus = self.ray.cluster_resources().get("CPU", 0) >= 1
            if cpus and self._a_node_fits():
                stuck_since = None
                continue
            stuck_since = stuck_since or time.monotonic()
            if time.monotonic() - stuck_since <= self.no_cpu_timeout:
                continue
            if not cpus:
                raise RayClusterError(f"no Ray node with a CPU has been left for {self.no_cpu_timeout:g} s "
                                      f"({len(waiting)} {self.noun} waiting); add nodes to the cluster, "
                                      f"{_WAIT_LONGER}, or {self.fallback}")
            raise RayClusterError(f"no Ray node has {self.demand['CPU']:g} CPU and "
                                  f"{self.demand['memory'] / 2**30:.2f} GiB of memory, what each of the "
                                  f"{len(waiting)} {self.noun} waiting asks for, for {self.no_cpu_timeout:g} s; "
                                  f"add larger nodes, {_WAIT_LONGER}, or {self.fallback}")

    def _a_node_fits(self) -> bool:
        """Does a live node have the CPUs and memory of the largest task?"""
        need = {k: v for k, v in self.demand.items() if v}
        return any(n.get("Alive") and all(n.get("Resources", {}).get(k, 0) >= v for k, v in need.items())
                   for n in self.ray.nodes())

    def get(self, ref, name: str, *, name_failures: bool = False):
        """The result of a finished task, ``name`` saying which one in the RayClusterError raised
        when its worker or node was lost more often than its retries allow. An exception of the
        task's own code is raised as it is (its traceback shows where), or with ``name_failures``
        as a :class:`RayTaskFailed` naming the task and the exception's type and first line: a
        command's one-line error, for tasks whose failures come from a node's setup (a path it
        cannot write) rather than from the code. Code missing on the node (an import that failed
        there, where the runtime_env shipped nothing) is always such a line, saying how to ship it."""
        failed = getattr(self.ray.exceptions, "RayTaskError", ())
        try:
            return self.ray.get(ref)
        except tuple(getattr(self.ray.exceptions, n) for n in _LOST) as e:
            self._check_local_node()
            if type(e).__name__ == "LocalRayletDiedError":  # the watch did not see it (no pid found)
                raise RayLocalNodeLost(self._local_node_lost(None, f"{type(e).__name__}: {first_line(e)}")) from None
            if type(e).__name__ == "OutOfMemoryError":  # killed by its node's memory monitor each time
                raise RayClusterError(f"{name} was killed for memory {_oom_runs()} times: give the nodes more "
                                      f"memory or {self.less_memory} (last: {first_line(e)})") from None
            raise RayClusterError(f"{name} was lost with its Ray worker or node more often than its retries "
                                  f"allow ({type(e).__name__}: {first_line(e)}); out of memory? check the "
                                  f"nodes, or {self.fallback}") from None
        except failed as e:
            cause = getattr(e, "cause", None) or e  # the exception the task raised on its node
            # ImportError, or a game reference (agents.games.resolve) whose module was not found there
            missing = isinstance(cause, ImportError) or "ModuleNotFoundError" in first_line(cause)
            if not (name_failures or missing):
                raise
            raise RayTaskFailed(f"{name} failed on its Ray node: {type(cause).__name__}: {first_line(cause)}"
                                + (f"; {_SHIP_CODE}" if missing else "")) from None

    def ship_files(self, paths) -> dict:
        """Each file at ``paths`` on this machine -> a handle a task turns into a copy on its own
        node (:func:`node_local_copy`): the bytes go into the object store once."""
        out = {}
        for path in dict.fromkeys(map(str, paths)):
            data = Path(path).read_bytes()
            out[path] = (hashlib.sha256(data).hexdigest(), Path(path).name, self.ray.put(data))
        return out

    def close(self) -> None:
        if self._watch is not None:  # first: shutting down a Ray instance started here ends its raylet
            self._watch.stop()
        if self._notice is not None:
            self._notice.settle()
        if self.owns_ray:
            self.ray.shutdown()


def _oom_runs() -> int | str:
    """How often a task killed for memory each time ran: once, then its retries (those of
    :data:`OOM_RETRIES`, or of a ``RAY_task_oom_retries`` set before the run)."""
    try:
        return int(os.environ.get(_OOM_RETRIES_ENV, OOM_RETRIES)) + 1
    except ValueError:
        return "several"


def _logs_dir(ray) -> str | None:
    """The folder of this driver's Ray logs (None where this Ray version does not say)."""
    try:
        return ray._private.worker._global_node.get_logs_dir_path()
    except Exception:  # private parts of Ray that moved
        return None


def node_local_copy(handle) -> str:
    """In a task: the path of a copy of a shipped file (:meth:`RayCluster.ship_files`) on this
    node, under a folder named by its content hash, so it is fetched once per node and a file
    changed on the driver is never mistaken for the old one."""
    sha, name, ref = handle
    path = Path(tempfile.gettempdir()) / "highway_env-ray-files" / sha / name
    if not path.exists():
        import ray

        atomic_write_bytes(path, ray.get(ref))
    return str(path)
