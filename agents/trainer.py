"""The AlphaZero training loop: pipelined self-play, replay, SGD, evaluation, checkpoints, logs.

One iteration collects the self-play chunks submitted the iteration before and submits the next
ones with the current weights (workers play while the trainer learns; the data is one iteration
stale), adds the positions to the replay, trains ``replay_ratio`` samples per new position, then
grades, evaluates and checkpoints when due.

Determinism: chunks are seeded by (seed, iteration, chunk) and merged in chunk order, sampling has
its own seeded generator, evaluation changes nothing training uses, and self-play and evaluation
run with one torch thread. So with a fixed ``iterations`` count the same seed and config give the
same weights wherever the chunks run, and a resumed run ends as an uninterrupted one
(tests/test_train.py), also where Ctrl-C or SIGTERM came inside an iteration: the iteration is
finished first (:mod:`agents.interrupts`). Not so: more ``workers`` than chunks (the games are split
differently, :func:`chunk_sizes`), a ResNet at another ``learner_threads``, a run bounded by
``minutes``, CUDA.
"""

from __future__ import annotations

import csv
import math
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

from agents.alphazero import checkpoint_game
from agents.background_eval import BackgroundEvaluator, evaluate_net
from agents.checkpoint import CheckpointError, atomic_write, load_checkpoint, save_checkpoint
from agents.config import TrainConfig
from agents.grading import Grader
from agents.interrupts import InterruptsDeferred
from agents.network import ConfigError, NetConfig, build_network, masked_log_softmax
from agents.parallel import make_pool
from agents.registry import get_game
from agents.replay import ReplayBuffer, Samples
from agents.selfplay import ChunkTask
from highway_env.atomic_files import atomic_write_csv, remove_stale_temp_files
from highway_env.cli_args import first_line


def chunk_sizes(games: int, batch: int, workers: int) -> list[int]:
    """Games per self-play chunk: chunks of ``batch`` games, or, where that leaves a worker idle,
    one equal share per worker (which changes the games: same seed and worker count, same games)."""
    sizes = [batch] * (games // batch) + ([games % batch] if games % batch else [])
    if len(sizes) >= workers:
        return sizes
    n = min(games, workers)
    return [games // n + (1 if i < games % n else 0) for i in range(n)]


class TrainingDiverged(RuntimeError):
    """A training loss became NaN or infinite: the run stops without saving the broken weights."""


def _np_weights(net: torch.nn.Module) -> dict:
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def _physical_memory() -> int:
    """This machine's memory in bytes (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 0


class Trainer:
    def __init__(self, cfg: TrainConfig, resume: bool = False):
        self.cfg = cfg.validate()
        torch.set_num_threads(cfg.learner_thread_count())
        self.run_dir = Path(cfg.out_dir) / cfg.run_name()
        self.game = get_game(cfg.game, cfg.game_options())
        self.net_config = cfg.net_config(self.game.obs_shape, self.game.num_actions)
        torch.manual_seed(cfg.seed)
        try:
            self.device = torch.device(cfg.device)
        except RuntimeError as e:  # e.g. 'cuda:x'
            raise ConfigError(f"device {cfg.device!r} is not a torch device: {e}") from None
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ConfigError(f"device {cfg.device!r} given but torch sees no CUDA GPU "
                              "(use --device cpu, or a torch build with CUDA on a machine with a GPU)")
        if self.device.type == "cuda" and (self.device.index or 0) >= torch.cuda.device_count():
            raise ConfigError(f"device {cfg.device!r} given but torch sees only "
                              f"{torch.cuda.device_count()} CUDA GPU(s)")
        try:
            self.net = build_network(self.net_config).to(self.device)
        except (RuntimeError, TypeError, MemoryError) as e:  # sizes past memory, or past int64
            raise ConfigError(f"cannot build the network of {self.net_config.to_dict()} ("
                              f"{str(e).splitlines()[0][:160]}): give smaller --hidden/--layers or "
                              "--channels/--blocks") from None
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.rng = np.random.default_rng([cfg.seed, 7])
        need, memory = ReplayBuffer.nbytes(self.game, cfg.replay_size), _physical_memory()
        if memory and need > memory:  # refused now, not a MemoryError or a swapping machine later
            raise ConfigError(f"replay_size {cfg.replay_size} needs {need / 2**30:.3g} GiB for {self.game.name}, "
                              f"more than this machine's {memory / 2**30:.3g} GiB of memory: give a smaller "
                              "--replay-size")
        self.replay = ReplayBuffer(self.game, cfg.replay_size)
        self.counters = {"iteration": 0, "steps": 0, "games": 0, "positions": 0, "elapsed": 0.0,
                         "step_carry": 0.0}
        self.actor_weights = _np_weights(self.net)  # weights of the next self-play generation
        self.best_score = -math.inf
        self.last_eval: dict[str, float] = {}
        self.last_losses: dict[str, float] = {}
        self._opponents = None
        self.grader = Grader(self.game, cfg.grade_every, cfg.grade_positions,
                             cfg.search_config(cfg.grade_simulations) if cfg.grade_simulations else None,
                             cfg.device)
        self.best_by = cfg.best_by if self.grader.available else "score"
        self._evaluator: BackgroundEvaluator | None = None
        self._eval_models: dict[int, dict] = {}  # iteration -> model entry of a pending evaluation
        self._mid_iteration = False  # the state is half an iteration's: an interrupt now must not save it
        #: log.csv's rows: a resumed run's read once here (a damaged log refused now, not when the loop
        #: starts), then kept by the logger as it writes them
        self.log_rows: list[dict] = []
        if resume:
            self.load(self.run_dir / "latest.pt")
            self.log_rows = read_log_rows(self.run_dir / "log.csv", self.counters["iteration"])

    # ------------------------------------------------------------------ checkpoints
    def _model_entry(self) -> dict:
        return {"game": self.cfg.game, "game_config": self.game.config(),
                "net_config": self.net_config.to_dict(),
                "search_config": self.cfg.play_search_config().to_dict(),
                "model": {k: v.detach().cpu() for k, v in self.net.state_dict().items()}}

    def save(self) -> Path:
        """Write latest.pt (+ the replay buffer it refers to) atomically; never non-finite weights."""
        if not all(torch.isfinite(v).all() for v in self.net.state_dict().values() if v.is_floating_point()):
            raise TrainingDiverged(self._diverged_message(math.nan, self._lr()))
        self.run_dir.mkdir(parents=True, exist_ok=True)
        replay_file = None
        if self.cfg.save_replay:
            replay_file = f"replay_{self.counters['iteration']:06d}.npz"
            atomic_write(self.run_dir / replay_file, self._write_replay)
        save_checkpoint(self.run_dir / "latest.pt", {
            **self._model_entry(),
            "config": self.cfg.to_dict(),
            "optimizer": self.opt.state_dict(),
            "counters": dict(self.counters),
            "actor_weights": {k: torch.from_numpy(v) for k, v in self.actor_weights.items()},
            "rng": {"numpy": self.rng.bit_generator.state, "torch": torch.get_rng_state()},
            "best_score": self.best_score, "last_eval": dict(self.last_eval),
            "grading": self.grader.state_dict(),
            "eval_pending": [[i, m["model"]] for i, m in sorted(self._eval_models.items())],
            "replay_file": replay_file,
        })
        for old in self.run_dir.glob("replay_*.npz"):  # keep only the one latest.pt refers to
            if old.name != replay_file:
                old.unlink(missing_ok=True)
        return self.run_dir / "latest.pt"

    def _checkpoint(self, logger: "_Logger") -> None:
        """latest.pt with TensorBoard's queued events written first: a resume purges only the steps
        after the checkpoint, so events still queued at a kill -9 would be lost for good. The flush
        stays out of :meth:`save`, which writes the checkpoint alone: tests wrap ``save`` to look at
        the writer's queue as the checkpoint is written, which a flush inside it would still hold."""
        logger.flush()
        self.save()

    def _resume_note(self) -> str:
        """What this run keeps if it stops now, and how to continue it."""
        latest = self.run_dir / "latest.pt"
        if not latest.exists():
            return "no checkpoint was written yet: start the run again"
        return (f"{latest} keeps the last checkpoint: continue with python train.py --resume --out-dir "
                f"{shlex.quote(str(self.cfg.out_dir))} --run {shlex.quote(self.cfg.run_name())}")

    def save_snapshots(self) -> None:
        """Keep the network as snapshot_<M>min.pt once training has run M minutes (a resumed run
        writes the ones it has not written yet)."""
        for m in self.cfg.snapshot_times():
            path = self.run_dir / f"snapshot_{m:g}min.pt"
            if self.counters["elapsed"] >= 60.0 * m and not path.exists():
                save_checkpoint(path, self._model_entry())

    def _write_replay(self, tmp: str) -> None:
        with open(tmp, "wb") as f:  # a file object: np.savez would append .npz to a name
            np.savez(f, **self.replay.state_dict())

    def load(self, path: Path) -> None:
        data = load_checkpoint(path)
        for key in ("optimizer", "counters", "actor_weights", "rng", "config"):
            if key not in data:
                raise CheckpointError(f"checkpoint {str(path)!r} is not a training checkpoint (no {key!r})")
        checkpoint_game(data, path, self.game)  # a run of another board (--game-config) fails here, naming both
        if NetConfig.from_dict(data["net_config"]) != self.net_config:
            raise CheckpointError(f"checkpoint {str(path)!r} has net config {data['net_config']}, "
                                  f"which differs from this run's {self.net_config.to_dict()}")
        try:
            self.net.load_state_dict(data["model"])
            self.opt.load_state_dict(data["optimizer"])
        except (RuntimeError, ValueError, KeyError) as e:
            raise CheckpointError(f"checkpoint {str(path)!r} does not fit this run: {e}") from e
        self.counters.update(data["counters"])
        self.actor_weights = {k: v.numpy() for k, v in data["actor_weights"].items()}
        self.rng.bit_generator.state = data["rng"]["numpy"]
        torch.set_rng_state(data["rng"]["torch"])
        self.best_score = data.get("best_score", -math.inf)
        self.last_eval = dict(data.get("last_eval", {}))
        self.grader.load_state_dict(data.get("grading", {}))
        entry = self._model_entry()
        self._eval_models = {int(i): {**entry, "model": m} for i, m in data.get("eval_pending", [])}
        if data.get("replay_file"):
            rp = path.parent / data["replay_file"]
            try:
                with np.load(rp) as z:
                    self.replay.load_state_dict({k: z[k] for k in z.files})
            except Exception as e:  # missing, truncated (BadZipFile, EOFError), or not a replay file
                raise CheckpointError(
                    f"replay file {str(rp)!r} of checkpoint {str(path)!r} is missing or corrupt "
                    f"({type(e).__name__}: {e}); restore it, or start a fresh run (without --resume; "
                    f"az:{path} still plays)") from e

    # ------------------------------------------------------------------ pieces of an iteration
    def _tasks(self, iteration: int, weights: dict) -> list[ChunkTask]:
        c = self.cfg
        return [ChunkTask(c.game, self.net_config.to_dict(), weights, c.search_config().to_dict(), n,
                          (c.seed, iteration, i), c.temperature_moves, self.game.config(),
                          c.random_opening, c.random_opening_share)
                for i, n in enumerate(chunk_sizes(c.games_per_iter, c.selfplay_batch, c.workers))]

    def _lr(self) -> float:
        c, n = self.cfg, self.counters
        p = n["iteration"] / c.iterations if c.iterations else n["elapsed"] / (60.0 * c.minutes)
        p = min(max(p, 0.0), 1.0)
        return c.lr_final + 0.5 * (c.lr - c.lr_final) * (1.0 + math.cos(math.pi * p))

    def train_steps(self, n: int) -> dict:
        c = self.cfg
        lr = self._lr()
        for group in self.opt.param_groups:
            group["lr"] = lr
        self.net.train()
        totals = np.zeros(4)
        for _ in range(n):
            b = self.replay.sample(c.batch_size, self.rng, augment=c.augment)
            obs = torch.from_numpy(b.obs).to(self.device)
            mask = torch.from_numpy(b.mask).to(self.device)
            target = torch.from_numpy(b.policy).to(self.device)
            logits, value, score = self.net(obs)
            policy_loss = -(target * masked_log_softmax(logits, mask)).sum(1).mean()
            value_loss = torch.mean((value - torch.from_numpy(b.value).to(self.device)) ** 2)
            score_loss = torch.mean((score - torch.from_numpy(b.score).to(self.device)) ** 2)
            loss = policy_loss + c.value_weight * value_loss + c.score_weight * score_loss
            if not torch.isfinite(loss):  # before the step: what is in memory and on disk stays good
                raise TrainingDiverged(self._diverged_message(loss.item(), lr))
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            totals += [loss.item(), policy_loss.item(), value_loss.item(), score_loss.item()]
        self.counters["steps"] += n
        if n:
            self.last_losses = dict(zip(("loss", "policy_loss", "value_loss", "score_loss"), totals / n))
        self.last_losses["lr"] = lr
        return self.last_losses

    def _diverged_message(self, loss: float, lr: float) -> str:
        latest = self.run_dir / "latest.pt"
        kept = (f"the last good checkpoint {latest} (iteration {load_checkpoint(latest)['counters']['iteration']}) "
                "is kept" if latest.exists() else "no checkpoint had been written yet")
        return (f"training diverged: loss is {loss} at iteration {self.counters['iteration'] + 1} "
                f"(learning rate {lr:g}); stopped without saving, {kept}; "
                "try a lower --lr (or --resume with one)")

    def _start_evaluation(self, iteration: int, logger: "_Logger") -> None:
        """Evaluate the weights of ``iteration``: at once in the loop (train_steps puts the net back
        in training mode), or handed to the background process with a snapshot for best.pt (their
        result is recorded when it comes back)."""
        entry = self._model_entry()
        entry["model"] = {k: v.clone() for k, v in entry["model"].items()}  # not the live tensors
        self._eval_models[iteration] = entry  # pending until recorded: an interrupted run saves it
        if self.cfg.eval_background:
            self._submit_evaluation(iteration, entry)
        else:
            self._evaluate_in_loop(iteration, self.net, logger)

    def _evaluate_in_loop(self, iteration: int, net: torch.nn.Module, logger: "_Logger") -> None:
        c = self.cfg
        self._opponents = self._opponents or c.eval_agents()
        scores = evaluate_net(c, self.game, net, self._opponents, iteration, c.device)
        self._record_evaluation(iteration, scores, logger)

    def _resume_evaluations(self, logger: "_Logger") -> None:
        """The evaluations pending when the run was last saved, of their snapshots' weights."""
        for iteration, entry in sorted(self._eval_models.items()):
            if self.cfg.eval_background:
                self._submit_evaluation(iteration, entry)
            else:
                net = build_network(self.net_config).to(self.device)
                net.load_state_dict(entry["model"])
                self._evaluate_in_loop(iteration, net, logger)

    def _submit_evaluation(self, iteration: int, entry: dict) -> None:
        if self._evaluator is None:
            self._evaluator = BackgroundEvaluator(self.cfg)
        self._evaluator.submit(iteration, {k: v.numpy() for k, v in entry["model"].items()})

    def _record_evaluation(self, iteration: int, scores: dict, logger: "_Logger") -> None:
        """Results in iteration order: the log row of ``iteration``, the last evaluation, best.pt.
        The evaluation stays pending until all is written: cut short (Ctrl-C while best.pt is
        written), it runs again on resume, its score equal to the best score it set."""
        self.last_eval = dict(scores)
        logger.update(iteration, {f"eval_{k}": v for k, v in scores.items()})
        if scores["mean"] >= self.best_score:
            self.best_score = scores["mean"]
            if self.best_by == "score":
                save_checkpoint(self.run_dir / "best.pt", self._eval_models[iteration])
        del self._eval_models[iteration]

    def _finished_evaluations(self, logger: "_Logger", wait: bool = False) -> None:
        if self._evaluator is None:
            return
        for iteration, scores in (self._evaluator.wait() if wait else self._evaluator.poll()):
            self._record_evaluation(iteration, scores, logger)

    # ------------------------------------------------------------------ the loop
    def _done(self) -> bool:
        c = self.cfg
        return bool(c.iterations and self.counters["iteration"] >= c.iterations
                    or c.minutes > 0 and self.counters["elapsed"] >= 60.0 * c.minutes)

    def run(self, stop_after: int | None = None) -> dict:
        """Train until the budget is spent. ``stop_after`` stops (with a checkpoint, as an
        interruption would) after that many iterations of this call; tests use it."""
        c = self.cfg
        done_here = 0
        self.run_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(self.run_dir)  # of a run killed while it saved (one run writes here at a time)
        game_module = (type(self.game).__module__,)  # a user's game (--game pkg.mod:Class) travels to Ray nodes
        # first: it may refuse
        pool = make_pool(c.workers, c.ray_address, c.ray_runtime_env_dict(), game_module, c.ray_node_wait,
                         kept=self._resume_note)
        logger = _Logger(self.run_dir, c, self.counters["iteration"], self.log_rows)
        note = pool.idle_cpus_note(len(chunk_sizes(c.games_per_iter, c.selfplay_batch, c.workers)))
        if note:
            print(note)
        bar = _progress(c, self.counters)
        if c.grade_every and (c.progress or not self.grader.available):
            print(f"note: {self.grader.note}")
        t_start = time.time() - self.counters["elapsed"]
        try:
            self._resume_evaluations(logger)
            if not self._done():
                pool.submit(self._tasks(self.counters["iteration"], self.actor_weights))
            while not self._done():
                t_iter = time.time()
                results = pool.collect()
                it = self.counters["iteration"]
                next_weights = _np_weights(self.net)
                if not (c.iterations and it + 1 >= c.iterations):
                    pool.submit(self._tasks(it + 1, next_weights))
                with InterruptsDeferred(f"finishing iteration {it + 1}"):  # the state changes from here
                    self._mid_iteration = True
                    row, final = self._learn(it, results, next_weights, t_start, t_iter, logger)
                    self._mid_iteration = False
                if c.eval_every and ((it + 1) % c.eval_every == 0 or final):
                    self._start_evaluation(it + 1, logger)
                self._finished_evaluations(logger, wait=final)
                bar.update(self.counters, row, self.last_eval, self.grader.last)
                done_here += 1
                stop = stop_after is not None and done_here >= stop_after
                if (it + 1) % c.checkpoint_every == 0 or final or stop:
                    self._checkpoint(logger)
                if stop:
                    break
            if self._done():  # the last results (also of a run resumed at its end)
                self._finished_evaluations(logger, wait=True)
            if not (self.run_dir / "best.pt").exists():
                save_checkpoint(self.run_dir / "best.pt", self._model_entry())
        except KeyboardInterrupt:
            if self._mid_iteration:  # a second Ctrl-C inside an iteration: its half-changed state is not saved
                print(f"\ninterrupted inside iteration {self.counters['iteration'] + 1}: not saved; "
                      f"{self._resume_note()}")
                raise
            self._checkpoint(logger)
            print(f"\ninterrupted: saved {self.run_dir / 'latest.pt'} at iteration "
                  f"{self.counters['iteration']}; continue with --resume")
            raise
        except Exception as e:
            # a lost cluster, no worker that can start, a failed evaluation: found between iterations,
            # so the iterations done since the last checkpoint are whole and kept (not a diverged net)
            if not isinstance(e, TrainingDiverged) and not self._mid_iteration and self.counters["iteration"]:
                self._checkpoint(logger)
                if not getattr(e, "reported", False):  # its line, printed already, says latest.pt is kept
                    print(f"\nstopped by an error: saved {self.run_dir / 'latest.pt'} at iteration "
                          f"{self.counters['iteration']}; continue with --resume once it is fixed", file=sys.stderr)
            raise
        finally:
            pool.close()
            if self._evaluator is not None:  # pending snapshots live on in latest.pt
                self._evaluator.close()
                self._evaluator = None
            bar.close()
            logger.close()
        return {"counters": dict(self.counters), "eval": dict(self.last_eval), "losses": dict(self.last_losses)}

    def _learn(self, it: int, results: list, next_weights: dict, t_start: float, t_iter: float,
               logger: "_Logger") -> tuple[dict, bool]:
        """Iteration ``it + 1``'s change of state: its games into the replay, its SGD steps, its
        counters, grading and log row; returns the row and whether the run is done."""
        c = self.cfg
        samples = Samples.concat([r.samples for r in results])
        self.replay.add(samples)
        games = sum(r.games for r in results)
        self.counters["games"] += games
        self.counters["positions"] += len(samples.value)
        steps = 0
        if len(self.replay) >= c.min_replay:
            want = len(samples.value) * c.replay_ratio / c.batch_size + self.counters["step_carry"]
            steps = int(want)
            self.counters["step_carry"] = want - steps
        losses = self.train_steps(steps)
        self.actor_weights = next_weights
        self.counters["iteration"] = it + 1
        self.counters["elapsed"] = time.time() - t_start
        self.save_snapshots()
        outcomes = np.sum([r.outcomes for r in results], axis=0)
        row = {"iteration": it + 1, "steps": self.counters["steps"], "games": self.counters["games"],
               "positions": self.counters["positions"], "elapsed_s": round(self.counters["elapsed"], 2),
               "games_per_s": round(games / max(time.time() - t_iter, 1e-9), 2),
               "p0_win": outcomes[0] / games, "draw": outcomes[1] / games, "replay": len(self.replay),
               **{k: round(float(v), 5) for k, v in losses.items()}}
        final = self._done()
        if self.grader.due(it + 1, final):
            row["grade_accuracy"] = round(self.grader.accuracy(self.net), 5)
            if self.grader.improved(row["grade_accuracy"]) and self.best_by == "accuracy":
                save_checkpoint(self.run_dir / "best.pt", self._model_entry())
        logger.log(row)
        return row, final


# ------------------------------------------------------------------ logging helpers

def read_log_rows(path: Path, iteration: int) -> list[dict]:
    """The rows of log.csv up to ``iteration`` (a resumed run's log, cut back to its checkpoint);
    CheckpointError naming the file if it cannot be read as one."""
    if not path.exists():
        return []
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return [r for r in csv.DictReader(f) if int(r["iteration"]) <= iteration]
    except (OSError, ValueError, KeyError, TypeError, csv.Error) as e:  # UnicodeDecodeError is a ValueError
        raise CheckpointError(f"log {str(path)!r} of the resumed run is damaged ({type(e).__name__}: "
                              f"{first_line(e)[:120]}); restore it, or move it aside and resume again "
                              "(the run then starts a new log)") from None


class _Logger:
    """log.csv (rows cut back to the resumed iteration) and optional TensorBoard."""

    def __init__(self, run_dir: Path, cfg: TrainConfig, iteration: int, rows: list[dict]):
        """``rows``: log.csv's rows up to ``iteration`` (:func:`read_log_rows`, read once by the
        trainer), kept and added to in place."""
        self.path = run_dir / "log.csv"
        self.rows = rows
        self.tb = None
        if cfg.tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.tb = SummaryWriter(str(run_dir / "tb"), purge_step=iteration + 1)
            except ImportError:
                print("note: TensorBoard logging skipped (pip install tensorboard to enable it); "
                      f"the CSV log is {self.path}")

    def log(self, row: dict) -> None:
        self.rows.append({k: str(v) for k, v in row.items()})
        self._write()
        self._scalars(row, int(row["iteration"]))

    def update(self, iteration: int, values: dict) -> None:
        """Add ``values`` to the row of ``iteration`` (an evaluation that finished later). An
        evaluation run again on resume (pending in the checkpoint, yet recorded before the run was
        killed) finds them in its row already: TensorBoard, which a resume purges only past the
        checkpoint's iteration, does not get them twice. TensorBoard first and flushed, so a kill
        in between repeats a point rather than loses it."""
        text = {k: str(v) for k, v in values.items()}
        rows = [r for r in self.rows if int(r["iteration"]) == iteration]
        if not rows or not all(text.items() <= r.items() for r in rows):
            self._scalars(values, iteration)
            self.flush()
        for r in rows:
            r.update(text)
        self._write()

    def _write(self) -> None:
        atomic_write_csv(self.path, self.rows, list(dict.fromkeys(k for r in self.rows for k in r)))

    def _scalars(self, values: dict, iteration: int) -> None:
        if self.tb is not None:
            for k, v in values.items():
                if k != "iteration" and isinstance(v, (int, float, np.floating, np.integer)):
                    self.tb.add_scalar(k, float(v), iteration)

    def flush(self) -> None:
        """TensorBoard's queued events to disk: before a checkpoint, as a resume purges only the
        steps after it (a kill -9 loses what the writer still holds)."""
        if self.tb is not None:
            self.tb.flush()

    def close(self) -> None:
        if self.tb is not None:
            self.tb.close()


class _progress:
    """tqdm bar over the time budget (or the iterations), showing games/s, loss and the last eval."""

    def __init__(self, cfg: TrainConfig, counters: dict):
        from tqdm import tqdm

        self.by_time = not cfg.iterations
        total = int(60 * cfg.minutes) if self.by_time else cfg.iterations
        self.bar = tqdm(total=total, unit="s" if self.by_time else "it", dynamic_ncols=True,
                        initial=min(self._position(counters), total), disable=not cfg.progress)

    def _position(self, counters) -> int:
        return int(counters["elapsed"]) if self.by_time else counters["iteration"]

    def update(self, counters, row, ev, accuracy=None):
        self.bar.update(max(0, min(self._position(counters), self.bar.total) - self.bar.n))
        post = {"it": counters["iteration"], "games/s": row["games_per_s"]}
        if "loss" in row:
            post["loss"] = f"{row['loss']:.3f}"
        if accuracy is not None:
            post["acc"] = f"{100 * accuracy:.1f}%"
        if ev:
            post["eval"] = " ".join(f"{k.split(':')[0]}={v:.2f}" for k, v in ev.items() if k != "mean")
        self.bar.set_postfix(post, refresh=True)

    def close(self):
        self.bar.close()
