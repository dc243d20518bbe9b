#!/usr/bin/env python
"""What running evaluate.py on Ray costs: the wall time of one small evaluation with ``--workers 2``
local processes and on a local Ray cluster of 2 nodes x 1 CPU (ray.cluster_utils.Cluster), the
same work on the same 2 cores, and their ratio. Ray gives no speed on one machine; the figure is
its overhead (connecting, shipping the packages and files, starting workers per run), which a
cluster of many nodes pays once per run. Each run is a fresh output folder (no task cache) and
both must print the same summary.

    python bench/bench_eval_ray.py               # --positions 200 --games 4 --conversion 4, ~2 min on 2 cores
    python bench/bench_eval_ray.py --rounds 1    # one run each

The two kinds alternate for ``--rounds`` rounds and the best of each is printed; on a machine
shared with other work the ratio is the figure to read.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evaluate  # noqa: E402
from bench_scale import start_ray_cluster  # noqa: E402
from highway_env.cli_args import OneLineErrorParser, non_negative_int, positive_int  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", default="greedy", help="the agent graded (default: %(default)s)")
    p.add_argument("--positions", type=positive_int, default=200, help="as evaluate.py's (default: %(default)s)")
    p.add_argument("--games", type=non_negative_int, default=4, help="as evaluate.py's (default: %(default)s)")
    p.add_argument("--conversion", type=non_negative_int, default=4, help="as evaluate.py's (default: %(default)s)")
    p.add_argument("--rounds", type=positive_int, default=2,
                   help="runs of each kind, alternating; the best of each is printed (default: %(default)s)")
    return p.parse_args(argv)


def timed_run(argv: list[str]) -> tuple[float, dict]:
    """Wall seconds of ``evaluate.main(argv)`` and its summary (without its wall time)."""
    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out):
        rc = evaluate.main(argv)
    seconds = time.perf_counter() - t0
    if rc != 0:
        raise SystemExit(f"evaluate.py {' '.join(argv)} exited {rc}")
    summary = json.loads(out.getvalue())
    summary.pop("wall_seconds")
    return seconds, summary


def main(argv=None) -> int:
    args = parse_args(argv)
    work = ["--agent", args.agent, "--positions", str(args.positions), "--games", str(args.games),
            "--rr-games", "0", "--conversion", str(args.conversion), "--positions-v2", "none", "--store", "none",
            "--workers", "2", "--name", "bench", "--no-plots", "--no-progress", "--json"]
    try:  # a bad --agent fails now, as evaluate.py says it, not after the Ray cluster started
        evaluate.validate(evaluate.build_parser().parse_args(work))
    except evaluate.UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    import ray

    cluster = start_ray_cluster(2)
    best = {"local": float("inf"), "ray": float("inf")}
    summaries = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for rnd in range(args.rounds):  # alternating, so a change in the machine's load hits both
                for kind, extra in (("local", []), ("ray", ["--ray-address", cluster.address])):
                    seconds, summary = timed_run([*work, *extra, "--out", f"{tmp}/{kind}{rnd}"])
                    best[kind] = min(best[kind], seconds)
                    summaries.append(summary)
    finally:
        ray.shutdown()
        cluster.shutdown()
    print(f"evaluate.py {' '.join(work[:10])}")
    print(f"--workers 2 local processes:      {best['local']:6.1f} s")
    print(f"local Ray cluster, 2 nodes x 1 CPU: {best['ray']:6.1f} s  ({best['ray'] / best['local']:.2f} x local)")
    print(f"same summary in every run: {'yes' if all(s == summaries[0] for s in summaries) else 'NO'}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
