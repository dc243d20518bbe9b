#!/usr/bin/env python
"""The position store's cost in the perfect player's pattern of use, this checkout against a baseline
in the same run.

The perfect player (``hardest`` tie-break, node budgets: the evaluation's opponent) asks the store
about every child of a position, then every child of each value-keeping child, and writes the bounds
its searches find for positions the store did not know. This replays that pattern without the
searches: positions from seeded random play at plies ``--plies``; per position one lookup per child
and per grandchild of ``--grandchildren`` children (the grandchildren in the order the solver tries
them), and a write for each key the store lacks; then the final flush. ``--hit-rate`` of the keys are
in the store beforehand (an evaluation on a warm default store finds about 80 %), among
``--rows`` other positions; or a copy of ``--store`` is used (a real store, its size and its layout;
the keys it already holds are hits too).

Sides: this checkout (prefetching the siblings 16 at a time, as ``Oracle.children`` does; no
re-read in ``put_key``) and the baseline: ``--baseline DIR``'s ``store.py`` (another checkout, e.g.
``git worktree add /tmp/base <rev>``) with one query per lookup, or without it this checkout's store
used that way (put_key's saving then shows on neither side). Each side opens its own copy of the
same file, alternating for ``--rounds`` rounds; ``--cold`` drops the copy from the OS page cache
first (a store not read lately). Prints seconds per phase and the baseline / this-checkout ratio of
the best rounds.

    python bench/bench_store.py
    python bench/bench_store.py --baseline /tmp/base --rounds 5 --cold
    python bench/bench_store.py --store ~/.cache/highway_env/solved.sqlite --baseline /tmp/base
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_int
from highway_env.core import Board
from highway_env.solver import store as this_store
from highway_env.solver.oracle import PREFETCH_CHILDREN, cells_after, position_key
from highway_env.solver.solver import ordered_actions


def random_position(rng: np.random.Generator, ply: int) -> Board:
    board = Board()
    for _ in range(ply):
        board = board.apply(int(rng.choice(board.legal_actions())))
    return board


def workload(positions: int, plies: list[int], grandchildren: int, seed: int) -> list[list[str]]:
    """Groups of sibling keys in the order the perfect player asks for them: per position its
    children, then the children of its first ``grandchildren`` children (solver order)."""
    rng = np.random.default_rng(seed)
    groups = []
    for i in range(positions):
        board = random_position(rng, plies[i % len(plies)])
        groups.append(list(dict.fromkeys(position_key(cells_after(board.cells, a)) for a in board.legal_actions())))
        for a in ordered_actions(board)[:grandchildren]:
            child = board.apply(a)
            groups.append([position_key(cells_after(child.cells, r)) for r in child.legal_actions()])
    return groups


def build_store(path: Path, keys: list[str], rows: int, seed: int) -> None:
    """A store holding ``keys`` and ``rows`` other positions of random play (bounds: a plausible
    margin interval; the store checks nothing but their order)."""
    rng = np.random.default_rng(seed + 1)
    other = (position_key(random_position(rng, int(rng.integers(4, 13))).cells) for _ in range(rows))
    with this_store.PositionStore(path, batch_size=20_000) as store:
        for key in dict.fromkeys([*keys, *other]):  # a position drawn twice is written once
            lo = int(rng.integers(-20, 20))
            store.put_key(key, lo, lo + int(rng.integers(0, 10)))


def load_store_module(checkout: Path):
    spec = importlib.util.spec_from_file_location("baseline_store", checkout / "highway_env/solver/store.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def drop_from_page_cache(path: Path) -> None:
    for name in (path, Path(f"{path}-wal")):
        if name.exists():
            fd = os.open(name, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def run_side(module, path: Path, groups: list[list[str]], prefetch: bool) -> dict:
    """Open, look up and write as the perfect player does, flush and close: seconds per phase."""
    t0 = time.perf_counter()
    store = module.PositionStore(path)
    t1 = time.perf_counter()
    writes = 0
    for group in groups:
        step = PREFETCH_CHILDREN if prefetch else len(group) or 1
        for start in range(0, len(group), step):
            part = group[start:start + step]
            if prefetch:
                store.prefetch(part)
            for key in part:
                if store.get_key(key) is None:  # unknown: the search's bounds are written
                    store.put_key(key, -3, 3)
                    writes += 1
    t2 = time.perf_counter()
    store.close()
    t3 = time.perf_counter()
    return {"open": t1 - t0, "lookups and writes": t2 - t1, "close": t3 - t2, "total": t3 - t0,
            "lookups": sum(map(len, groups)), "writes": writes}


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineErrorParser(description="The position store's cost in the perfect player's pattern of use, "
                                       "against a baseline in the same run.",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--baseline", type=Path, default=None,
                   help="another checkout whose highway_env/solver/store.py is the baseline (one query per "
                        "lookup); default: this checkout's store used that way")
    p.add_argument("--positions", type=positive_int, default=60, help="positions of random play")
    p.add_argument("--plies", default="4,6,8,10", help="their plies, comma-separated, in turn")
    p.add_argument("--grandchildren", type=non_negative_int, default=4,
                   help="children per position whose children are looked up too")
    p.add_argument("--hit-rate", type=number(float, 0, 1), default=0.8,
                   help="share of the looked-up keys in the store beforehand")
    p.add_argument("--rows", type=non_negative_int, default=200_000, help="other positions in the built store")
    p.add_argument("--store", type=Path, default=None,
                   help="copy this store file instead of building one (--rows then unused)")
    p.add_argument("--rounds", type=positive_int, default=3, help="alternating rounds; each side's best counts")
    p.add_argument("--cold", action="store_true", help="drop each copy from the OS page cache before timing")
    p.add_argument("--seed", type=int, default=0, help="seed of the positions and the built store")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = p.parse_args(argv)
    try:
        args.plies = [int(x) for x in args.plies.split(",")]
    except ValueError:
        p.error(f"--plies must be comma-separated integers, got {args.plies!r}")
    if not all(0 <= x <= 13 for x in args.plies):
        p.error(f"--plies must lie in 0..13 (positions with children and grandchildren), got {args.plies}")
    if args.baseline is not None and not (args.baseline / "highway_env/solver/store.py").is_file():
        p.error(f"--baseline {str(args.baseline)!r} has no highway_env/solver/store.py: give a checkout of the project")
    if args.store is not None and not args.store.is_file():
        p.error(f"--store {str(args.store)!r} is not a file")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    groups = workload(args.positions, args.plies, args.grandchildren, args.seed)
    keys = list(dict.fromkeys(k for g in groups for k in g))
    stored = [k for i, k in enumerate(keys) if (i * 7919) % 1000 < args.hit_rate * 1000]  # spread evenly
    baseline = load_store_module(args.baseline) if args.baseline else this_store
    sides = [("baseline", baseline, False), ("this checkout", this_store, True)]
    runs = {name: [] for name, _, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source.sqlite"
        if args.store is not None:  # a consistent copy (its WAL included), then the workload's stored keys
            try:
                this_store.PositionStore(args.store, readonly=True).close()
            except this_store.StoreError as e:
                print(f"error: --store: {e}", file=sys.stderr)
                return 2
            real, copy = sqlite3.connect(args.store), sqlite3.connect(source)
            try:
                real.backup(copy)
            finally:
                real.close()
                copy.close()
            with this_store.PositionStore(source) as store:
                store.prefetch(stored)
                stored = [k for k in stored if store.get_key(k) is None]
            build_store(source, stored, 0, args.seed)
        else:
            build_store(source, stored, args.rows, args.seed)
        for _ in range(args.rounds):
            for name, module, prefetch in sides:
                copy = Path(tmp) / "copy.sqlite"
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{copy}{suffix}").unlink(missing_ok=True)
                shutil.copyfile(source, copy)
                if args.cold:
                    drop_from_page_cache(copy)
                runs[name].append(run_side(module, copy, groups, prefetch))
    best = {name: min(rs, key=lambda r: r["total"]) for name, rs in runs.items()}
    ratio = best["baseline"]["total"] / best["this checkout"]["total"]
    if args.json:
        print(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "runs": runs, "best": best,
                          "speedup_vs_baseline": ratio}, indent=2))
        return 0
    r = best["this checkout"]
    print(f"{r['lookups']} lookups in {len(groups)} sibling groups, {r['writes']} writes, "
          f"{'cold' if args.cold else 'warm'} page cache, best of {args.rounds} round(s), seconds")
    head = f"{'store':<15} {'open':>7} {'lookups+writes':>15} {'close':>7} {'total':>7} {'us/lookup':>10}"
    print(head)
    print("-" * len(head))
    for name, r in best.items():
        print(f"{name:<15} {r['open']:>7.3f} {r['lookups and writes']:>15.3f} {r['close']:>7.3f} {r['total']:>7.3f} "
              f"{1e6 * r['lookups and writes'] / r['lookups']:>10.2f}")
    print(f"\nthis checkout is {ratio:.2f}x the baseline's speed (total, same run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
