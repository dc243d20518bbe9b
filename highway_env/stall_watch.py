"""Busy worker processes that stopped running are killed, so that their pool runs the work again.

A worker that dies is noticed at once (its pipe closes); one that stops running is not: stopped
(``kill -STOP``, a debugger), deadlocked or stuck in the kernel, it holds its task for ever and the
run waits with it. The sign of all three is CPU time that no longer grows while the worker has work.
:class:`StallWatch` is a daemon thread that reads each busy worker's CPU time (``/proc``, Linux;
elsewhere it sees nothing and kills nothing) and kills those whose CPU time has stood still for
``seconds``; the pool then treats each as a worker that died: it starts a new one and runs the work
again (the work is seeded, so the result is the same). A worker whose answer waits unread in its
pipe idles rightly: the pools leave it out of ``busy()``.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

# No work a worker does while busy waits this long without using the CPU: playing, evaluating and
# starting up (imports, numba's compile) all compute. The longest wait there is, a position store's
# lock held by another process (its busy timeout, 60 s, then StoreLockedError), ends well before.
STALL_SECONDS = 180.0


def cpu_ticks(pid: int) -> int | None:
    """User plus system CPU time of process ``pid`` in clock ticks, or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2:].split()  # the command name in parentheses may hold spaces
    return int(fields[11]) + int(fields[12])  # utime and stime, fields 14 and 15 of proc(5)


class StallWatch:
    """Every ``interval`` seconds, ``busy()`` lists the processes (``multiprocessing.Process``) that
    have work; each whose CPU time has not grown for ``seconds`` is passed to ``on_kill``, then
    killed."""

    def __init__(self, busy: Callable[[], list], on_kill: Callable = lambda proc: None,
                 seconds: float | None = None, interval: float = 1.0, name: str = "stall-watch"):
        self.seconds = STALL_SECONDS if seconds is None else seconds
        self.killed = 0
        self._busy, self._on_kill, self._interval = busy, on_kill, interval
        self._since: dict[int, tuple[int, float]] = {}  # pid -> (CPU ticks, when they last changed)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def stalled(self, procs) -> list:
        """Of ``procs``, those whose CPU time has stood still for ``seconds``."""
        now = time.monotonic()
        since, out = {}, []
        for proc in procs:
            pid = proc.pid
            ticks = cpu_ticks(pid) if pid is not None else None
            if ticks is None:
                continue
            last = self._since.get(pid)
            since[pid] = last if last is not None and last[0] == ticks else (ticks, now)
            if now - since[pid][1] >= self.seconds:
                out.append(proc)
        self._since = since  # a process no longer busy starts its clock afresh when it is again
        return out

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            for proc in self.stalled(self._busy()):
                self._on_kill(proc)
                try:
                    proc.kill()  # SIGKILL ends a stopped process too
                except (OSError, ValueError):  # it ended meanwhile, or its pool closed it
                    continue
                self.killed += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
