"""Cost of labelling Jumping Farther positions with the exact solver, by ply: what bounds
``evaluate.py --game jumping --label-from-ply K`` on boards the solver cannot solve from the start
(n >= 6; n = 5's full two-player solve takes 4 minutes and 6.5 GB, see the README).

Positions come from uniformly random play (seeded); each is labelled (every legal move's exact
value, ``highway_env.jumping.perfect.move_values``) with a fresh memo, so the time is the whole
subtree's. A ply whose slowest position takes over --stop-seconds ends the run (earlier plies cost
several times more each).

    python bench/bench_jumping_labels.py                       # n = 5, plies 16 down to 8
    python bench/bench_jumping_labels.py --plies 12 10 --positions 5 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_float, positive_int
from highway_env.jumping import perfect
from highway_env.jumping.az_game import JumpingGame
from highway_env.jumping.game import MAX_N, MIN_N


def random_position(game: JumpingGame, ply: int, rng: np.random.Generator):
    """A live position after ``ply`` uniformly random moves, or None if the game ended first."""
    s = game.initial_states(1)
    for _ in range(ply):
        legal = np.flatnonzero(game.legal_masks(s)[0])
        if not len(legal):
            return None
        s = game.apply(s, np.array([rng.choice(legal)]))
    return None if game.terminal(s)[0] else s[0]


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=number(int, MIN_N, MAX_N), default=5, help="board size n (grid n x n; default: %(default)s)")
    p.add_argument("--plies", type=non_negative_int, nargs="+", default=[16, 14, 12, 11, 10, 9, 8],
                   help="plies to measure, in this order (default: %(default)s)")
    p.add_argument("--positions", type=positive_int, default=3, help="positions per ply (default: %(default)s)")
    p.add_argument("--stop-seconds", type=positive_float, default=60.0,
                   help="stop after a ply whose slowest position took longer (default: %(default)s)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the random play (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    game = JumpingGame(a.n)
    rng = np.random.default_rng(a.seed)
    warm = None
    while warm is None:
        warm = random_position(game, game.cells // 2 + 4, rng)
    perfect.move_values(game, warm)  # compile the kernels first
    rows = []
    for ply in a.plies:
        times, entries = [], []
        for _ in range(a.positions):
            state = random_position(game, ply, rng)
            if state is None:
                continue
            perfect.Oracle.get.cache_clear()  # a fresh memo: the whole subtree's cost
            t = time.perf_counter()
            perfect.move_values(game, state)
            times.append(time.perf_counter() - t)
            entries.append(int(np.count_nonzero(perfect.Oracle.get(a.n).table)))
        if not times:
            continue
        row = {"ply": ply, "positions": len(times), "median_s": round(statistics.median(times), 4),
               "max_s": round(max(times), 4), "max_memo_states": max(entries)}
        rows.append(row)
        if not a.json:
            print(f"n={a.n} ply {ply:2d}: {len(times)} positions, median {row['median_s']:.3f} s, "
                  f"max {row['max_s']:.3f} s, memo up to {row['max_memo_states']:,} states", flush=True)
        if max(times) > a.stop_seconds:
            break
    if a.json:
        print(json.dumps({"n": a.n, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
