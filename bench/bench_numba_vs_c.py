"""Numba against C on the same algorithm: the exact solver's search (kernel._search) and its
line-by-line C port (bench/c/highway_search.c), on the same seeded random positions.

The project rule is to write a C extension only if numba measures more than 2x slower than C on the
same algorithm; this is that measurement. The C file is compiled at run time with
``gcc -O3 -march=native -shared -fPIC`` into a temporary folder and loaded with ctypes.

Each position gets a cold transposition table of the same size in both (2**--tt-bits buckets), then
the null window (0, 1) and, on the table that left, (-1, 0). Values AND node counts of both windows
must be identical (a faithful port visits the same tree); any difference stops the run.

Runs alternate to be fair on a noisy machine: each round times every position in numba and in C,
one after the other, numba first on even rounds and C first on odd ones. Each round gives a ratio
numba_time / C_time over all its positions; the median over rounds is reported, along with the
ratio of the best (least) time of each position summed.

    python bench/bench_numba_vs_c.py                        # 4 and 6 filled, 10 positions each
    python bench/bench_numba_vs_c.py --filled 2 4 --positions 5 --rounds 5 --json
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_int, tt_bits_arg
from highway_env.core import random_board
from highway_env.solver import kernel

C_SOURCE = pathlib.Path(__file__).resolve().parent / "c" / "highway_search.c"
CFLAGS = ["-O3", "-march=native", "-shared", "-fPIC"]


def compile_c(tmpdir: str, narrow: bool = False) -> ctypes.CDLL:
    out = os.path.join(tmpdir, "highway_search_narrow.so" if narrow else "highway_search.so")
    cmd = ["gcc", *CFLAGS, *(["-DHW_NARROW"] if narrow else []), str(C_SOURCE), "-o", out]
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(out)
    lib.search_board.restype = ctypes.c_longlong
    lib.search_board.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_longlong)]
    lib.hw_tt_alloc.restype = ctypes.c_int
    lib.hw_tt_alloc.argtypes = [ctypes.c_int]
    lib.hw_tt_clear.restype = None
    lib.hw_tt_free.restype = None
    lib.hw_tables.restype = None
    lib.hw_tables.argtypes = [ctypes.POINTER(ctypes.c_longlong), ctypes.POINTER(ctypes.c_longlong)]
    paths = (ctypes.c_longlong * 280)()
    sym = (ctypes.c_longlong * 64)()
    lib.hw_tables(paths, sym)
    assert list(paths) == kernel.PATHS.reshape(-1).tolist(), "C path table differs from kernel.PATHS"
    assert list(sym) == kernel.SYM_INV.reshape(-1).tolist(), "C symmetry table differs from kernel.SYM_INV"
    return lib


WINDOWS = ((0, 1), (-1, 0))


def run_numba(ctx, board):
    """Cold table, both windows: ([(value, nodes), ...], seconds)."""
    kernel.clear_tt(ctx)
    out = []
    start = time.perf_counter()
    for a, b in WINDOWS:
        v, aborted, n = kernel.run_search(ctx, board.cells, a, b)
        assert not aborted
        out.append((v, n))
    return out, time.perf_counter() - start


def run_c(lib, tt_bits, board):
    lib.hw_tt_clear()
    arr = (ctypes.c_int * 16)(*board.cells)
    nodes = ctypes.c_longlong()
    out = []
    start = time.perf_counter()
    for a, b in WINDOWS:
        v = lib.search_board(arr, a, b, 1, 1, tt_bits, ctypes.byref(nodes))
        out.append((int(v), int(nodes.value)))
    return out, time.perf_counter() - start


def measure(name, lib, ctx, tt_bits, boards, rounds):
    """Alternating rounds on one group of boards; returns a result row (raises on any mismatch)."""
    lib.hw_tt_alloc(tt_bits)
    t_numba = [[0.0] * rounds for _ in boards]
    t_c = [[0.0] * rounds for _ in boards]
    total_nodes = 0
    for r in range(rounds):
        for i, board in enumerate(boards):
            order = ("numba", "c") if r % 2 == 0 else ("c", "numba")
            res = {}
            for who in order:
                if who == "numba":
                    res[who], t_numba[i][r] = run_numba(ctx, board)
                else:
                    res[who], t_c[i][r] = run_c(lib, tt_bits, board)
            if res["numba"] != res["c"]:
                raise SystemExit(f"MISMATCH on {board.to_string()}: numba {res['numba']} vs C {res['c']} "
                                 f"(per window: (value, nodes))")
            if r == 0:
                total_nodes += sum(n for _, n in res["numba"])
    per_round_ratio = [sum(t_numba[i][r] for i in range(len(boards))) /
                       max(sum(t_c[i][r] for i in range(len(boards))), 1e-12) for r in range(rounds)]
    best_numba = sum(min(t) for t in t_numba)
    best_c = sum(min(t) for t in t_c)
    med_numba = statistics.median(sum(t_numba[i][r] for i in range(len(boards))) for r in range(rounds))
    med_c = statistics.median(sum(t_c[i][r] for i in range(len(boards))) for r in range(rounds))
    return {
        "name": name,
        "positions": len(boards),
        "total_nodes": total_nodes,
        "seconds_numba": med_numba,
        "seconds_c": med_c,
        "nodes_per_s_numba": total_nodes / max(med_numba, 1e-12),
        "nodes_per_s_c": total_nodes / max(med_c, 1e-12),
        "median_ratio": statistics.median(per_round_ratio),
        "ratio_of_best_times": best_numba / max(best_c, 1e-12),
        "round_ratios": per_round_ratio,
        "nodes_match": True,
    }


def main(argv=None) -> int:
    parser = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=positive_int, default=10,
                        help="random positions per filled count (default 10)")
    parser.add_argument("--filled", type=number(int, 0, 15), nargs="+", default=[4, 6],
                        help="numbers of filled cells of the positions, each a group of its own (default: 4 6); "
                             "positions are core.random_board(rng, filled)")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="seed of the positions; filled count f uses default_rng(seed * 1000 + f) (default 0)")
    parser.add_argument("--rounds", type=positive_int, default=3,
                        help="alternating timing rounds over all positions; the median ratio is over rounds "
                             "(default 3)")
    parser.add_argument("--tt-bits", type=tt_bits_arg, default=20,
                        help="both transposition tables get 2**tt_bits two-slot buckets, cleared before each "
                             "position (default 20)")
    parser.add_argument("--narrow", action="store_true",
                        help="also time the C port built with -DHW_NARROW (int32_t instead of the numba "
                             "arrays' int64)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)

    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    ctx = kernel.new_context(args.tt_bits)
    kernel.run_search(ctx, random_board(np.random.default_rng(0), 12).cells, 0, 1)  # compile / load

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        libs = [("C int64", compile_c(tmp))]
        if args.narrow:
            libs.append(("C int32", compile_c(tmp, narrow=True)))
        groups = []
        for filled in args.filled:
            rng = np.random.default_rng(args.seed * 1000 + filled)
            groups.append((filled, [random_board(rng, filled) for _ in range(args.positions)]))
        for filled, boards in groups:
            for name, lib in libs:
                row = measure(name, lib, ctx, args.tt_bits, boards, args.rounds)
                row["filled"] = filled
                rows.append(row)
                if not args.json:
                    print(f"  done: {filled} filled, {name}", file=sys.stderr, flush=True)
        for _, lib in libs:
            lib.hw_tt_free()

    overall = statistics.median(r["median_ratio"] for r in rows if r["name"] == "C int64")
    if args.json:
        print(json.dumps({"gcc": gcc, "cflags": CFLAGS, "tt_bits": args.tt_bits, "rounds": args.rounds,
                          "seed": args.seed, "rows": rows, "median_ratio_numba_over_c": overall}, indent=1))
        return 0
    print(f"{gcc}; {' '.join(CFLAGS)}; tt_bits={args.tt_bits}; {args.rounds} alternating rounds; "
          f"values and node counts identical on every position and window")
    head = (f"{'filled':>6} {'variant':>8} {'pos':>4} {'nodes':>10} {'s numba':>8} {'s C':>8} "
            f"{'nodes/s numba':>14} {'nodes/s C':>12} {'ratio':>6} {'best':>6}")
    print(head)
    for r in rows:
        print(f"{r['filled']:>6} {r['name']:>8} {r['positions']:>4} {r['total_nodes']:>10} "
              f"{r['seconds_numba']:>8.3f} {r['seconds_c']:>8.3f} {r['nodes_per_s_numba']:>14,.0f} "
              f"{r['nodes_per_s_c']:>12,.0f} {r['median_ratio']:>6.2f} {r['ratio_of_best_times']:>6.2f}")
    print("ratio = numba_time / C_time, median over rounds; best = same from each position's least time")
    print(f"median ratio numba/C (int64 port): {overall:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
