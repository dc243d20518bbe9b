"""Busy worker processes that stop running (SIGSTOP, a deadlock) are killed, so nothing waits on them."""

import os
import signal
import subprocess
import sys
import time

import pytest

from highway_env.stall_watch import StallWatch, cpu_ticks

pytestmark = pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/stat"), reason="reads /proc (Linux)")


def test_cpu_ticks_grow_while_a_process_computes():
    before = cpu_ticks(os.getpid())
    deadline = time.process_time() + 0.1
    while time.process_time() < deadline:
        pass
    assert before is not None and cpu_ticks(os.getpid()) > before
    assert cpu_ticks(2 ** 22 + 1) is None  # above pid_max: no such process


def _spinning_child():
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def test_a_stopped_process_is_killed_and_a_computing_one_kept():
    running, stopped = _spinning_child(), _spinning_child()
    killed = []
    watch = StallWatch(lambda: [running, stopped], killed.append, seconds=1.0, interval=0.1)
    try:
        time.sleep(1.5)
        assert watch.killed == 0  # both compute
        stopped.send_signal(signal.SIGSTOP)
        assert stopped.wait(timeout=20) == -signal.SIGKILL
        assert killed == [stopped] and watch.killed == 1
        time.sleep(1.5)
        assert running.poll() is None and watch.killed == 1
    finally:
        watch.close()
        for p in (running, stopped):
            p.kill()
            p.wait()


def test_an_idle_process_is_not_watched_until_it_has_work():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    busy = []
    watch = StallWatch(lambda: busy, seconds=0.5, interval=0.1)
    try:
        time.sleep(1.2)
        assert sleeper.poll() is None and watch.killed == 0
        busy.append(sleeper)  # given work it does not do: stalled
        assert sleeper.wait(timeout=20) == -signal.SIGKILL and watch.killed == 1
    finally:
        watch.close()
        sleeper.kill()
        sleeper.wait()
