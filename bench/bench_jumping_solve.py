"""Jumping Farther & Farther: the two-player full solve from the empty board with the memo keyed
on the symmetry-canonical state against the memo keyed on the state itself (the 8 images of a
state apart), in the same run: time, memo states, and both values and best first squares (which
must agree).

Rounds alternate the two variants (the machine is shared); the kernels are compiled before the
first timed round. The time ratio is the plain memo's median over the canonical one's.

    python bench/bench_jumping_solve.py                  # n = 4, 3 rounds
    python bench/bench_jumping_solve.py --n 3 --rounds 5 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from highway_env.cli_args import OneLineErrorParser, positive_int
from highway_env.jumping.solver import full_search

VARIANTS = {"plain": False, "canonical": True}


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=4, choices=(2, 3, 4),
                   help="board size (5: use python -m highway_env.jumping solve --n 5; default: %(default)s)")
    p.add_argument("--rounds", type=positive_int, default=3, help="timed rounds of each variant (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    full_search(2, canonical=False)  # compile the kernel before timing
    full_search(2, canonical=True)
    times = {name: [] for name in VARIANTS}
    out = {}
    for _ in range(a.rounds):
        for name, canonical in VARIANTS.items():
            t = time.perf_counter()
            value, best, table, stats = full_search(a.n, canonical=canonical)
            times[name].append(time.perf_counter() - t)
            out[name] = {"value": value, "best_first_move": best, "states": int(stats[0]),
                         "nodes": int(stats[1]), "table_bytes": int(table.nbytes)}
    for name in VARIANTS:
        out[name]["median_s"] = round(statistics.median(times[name]), 4)
    same = all(out["plain"][k] == out["canonical"][k] for k in ("value", "best_first_move"))
    doc = {"n": a.n, "rounds": a.rounds, **out, "same_result": same,
           "time_ratio": round(out["plain"]["median_s"] / out["canonical"]["median_s"], 2),
           "states_ratio": round(out["plain"]["states"] / out["canonical"]["states"], 2)}
    if a.json:
        print(json.dumps(doc))
    else:
        for name in VARIANTS:
            r = out[name]
            print(f"n={a.n} {name:9s}: value {r['value']:+d}, best first square {r['best_first_move']}, "
                  f"{r['states']:,} states, table {r['table_bytes'] / 2**20:.0f} MiB, median {r['median_s']:.3f} s")
        print(f"canonical memo: {doc['time_ratio']}x faster, {doc['states_ratio']}x fewer states; "
              f"same value and first square: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
