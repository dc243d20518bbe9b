"""Where self-play chunks run: in-process, in local worker processes, or on a Ray cluster.

All pools have ``submit(tasks)`` (non-blocking) and ``collect() -> results in task order``. Results
depend only on the tasks (each chunk carries its own seed), never on which worker ran them, so the
number of workers does not change a training run.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import traceback

from agents.selfplay import ChunkResult, ChunkTask, run_chunk


class InlinePool:
    """No workers: chunks run in the calling process when collected."""

    workers = 0

    def __init__(self):
        self._tasks: list[ChunkTask] = []

    def submit(self, tasks: list[ChunkTask]) -> None:
        self._tasks = list(tasks)

    def collect(self) -> list[ChunkResult]:
        tasks, self._tasks = self._tasks, []
        return [run_chunk(t) for t in tasks]

    def close(self) -> None:
        pass


def _worker_loop(tasks, results):
    import torch

    torch.set_num_threads(1)
    while True:
        item = tasks.get()
        if item is None:
            return
        key, task = item
        try:
            results.put((key, run_chunk(task), None))
        except BaseException:  # report, keep serving
            results.put((key, None, traceback.format_exc()))


class ProcessPool:
    """``workers`` local processes (spawned, 1 torch thread each) fed from one task queue. While
    waiting in ``collect`` the calling process takes queued chunks too, so no core idles."""

    def __init__(self, workers: int):
        ctx = mp.get_context("spawn")  # fork after torch/numba threads start is unsafe
        self.workers = workers
        self._tasks = ctx.Queue()
        self._results = ctx.Queue()
        self._procs = [ctx.Process(target=_worker_loop, args=(self._tasks, self._results), daemon=True)
                       for _ in range(workers)]
        for p in self._procs:
            p.start()
        self._batch = 0
        self._expected = 0

    def submit(self, tasks: list[ChunkTask]) -> None:
        self._batch += 1
        self._expected = len(tasks)
        for i, t in enumerate(tasks):
            self._tasks.put(((self._batch, i), t))

    def collect(self) -> list[ChunkResult]:
        got: dict[int, ChunkResult] = {}
        while len(got) < self._expected:
            try:
                (batch, i), res, err = self._results.get_nowait()
            except queue.Empty:
                try:  # help: run a queued chunk here
                    (batch, i), task = self._tasks.get_nowait()
                    res, err = run_chunk(task), None
                except queue.Empty:
                    try:
                        (batch, i), res, err = self._results.get(timeout=1.0)
                    except queue.Empty:
                        if not any(p.is_alive() for p in self._procs):
                            raise RuntimeError("all self-play worker processes died") from None
                        continue
            if err is not None:
                raise RuntimeError(f"self-play worker failed:\n{err}")
            if batch == self._batch:
                got[i] = res
        self._expected = 0
        return [got[i] for i in range(len(got))]

    def close(self) -> None:
        for _ in self._procs:
            self._tasks.put(None)
        for p in self._procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()


class RayPool:
    """Chunks as Ray tasks (1 CPU each) on the cluster at ``address`` ('local' starts one here)."""

    def __init__(self, address: str, workers: int = 0):
        try:
            import ray
        except ImportError:
            raise RuntimeError("--ray-address needs the ray package: pip install 'highway-boardgame[ray]' "
                               "(or pip install ray)") from None
        self._ray = ray
        if not ray.is_initialized():
            ray.init(address=None if address == "local" else address, include_dashboard=False,
                     **({"num_cpus": max(workers, 1)} if address == "local" else {}))
        self._remote = ray.remote(num_cpus=1)(run_chunk)
        self.workers = workers
        self._refs = []

    def submit(self, tasks: list[ChunkTask]) -> None:
        self._refs = [self._remote.remote(t) for t in tasks]

    def collect(self) -> list[ChunkResult]:
        refs, self._refs = self._refs, []
        return self._ray.get(refs)

    def close(self) -> None:
        pass


def make_pool(workers: int, ray_address: str = ""):
    if ray_address:
        return RayPool(ray_address, workers)
    return ProcessPool(workers) if workers > 0 else InlinePool()
