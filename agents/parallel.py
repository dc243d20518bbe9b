"""Where self-play chunks run: in-process, in local worker processes, or on a Ray cluster.

All pools have ``submit(tasks)`` (non-blocking) and ``collect() -> results in task order``. Results
depend only on the tasks (each chunk carries its own seed), never on which worker ran them, so the
number of workers does not change a training run.
"""

from __future__ import annotations

import collections
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import os
import sys
import threading
import time
import traceback

from agents.selfplay import ChunkResult, ChunkTask, run_chunk
from highway_env.ray_tasks import NODE_WAIT_SECONDS, RayCluster, shipped_runtime_env
from highway_env.stall_watch import StallWatch


class WorkersLostError(RuntimeError):
    """Worker processes kept dying (killed, out of memory) past the restarts allowed: not a bug in
    the work, so the commands report it in one line (a RuntimeError, so callers catching those still do)."""


class _Pool:
    """What a training run asks of every pool besides submit, collect and close."""

    def idle_cpus_note(self, chunks: int) -> str | None:
        """A note where an iteration's ``chunks`` leave CPUs idle: only a Ray cluster's can be."""
        return None


class InlinePool(_Pool):
    """No workers: chunks run in the calling process when collected."""

    def __init__(self):
        self._tasks: list[ChunkTask] = []

    def submit(self, tasks: list[ChunkTask]) -> None:
        self._tasks = list(tasks)

    def collect(self) -> list[ChunkResult]:
        tasks, self._tasks = self._tasks, []
        return [run_chunk(t) for t in tasks]

    def close(self) -> None:
        pass


def start_child(ctx, target, args: tuple, name: str):
    """(our pipe end, process): a spawned daemon running ``target(conn, parent_pid, *args)``."""
    conn, child = ctx.Pipe()
    proc = ctx.Process(target=target, args=(child, os.getpid(), *args), daemon=True, name=name)
    proc.start()
    child.close()
    return conn, proc


def child_setup(parent_pid: int) -> None:
    """The start of a child process: it never outlives the trainer (kill -9, SIGTERM, out of
    memory), leaves Ctrl-C to it (the trainer ends its children) and uses one torch thread."""
    import signal

    from highway_env.parent_watch import exit_with_parent

    exit_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch  # after the watch: the import takes a while

    torch.set_num_threads(1)


def child_messages(conn):
    """A child process's messages from the trainer, until it sends None or is gone."""
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        yield msg


def signal_child(proc, conn, busy: bool) -> None:
    """Ask an idle child to stop, terminate a busy one (its work is of no use any more)."""
    if proc.is_alive():
        if busy:
            proc.terminate()
        else:
            try:
                conn.send(None)
            except OSError:
                pass


def reap_child(proc, conn) -> None:
    """Wait for a signalled child to exit; kill it if it lingers."""
    proc.join(timeout=5)
    if proc.is_alive():
        proc.kill()
        proc.join(timeout=5)
    conn.close()


def _worker_main(conn, parent_pid: int) -> None:
    """A worker process: holds the weights it was last sent and plays the chunks it is given."""
    child_setup(parent_pid)
    weights = None
    for msg in child_messages(conn):
        if msg[0] == "weights":
            weights = msg[1]
            continue
        _, key, task = msg
        try:
            conn.send((key, run_chunk(task._replace(weights=weights)), None))
        except BaseException:  # report, keep serving
            conn.send((key, None, traceback.format_exc()))


class _Worker:
    """One worker process, its pipe, the weights version it holds and the chunk it is running."""

    def __init__(self, ctx):
        self.conn, self.proc = start_child(ctx, _worker_main, (), "highway-selfplay")
        self.version = None
        self.task = None  # (key, task) in flight
        self.handed = False  # its task's messages are being sent or were: it has work (not queued behind another)
        self.finished_any = False


class ProcessPool(_Pool):
    """``workers`` spawned local processes fed by a dispatcher thread; each gets an iteration's
    weights once. A worker that dies (kill -9, out of memory) is replaced and its chunk queued
    again, so collect() still returns every chunk, as an undisturbed run would (chunks are
    seeded); it raises only when ``max_failed_starts`` replacements in a row died before finishing
    a chunk. A worker that stops running (its CPU time stands still for ``stall_seconds`` while it
    has a chunk: :mod:`highway_env.stall_watch`) is killed and so replaced too; a chunk whose workers
    stop more than ``max_stalls`` times fails the run. collect() plays queued chunks in the calling
    process too, unless ``helps=False`` (bench/bench_scale.py measures the workers alone)."""

    def __init__(self, workers: int, max_failed_starts: int = 3, helps: bool = True,
                 stall_seconds: float | None = None, max_stalls: int = 2):
        self._ctx = mp.get_context("spawn")  # fork after torch/numba threads start is unsafe
        self.replaced = 0  # workers started to replace dead ones (for logs and tests)
        self._max_failed = max_failed_starts
        self._helps = helps
        self._failed_starts = 0
        self._cond = threading.Condition()
        self._pending: collections.deque = collections.deque()  # (key, task) not started anywhere
        self._results: dict[int, ChunkResult] = {}
        self._error: str | None = None
        self._error_type: type = RuntimeError  # WorkersLostError where no worker could be kept alive
        self._batch = 0
        self._expected = 0
        self._weights = None
        self._version = 0
        self._closing = False
        self._workers = [_Worker(self._ctx) for _ in range(workers)]
        self._thread = threading.Thread(target=self._dispatch, name="selfplay-dispatch", daemon=True)
        self._thread.start()
        self._max_stalls = max_stalls
        self._stalls: dict = {}  # chunk key -> times its worker stopped running
        self._watch = StallWatch(self._busy, self._stalled, stall_seconds, name="selfplay-stall-watch")

    # -- called by the trainer
    def submit(self, tasks: list[ChunkTask]) -> None:
        with self._cond:
            self._batch += 1
            self._expected = len(tasks)
            self._results = {}
            if tasks and tasks[0].weights is not self._weights:
                self._weights, self._version = tasks[0].weights, self._version + 1
            for i, t in enumerate(tasks):
                if t.weights is not self._weights:
                    raise ValueError("all chunks of one submit must share one weights dict")
                self._pending.append(((self._batch, i), t._replace(weights=None)))
            self._cond.notify_all()

    def collect(self) -> list[ChunkResult]:
        with self._cond:
            while len(self._results) < self._expected:
                if self._error is not None:
                    raise self._error_type(self._error)
                if self._pending and self._helps:  # help: run a queued chunk here
                    key, task = self._pending.popleft()
                    weights = self._weights
                    self._cond.release()
                    try:
                        res = run_chunk(task._replace(weights=weights))
                    finally:
                        self._cond.acquire()
                    self._store(key, res)
                    continue
                self._cond.wait(timeout=1.0)
            out = [self._results[i] for i in range(self._expected)]
            self._expected, self._results = 0, {}
            return out

    def close(self) -> None:
        self._watch.close()
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout=5)
        for w in self._workers:  # signal them all first, so that they exit side by side
            signal_child(w.proc, w.conn, busy=w.task is not None)
        for w in self._workers:
            reap_child(w.proc, w.conn)

    def worker_pids(self) -> list[int]:
        with self._cond:
            return [w.proc.pid for w in self._workers]

    @property
    def stalled(self) -> int:
        """Workers killed because they stopped running."""
        return self._watch.killed

    # -- the dispatcher thread
    def _store(self, key, res) -> None:
        if key[0] == self._batch and key[1] not in self._results:  # a re-run chunk may report twice
            self._results[key[1]] = res
            self._cond.notify_all()

    def _dispatch(self) -> None:
        try:
            self._dispatch_loop()
        except BaseException:  # a dispatcher bug must fail the run, not hang collect() forever
            with self._cond:
                self._error = f"self-play dispatcher failed:\n{traceback.format_exc()}"
                self._cond.notify_all()

    def _dispatch_loop(self) -> None:
        while True:
            sends = []
            with self._cond:
                if self._closing:
                    return
                for w in self._workers:
                    if w.task is None and self._pending:
                        w.task = self._pending.popleft()
                        if w.version != self._version:
                            sends.append((w, ("weights", self._weights)))
                            w.version = self._version
                        sends.append((w, ("task", *w.task)))
                watch = {w.conn: w for w in self._workers}
                watch.update({w.proc.sentinel: w for w in self._workers})
            for w, msg in sends:  # outside the lock: a starting worker reads only once imported
                w.handed = True
                try:
                    w.conn.send(msg)
                except OSError:  # it died; its sentinel reports it below
                    pass
            ready = mp_connection.wait(list(watch), timeout=0.5) if watch else []
            if not watch:
                time.sleep(0.1)
            with self._cond:
                for r in ready:
                    w = watch[r]
                    if r is w.conn and w in self._workers:
                        self._receive(w)
                for w in list(self._workers):
                    if not w.proc.is_alive():
                        self._replace(w)

    def _receive(self, w: _Worker) -> bool:
        try:
            key, res, err = w.conn.recv()
        except Exception:  # EOF or a message cut short: it died, handled by _replace
            return False
        w.task, w.handed, w.finished_any = None, False, True
        self._failed_starts = 0
        if err is not None:
            self._error = f"self-play worker failed:\n{err}"
            self._cond.notify_all()
        else:
            self._store(key, res)
        return True

    def _busy(self) -> list:
        """The workers with a chunk (the stall watch's question), less those whose result waits in
        the pipe: they idle rightly until the dispatcher reads it (it may be sending to another)."""
        with self._cond:
            busy = {w.conn: w.proc for w in self._workers if w.task is not None and w.handed}
        try:
            answered = set(mp_connection.wait(list(busy), timeout=0)) if busy else set()
        except (OSError, ValueError):  # one was closed meanwhile (replaced): ask again
            return []
        return [proc for conn, proc in busy.items() if conn not in answered]

    def _stalled(self, proc) -> None:
        """The watch is about to kill ``proc``: its chunk runs again, unless it stopped too often."""
        with self._cond:
            w = next((w for w in self._workers if w.proc is proc), None)
            if w is None or w.task is None:
                return
            key = w.task[0]
            self._stalls[key] = self._stalls.get(key, 0) + 1
            print(f"note: self-play worker {proc.pid} stopped running (no CPU time for {self._watch.seconds:g} s "
                  f"while it had chunk {key[1] + 1}): killed; a new worker plays the chunk", file=sys.stderr)
            if self._stalls[key] > self._max_stalls:
                self._error_type = WorkersLostError
                self._error = (f"self-play stopped: the worker playing chunk {key[1] + 1} of this iteration stopped "
                               f"running {self._stalls[key]} times (no CPU time for {self._watch.seconds:g} s: "
                               f"stopped with SIGSTOP, deadlocked or stuck in the kernel); check the machine, or "
                               f"run with --workers 0")
                self._cond.notify_all()

    def _replace(self, dead: _Worker) -> None:
        try:  # a result sent just before it died still counts (poll is also true at EOF)
            while dead.conn.poll() and self._receive(dead):
                pass
        except OSError:
            pass
        self._workers.remove(dead)
        dead.conn.close()
        dead.proc.join(timeout=1)
        if dead.task is not None:
            self._pending.appendleft(dead.task)
        if not dead.finished_any:
            self._failed_starts += 1
        if self._failed_starts > self._max_failed and not self._workers:
            self._error_type = WorkersLostError
            self._error = (f"no self-play worker could be started: {self._failed_starts} worker "
                           f"processes in a row died before finishing a chunk (last exit code "
                           f"{dead.proc.exitcode}); check memory, or run with --workers 0")
            self._cond.notify_all()
            return
        try:
            self._workers.append(_Worker(self._ctx))
            self.replaced += 1
        except OSError as e:
            self._failed_starts += 1
            if not self._workers:
                self._error_type = WorkersLostError
                self._error = f"no self-play worker could be started: {e}"
        self._cond.notify_all()


# What one chunk task may use at most, declared to Ray so that a node runs no more chunks than fit
# its memory: a worker playing a 128-game chunk at the default settings peaked at ~0.5 GB RSS
# (torch, numba and the search trees; measured with ru_maxrss).
CHUNK_TASK_MEMORY = 768 * 2**20


class RayPool(_Pool):
    """Chunks as Ray tasks on the cluster at ``address`` ('local' starts one here, 'auto' or
    host:port joins one; :class:`highway_env.ray_tasks.RayCluster`), each declaring 1 CPU and
    ``CHUNK_TASK_MEMORY``; the weights go into the object store once per iteration. A task lost
    with its worker or node is retried elsewhere (3 times; a seeded chunk plays the same
    games); an exception in the chunk itself is not (it would fail again). With no CPU node left
    for ``no_cpu_timeout`` seconds, collect() raises. ``runtime_env`` (:func:`shipped_runtime_env`)
    applies when this pool starts or joins Ray itself; ``kept`` says what a run stopped by the loss
    of this machine's Ray node keeps (:class:`highway_env.ray_tasks.RayCluster`)."""

    def __init__(self, address: str, workers: int = 0, runtime_env: dict | None = None,
                 no_cpu_timeout: float = NODE_WAIT_SECONDS, kept=""):
        self._cluster = RayCluster(address, runtime_env, noun="self-play chunks", fallback="train without "
                                   "--ray-address", local_cpus=max(workers, 1), no_cpu_timeout=no_cpu_timeout,
                                   kept=kept)
        self._remote = self._cluster.task(_run_chunk_with, memory=CHUNK_TASK_MEMORY, max_retries=3)
        self._refs = []
        self._weights = None
        self._weights_ref = None

    def idle_cpus_note(self, chunks: int) -> str | None:
        """A note where an iteration's ``chunks`` leave CPUs of the cluster idle (--workers sizes the
        chunks and is not read from the cluster: that would change the games with its size)."""
        cpus = int(self._cluster.ray.cluster_resources().get("CPU", 0))
        if chunks >= cpus:
            return None
        return (f"note: {chunks} self-play chunks an iteration on a Ray cluster of {cpus} CPUs leave "
                f"{cpus - chunks} idle; --workers {cpus} plays one chunk per CPU (other chunks, so other games)")

    def submit(self, tasks: list[ChunkTask]) -> None:
        if tasks and tasks[0].weights is not self._weights:
            self._weights, self._weights_ref = tasks[0].weights, self._cluster.put(tasks[0].weights)
        self._refs = [self._remote.remote(t._replace(weights=None), self._weights_ref) for t in tasks]

    def collect(self) -> list[ChunkResult]:
        refs, self._refs = self._refs, []
        self._cluster.wait(refs, num_returns=len(refs))
        return [self._cluster.get(ref, f"self-play chunk {i}") for i, ref in enumerate(refs)]

    def close(self) -> None:
        # the chunks of an iteration that will not be collected are dropped, not cancelled: a cancel
        # that races a task's end aborts the driver in Ray 2.60 (ray-project/ray#54846), and they
        # end with the Ray session or within a chunk's few seconds
        self._refs = []
        self._cluster.close()


def _run_chunk_with(task: ChunkTask, weights: dict) -> ChunkResult:
    """A chunk whose weights travel separately (Ray resolves the object reference)."""
    return run_chunk(task._replace(weights=weights))


def make_pool(workers: int, ray_address: str = "", runtime_env: dict | None = None, modules: tuple[str, ...] = (),
              node_wait: float = NODE_WAIT_SECONDS, kept=""):
    """The pool of a training run; ``runtime_env`` is the extra Ray runtime_env (None: ship nothing),
    ``modules`` the game's code that Ray ships beside the packages (:func:`shipped_runtime_env`),
    ``node_wait`` the seconds a Ray pool waits for a node that fits a chunk, ``kept`` what the run
    keeps if this machine's Ray node is lost (:class:`RayPool`)."""
    if ray_address:
        return RayPool(ray_address, workers, shipped_runtime_env(runtime_env, modules), no_cpu_timeout=node_wait,
                       kept=kept)
    return ProcessPool(workers) if workers > 0 else InlinePool()
