"""Local worker processes whose death (kill -9, out of memory) never hangs the work.

``multiprocessing.Pool`` waits for ever on a task whose worker was killed. A
``ProcessPoolExecutor`` breaks instead: :class:`RetryingPool` then kills the broken pool's other
workers, starts a new one and submits the unfinished tasks again, each at most ``retries`` times;
the work must be seeded (a task run again gives the same result). A worker that stops running
while it has a task (``kill -STOP``, a deadlock: :mod:`highway_env.stall_watch`) is killed, and so
counts as one that died. A worker whose initializer raises is no lost worker: it would fail the
same way on every new pool, so the first such failure ends the work with
:class:`WorkerInitError` naming the initializer and the exception. The proof's units
(:mod:`highway_env.solver.prove`), the evaluation's tasks (``evaluate.py``) and a position set's
games and labels (:mod:`highway_env.evaluation.positions`) run on it.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from typing import Callable

from highway_env.cli_args import first_line
from highway_env.core import HighwayError
from highway_env.stall_watch import StallWatch


class WorkerLostError(HighwayError):
    """A task's worker process died more often than the configured retries allow."""


class WorkerInitError(WorkerLostError):
    """A worker's initializer raised (an import error, say): every worker started would fail so."""


class RetryingPool:
    """``workers`` processes (``initializer(*initargs)`` in each, ``mp_context`` as
    ProcessPoolExecutor takes it). ``submit(fn, *args)`` returns a task id; ``wait_any(pending)``
    the ``(task, result)`` pairs finished first, after rerunning what a dead worker left unfinished.
    ``what(args)`` names a task in the WorkerLostError, whose message ends with ``hint``."""

    def __init__(self, workers: int, initializer=None, initargs: tuple = (), retries: int = 2, mp_context=None,
                 what: Callable[[tuple], str] = lambda args: "running a task", hint: str = "out of memory?",
                 stall_seconds: float | None = None):
        self.workers, self.retries = workers, retries
        self._initializer, self._initargs, self._mp_context = initializer, initargs, mp_context
        self._what, self._hint = what, hint
        # where a worker whose initializer raised says why before it exits (a traceback on its
        # stderr and a broken pool would be all the parent saw)
        self._init_errors = None
        if initializer is not None:
            self._init_errors = (mp_context or multiprocessing.get_context()).SimpleQueue()
        self._starts = None  # (task, pid) of each task as a worker starts it: which processes have work
        self._task_pids: dict[int, int] = {}  # task -> pid of the worker running it
        self.units: dict[int, tuple] = {}  # task -> (fn, args)
        self.futures: dict[int, concurrent.futures.Future] = {}
        self.lost: dict[int, int] = {}  # task -> times its worker died
        self.handed: dict[int, int] = {}  # task -> order in which the current executor got it
        self.next_id = self.next_handed = 0
        self.executor = self._new_executor()
        self._watch = StallWatch(self._busy, seconds=stall_seconds, name="pool-stall-watch")

    def _new_executor(self):
        # a new queue each time: a worker killed while it wrote to the old one may hold its lock
        if self._starts is not None:
            self._starts.close()
        self._starts = (self._mp_context or multiprocessing.get_context()).SimpleQueue()
        self._task_pids = {}
        return concurrent.futures.ProcessPoolExecutor(
            self.workers, mp_context=self._mp_context, initializer=_initialize,
            initargs=(self._init_errors, self._starts, self._initializer, self._initargs))

    def _busy(self) -> list:
        """The worker processes running a task (the stall watch's question; its thread asks)."""
        starts, running = self._starts, self._task_pids
        try:
            while not starts.empty():
                task, pid = starts.get()
                running[task] = pid
            processes = dict(getattr(self.executor, "_processes", None) or {})
        except (OSError, ValueError, RuntimeError):  # the pool was rebuilt or closed meanwhile: ask again
            return []
        busy = []
        for task, pid in list(running.items()):
            future = self.futures.get(task)
            if future is None or future.done():
                del running[task]
            elif pid in processes:
                busy.append(processes[pid])
        return busy

    @property
    def stalled(self) -> int:
        """Workers killed because they stopped running."""
        return self._watch.killed

    def _run(self, task: int) -> None:
        fn, args = self.units[task]
        try:
            self.futures[task] = self.executor.submit(_started, task, fn, *args)
            self.handed[task] = self.next_handed
            self.next_handed += 1
        except concurrent.futures.process.BrokenProcessPool as exc:
            # a worker died since the last wait: the task fails like the running ones, and wait_any
            # rebuilds the pool and runs them all again
            self.futures[task] = concurrent.futures.Future()
            self.futures[task].set_exception(exc)

    def submit(self, fn, *args) -> int:
        task = self.next_id
        self.next_id += 1
        self.units[task] = (fn, args)
        self._run(task)
        return task

    def wait_any(self, pending) -> list[tuple[int, object]]:
        while True:
            done, _ = concurrent.futures.wait([self.futures[t] for t in pending],
                                              return_when=concurrent.futures.FIRST_COMPLETED)
            finished, broken = [], False
            for task in pending:
                future = self.futures[task]
                if future not in done:
                    continue
                error = future.exception()
                if isinstance(error, concurrent.futures.process.BrokenProcessPool):
                    broken = True
                elif error is not None:
                    raise error
                else:
                    finished.append((task, future.result()))
            if broken:
                self._check_initializer()
                done_tasks = {task for task, _ in finished}
                self._recover([t for t in pending if t not in done_tasks])
            if finished:
                for task, _ in finished:
                    self.futures.pop(task), self.units.pop(task), self.handed.pop(task, None)
                return finished

    def imap(self, fn, items, ordered: bool = True):
        """``fn(item)`` for each of ``items``, as ``multiprocessing.Pool.imap`` (in order) or, with
        ``ordered=False``, ``imap_unordered`` (as they finish) gives them. Only ``workers`` items are
        submitted at a time: a worker's death is charged to the unfinished tasks, which are then the
        running ones, not every item still waiting (three unrelated deaths ended a long build)."""
        items = iter(items)
        tasks, pending, finished, first = [], set(), {}, 0

        def fill():
            for item in items:
                tasks.append(self.submit(fn, item))
                pending.add(tasks[-1])
                if len(pending) >= self.workers:
                    return

        fill()
        while pending:
            for task, result in self.wait_any(pending):
                pending.discard(task)
                finished[task] = result
                if not ordered:
                    yield finished.pop(task)
            while ordered and first < len(tasks) and tasks[first] in finished:
                yield finished.pop(tasks[first])
                first += 1
            fill()

    def imap_unordered(self, fn, items):
        return self.imap(fn, items, ordered=False)

    def _running(self, unfinished) -> set:
        """Of ``unfinished``, the tasks the dead pool was running: its workers take tasks in the
        order it got them, so the first ``workers`` of those not finished. The others only waited:
        the death is not charged to them (all are where none of them seems to have run)."""
        ahead = sorted((t for t in self.futures if t in self.handed and not _succeeded(self.futures[t])),
                       key=self.handed.get)
        return set(ahead[:self.workers]) & set(unfinished) or set(unfinished)

    def _check_initializer(self) -> None:
        """WorkerInitError if a worker's initializer raised: the pool broke for that, not a lost worker."""
        if self._init_errors is not None and not self._init_errors.empty():
            init = self._initializer
            name = f"{getattr(init, '__module__', None) or '?'}.{getattr(init, '__qualname__', repr(init))}"
            raise WorkerInitError(f"the worker initializer {name} failed: {self._init_errors.get()}")

    def _recover(self, unfinished) -> None:
        """A worker died: kill the broken pool and run the unfinished tasks again on a new one."""
        running = self._running(unfinished)
        self._kill()
        self.executor = self._new_executor()
        self.handed = {}
        for task in running:
            self.lost[task] = self.lost.get(task, 0) + 1
        # a task running beside the one that kills its worker is charged too: both are named
        over = sorted(t for t in running if self.lost[t] > self.retries)
        if over:
            stopped = (f" ({self.stalled} of the deaths: stopped running, killed after {self._watch.seconds:g} s "
                       f"without CPU time)" if self.stalled else "")
            raise WorkerLostError("a worker died " + " or ".join(f"{self.lost[t]} times {self._what(self.units[t][1])}"
                                                                 for t in over) + f"{stopped}; {self._hint}")
        for task in unfinished:
            self._run(task)

    def cancel(self, pending) -> None:
        """Forget these tasks: queued ones never start; a running one runs to its end."""
        for task in pending:
            future = self.futures.pop(task, None)
            if future is not None:
                future.cancel()
            self.units.pop(task, None)
            self.handed.pop(task, None)

    def _kill(self) -> None:
        # shutdown() alone lets running tasks finish (minutes); their processes are killed instead
        processes = list((getattr(self.executor, "_processes", None) or {}).values())
        manager = getattr(self.executor, "_executor_manager_thread", None)
        self.executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.kill()
        for process in processes:
            process.join(5)
        # let the executor's manager thread see the dead workers and close its wake-up pipe now: at
        # exit, Python 3.11's concurrent.futures could write to that pipe while the thread closes it
        # ("Exception ignored ... Bad file descriptor" after the one-line message)
        if manager is not None:
            manager.join(5)

    def close(self, kill: bool = False) -> None:
        self._watch.close()
        if kill:
            self._kill()
        else:
            self.executor.shutdown(wait=True)
        if self._init_errors is not None:
            self._init_errors.close()
        self._starts.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(kill=True)  # at once, also on Ctrl-C: what a task finished is written by then


_STARTS = None  # in a worker: where it says which task it starts


def _started(task: int, fn, *args):
    """In a worker: say that this process runs ``task``, then run it."""
    _STARTS.put((task, os.getpid()))
    return fn(*args)


def _initialize(errors, starts, initializer, initargs) -> None:
    """A worker's initializer: ``initializer(*initargs)``; if it raises, its type and first line go
    to ``errors`` for the parent, and the worker exits (the pool breaks, as it does on its own)."""
    global _STARTS
    _STARTS = starts
    if initializer is None:
        return
    try:
        initializer(*initargs)
    except Exception as exc:
        first = first_line(exc)
        errors.put(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)
        os._exit(1)  # not an exception: ProcessPoolExecutor would print its traceback in every worker


def _succeeded(future: concurrent.futures.Future) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None
