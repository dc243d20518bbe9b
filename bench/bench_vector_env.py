#!/usr/bin/env python
"""Vector-env throughput: Gymnasium's SyncVectorEnv over the single env (baseline) vs the native
``HighwayVectorEnv``, both built by ``gymnasium.make_vec("highway_env/Highway-v0", num_envs=N)``.

Both play the agent's side with a uniformly random legal action per game, drawn for the whole batch
from the observed masks by ``batch_rules.random_legal`` (the same cost in both), against the default
random opponent, with Gymnasium's autoreset. A step is one agent move and the opponent's reply in
every game; the ratio is steps/s of the native env over the sync one. The two are measured in
``--rounds`` alternating rounds of ``--seconds / --rounds`` each (the load of a shared machine
changes during a run) and each reports its best round.

Run ``python bench/bench_vector_env.py`` (about --seconds plus start-up), ``--json`` for a machine
readable result.
"""

from __future__ import annotations

import json
import time

import gymnasium as gym
import numpy as np

import highway_env  # noqa: F401  (registers the id)
from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_float, positive_int
from highway_env.gym_vector_env import MAX_NUM_ENVS
from highway_env.highway.batch_rules import random_legal

MODES = {"sync": "sync", "native": "vector_entry_point"}


def bench_mode(mode: str, num_envs: int, seconds: float, seed: int) -> float:
    """Agent steps per second (one per game per step) of ``mode`` for about ``seconds``."""
    envs = gym.make_vec("highway_env/Highway-v0", num_envs=num_envs, vectorization_mode=MODES[mode])
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        obs, *_ = envs.step(np.maximum(random_legal(obs["action_mask"], rng), 0))  # 0: a game that just ended
        steps += num_envs
    rate = steps / (time.perf_counter() - t0)
    envs.close()
    return rate


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--num-envs", type=number(int, 1, MAX_NUM_ENVS), default=256, help="games per vector env (default %(default)s)")
    p.add_argument("--seconds", type=positive_float, default=12.0,
                   help="measuring time of both modes together (default %(default)s)")
    p.add_argument("--rounds", type=positive_int, default=3, help="alternating rounds of each mode (default %(default)s)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the actions and the envs (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = p.parse_args(argv)
    bench_mode("native", 4, 0.1, args.seed)  # numba compiles the kernel's functions before any round
    share = args.seconds / (2 * args.rounds)
    rounds: dict = {m: [] for m in MODES}
    for _ in range(args.rounds):
        for m in MODES:
            rounds[m].append(bench_mode(m, args.num_envs, share, args.seed))
    best = {m: max(r) for m, r in rounds.items()}
    result = {"num_envs": args.num_envs, "steps_per_s": best, "rounds": rounds,
              "ratio_native_over_sync": best["native"] / best["sync"]}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{'mode':<8} {'steps/s':>12}   (num_envs {args.num_envs}, best of {args.rounds} rounds)")
        for m in MODES:
            print(f"{m:<8} {best[m]:>12,.0f}")
        print(f"ratio native / sync: {result['ratio_native_over_sync']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
