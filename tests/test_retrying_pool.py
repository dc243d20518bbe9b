"""RetryingPool (highway_env/retrying_pool.py): what a dead worker costs the tasks around it."""

import multiprocessing
import os
import signal
import time

import pytest

from highway_env.retrying_pool import RetryingPool, WorkerInitError, WorkerLostError


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


def _dies_at(item: tuple) -> str:
    """Kills its worker while ``item`` is the doomed one, else takes a moment."""
    name, doomed = item
    if name == doomed:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return name


@pytest.mark.parametrize("workers", [1, 2])
def test_a_task_that_keeps_killing_its_worker_is_named(workers):
    """Named (with the task that ran beside it each time, if any), after 3 deaths, not for ever."""
    items = [(f"t{i}", "t5") for i in range(8)]
    with RetryingPool(workers, retries=2, what=lambda args: f"running {args[0][0]}") as pool:
        with pytest.raises(WorkerLostError, match="died 3 times (running t4 or 3 times )?running t5;"):
            pending = {pool.submit(_dies_at, item) for item in items}
            while pending:
                pending -= {task for task, _ in pool.wait_any(pending)}


def _fails(x: int) -> int:
    if x == 2:
        raise ValueError(f"bad item {x}")
    return x


def test_a_task_raising_an_error_is_not_run_again():
    with RetryingPool(2) as pool:
        with pytest.raises(ValueError, match="bad item 2"):
            list(pool.imap(_fails, range(5)))
        assert pool.lost == {}


def test_units_submitted_at_once_are_charged_only_when_running(tmp_path):
    """The proof submits a goal's replies at once: each death was charged to every unit still
    waiting too, so two units that each lost a worker once ended it (retries=1)."""
    items = [str(tmp_path / f"t{i}") for i in range(6)]
    for i in (0, 1, 2, 4):  # t3 and t5 each kill their worker once
        open(items[i], "w").close()
    with RetryingPool(1, retries=1) as pool:
        pending = {pool.submit(_dies_once, item) for item in items}
        got = []
        while pending:
            for task, result in pool.wait_any(pending):
                pending.discard(task)
                got.append(result)
        # t3 and t5 charged once each (and at most the one unit queued behind a dying one)
        assert sorted(got) == [f"t{i}" for i in range(6)] and max(pool.lost.values()) == 1


def _init_fails(marker: str) -> None:
    with open(marker, "a") as f:
        f.write("started\n")
    raise ImportError("No module named 'gone'\n(a second line that stays out of the message)")


def _init_marks(marker: str) -> None:
    with open(marker, "a") as f:
        f.write("ready\n")


def test_an_initializer_that_raises_is_named_once_not_taken_for_a_lost_worker(tmp_path, capfd):
    """pool_worker_init failing on an import was reported as "a worker died 3 times ...; out of
    memory?", after three pools of workers each printed the traceback."""
    marker = str(tmp_path / "init")
    spawn = multiprocessing.get_context("spawn")  # as evaluate.py, positions build and prove start them
    with RetryingPool(2, _init_fails, (marker,), mp_context=spawn) as pool:
        with pytest.raises(WorkerInitError) as raised:
            list(pool.imap(_fails, range(4)))
    assert str(raised.value) == ("the worker initializer test_retrying_pool._init_fails failed: "
                                 "ImportError: No module named 'gone'")
    assert isinstance(raised.value, WorkerLostError)  # the commands' one-line errors catch it
    assert open(marker).read().count("started") <= 2  # one pool, not one per retry
    assert "Traceback" not in capfd.readouterr().err
    with RetryingPool(1, _init_marks, (marker + "-ok",), retries=1, mp_context=spawn) as pool:
        assert list(pool.imap(_dies_once, [str(tmp_path / "t0")])) == ["t0"]  # a lost worker is rerun still
    assert open(marker + "-ok").read().count("ready") == 2


def _stops_once(marker: str) -> str:
    """A task whose worker stops (SIGSTOP) the first time it runs it, then computes a moment."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGSTOP)
    deadline = time.process_time() + 0.2
    while time.process_time() < deadline:
        pass
    return os.path.basename(marker)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="the stall watch reads /proc")
def test_a_stopped_worker_is_killed_and_its_task_run_again(tmp_path):
    """A worker stopped with SIGSTOP kept its task for ever (the pool saw no death): it is killed
    once its CPU time stands still, and its task runs again."""
    items = [str(tmp_path / f"t{i}") for i in range(4)]
    for i in (0, 1, 3):
        open(items[i], "w").close()
    with RetryingPool(2, stall_seconds=1.0) as pool:
        assert list(pool.imap(_stops_once, items)) == [f"t{i}" for i in range(4)]
        assert pool.stalled == 1 and max(pool.lost.values()) == 1


def _always_stops(x: int) -> int:
    os.kill(os.getpid(), signal.SIGSTOP)
    return x


@pytest.mark.slow  # the stopped worker's task run again runs by default; this is its error path
@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="the stall watch reads /proc")
def test_a_task_whose_worker_always_stops_is_named():
    with RetryingPool(1, retries=1, stall_seconds=0.5, what=lambda args: f"running item {args[0]}") as pool:
        with pytest.raises(WorkerLostError, match=r"died 2 times running item 7 \(2 of the deaths: stopped running, killed after 0.5 s without "
                                                r"CPU time\); out of memory\?"):
            list(pool.imap(_always_stops, [7]))
        assert pool.stalled == 2
