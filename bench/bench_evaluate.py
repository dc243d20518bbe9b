#!/usr/bin/env python
"""Where the wall time of a small ``evaluate.py`` run goes, and its ratio against another checkout.

Runs ``evaluate.py --agent greedy --agent random --games 10 --positions 500`` (``--eval-args`` to
change it) in a fresh interpreter with timers around its phases:

* ``start-up``: ``import evaluate`` and building its parser (which loads the solver's modules);
* ``validate``: checking the flags and building every agent once;
* ``tasks``: ``run_tasks``, the games and positions on ``--workers`` processes (their start, the
  solver, book and store loading included); ``task seconds`` is the sum of the tasks' own times;
* ``report``: the rest (position sets, store check, summary, plots, report files);
* ``store``: with ``--workers 1``, the seconds spent in the solver's position store (opening it,
  lookups, writes, flushes; the tasks run in this process then), inside ``tasks`` and ``report``;
  with ``--count-queries`` also its SELECT queries.

``--baseline DIR`` (another checkout of the project, e.g. ``git worktree add /tmp/base <rev>``) runs
the same evaluation from there, alternating with this checkout for ``--rounds`` rounds (the load of
a shared machine then hits both), and prints the ratio of the best walls and of the least CPU
seconds (evaluate.py and its worker processes; other jobs inflate them less). Each run writes to a fresh
temporary folder (no task cache); the solver's position store is ``--store`` (the default store is
warm after a first run; ``none``: every run solves from its book alone; ``fresh``: an empty one per
run, so every run writes the same rows).

    python bench/bench_evaluate.py
    python bench/bench_evaluate.py --baseline /tmp/base --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when loaded from a file by the tests

from checkout_driver import PHASE_TIMER, alternate_rounds, run_driver  # noqa: E402
from highway_env.cli_args import OneLineErrorParser, positive_int  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_EVAL_ARGS = "--agent greedy --agent random --games 10 --positions 500"

# Run in the checkout under test: time evaluate.py's phases, print them as one JSON line.
DRIVER = PHASE_TIMER + r"""
import json, sys
t0 = time.perf_counter()
import evaluate
phases["start-up"] = time.perf_counter() - t0
for fn_name, phase in (("build_parser", "start-up"), ("validate", "validate"), ("run_tasks", "tasks")):
    setattr(evaluate, fn_name, timed(phase, getattr(evaluate, fn_name)))
from highway_env.solver import store
store_seconds, in_store = [0.0], [False]
def store_timed(fn):  # the outermost store call only (put_key may flush)
    def wrapper(*a, **k):
        if in_store[0]:
            return fn(*a, **k)
        in_store[0], t = True, time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            store_seconds[0] += time.perf_counter() - t
            in_store[0] = False
    return wrapper
for fn_name in ("__init__", "get_key", "put_key", "flush", "close", "__len__"):
    setattr(store.PositionStore, fn_name, store_timed(getattr(store.PositionStore, fn_name)))
import os
queries = [0]
if os.environ.get("BENCH_STORE_QUERIES"):  # count the store's SELECTs (a trace callback on every statement)
    open_store = store.PositionStore._open
    def traced_open(self):
        open_store(self)
        self._conn.set_trace_callback(lambda sql: queries.__setitem__(0, queries[0] + (sql.lstrip()[:6].upper() == "SELECT")))
    store.PositionStore._open = traced_open
code = evaluate.main(sys.argv[1:])
if code:  # evaluate.py said why: nothing to time
    sys.exit(code)
wall = time.perf_counter() - t0
phases["report"] = wall - phases["start-up"] - phases["validate"] - phases["tasks"]
out = sys.argv[sys.argv.index("--out") + 1]
import glob
task_seconds = sum(json.load(open(f)).get("seconds", 0) for f in glob.glob(out + "/tasks/*.json"))
workers = int(sys.argv[sys.argv.index("--workers") + 1])
in_process = workers == 1
import resource  # this process and its reaped children (the pool's workers): CPU seconds, less load-bound than wall
cpu = sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
          for f in ("ru_utime", "ru_stime"))
print("BENCH " + json.dumps({"code": code, "wall": wall, "cpu": cpu, "phases": phases, "task_seconds": task_seconds,
                             "store_seconds": store_seconds[0] if in_process else None,
                             "store_queries": queries[0] if in_process and os.environ.get("BENCH_STORE_QUERIES") else None}))
"""


def run_once(tree: Path, eval_args: list[str], store: str, workers: int, count_queries: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "solved.sqlite") if store == "fresh" else store
        argv = [*eval_args, "--out", str(Path(tmp) / "eval"), "--store", store, "--workers", str(workers),
                "--no-progress"]
        return run_driver(tree, DRIVER, argv, "evaluate.py", {"BENCH_STORE_QUERIES": "1" if count_queries else ""})


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineErrorParser(description="Wall time of a small evaluate.py run split into its phases, and "
                                       "its ratio against another checkout run alternately in the same run.",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--eval-args", default=DEFAULT_EVAL_ARGS, help="evaluate.py's arguments (one string)")
    p.add_argument("--baseline", type=Path, default=None,
                   help="another checkout of the project to compare with (its evaluate.py, its packages)")
    p.add_argument("--rounds", type=positive_int, default=1,
                   help="alternating rounds (baseline, this checkout, ...); each side reports its best wall")
    p.add_argument("--workers", type=positive_int, default=2, help="evaluate.py's --workers")
    p.add_argument("--store", default="default",
                   help="evaluate.py's --store: default, none or a path; 'fresh': a new empty store for each run "
                        "(every position the perfect player solves is written)")
    p.add_argument("--count-queries", action="store_true",
                   help="with --workers 1, also count the store's SELECT queries (a trace callback on each "
                        "statement, which adds a little to the store's seconds)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = p.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "evaluate.py").is_file():
        p.error(f"--baseline {str(args.baseline)!r} has no evaluate.py: give a checkout of the project")
    # each run's folder is its checkout: a store path given here must mean the same there
    if args.store not in ("default", "none", "fresh", ""):
        args.store = str(Path(args.store).resolve())
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    eval_args = shlex.split(args.eval_args)
    runs = alternate_rounds(args.baseline, ROOT, args.rounds,
                            lambda tree: run_once(tree, eval_args, args.store, args.workers, args.count_queries))
    best = {name: min(rs, key=lambda r: r["wall"]) for name, rs in runs.items()}
    ratio = best["baseline"]["wall"] / best["this checkout"]["wall"] if args.baseline else None
    least_cpu = {name: min(r["cpu"] for r in rs) for name, rs in runs.items()}
    cpu_ratio = least_cpu["baseline"] / least_cpu["this checkout"] if args.baseline else None
    if args.json:
        print(json.dumps({"eval_args": args.eval_args, "workers": args.workers, "store": args.store,
                          "runs": runs, "best": best, "speedup_vs_baseline": ratio,
                          "cpu_speedup_vs_baseline": cpu_ratio}, indent=2))
        return 0
    print(f"python evaluate.py {args.eval_args} --workers {args.workers} --store {args.store} "
          f"(best of {args.rounds} round(s), seconds)")
    head = (f"{'checkout':<15} {'wall':>7} {'cpu':>7} {'start-up':>9} {'validate':>9} {'tasks':>7} {'report':>7} {'task s':>7} "
            f"{'store':>7}")
    print(head)
    print("-" * len(head))
    for name, r in best.items():
        ph = r["phases"]
        print(f"{name:<15} {r['wall']:>7.2f} {least_cpu[name]:>7.2f} {ph['start-up']:>9.2f} {ph['validate']:>9.2f} {ph['tasks']:>7.2f} "
              f"{ph['report']:>7.2f} {r['task_seconds']:>7.2f} "
              + (f"{r['store_seconds']:>7.2f}" if r.get("store_seconds") is not None else f"{'-':>7}")
              + (f"  {r['store_queries']} store queries" if r.get("store_queries") is not None else ""))
    if ratio:
        print(f"\nthis checkout is {ratio:.2f}x the baseline's speed (wall, same run); {cpu_ratio:.2f}x in CPU seconds")
    print("cpu = the least CPU seconds of a run (user + system, evaluate.py and its worker processes: other "
          "jobs on the machine inflate them less than the wall); "
          "task s = the tasks' own seconds summed over the workers (the rest of 'tasks' is starting them); "
          "store = seconds in the position store (--workers 1 only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
