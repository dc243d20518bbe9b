#!/usr/bin/env python
"""The position store's cost in the perfect player's pattern of use, this checkout against a baseline
checkout in the same run.

The perfect player (``hardest`` tie-break, node budgets: the evaluation's opponent) solves every
child of a position, then every child of each value-keeping child, and records each result in its
oracle: a store lookup, and a write where the result adds to what the store knew. This replays
that through ``Oracle.record`` without the searches: positions from seeded random play at plies
``--plies``, their children and the children of their first ``--grandchildren`` children, each
recorded with the bounds the store holds for it (a search agreeing with the store, as in an
evaluation on a warm store) or, for the positions the store lacks, new bounds (written, at plies
<= 12). ``--hit-rate`` of the positions up to ply 12 are in the store beforehand, among ``--rows``
other positions of random play (or a copy of ``--store``, a real store: its size and its layout).

Each side runs in its own interpreter with its checkout's packages on a fresh copy of the same
store file, alternating for ``--rounds`` rounds; ``--cold`` drops the copy from the OS page cache
first (a store not read lately). Prints the seconds of the records and of the closing flush, the
store queries (SELECTs) run, and the baseline / this-checkout ratio of the best rounds. Inside an
evaluation the searches between lookups leave the CPU caches cold: a lookup there costs about
1.5x what it costs here, and the store's share of the run is what ``bench_evaluate.py --workers 1``
reports in its ``store`` column.

    python bench/bench_store.py --baseline /tmp/base              # git worktree add /tmp/base <rev>
    python bench/bench_store.py --baseline /tmp/base --store ~/.cache/highway_env/solved.sqlite --cold
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when loaded from a file by the tests

from checkout_driver import run_driver  # noqa: E402
from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_int  # noqa: E402
from highway_env.core import Board  # noqa: E402
from highway_env.solver.oracle import cells_after, position_key  # noqa: E402
from highway_env.solver.solver import ordered_actions  # noqa: E402
from highway_env.solver.store import PositionStore, StoreError, key_ply  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STORE_MAX_PLY = 12  # the oracle's default: the plies it writes

# Run in the checkout under test: record the workload in an oracle over the store, print one JSON line.
DRIVER = r"""
import json, sys, time
from highway_env.solver import Solver
from highway_env.solver.oracle import Oracle
from highway_env.solver.store import PositionStore
store_path, workload_path = sys.argv[1:3]
records = [(tuple(cells), lo, hi) for cells, lo, hi in json.load(open(workload_path))]
solver = Solver(tt_bits=10)  # never searches here
t0 = time.perf_counter()
store = PositionStore(store_path)
selects = [0]
store._conn.set_trace_callback(lambda sql: selects.__setitem__(0, selects[0] + sql.lstrip().upper().startswith("SELECT")))
oracle = Oracle(store=store, solver=solver)
t1 = time.perf_counter()
for cells, lo, hi in records:
    oracle.record(cells, lo, hi)
t2 = time.perf_counter()
store.close()
t3 = time.perf_counter()
print("BENCH " + json.dumps({"open": t1 - t0, "records": t2 - t1, "close": t3 - t2, "total": t3 - t0,
                             "selects": selects[0], "positions": len(records)}))
"""


def random_position(rng: np.random.Generator, ply: int) -> Board:
    board = Board()
    for _ in range(ply):
        board = board.apply(int(rng.choice(board.legal_actions())))
    return board


def workload(positions: int, plies: list[int], grandchildren: int, seed: int) -> list[tuple[int, ...]]:
    """The positions the perfect player records, in its order: per position its children, then the
    children of its first ``grandchildren`` children (solver order); each once."""
    rng = np.random.default_rng(seed)
    out: dict[str, tuple[int, ...]] = {}
    for i in range(positions):
        board = random_position(rng, plies[i % len(plies)])
        for a in board.legal_actions():
            child = cells_after(board.cells, a)
            out.setdefault(position_key(child), child)
        for a in ordered_actions(board)[:grandchildren]:
            child = board.apply(a)
            for r in child.legal_actions():
                grandchild = cells_after(child.cells, r)
                out.setdefault(position_key(grandchild), grandchild)
    return list(out.values())


def random_bounds(rng: np.random.Generator) -> tuple[int, int]:
    lo = int(rng.integers(-20, 20))
    return lo, lo + int(rng.integers(0, 10))


def fill_store(path: Path, keys: list[str], rows: int, seed: int) -> None:
    """Add ``keys`` and ``rows`` positions of random play to the store (bounds: a plausible margin
    interval; the store checks nothing but their order)."""
    rng = np.random.default_rng(seed + 1)
    other = (position_key(random_position(rng, int(rng.integers(4, STORE_MAX_PLY + 1))).cells) for _ in range(rows))
    with PositionStore(path, batch_size=20_000) as store:
        for key in dict.fromkeys([*keys, *other]):  # a position drawn twice is written once
            store.put_key(key, *random_bounds(rng))


def drop_from_page_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run_side(tree: Path, store_path: Path, workload_path: Path) -> dict:
    return run_driver(tree, DRIVER, [str(store_path), str(workload_path)], "the replay")


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineErrorParser(description="The position store's cost in the perfect player's pattern of use, "
                                       "against a baseline checkout in the same run.",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--baseline", type=Path, required=True,
                   help="another checkout of the project to compare with, e.g. git worktree add /tmp/base REV")
    p.add_argument("--positions", type=positive_int, default=40, help="positions of random play")
    p.add_argument("--plies", default="8,10,11", help="their plies, comma-separated, in turn")
    p.add_argument("--grandchildren", type=non_negative_int, default=8,
                   help="children per position whose children are recorded too")
    p.add_argument("--hit-rate", type=number(float, 0, 1), default=0.8,
                   help="share of the positions up to ply 12 in the store beforehand")
    p.add_argument("--rows", type=non_negative_int, default=200_000, help="other positions in the built store")
    p.add_argument("--store", type=Path, default=None,
                   help="copy this store file instead of building one (--rows then unused; the positions it "
                        "holds already count as hits)")
    p.add_argument("--rounds", type=positive_int, default=5, help="alternating rounds; each side's best counts")
    p.add_argument("--cold", action="store_true", help="drop each copy from the OS page cache before a run")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the positions and the built store")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = p.parse_args(argv)
    try:
        args.plies = [int(x) for x in args.plies.split(",")]
    except ValueError:
        p.error(f"--plies must be comma-separated integers, got {args.plies!r}")
    if not all(0 <= x <= 13 for x in args.plies):
        p.error(f"--plies must lie in 0..13 (positions with children and grandchildren), got {args.plies}")
    if not (args.baseline / "highway_env/solver/oracle.py").is_file():
        p.error(f"--baseline {str(args.baseline)!r} has no highway_env/solver/oracle.py: give a checkout of the project")
    if args.store is not None and not args.store.is_file():
        p.error(f"--store {str(args.store)!r} is not a file")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    cells = workload(args.positions, args.plies, args.grandchildren, args.seed)
    keys = [position_key(c) for c in cells]
    # the positions up to ply 12 the store holds beforehand: a share of --hit-rate, spread evenly
    stored = [k for i, k in enumerate(keys) if key_ply(k) <= STORE_MAX_PLY and (i * 7919) % 1000 < args.hit_rate * 1000]
    sides = [("baseline", args.baseline), ("this checkout", ROOT)]
    runs = {name: [] for name, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source.sqlite"
        if args.store is not None:  # a consistent copy (its WAL included)
            try:
                PositionStore(args.store, readonly=True).close()
            except StoreError as e:
                print(f"error: --store: {e}", file=sys.stderr)
                return 2
            real, copy = sqlite3.connect(args.store), sqlite3.connect(source)
            try:
                real.backup(copy)
            finally:
                real.close()
                copy.close()
            with PositionStore(source) as store:
                stored = [k for k in stored if store.get_key(k) is None]
        fill_store(source, stored, 0 if args.store is not None else args.rows, args.seed)
        rng = np.random.default_rng(args.seed + 2)
        with PositionStore(source, readonly=True) as store:  # the bounds each search finds
            known = [store.get_key(k) for k in keys]
        records = [(c, *(b or random_bounds(rng))) for c, b in zip(cells, known)]
        workload_path = Path(tmp) / "workload.json"
        workload_path.write_text(json.dumps(records))
        for _ in range(args.rounds):
            for name, tree in sides:
                copy = Path(tmp) / "copy.sqlite"
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{copy}{suffix}").unlink(missing_ok=True)
                shutil.copyfile(source, copy)
                if args.cold:
                    drop_from_page_cache(copy)
                runs[name].append(run_side(tree, copy, workload_path))
    best = {name: min(rs, key=lambda r: r["total"]) for name, rs in runs.items()}
    ratio = best["baseline"]["total"] / best["this checkout"]["total"]
    if args.json:
        print(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "runs": runs, "best": best,
                          "speedup_vs_baseline": ratio}, indent=2))
        return 0
    deep = sum(key_ply(k) > STORE_MAX_PLY for k in keys)
    hits = sum(b is not None for b in known)
    print(f"{len(keys)} positions recorded ({deep} deeper than ply {STORE_MAX_PLY}), {hits} of them stored "
          f"beforehand{' in a copy of ' + str(args.store) if args.store else ''}; "
          f"{'cold' if args.cold else 'warm'} page cache, best of {args.rounds} round(s), seconds")
    head = f"{'checkout':<15} {'open':>7} {'records':>8} {'close':>7} {'total':>7} {'queries':>8} {'us/position':>12}"
    print(head)
    print("-" * len(head))
    for name, r in best.items():
        print(f"{name:<15} {r['open']:>7.3f} {r['records']:>8.3f} {r['close']:>7.3f} {r['total']:>7.3f} "
              f"{r['selects']:>8} {1e6 * r['records'] / r['positions']:>12.2f}")
    print(f"\nthis checkout is {ratio:.2f}x the baseline's speed (total, same run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
