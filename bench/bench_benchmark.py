#!/usr/bin/env python
"""Time of ``highway_env.benchmark.evaluate`` on a batched policy (target: under a minute for 3,000
positions and 24 games a side), against the same policy called once per observation, in the same run.

    python bench/bench_benchmark.py                     # 3000 positions, 24 games a side, 60 conversions
    python bench/bench_benchmark.py --positions 600 --games 4 --conversion 10

The policy is a uniformly random legal move (NumPy), so the time is the benchmark's own: building
observations, checking actions, the solver labels and the perfect opponent. The perfect player's
solved positions persist in the solver store, so a repeated run is faster; both runs are reported.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from highway_env.cli_args import OneLineErrorParser, non_negative_int


def random_batched(seed: int):
    rng = np.random.default_rng(seed)

    def policy(obs):
        masks = obs["action_mask"].astype(bool)
        keys = np.where(masks, rng.random(masks.shape), -1.0)
        return keys.argmax(axis=1)

    return policy


def unbatched(batched_policy):
    return lambda obs: int(batched_policy({k: v[None] for k, v in obs.items()})[0])


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--positions", type=non_negative_int, default=3000,
                   help="positions graded, sampled from the position set's report part; 0 = all (default: %(default)s)")
    p.add_argument("--games", type=non_negative_int, default=24,
                   help="games from the empty board against the perfect player, per side (default: %(default)s)")
    p.add_argument("--conversion", type=non_negative_int, default=60,
                   help="won positions played out against perfect defence (default: %(default)s)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the benchmark's samples and of the random policy (default: %(default)s)")
    args = p.parse_args(argv)

    from highway_env.benchmark import evaluate

    kw = dict(positions=args.positions, games=args.games, conversion=args.conversion, seed=args.seed,
              progress=False)

    def run(label, batched, **over):
        policy = random_batched(args.seed)
        t0 = time.perf_counter()
        r = evaluate(policy if batched else unbatched(policy), batched=batched, name=label, **{**kw, **over})
        dt = time.perf_counter() - t0
        m = r.measures
        games = m["as_A_vs_perfect"]["games"]
        print(f"{label:<44} {dt:7.1f} s   accuracy {100 * r.accuracy:.1f}% on {m['accuracy']['n']} critical "
              f"positions; {games} games a side, perfect moves {r.summary['perfect_moves']}")
        return dt

    cold = run("batched, first run (solver store as found)", True)
    full = run("batched", True)
    full_base = run("one call per observation", False)
    only = dict(games=0, conversion=0, margin_games=0)
    pos = run("positions only, batched", True, **only)
    pos_base = run("positions only, one call per observation", False, **only)
    print(f"full benchmark, batched: {full:.1f} s (first run {cold:.1f} s): under a minute: "
          f"{'yes' if full < 60 else 'no'}; one call per observation / batched: {full_base / full:.2f}x")
    print(f"positions only: one call per observation / batched: {pos_base / pos:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
