"""Worker processes that end with their parent: no orphan keeps a core and its memory busy.

A spawned worker is not told when its parent dies (kill -9, out of memory): it would finish its task
and then wait on its queue forever. ``exit_with_parent()``, called first thing in a worker, ends it
within about a second: on Linux the kernel sends it SIGKILL (``prctl(PR_SET_PDEATHSIG)``), even in
compiled code that holds the GIL; everywhere a daemon thread exits once ``os.getppid()`` changes.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1


def _set_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: the polling thread still covers it
        pass


def exit_with_parent(parent_pid: int | None = None, interval: float = 0.5) -> None:
    """End this process soon after ``parent_pid`` (default: the current parent) is gone."""
    parent = os.getppid() if parent_pid is None else parent_pid
    _set_death_signal()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)

    def watch():
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
