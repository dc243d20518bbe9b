"""Solver benchmark: time and nodes by number of filled cells, nodes/s, and the ratio against plain
alpha-beta (no bounds, no ordering, no table) measured in the same run on the same positions.

Positions come from uniformly random play (seeded). Each is solved for its value (win/draw/loss,
two null windows at most) with a cold transposition table. Plain alpha-beta gets the same two
windows on the same positions, from --plain-min-filled filled cells up (below that it needs minutes
to hours a position), until it has used --plain-seconds on a filled count.

    python bench/bench_solver.py                 # 4, 6, 8, 10, 12 filled, 20 positions each
    python bench/bench_solver.py --filled 8 10 --positions 50 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_float, positive_int
from highway_env.core import random_board
from highway_env.solver import Solver, kernel


def plain_value(board):
    """Win/draw/loss by textbook alpha-beta with the same two null windows: (value, nodes, seconds)."""
    stats = np.zeros(8, np.int64)
    cells = np.asarray(board.cells, dtype=np.int64)
    start = time.perf_counter()
    if kernel.plain_alphabeta(cells, 0, 1, stats) >= 1:
        value = 1
    else:
        value = 0 if kernel.plain_alphabeta(cells, -1, 0, stats) >= 0 else -1
    return value, int(stats[kernel.S_NODES]), time.perf_counter() - start


def main(argv=None) -> int:
    parser = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filled", type=number(int, 0, 15), nargs="+", default=[4, 6, 8, 10, 12],
                        help="numbers of filled cells to test (default: 4 6 8 10 12)")
    parser.add_argument("--positions", type=positive_int, default=20, help="positions per filled count (default 20)")
    parser.add_argument("--plain-min-filled", type=non_negative_int, default=6,
                        help="run plain alpha-beta only on positions with at least this many filled cells "
                             "(below, it takes minutes to hours per position; default 6)")
    parser.add_argument("--plain-seconds", type=positive_float, default=60.0,
                        help="stop running plain alpha-beta on a filled count once it has used this many "
                             "seconds (default 60)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed for the random positions (default 0)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)

    solver = Solver(tt_bits=20)
    solver.solve(random_board(np.random.default_rng(0), 12))  # compile / load before timing
    kernel.plain_alphabeta(np.zeros(16, np.int64) + np.arange(1, 17), 0, 1, np.zeros(8, np.int64))
    rows = []
    for filled in args.filled:
        rng = np.random.default_rng(args.seed * 1000 + filled)
        boards = [random_board(rng, filled) for _ in range(args.positions)]
        times, nodes = [], []
        plain_nodes, our_nodes_on_plain, plain_time, our_time_on_plain = 0, 0, 0.0, 0.0
        for board in boards:
            solver.clear()
            r = solver.solve(board)
            times.append(r.seconds)
            nodes.append(r.nodes)
            if filled >= args.plain_min_filled and plain_time < args.plain_seconds:
                v, n, s = plain_value(board)
                assert v == r.value, (board.to_string(), v, r.value)
                plain_nodes += n
                plain_time += s
                our_nodes_on_plain += r.nodes
                our_time_on_plain += r.seconds
        row = {
            "filled": filled,
            "positions": len(boards),
            "median_seconds": statistics.median(times),
            "max_seconds": max(times),
            "median_nodes": int(statistics.median(nodes)),
            "nodes_per_second": int(sum(nodes) / max(sum(times), 1e-9)),
        }
        if plain_time > 0:
            row["plain_time_ratio"] = plain_time / max(our_time_on_plain, 1e-9)
            row["plain_node_ratio"] = plain_nodes / max(our_nodes_on_plain, 1)
        rows.append(row)

    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
        return 0
    print(f"{'filled':>6} {'median s':>10} {'max s':>8} {'median nodes':>13} {'nodes/s':>10} "
          f"{'vs plain a-b (time)':>20} {'(nodes)':>10}")
    for r in rows:
        ratio_t = f"{r['plain_time_ratio']:.1f}x" if "plain_time_ratio" in r else "n/a"
        ratio_n = f"{r['plain_node_ratio']:.1f}x" if "plain_node_ratio" in r else "n/a"
        print(f"{r['filled']:>6} {r['median_seconds']:>10.4f} {r['max_seconds']:>8.3f} {r['median_nodes']:>13,} "
              f"{r['nodes_per_second']:>10,} {ratio_t:>20} {ratio_n:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
