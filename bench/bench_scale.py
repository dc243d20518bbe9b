#!/usr/bin/env python
"""How training scales: self-play games/s at 1 and 2 local workers and on a local 2-node Ray
cluster, each with its ratio to ideal linear scaling (N x the 1-worker rate measured in the same
run), the learner's SGD steps/s, and how many self-play workers one learner can feed at the
default settings.

    python bench/bench_scale.py              # the default settings (256 games an iteration), ~3 min on 2 cores
    python bench/bench_scale.py --quick      # smaller iterations, ~1 min

The self-play figures time whole iterations (submit to collect) of ``--games`` games after a
warm-up iteration (processes started, numba compiled, weights sent), with the trainer not
helping, so N workers are exactly N processes playing; the local worker counts and the Ray
cluster alternate for ``--rounds`` rounds and the best round of each is printed. Linear scaling
is N x the games/s per worker of the first ``--workers`` count. A learner feeds W workers when its steps/s
covers what W workers' games ask for: positions per game x ``replay_ratio`` / ``batch_size`` steps
per game (train.py's rule). On a machine shared with other work the ratios are the figures to read.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import torch

from agents.config import TrainConfig
from agents.parallel import ProcessPool, RayPool, shipped_runtime_env
from agents.replay import Samples
from agents.trainer import Trainer, chunk_sizes
from highway_env.cli_args import OneLineErrorParser, non_negative_int, positive_int


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    d = TrainConfig()
    p.add_argument("--games", type=positive_int, default=d.games_per_iter,
                   help=f"self-play games per measured iteration (default: train.py's {d.games_per_iter})")
    p.add_argument("--batch", type=positive_int, default=d.selfplay_batch,
                   help=f"games per chunk, as train.py's --selfplay-batch (default: {d.selfplay_batch})")
    p.add_argument("--workers", type=positive_int, nargs="+", default=[1, 2], metavar="N",
                   help="local worker counts to measure; the first is the base of the ratios "
                        "(default: 1 2)")
    p.add_argument("--ray-nodes", type=non_negative_int, default=2, metavar="N",
                   help="nodes (1 CPU each) of the local Ray cluster measured; 0 skips Ray (default: 2)")
    p.add_argument("--learner-steps", type=positive_int, default=40,
                   help="SGD steps timed per learner thread count (default: 40)")
    p.add_argument("--learner-threads", type=positive_int, nargs="+", default=None, metavar="T",
                   help="learner thread counts to time (default: 1, train.py's automatic count "
                        "for --workers 1 and the machine's cores up to 8)")
    p.add_argument("--rounds", type=positive_int, default=2,
                   help="measured iterations per worker count and for Ray, alternating; the best "
                        "of each is printed (default: 2)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the self-play chunks (default: 0)")
    p.add_argument("--quick", action="store_true",
                   help="64 games in chunks of 32 and 15 learner steps: a rough figure in about a minute")
    args = p.parse_args(argv)
    if args.quick:
        args.games, args.batch, args.learner_steps = 64, 32, 15
    return args


def _time_iteration(pool, trainer: Trainer, games: int, batch: int, workers: int, iteration: int):
    """Seconds and results of one self-play iteration of ``games`` games on ``pool``."""
    trainer.cfg.games_per_iter, trainer.cfg.selfplay_batch, trainer.cfg.workers = games, batch, workers
    tasks = trainer._tasks(iteration, trainer.actor_weights)
    t0 = time.perf_counter()
    pool.submit(tasks)
    results = pool.collect()
    return time.perf_counter() - t0, results


def warm_up(pool, trainer: Trainer, workers: int) -> None:
    """Every worker started, compiled and holding the weights: a chunk of 2 games each."""
    _time_iteration(pool, trainer, 2 * workers, 2, workers, iteration=10_000)


def measure_pool(pool, trainer: Trainer, args, workers: int, iteration: int = 0) -> tuple[float, list]:
    """Games/s of one iteration of ``args.games`` games."""
    seconds, results = _time_iteration(pool, trainer, args.games, args.batch, workers, iteration)
    return args.games / seconds, results


def start_ray_cluster(nodes: int):
    """A local Ray cluster of ``nodes`` nodes with 1 CPU each (ray.cluster_utils.Cluster)."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


def learner_steps_per_s(trainer: Trainer, samples: Samples, steps: int, threads: int) -> float:
    trainer.replay.add(samples)
    torch.set_num_threads(threads)
    trainer.train_steps(2)  # warm-up
    t0 = time.perf_counter()
    trainer.train_steps(steps)
    return steps / (time.perf_counter() - t0)


def main(argv=None) -> int:
    args = parse_args(argv)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{cores} cores, load average {os.getloadavg()[0]:.1f} at the start; {args.games} games an "
          f"iteration, chunks of {args.batch} (split further to fill the workers)")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = TrainConfig(out_dir=tmp, workers=1, progress=False, tensorboard=False, eval_every=0,
                          seed=args.seed)
        trainer = Trainer(cfg)
        pools = {f"{w} local worker(s)": (w, ProcessPool(w, helps=False)) for w in args.workers}
        cluster = None
        try:
            if args.ray_nodes:
                cluster = start_ray_cluster(args.ray_nodes)
                pools[f"local Ray cluster, {args.ray_nodes} nodes x 1 CPU"] = (
                    args.ray_nodes, RayPool(cluster.address, args.ray_nodes, shipped_runtime_env({})))
            rates, samples = {name: 0.0 for name in pools}, None
            for w, pool in pools.values():
                warm_up(pool, trainer, w)
            for rnd in range(args.rounds):  # alternating, so a change in the machine's load hits all
                for name, (w, pool) in pools.items():
                    rate, results = measure_pool(pool, trainer, args, w, iteration=rnd)
                    rates[name] = max(rates[name], rate)
                    samples = samples or Samples.concat([r.samples for r in results])
        finally:
            for _, pool in pools.values():
                pool.close()
            if cluster is not None:
                import ray

                ray.shutdown()
                cluster.shutdown()
        per_worker = rates[next(iter(pools))] / args.workers[0]
        for name, (w, _) in pools.items():
            chunks = len(chunk_sizes(args.games, args.batch, w))
            print(f"self-play, {name} ({chunks} chunks): {rates[name]:6.1f} games/s, "
                  f"{rates[name] / (w * per_worker):.2f} of linear scaling")
        positions_per_game = len(samples.value) / args.games
        steps_per_game = positions_per_game * cfg.replay_ratio / cfg.batch_size
        threads = args.learner_threads or sorted({1, cfg.learner_thread_count(), min(cores, 8)})
        for t in threads:
            sps = learner_steps_per_s(trainer, samples, args.learner_steps, t)
            print(f"learner, {t} thread(s): {sps:6.1f} steps/s (batch {cfg.batch_size}); feeds "
                  f"{sps / (per_worker * steps_per_game):.1f} workers of {per_worker:.1f} games/s "
                  f"({positions_per_game:.1f} positions a game, {steps_per_game:.2f} steps a game)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
