"""RetryingPool (highway_env/retrying_pool.py): what a dead worker costs the tasks around it."""

import os
import signal

import pytest

from highway_env.retrying_pool import RetryingPool, WorkerLostError


def _dies_once(marker: str) -> str:
    """A task whose worker is killed the first time it runs it (kill -9, the out-of-memory killer)."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return os.path.basename(marker)


def test_a_death_is_charged_to_the_tasks_running_not_to_the_ones_waiting(tmp_path):
    """imap submitted every item at once, and each worker death counted against every unfinished
    task: two different tasks each killed once (retries=1) ended a long run with WorkerLostError
    naming a task that never ran."""
    items = [str(tmp_path / f"t{i}") for i in range(6)]
    for i in (0, 1, 2, 4):  # t3 and t5 each kill their worker once
        open(items[i], "w").close()
    with RetryingPool(1, retries=1) as pool:
        assert list(pool.imap(_dies_once, items)) == [f"t{i}" for i in range(6)]
        assert sorted(pool.lost.values()) == [1, 1]


def test_a_task_that_keeps_killing_its_worker_is_named(tmp_path):
    items = [str(tmp_path / f"t{i}") for i in range(4)]
    for i in (0, 1, 3):
        open(items[i], "w").close()
    with RetryingPool(1, retries=0, what=lambda args: f"running {os.path.basename(args[0])}") as pool:
        with pytest.raises(WorkerLostError, match="running t2;"):
            list(pool.imap(_dies_once, items))


def _fails(x: int) -> int:
    if x == 2:
        raise ValueError(f"bad item {x}")
    return x


def test_a_task_raising_an_error_is_not_run_again():
    with RetryingPool(2) as pool:
        with pytest.raises(ValueError, match="bad item 2"):
            list(pool.imap(_fails, range(5)))
        assert pool.lost == {}
