"""Training under faults a careless or hostile user causes (issue 14 items 6-8, issue 13 item 1):
bad evaluation specs, SIGTERM and kill -9, diverging losses, damaged replay and checkpoint files,
self-play workers that die mid-chunk."""

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import train
from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from agents.config import TrainConfig
from agents.network import ConfigError
from agents.parallel import InlinePool, ProcessPool
from agents.selfplay import run_chunk
from agents.trainer import Trainer, TrainingDiverged, chunk_sizes

from test_train import tiny as train_tiny  # noqa: E402  (pytest puts tests/ on the path)

ROOT = Path(__file__).resolve().parents[1]


def tiny(tmp_path, run="t", **kw):
    """test_train's tiny config, without in-loop evaluation unless a test asks for it."""
    return train_tiny(tmp_path, run, **{"eval_every": 0, "eval_opponents": "random", **kw})


def _flags(cfg: TrainConfig, **over) -> list[str]:
    out = []
    for k, v in {**cfg.to_dict(), **over}.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, bool):
            out.append(flag if v else "--no-" + k.replace("_", "-"))
        else:
            out += [flag, str(v)]
    return out


def _children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has already exited


def _wait_gone(pids, seconds=5.0) -> list[int]:
    deadline = time.time() + seconds
    while time.time() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


# ------------------------------------------------------------------ (6) every spec checked first

@pytest.mark.parametrize("opponents,named", [("random,mcts:-5", "mcts:-5"),
                                             ("az:/nonexistent.pt", "/nonexistent.pt"),
                                             ("random,perfect:bogus", "perfect:bogus")])
def test_bad_eval_opponent_fails_before_training(tmp_path, capsys, opponents, named):
    cfg = tiny(tmp_path, eval_every=1)
    rc = train.main(_flags(cfg, eval_opponents=opponents))
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("error: eval_opponents") and named in err
    assert not (tmp_path / "t" / "latest.pt").exists() and not (tmp_path / "t" / "log.csv").exists()
    with pytest.raises(ConfigError, match="eval_opponents"):
        TrainConfig(**{**cfg.to_dict(), "eval_opponents": opponents}).validate()


def test_eval_opponents_unused_when_never_evaluating(tmp_path):
    tiny(tmp_path, eval_every=0, eval_opponents="az:/nonexistent.pt").validate()


# ------------------------------------------------------------------ (8) divergence, damaged files

def test_nan_loss_stops_and_keeps_last_good_checkpoint(tmp_path, capsys):
    cfg = tiny(tmp_path, iterations=6)
    Trainer(cfg).run(stop_after=2)  # a good checkpoint at iteration 2
    before = load_checkpoint(tmp_path / "t" / "latest.pt")
    rc = train.main(["--resume", "--out-dir", str(tmp_path), "--run", "t", "--lr", "1e30"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "diverged" in err and "--lr" in err
    assert "latest.pt (iteration 2) is kept" in err
    after = load_checkpoint(tmp_path / "t" / "latest.pt")
    assert after["counters"] == before["counters"]
    assert all(torch.isfinite(v).all() for v in after["model"].values())
    assert not (tmp_path / "t" / "best.pt").exists() or all(
        torch.isfinite(v).all() for v in load_checkpoint(tmp_path / "t" / "best.pt")["model"].values())


def test_nan_loss_in_a_fresh_run_saves_nothing(tmp_path):
    t = Trainer(tiny(tmp_path, lr=1e30))
    with pytest.raises(TrainingDiverged, match="no checkpoint had been written yet"):
        t.run()
    assert not (tmp_path / "t" / "latest.pt").exists() and not (tmp_path / "t" / "best.pt").exists()


def test_truncated_replay_on_resume_is_a_clear_error(tmp_path, capsys):
    Trainer(tiny(tmp_path)).run(stop_after=2)
    (replay,) = (tmp_path / "t").glob("replay_*.npz")
    replay.write_bytes(replay.read_bytes()[:500])
    with pytest.raises(CheckpointError, match=replay.name) as e:
        Trainer(tiny(tmp_path), resume=True)
    assert "without --resume" in str(e.value)
    rc = train.main(["--resume", "--out-dir", str(tmp_path), "--run", "t"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and replay.name in err


def _flip_a_weight_bit(path: Path, tensor: torch.Tensor) -> None:
    raw = bytearray(path.read_bytes())
    data = tensor.numpy().tobytes()
    at = raw.find(data)
    assert at >= 0, "the tensor's bytes are stored as they are in the file"
    raw[at + len(data) // 2] ^= 0x10
    path.write_bytes(bytes(raw))


def test_bit_flip_in_weights_is_refused(tmp_path):
    w = torch.linspace(-1, 1, 257)
    entry = {"game": "highway", "net_config": {}, "model": {"w": w}}
    ck = tmp_path / "a.pt"
    save_checkpoint(ck, entry)
    assert torch.equal(load_checkpoint(ck)["model"]["w"], w)
    _flip_a_weight_bit(ck, w)
    assert not torch.equal(torch.load(ck, weights_only=True)["model"]["w"], w)  # torch loads it
    with pytest.raises(CheckpointError, match="a.pt.*checksum"):
        load_checkpoint(ck)


def test_checkpoints_without_checksum_still_load(tmp_path):
    shipped = load_checkpoint(ROOT / "agents" / "pretrained" / "highway_az.pt")
    legacy = tmp_path / "legacy.pt"  # the shipped network as written before checkpoints carried a checksum
    torch.save({k: v for k, v in shipped.items() if k != "sha256"}, legacy)
    stamp = legacy.stat().st_mtime_ns
    data = load_checkpoint(legacy)
    assert "sha256" not in data and legacy.stat().st_mtime_ns == stamp
    old = tmp_path / "old.pt"
    torch.save({"format": data["format"], "game": "highway", "net_config": {}, "model": {}}, old)
    assert load_checkpoint(old)["game"] == "highway"


# ------------------------------------------------------------------ (7) signals and orphans

def test_sigterm_saves_like_ctrl_c(tmp_path, capsys):
    cfg = tiny(tmp_path, iterations=10_000, checkpoint_every=10_000)

    def term_when_training():
        deadline = time.time() + 120
        while not (tmp_path / "t" / "log.csv").exists() and time.time() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    before = signal.getsignal(signal.SIGTERM)  # not always SIG_DFL: an in-process ray.init installs its own
    killer = threading.Thread(target=term_when_training, daemon=True)
    killer.start()
    rc = train.main(_flags(cfg))
    killer.join()
    assert rc == 128 + signal.SIGTERM
    assert "interrupted: saved" in capsys.readouterr().out
    assert load_checkpoint(tmp_path / "t" / "latest.pt")["counters"]["iteration"] >= 1
    assert signal.getsignal(signal.SIGTERM) is before  # handler restored


def _interrupt_inside_iteration(monkeypatch, iteration: int, signals: int = 1) -> None:
    """Send ``signals`` SIGINTs to this process as iteration ``iteration`` starts its SGD steps
    (its games already in the replay): what a Ctrl-C at that moment does."""
    train_steps = Trainer.train_steps

    def interrupted(self, n):
        if self.counters["iteration"] + 1 == iteration:
            for _ in range(signals):
                os.kill(os.getpid(), signal.SIGINT)
        return train_steps(self, n)

    monkeypatch.setattr(Trainer, "train_steps", interrupted)


def _log_rows(run_dir: Path) -> list[dict]:
    import csv

    with open(run_dir / "log.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("signals, saved_at", [(1, 3), (2, 2)], ids=["ctrl-c", "ctrl-c-twice"])
def test_ctrl_c_inside_an_iteration_resumes_as_an_uninterrupted_run(tmp_path, monkeypatch, signals, saved_at):
    calm = Trainer(tiny(tmp_path, "calm"))
    calm.run()
    cut = Trainer(tiny(tmp_path, "cut"))
    with monkeypatch.context() as m:
        _interrupt_inside_iteration(m, 3, signals)
        with pytest.raises(KeyboardInterrupt):
            cut.run()
    # once: iteration 3 is finished, then saved; twice: it stops at once, latest.pt stays at 2
    assert load_checkpoint(tmp_path / "cut" / "latest.pt")["counters"]["iteration"] == saved_at
    resumed = Trainer(tiny(tmp_path, "cut"), resume=True)
    resumed.run()
    assert resumed.counters == {**calm.counters, "elapsed": resumed.counters["elapsed"]}  # no games counted twice
    sa, sb = calm.net.state_dict(), resumed.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert [r["iteration"] for r in _log_rows(tmp_path / "cut")] == ["1", "2", "3", "4"]


def test_an_evaluation_in_the_loop_cut_by_ctrl_c_runs_again_on_resume(tmp_path, monkeypatch):
    kw = dict(eval_every=2, eval_games=4, eval_background=False)
    calm = Trainer(tiny(tmp_path, "calm", **kw))
    calm.run()
    import agents.trainer

    evaluate_net = agents.trainer.evaluate_net

    def interrupted(*args, **kwargs):
        monkeypatch.setattr(agents.trainer, "evaluate_net", evaluate_net)
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.trainer, "evaluate_net", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Trainer(tiny(tmp_path, "cut", **kw)).run()
    assert load_checkpoint(tmp_path / "cut" / "latest.pt")["counters"]["iteration"] == 2
    Trainer(tiny(tmp_path, "cut", **kw), resume=True).run()
    calm_rows, cut_rows = _log_rows(tmp_path / "calm"), _log_rows(tmp_path / "cut")
    assert [r["eval_mean"] for r in cut_rows] == [r["eval_mean"] for r in calm_rows]
    assert cut_rows[1]["eval_mean"] != ""  # iteration 2's evaluation, cut short, was run on resume


def test_ctrl_c_while_an_evaluation_writes_best_pt_keeps_it_pending(tmp_path, monkeypatch):
    """The evaluation was taken off the pending ones before its result was recorded: a Ctrl-C while
    best.pt was written saved latest.pt with the new best score but neither best.pt nor the
    evaluation, so the resumed run never wrote that network to best.pt."""
    import agents.trainer

    kw = dict(eval_every=1, eval_games=4, iterations=4, best_by="score")
    writes = []

    def counted(path, entry):
        writes.append(Path(path).name)
        save_checkpoint(path, entry)

    monkeypatch.setattr(agents.trainer, "save_checkpoint", counted)
    Trainer(tiny(tmp_path, "calm", **kw)).run()
    last = writes.count("best.pt")  # the write of the best evaluation's network

    def interrupted(path, entry):
        writes.append(Path(path).name)
        if writes.count("best.pt") == 2 * last:
            monkeypatch.setattr(agents.trainer, "save_checkpoint", save_checkpoint)
            raise KeyboardInterrupt
        save_checkpoint(path, entry)

    monkeypatch.setattr(agents.trainer, "save_checkpoint", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Trainer(tiny(tmp_path, "cut", **kw)).run()
    assert load_checkpoint(tmp_path / "cut" / "latest.pt")["eval_pending"]  # the evaluation cut short
    Trainer(tiny(tmp_path, "cut", **kw), resume=True).run()
    assert [r["eval_mean"] for r in _log_rows(tmp_path / "cut")] == [r["eval_mean"] for r in _log_rows(tmp_path / "calm")]
    best = [load_checkpoint(tmp_path / run / "best.pt")["model"] for run in ("calm", "cut")]
    assert all(torch.equal(best[0][k], best[1][k]) for k in best[0])


def _pool_failing_at_collect(monkeypatch, call: int, error: Exception) -> None:
    """The trainer's self-play pool: in-process, raising ``error`` at its ``call``-th collect."""
    import agents.trainer

    class Failing(InlinePool):
        collected = 0

        def collect(self):
            Failing.collected += 1
            if Failing.collected == call:
                raise error
            return super().collect()

    monkeypatch.setattr(agents.trainer, "make_pool", lambda *a, **k: Failing())


def test_a_run_stopped_by_a_lost_cluster_keeps_its_iterations(tmp_path, monkeypatch):
    """A pool error between iterations (a Ray chunk lost more often than its retries, no worker
    that can start) ended the run without saving: with the default --checkpoint-every 5, up to four
    iterations were lost, and a run stopped before its first checkpoint had nothing to resume."""
    from highway_env.ray_tasks import RayClusterError

    calm = Trainer(tiny(tmp_path, "calm"))
    calm.run()
    with monkeypatch.context() as m:
        _pool_failing_at_collect(m, 3, RayClusterError("self-play chunk 0 was lost with its Ray worker or node "
                                                       "more often than its retries allow"))
        with pytest.raises(RayClusterError):
            Trainer(tiny(tmp_path, "cut", checkpoint_every=100)).run()
    assert load_checkpoint(tmp_path / "cut" / "latest.pt")["counters"]["iteration"] == 2
    resumed = Trainer(tiny(tmp_path, "cut"), resume=True)
    resumed.run()
    sa, sb = calm.net.state_dict(), resumed.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa) and resumed.counters["games"] == calm.counters["games"]


@pytest.mark.parametrize("log", ["iteration,steps\nabc,1\n", "iteration,steps\n1,2\n\xff\xfe,3\n",
                                 "iteration,steps\n1,2\n\0\0\0\0"],
                         ids=["not-a-number", "not-utf8", "nul-bytes"])
def test_a_damaged_log_on_resume_is_a_one_line_error_naming_it(tmp_path, capsys, log):
    """log.csv that does not parse stopped the resumed run with a traceback from the CSV reader."""
    cfg = tiny(tmp_path, iterations=2)
    Trainer(cfg).run()
    (tmp_path / "t" / "log.csv").write_bytes(log.encode("latin-1"))
    assert train.main(_flags(cfg, iterations=3) + ["--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert "log.csv" in err and "damaged" in err and "\n" not in err


def test_workers_that_keep_dying_end_train_py_in_one_line_and_keep_its_iterations(tmp_path, monkeypatch, capsys):
    """Local self-play workers (or the evaluation process) killed past their restarts ended
    train.py with a RuntimeError traceback."""
    from agents.parallel import WorkersLostError

    _pool_failing_at_collect(monkeypatch, 3, WorkersLostError(
        "no self-play worker could be started: 4 worker processes in a row died before finishing a chunk "
        "(last exit code -9)"))
    cfg = tiny(tmp_path, checkpoint_every=100)
    assert train.main(_flags(cfg)) == 2
    err = capsys.readouterr().err
    assert "error: no self-play worker could be started" in err and "Traceback" not in err
    assert "saved" in err and load_checkpoint(tmp_path / "t" / "latest.pt")["counters"]["iteration"] == 2


_KILLED_WHILE_SAVING = """
import sys, time
from highway_env.atomic_files import atomic_write

def write(tmp):
    with open(tmp, "wb") as f:
        f.write(b"half a replay")
        f.flush()
        print("writing", flush=True)
        time.sleep(60)

atomic_write(sys.argv[1], write)
"""


def test_the_temp_file_of_a_run_killed_while_saving_is_removed_on_resume(tmp_path):
    """kill -9 while latest.pt's replay was written left its temp file (as large as the replay)
    in the run folder for good, one more each time."""
    cfg = tiny(tmp_path, iterations=2)
    Trainer(cfg).run()
    run = tmp_path / "t"
    saving = subprocess.Popen([sys.executable, "-c", _KILLED_WHILE_SAVING, str(run / "replay_000003.npz")],
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert saving.stdout.readline().strip() == "writing"
    saving.kill()
    saving.wait()
    assert len(list(run.glob(".replay_000003.npz.*.tmp"))) == 1
    Trainer(tiny(tmp_path, iterations=3), resume=True).run()
    assert list(run.glob(".*.tmp")) == [] and load_checkpoint(run / "latest.pt")["counters"]["iteration"] == 3


class _FakeSummaryWriter:
    """torch's SummaryWriter as far as the trainer uses it: events queue until flushed, as the
    real one's (a kill -9 loses the queue)."""
    made: list = []

    def __init__(self, logdir, purge_step=None):
        self.queued, self.written = [], []
        _FakeSummaryWriter.made.append(self)

    def add_scalar(self, tag, value, step):
        self.queued.append((tag, step, value))

    def flush(self):
        self.written += self.queued
        self.queued = []

    def close(self):
        self.flush()


@pytest.fixture()
def fake_tensorboard(monkeypatch):
    import types

    module = types.ModuleType("torch.utils.tensorboard")
    module.SummaryWriter = _FakeSummaryWriter
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", module)
    _FakeSummaryWriter.made = []
    return _FakeSummaryWriter


def test_tensorboard_events_are_on_disk_when_a_checkpoint_is_written(tmp_path, monkeypatch, fake_tensorboard):
    """A resume purges TensorBoard's steps past its checkpoint and writes them again; the steps up to
    it are not written again, so those still queued in the writer at a kill -9 were lost."""
    queued_at_save = []
    save = Trainer.save
    monkeypatch.setattr(Trainer, "save", lambda self: (queued_at_save.append(
        [e for w in fake_tensorboard.made for e in w.queued]), save(self))[1])
    Trainer(tiny(tmp_path, tensorboard=True, eval_every=2, eval_games=4)).run()
    assert len(queued_at_save) == 2 and queued_at_save == [[], []]
    assert {s for w in fake_tensorboard.made for tag, s, _ in w.written if tag == "eval_mean"} == {2, 4}


def test_tensorboard_events_are_on_disk_when_an_interrupted_run_saves(tmp_path, monkeypatch, fake_tensorboard):
    """The checkpoint that Ctrl-C writes flushes TensorBoard first too (the three checkpoints of the
    loop are one method; the flush stays out of save(), whose queue this hook reads)."""
    queued_at_save = []
    save = Trainer.save
    monkeypatch.setattr(Trainer, "save", lambda self: (queued_at_save.append(
        [e for w in fake_tensorboard.made for e in w.queued]), save(self))[1])
    trainer = Trainer(tiny(tmp_path, tensorboard=True))

    def interrupt(*args, **kwargs):  # Ctrl-C after the first iteration, between iterations
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer, "_finished_evaluations", interrupt)
    with pytest.raises(KeyboardInterrupt):
        trainer.run()
    assert queued_at_save == [[]] and any(w.written for w in fake_tensorboard.made)


def test_a_resumed_run_reads_its_log_once(tmp_path, monkeypatch):
    """log.csv was read twice on resume: once to refuse a damaged log early, again by the logger."""
    import agents.trainer as trainer_module

    Trainer(tiny(tmp_path)).run(stop_after=2)
    reads = []
    read = trainer_module.read_log_rows
    monkeypatch.setattr(trainer_module, "read_log_rows", lambda *a: (reads.append(a), read(*a))[1])
    resumed = Trainer(tiny(tmp_path), resume=True)
    resumed.run()
    assert len(reads) == 1
    assert [r["iteration"] for r in _log_rows(tmp_path / "t")] == [str(i) for i in range(1, 5)]


def test_an_evaluation_run_again_on_resume_is_not_logged_twice(tmp_path, fake_tensorboard):
    """An evaluation still pending in latest.pt, but recorded before the run was killed, is run again
    on resume: its TensorBoard point at a step before the checkpoint was written a second time."""
    from agents.trainer import _Logger, read_log_rows

    cfg = tiny(tmp_path, tensorboard=True)
    (tmp_path / "t").mkdir()
    first = _Logger(tmp_path / "t", cfg, 0, [])
    for i in (1, 2, 3):
        first.log({"iteration": i, "loss": 1.0 / i})
    first.update(2, {"eval_mean": 0.75})  # recorded after latest.pt (iteration 3) was saved with it pending
    first.tb.flush()  # then killed, its events on disk
    resumed = _Logger(tmp_path / "t", cfg, 3, read_log_rows(tmp_path / "t" / "log.csv", 3))
    resumed.update(2, {"eval_mean": 0.75})  # the same evaluation, run again
    resumed.close()
    points = [e for w in fake_tensorboard.made for e in w.written if e[0] == "eval_mean"]
    assert points == [("eval_mean", 2, 0.75)]
    assert _log_rows(tmp_path / "t")[1]["eval_mean"] == "0.75"


def test_a_second_training_process_on_a_running_run_is_refused(tmp_path, capsys):
    """A fresh run started while another trained in the same folder moved that folder aside under
    it: the other's last checkpoints landed in the new run's folder and were overwritten."""
    from highway_env.run_lock import lock_run

    cfg = tiny(tmp_path, iterations=1)
    Trainer(cfg).run()
    held = lock_run(tmp_path, "t")  # as the running process holds it
    before = sorted(p.name for p in tmp_path.iterdir())
    try:
        for extra in ([], ["--resume"]):
            assert train.main(_flags(cfg, iterations=2) + extra) == 2
            err = capsys.readouterr().err
            assert "run 't'" in err and "in use by another training process" in err and str(os.getpid()) in err
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # not moved aside
    finally:
        held.close()
    assert train.main(_flags(cfg, iterations=2) + ["--resume"]) == 0  # free again once it ends


def test_a_run_folder_trained_under_two_names_is_locked_under_both(tmp_path, monkeypatch):
    """A run folder that is a symlink (runs/a -> b) was locked only under the name given: a resume
    of 'a' and one of 'b' trained one folder at once."""
    from highway_env.run_lock import RunInUseError, lock_run

    (tmp_path / "b").mkdir()
    (tmp_path / "a").symlink_to("b")
    for first, second in (("a", "b"), ("b", "a")):
        held = lock_run(tmp_path, first)
        try:
            with pytest.raises(RunInUseError, match=f"run '{second}'.*pid {os.getpid()}"):
                lock_run(tmp_path, second)
        finally:
            held.close()
    lock_run(tmp_path, "a").close()  # both let go
    lock_run(tmp_path, "b").close()
    read_only = tmp_path / "read-only"
    (read_only / "d").mkdir(parents=True)
    (read_only / "c").symlink_to("d")
    _lock_files_refused_in(read_only, monkeypatch)  # both names lock d/.lock: once, not against itself
    held = lock_run(read_only, "c")
    assert (read_only / "d" / ".lock").read_text() == str(os.getpid())
    with pytest.raises(RunInUseError):
        lock_run(read_only, "d")
    held.close()


def test_the_run_lock_of_a_killed_process_is_free(tmp_path):
    from highway_env.run_lock import RunInUseError, lock_run

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from highway_env.run_lock import lock_run; "
                               "f = lock_run(sys.argv[1], 'r'); print('held', flush=True); time.sleep(60)",
                               str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunInUseError, match=f"pid {holder.pid}"):
            lock_run(tmp_path, "r")
        holder.kill()
        holder.wait()
        lock_run(tmp_path, "r").close()  # kill -9 left no stale lock
    finally:
        holder.kill()


def _lock_files_refused_in(folder, monkeypatch):
    """The run lock cannot make a new file in ``folder``, as in a read-only one (chmod a-w does not
    stop root, who runs CI here)."""
    import errno

    import highway_env.run_lock as run_lock

    real_open = open

    def read_only(path, *args, **kwargs):
        if Path(path).parent == folder and not Path(path).exists():
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(run_lock, "open", read_only, raising=False)


def test_resume_with_a_read_only_out_dir_locks_inside_the_run_folder(tmp_path, monkeypatch, capsys):
    """The lock file beside the run folder cannot be made in a read-only --out-dir: --resume of a
    writable run folder there failed at the lock with a permission error, and worked before it."""
    import highway_env.run_lock as run_lock

    cfg = tiny(tmp_path, iterations=1)
    Trainer(cfg).run()
    assert not (tmp_path / ".t.lock").exists()  # as a run made before the lock existed
    _lock_files_refused_in(tmp_path, monkeypatch)
    tmp_path.chmod(0o555)
    try:
        held = run_lock.lock_run(tmp_path, "t")  # as a resume still training there holds it
        assert (tmp_path / "t" / ".lock").read_text() == str(os.getpid())
        assert train.main(_flags(cfg, iterations=2) + ["--resume"]) == 2  # a second resume is still refused
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "in use by another training process" in err and str(os.getpid()) in err
        held.close()
        assert train.main(_flags(cfg, iterations=2) + ["--resume"]) == 0, capsys.readouterr().err
        assert load_checkpoint(tmp_path / "t" / "latest.pt")["counters"]["iteration"] == 2
        with pytest.raises(PermissionError):  # nothing to lock inside: the error as it is
            run_lock.lock_run(tmp_path, "fresh")
    finally:
        tmp_path.chmod(0o755)


def test_a_fresh_run_in_its_empty_folder_under_a_read_only_out_dir_stays_there(tmp_path, monkeypatch, capsys):
    """A run folder made for the run (writable, empty) in a read-only --out-dir: the lock made inside
    it was taken for an earlier run, so the folder was moved aside (with the lock: a resume of the
    new folder was not refused), or, where the out-dir refuses the rename, the run failed."""
    cfg = tiny(tmp_path, iterations=1)
    (tmp_path / "t").mkdir()
    _lock_files_refused_in(tmp_path, monkeypatch)
    assert train.main(_flags(cfg)) == 0
    assert "held an earlier run" not in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]
    assert load_checkpoint(tmp_path / "t" / "latest.pt")["counters"]["iteration"] == 1


_GRANDCHILD = """
import sys, time
from highway_env.parent_watch import exit_with_parent
exit_with_parent()
print("ready", flush=True)
time.sleep(120)
"""
_CHILD = """
import subprocess, sys, time
p = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.PIPE, text=True)
p.stdout.readline()
print(p.pid, flush=True)
time.sleep(120)
"""


def test_worker_ends_soon_after_its_parent_is_killed():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, _GRANDCHILD], stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        grandchild = int(child.stdout.readline())
        assert _alive(grandchild)
        child.kill()
        child.wait()
        assert _wait_gone([grandchild], 5.0) == []
    finally:
        child.kill()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_train_py_killed_leaves_no_process(tmp_path, sig):
    cfg = tiny(tmp_path, iterations=10_000, checkpoint_every=10_000, workers=1)
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *_flags(cfg)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.time() + 180
        while not (tmp_path / "t" / "log.csv").exists() and time.time() < deadline:
            time.sleep(0.1)
        kids = _children(proc.pid)
        assert kids, "a self-play worker (and the resource tracker) run beside the trainer"
        proc.send_signal(sig)
        rc = proc.wait(timeout=60)
        assert _wait_gone(kids, 5.0) == []
        if sig == signal.SIGTERM:
            assert rc == 128 + signal.SIGTERM
            assert load_checkpoint(tmp_path / "t" / "latest.pt")["counters"]["iteration"] >= 1
    finally:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------ (issue 13) the local pool

def test_chunks_fill_every_worker():
    assert chunk_sizes(256, 128, 0) == [128, 128] == chunk_sizes(256, 128, 2)
    assert chunk_sizes(12, 5, 1) == [5, 5, 2]  # as before: few workers keep the batch split
    assert chunk_sizes(256, 128, 8) == [32] * 8
    assert chunk_sizes(10, 128, 4) == [3, 3, 2, 2]
    assert chunk_sizes(3, 128, 16) == [1, 1, 1]
    for g, b, w in [(256, 128, 5), (100, 7, 30), (1, 1, 3)]:
        assert sum(chunk_sizes(g, b, w)) == g and len(chunk_sizes(g, b, w)) >= min(g, w)


def _tasks(tmp_path, n_workers=0):
    t = Trainer(tiny(tmp_path, workers=n_workers))
    return t._tasks(0, t.actor_weights)


def _same_results(a, b):
    return len(a) == len(b) and all(
        np.array_equal(x.samples.states, y.samples.states) and np.array_equal(x.samples.policy, y.samples.policy)
        and x.outcomes == y.outcomes for x, y in zip(a, b))


def test_read_only_weights_load_without_warning(tmp_path):
    task = _tasks(tmp_path)[0]
    frozen = {k: v.copy() for k, v in task.weights.items()}
    for v in frozen.values():
        v.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_chunk(task._replace(weights=frozen, games=2))


def _kill_when_busy(pool, timeout=60.0, sig=signal.SIGKILL) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with pool._cond:
            busy = [w.proc.pid for w in pool._workers if w.task is not None]
        if busy:
            os.kill(busy[0], sig)
            return busy[0]
        time.sleep(0.01)
    raise AssertionError("no worker took a chunk")


def test_worker_killed_mid_chunk_is_replaced_and_its_chunk_rerun(tmp_path):
    tasks = _tasks(tmp_path)
    inline = InlinePool()
    inline.submit(tasks)
    expected = inline.collect()
    pool = ProcessPool(1)
    try:
        for _ in range(2):  # the replacement serves the next iteration too
            pool.submit(tasks)
            victim = _kill_when_busy(pool)
            assert _same_results(pool.collect(), expected)
            assert victim not in pool.worker_pids()
        assert pool.replaced >= 2 and len(pool.worker_pids()) == 1
    finally:
        pool.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stall watch reads /proc")
def test_worker_stopped_mid_chunk_is_replaced_and_its_chunk_rerun(tmp_path, capfd):
    """A worker stopped with SIGSTOP (alive, its pipe open) no longer hangs collect(): its CPU time
    stands still, so it is killed and its chunk played again, with the same results."""
    tasks = _tasks(tmp_path)
    inline = InlinePool()
    inline.submit(tasks)
    expected = inline.collect()
    pool = ProcessPool(1, stall_seconds=2.0)
    try:
        pool.submit(tasks)
        victim = _kill_when_busy(pool, sig=signal.SIGSTOP)
        assert _same_results(pool.collect(), expected)
        assert victim not in pool.worker_pids() and pool.stalled == 1 and pool.replaced == 1
        assert f"self-play worker {victim} stopped running (no CPU time for 2 s" in capfd.readouterr().err
    finally:
        pool.close()


@pytest.mark.slow  # the stopped worker replaced runs by default; this is its error path
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stall watch reads /proc")
def test_a_chunk_whose_workers_keep_stopping_fails_the_run_in_one_line(tmp_path):
    tasks = _tasks(tmp_path)[:1]
    pool = ProcessPool(1, helps=False, stall_seconds=1.0, max_stalls=0)
    try:
        pool.submit(tasks)
        _kill_when_busy(pool, sig=signal.SIGSTOP)
        with pytest.raises(RuntimeError, match=r"worker playing chunk 1 of this iteration stopped running 1 times "
                                               r"\(no CPU time for 1 s.*--workers 0"):
            pool.collect()
    finally:
        pool.close()


def test_no_worker_can_be_started_is_a_clear_error(tmp_path):
    tasks = _tasks(tmp_path)
    pool = ProcessPool(1, max_failed_starts=0)
    try:
        pool.submit(tasks)
        _kill_when_busy(pool)
        deadline = time.time() + 30
        while pool._error is None and time.time() < deadline:
            time.sleep(0.05)
        with pytest.raises(RuntimeError, match="no self-play worker could be started"):
            pool.collect()
    finally:
        pool.close()


def test_training_with_a_killed_worker_ends_with_the_undisturbed_weights(tmp_path):
    a = Trainer(tiny(tmp_path, "calm", iterations=3))
    a.run()
    b = Trainer(tiny(tmp_path, "hit", iterations=3, workers=1))
    me = os.getpid()
    killed = []

    def kill_a_worker():
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            for pid in _children(me):
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if b"spawn_main" in cmd and b"resource_tracker" not in cmd:
                    time.sleep(1.0)  # let it start playing
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_worker, daemon=True)
    killer.start()
    b.run()
    killer.join()
    assert killed and b.counters["iteration"] == 3
    sa, sb = a.net.state_dict(), b.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.slow  # the pool's own test (test_worker_stopped_mid_chunk_...) runs by default
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stall watch reads /proc")
def test_training_with_a_worker_stopped_mid_chunk_ends_with_the_undisturbed_weights(tmp_path, monkeypatch):
    import agents.trainer

    monkeypatch.setattr("highway_env.stall_watch.STALL_SECONDS", 2.0)
    longer = dict(iterations=3, games_per_iter=24, simulations=24)  # chunks the worker gets before the trainer
    a = Trainer(tiny(tmp_path, "calm", **longer))  # (which plays queued chunks too) has played them all
    a.run()
    pools = []

    def make_pool(*args, **kw):
        pools.append(ProcessPool(args[0]))
        return pools[-1]

    monkeypatch.setattr(agents.trainer, "make_pool", make_pool)
    b = Trainer(tiny(tmp_path, "stopped", workers=1, **longer))
    stopper = threading.Thread(target=lambda: _kill_when_busy(_first(pools), sig=signal.SIGSTOP), daemon=True)
    stopper.start()
    b.run()
    stopper.join()
    assert pools[0].stalled == 1 and b.counters["iteration"] == 3
    sa, sb = a.net.state_dict(), b.net.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


def _first(items: list, timeout: float = 60.0):
    deadline = time.time() + timeout
    while not items and time.time() < deadline:
        time.sleep(0.01)
    return items[0]


@pytest.mark.parametrize("content", [b"garbage", b"PK\x03\x04" + b"\x00" * 40, bytes(range(256)), b""])
def test_a_corrupt_checkpoint_is_a_one_line_error_naming_it(tmp_path, content):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(content)
    with pytest.raises(CheckpointError) as e:
        load_checkpoint(bad)
    assert "bad.pt" in str(e.value) and "\n" not in str(e.value)  # torch's own message spans a page
    assert "restore it from a backup" in str(e.value)  # and what to do


@pytest.mark.parametrize("content, named", [(b'{"run": "caf\xe9"}', "utf-8"), (b"[" * 100_000, "nested too deeply")],
                         ids=["latin-1", "deep"])
def test_a_config_file_that_is_not_utf8_is_a_one_line_error(tmp_path, capsys, content, named):
    """A config file nested deeper than the JSON parser goes was a RecursionError traceback."""
    path = tmp_path / "latin1.json"
    path.write_bytes(content)
    rc = train.main(["--config", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "latin1.json" in err and named in err, err


@pytest.mark.parametrize("flags, named", [(["--device", "cudaXYZ"], "cudaXYZ"),
                                          (["--hidden", "9" * 25], "9" * 25),
                                          (["--out-dir", "{blocker}"], "a_file")])
def test_a_refused_start_leaves_the_earlier_run_and_is_one_line(tmp_path, capsys, flags, named):
    """The earlier run was renamed aside before the device was checked; a network past int64 and an
    --out-dir under a file were tracebacks."""
    (tmp_path / "a_file").write_text("")
    earlier = tmp_path / "t" / "log.csv"
    earlier.parent.mkdir()
    earlier.write_text("iteration\n")
    flags = [f.format(blocker=tmp_path / "a_file") for f in flags]
    rc = train.main(["--out-dir", str(tmp_path), "--run", "t", "--eval-every", "0", "--no-tensorboard", *flags])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and named in err and "Traceback" not in err, err
    assert earlier.exists() and not list(tmp_path.glob("t.previous-*"))


@pytest.mark.parametrize("over, named", [({"learner_threads": 100_000}, "learner_threads"),
                                         ({"workers": 100_000}, "workers"),
                                         ({"workers": 100_000, "ray_address": "local"}, "workers")])
def test_thread_and_process_counts_past_any_machine_are_refused(tmp_path, over, named):
    """100000 learner threads or local workers exhausted the process table: a traceback, or a run
    that hung spawning workers."""
    with pytest.raises(ConfigError, match=f"{named} must be at most .* got 100000"):
        tiny(tmp_path, **over).validate()
    tiny(tmp_path, workers=100_000, ray_address="10.0.0.1:6379").validate()  # a cluster may have them


def test_chunk_planning_is_bounded_however_many_ray_workers(tmp_path):
    """More workers than games give one game a chunk, so 10**9 Ray workers plan games_per_iter
    chunks, not 10**9; but games_per_iter had no bound, and 10**9 games (chunks of 128, or of one
    with as many workers) filled the driver's memory while planning. Now it is capped."""
    from agents.config import MAX_GAMES_PER_ITER

    assert chunk_sizes(256, 128, 10**9) == [1] * 256
    assert len(chunk_sizes(MAX_GAMES_PER_ITER, 128, 10**9)) == MAX_GAMES_PER_ITER  # the most tasks an iteration plans
    cfg = tiny(tmp_path, workers=10**9, ray_address="10.0.0.1:6379", games_per_iter=MAX_GAMES_PER_ITER)
    assert cfg.validate() is cfg
    for games in (MAX_GAMES_PER_ITER + 1, 10**9):
        with pytest.raises(ConfigError, match=f"games_per_iter must be at most {MAX_GAMES_PER_ITER} .* got {games}"):
            tiny(tmp_path, workers=10**9, ray_address="10.0.0.1:6379", games_per_iter=games).validate()


@pytest.mark.parametrize("name", ["simulations", "eval_simulations", "play_simulations", "grade_simulations"])
def test_simulation_counts_share_the_specs_range(tmp_path, name):
    """--simulations 2000000 started self-play (gigabytes a search) though mcts:2000000 and
    az:PATH:2000000 are refused; every simulation count now has MAX_SIMULATIONS as its cap."""
    from agents.registry import MAX_SIMULATIONS

    assert tiny(tmp_path, **{name: MAX_SIMULATIONS}).validate()
    with pytest.raises(ConfigError, match=f"{name} must be at most {MAX_SIMULATIONS} .* got {MAX_SIMULATIONS + 1}"):
        tiny(tmp_path, **{name: MAX_SIMULATIONS + 1}).validate()


@pytest.mark.parametrize("damage, named", [({"net_config": "x"}, "'net_config' entry is a str"),
                                           ({"game_config": [1]}, "'game_config' entry is a list"),
                                           ({"model": {}}, "Missing key(s)"),
                                           ({"model": "w"}, "'model' entry is a str")])
def test_a_checkpoint_with_damaged_entries_is_a_one_line_error(tmp_path, damage, named):
    """A str net_config was an AttributeError traceback; weights that do not fit printed torch's
    list of keys, one per line."""
    from agents.registry import make_agent

    shipped = load_checkpoint(ROOT / "agents" / "pretrained" / "highway_az.pt")
    path = tmp_path / "odd.pt"
    save_checkpoint(path, {**shipped, **damage})  # a valid checksum: damaged before it was written
    with pytest.raises(CheckpointError) as e:
        make_agent(f"az:{path}")
    assert "odd.pt" in str(e.value) and named in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("config", [None, [1, 2]])
def test_resume_from_a_checkpoint_without_training_options_exits_2(tmp_path, capsys, config):
    """A best.pt copied over latest.pt exited with status 1; a damaged config was a TypeError traceback."""
    shipped = load_checkpoint(ROOT / "agents" / "pretrained" / "highway_az.pt")
    entry = {k: v for k, v in shipped.items() if k != "config"}
    if config is not None:
        entry["config"] = config
    save_checkpoint(tmp_path / "t" / "latest.pt", entry)
    rc = train.main(["--resume", "--out-dir", str(tmp_path), "--run", "t"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "latest.pt is not a training checkpoint" in err, err


_BROKEN_GAMES = '''
import numpy as np
from examples.tictactoe_game import TicTacToeGame

class WrongMask(TicTacToeGame):
    def legal_masks(self, states):
        return super().legal_masks(states)[:, :5]

class WrongObs(TicTacToeGame):
    def observations(self, states):
        return super().observations(states)[:, :1, :2]

class NoLegal(TicTacToeGame):
    def legal_masks(self, states):
        return np.zeros_like(super().legal_masks(states))

class WrongReturns(TicTacToeGame):
    def returns(self, states):
        return np.zeros((len(states), 3))

class Percent(TicTacToeGame):
    def returns(self, states):
        return 100 * super().returns(states)

class NanReturns(TicTacToeGame):
    def returns(self, states):
        return np.full(len(states), np.nan, np.float32)

class NoneReturns(TicTacToeGame):
    def returns(self, states):
        return [None] * len(states)

class MoverOneTwo(TicTacToeGame):
    def to_play(self, states):
        return super().to_play(states) + 1

class OnlyThree(TicTacToeGame):
    def __init__(self, size: int = 3):
        if size != 3:
            raise NotImplementedError("only size 3")
        super().__init__()
'''


@pytest.mark.parametrize("cls, game_config, named", [
    ("WrongMask", "", "legal_masks() returned shape (2, 5), expected (2, 9)"),
    ("WrongObs", "", "observations() returned shape (2, 1, 2, 2), expected (2, 3, 3, 2)"),
    ("NoLegal", "", "legal_masks() gives no legal move in a state that terminal() calls running"),
    ("WrongReturns", "", "returns() returned shape ("),  # (K, 3) for the K games that ended
    ("Percent", "", "outside [-1, 1]"),  # a score, not a result: the value head's tanh never reaches it
    ("NanReturns", "", "returns() gave nan for a finished game"),
    ("NoneReturns", "", "returns() gave None for a finished game, not a number"),  # was a numpy TypeError
    ("MoverOneTwo", "", "to_play() gave 2, not player 0 or 1"),
    ("OnlyThree", '{"size": 4}', """rejects game config '{"size": 4}': NotImplementedError: only size 3"""),
])
def test_a_plugged_in_game_that_breaks_the_protocol_is_one_line_error(tmp_path, monkeypatch, capsys, cls,
                                                                      game_config, named):
    """--game pkg.mod:Class whose methods return wrong shapes (or no legal move in a running state)
    failed deep in self-play (an illegal move -1, a torch shape mismatch, a numpy IndexError); a
    constructor refusing a --game-config value with its own exception type was a traceback."""
    module = f"broken_games_{cls.lower()}"
    (tmp_path / f"{module}.py").write_text(_BROKEN_GAMES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(train, "check_writable", lambda *a: pytest.fail("the run started"))
    rc = train.main(["--game", f"{module}:{cls}", "--game-config", game_config, "--out-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert named in err and f"{module}:{cls}" in err, err
    assert not (tmp_path / "out").exists()


def test_a_checkpoint_whose_game_refuses_its_options_is_a_one_line_error(tmp_path, monkeypatch):
    """A checkpoint of a user's game whose constructor now refuses the stored game_config with its
    own exception (NotImplementedError) was a traceback from az:PATH."""
    from agents.registry import make_agent

    (tmp_path / "broken_games_ckpt.py").write_text(_BROKEN_GAMES)
    monkeypatch.syspath_prepend(str(tmp_path))
    shipped = load_checkpoint(ROOT / "agents" / "pretrained" / "highway_az.pt")
    path = tmp_path / "user.pt"
    save_checkpoint(path, {**shipped, "game": "broken_games_ckpt:OnlyThree", "game_config": {"size": 4}})
    with pytest.raises(CheckpointError) as e:
        make_agent(f"az:{path}")
    assert "user.pt" in str(e.value) and "NotImplementedError: only size 3" in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("state, named", [
    ([5] * 10, "not a tic-tac-toe position"), ([1] * 9 + [0], "not a tic-tac-toe position"),
    ([0.5] * 10, "holds integers in -128..127, got [0.5"), ([300] * 10, "holds integers in -128..127, got [300"),
])
def test_a_malformed_position_of_a_plugged_in_game_is_a_game_error(state, named):
    """Game.as_state (a user's game, examples/tictactoe_game.py) truncated 0.5 to 0, raised an
    OverflowError on 300, and took cells of 5 or nine Xs as a position whose moves it then valued."""
    from agents.game import GameError
    from examples.tictactoe_game import TicTacToeGame

    with pytest.raises(GameError) as e:
        TicTacToeGame().as_state(state)
    assert named in str(e.value) and "\n" not in str(e.value)


_BOUNDED_RUN = ["--iterations", "1", "--minutes", "0", "--games-per-iter", "2", "--simulations", "2",
                "--min-replay", "1", "--eval-every", "0", "--grade-every", "0", "--best-by", "score",
                "--workers", "0", "--batch-size", "8", "--replay-size", "1000", "--hidden", "16", "--layers", "1",
                "--no-tensorboard", "--no-progress", "--learner-threads", "1"]


@pytest.mark.parametrize("flags, named", [
    (["--seed", "9" * 20], "seed must be at most 2**62"),
    (["--random-opening", "9" * 20], "random_opening must be at most 2**62"),
    (["--eval-games", "9" * 20, "--eval-every", "1", "--eval-opponents", "random"], "eval_games must be at most"),
    (["--batch-size", "2000"], "batch_size must be <= replay_size (1000)"),
    (["--replay-size", "9" * 20, "--batch-size", "8"], "replay_size 99999999999999999999 needs"),
    (["--layers", "9" * 20], "layers 99999999999999999999"),
    (["--hidden", "300000"], "hidden 300000"),
    (["--net", "resnet", "--channels", "100000"], "channels 100000"),
])
@pytest.mark.parametrize("where", ["flags", "config file"])
def test_absurd_sizes_are_one_line_errors_before_training(tmp_path, capsys, flags, named, where):
    """Each was accepted: --seed 10**20, --random-opening 10**20, --eval-games 10**20 and
    --replay-size 10**20 were tracebacks from torch or numpy (the last two after an iteration);
    --layers 10**20 built layers until memory ran out; a batch larger than the replay buffer trained
    nothing (its steps rounded down to 0 every iteration). Refused alike from a --config file."""
    argv = ["--out-dir", str(tmp_path), "--run", "t", *_BOUNDED_RUN]
    if where == "flags":
        argv += flags
    else:
        pairs = dict(zip(flags[::2], flags[1::2]))
        cfg = {k.lstrip("-").replace("-", "_"): (v if k == "--net" or k == "--eval-opponents" else int(v))
               for k, v in pairs.items()}
        (tmp_path / "c.json").write_text(__import__("json").dumps(cfg))
        argv += ["--config", str(tmp_path / "c.json")]
        argv = [a for i, a in enumerate(argv) if not (a in pairs or (i and argv[i - 1] in pairs))]
    rc = train.main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and named in err and "Traceback" not in err, err
    assert not (tmp_path / "t" / "latest.pt").exists()


def test_a_resumed_run_with_an_absurd_override_is_refused(tmp_path, capsys):
    """--resume merges the saved options with the flags, then validates them the same way."""
    assert train.main(["--out-dir", str(tmp_path), "--run", "t", *_BOUNDED_RUN]) == 0
    capsys.readouterr()
    rc = train.main(["--resume", "--out-dir", str(tmp_path), "--run", "t", "--random-opening", "9" * 20])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "random_opening must be at most" in err, err


def test_max_considered_past_the_actions_is_all_of_them(tmp_path):
    """--max-considered 10**20 asked numpy for a table of that many rows (a traceback); more
    considered actions than the game has are all of them, so the search is that of num_actions."""
    from agents.mcts import BatchedMCTS, SearchConfig, UniformEvaluator
    from agents.registry import get_game

    game = get_game("blackpath")
    states = game.initial_states(2)

    def search(m):
        mcts = BatchedMCTS(game, UniformEvaluator(game), SearchConfig(simulations=8, max_considered=m))
        return mcts.run(states, np.random.default_rng(0)).visits

    assert np.array_equal(search(10**20), search(game.num_actions))


def test_random_openings_longer_than_the_games_stop_with_them(monkeypatch):
    """The opening loop ran N rounds whatever N (--random-opening 10**9: for ever), though every
    game had ended or left its opening after a few moves."""
    from agents import selfplay
    from agents.registry import get_game

    game = get_game("blackpath")
    calls = []
    terminal = game.terminal
    monkeypatch.setattr(game, "terminal", lambda s: calls.append(1) or terminal(s))
    states = selfplay.random_openings(game, 4, np.random.default_rng(0), 10**6, 1.0)
    assert len(calls) <= game.max_game_length + 1 and terminal(states).all()
