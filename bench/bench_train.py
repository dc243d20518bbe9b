#!/usr/bin/env python
"""Training iterations per CPU second, where they go, and whether another checkout trains the same.

Runs ``train.py --iterations 10 --seed 1`` (``--train-args`` to change it) in a fresh interpreter,
by default all in this process on one thread (``--workers 0 --learner-threads 1
--no-eval-background``), so its CPU seconds are the whole work of the run, split into phases:

* ``self-play``: the chunks played in this process (in the pool's ``collect``);
* ``learn``: the SGD steps (replay sampling included);
* ``grade``: the solver grading of the network;
* ``evaluate``: the evaluations against the baselines (in the loop);
* ``save``: latest.pt and the replay next to it;
* ``rest``: start-up, imports, logs, the rest of the loop.

``--baseline DIR`` (another checkout, e.g. ``git archive REV | tar -x -C /tmp/base``) runs the same
training from there, alternating with this checkout for ``--rounds`` rounds (the load of a shared
machine then hits both), and prints the ratio of the least CPU seconds and of the best walls. Every
run also prints a digest of what it trained: the tensors of latest.pt (network, optimizer state,
the next self-play weights) and log.csv without its clock columns (``elapsed_s``, ``games_per_s``);
the script says whether every run of both checkouts gave the same one, i.e. bit-identical results.

    python bench/bench_train.py
    python bench/bench_train.py --baseline /tmp/base --rounds 3
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
DEFAULT_TRAIN_ARGS = ("--iterations 10 --seed 1 --workers 0 --learner-threads 1 --no-eval-background "
                      "--no-tensorboard --no-progress")
PHASES = ("self-play", "learn", "grade", "evaluate", "save")

# Run in the checkout under test: time train.py's phases, digest what it wrote, print one JSON line.
DRIVER = PHASE_TIMER + r"""
import csv, hashlib, json, resource, sys
t0 = time.perf_counter()
import train
from agents import parallel, trainer
from agents.grading import Grader
for phase, owner, attr in (("self-play", parallel, "run_chunk"),  # the inline pool's chunks, not the workers'
                           ("learn", trainer.Trainer, "train_steps"), ("grade", Grader, "accuracy"),
                           ("evaluate", trainer, "evaluate_net"), ("save", trainer.Trainer, "save")):
    setattr(owner, attr, timed(phase, getattr(owner, attr)))
code = train.main(sys.argv[1:])
if code:  # train.py said why: nothing to time
    sys.exit(code)
wall = time.perf_counter() - t0
cpu = sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
          for f in ("ru_utime", "ru_stime"))
run = f"{sys.argv[sys.argv.index('--out-dir') + 1]}/{sys.argv[sys.argv.index('--run') + 1]}"
import torch
ck = torch.load(f"{run}/latest.pt", map_location="cpu", weights_only=False)
h = hashlib.sha256()
def feed(x):
    if isinstance(x, torch.Tensor):
        h.update(x.detach().contiguous().numpy().tobytes())
    elif isinstance(x, dict):
        for k in sorted(x, key=str):
            h.update(str(k).encode())
            feed(x[k])
    elif isinstance(x, (list, tuple)):
        for v in x:
            feed(v)
    else:
        h.update(repr(x).encode())
feed({"model": ck["model"], "optimizer": ck["optimizer"], "actor_weights": ck["actor_weights"]})
weights = h.hexdigest()[:16]
with open(f"{run}/log.csv", newline="") as f:
    rows = [{k: v for k, v in r.items() if k not in ("elapsed_s", "games_per_s")} for r in csv.DictReader(f)]
log = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]
print("BENCH " + json.dumps({"wall": wall, "cpu": cpu, "phases": phases, "iterations": ck["counters"]["iteration"],
                             "weights": weights, "log": log, "log_rows": len(rows)}))
"""


def run_once(tree: Path, train_args: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return run_driver(tree, DRIVER, [*train_args, "--out-dir", tmp, "--run", "bench"], "train.py")


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineErrorParser(description="CPU seconds of a fixed-iteration train.py run split into its phases, "
                                       "its ratio against another checkout run alternately in the same run, "
                                       "and whether both trained bit-identical weights and logs.",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--train-args", default=DEFAULT_TRAIN_ARGS,
                   help="train.py's arguments (one string; --out-dir and --run are the benchmark's)")
    p.add_argument("--baseline", type=Path, default=None,
                   help="another checkout of the project to compare with (its train.py, its packages)")
    p.add_argument("--rounds", type=positive_int, default=1,
                   help="alternating rounds (baseline, this checkout, ...); each side reports its best")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = p.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "train.py").is_file():
        p.error(f"--baseline {str(args.baseline)!r} has no train.py: give a checkout of the project")
    for flag in ("--out-dir", "--run"):
        if flag in shlex.split(args.train_args):
            p.error(f"--train-args {args.train_args!r} sets {flag}: the benchmark picks a temporary one")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    train_args = shlex.split(args.train_args)
    runs = alternate_rounds(args.baseline, ROOT, args.rounds, lambda tree: run_once(tree, train_args))
    best = {name: min(rs, key=lambda r: r["cpu"]) for name, rs in runs.items()}
    best_wall = {name: min(r["wall"] for r in rs) for name, rs in runs.items()}
    digests = {(r["weights"], r["log"]) for rs in runs.values() for r in rs}
    ratio = best["baseline"]["cpu"] / best["this checkout"]["cpu"] if args.baseline else None
    wall_ratio = best_wall["baseline"] / best_wall["this checkout"] if args.baseline else None
    if args.json:
        print(json.dumps({"train_args": args.train_args, "runs": runs, "best": best,
                          "cpu_speedup_vs_baseline": ratio, "wall_speedup_vs_baseline": wall_ratio,
                          "identical": len(digests) == 1}, indent=2))
        return 0
    print(f"python train.py {args.train_args} (least CPU seconds of {args.rounds} round(s), its phases in wall seconds)")
    head = f"{'checkout':<15} {'cpu':>7} {'wall':>7} " + " ".join(f"{p:>9}" for p in PHASES) + f" {'rest':>7}  digest"
    print(head)
    print("-" * len(head))
    for name, r in best.items():
        ph = [r["phases"].get(p, 0.0) for p in PHASES]
        print(f"{name:<15} {r['cpu']:>7.2f} {best_wall[name]:>7.2f} " + " ".join(f"{x:>9.2f}" for x in ph)
              + f" {r['wall'] - sum(ph):>7.2f}  {r['weights']}/{r['log']}")
    if ratio:
        print(f"\nthis checkout is {ratio:.2f}x the baseline's speed in CPU seconds ({wall_ratio:.2f}x wall, "
              f"best walls), same run")
    print("identical results in every run: " + ("yes" if len(digests) == 1 else
                                                  f"NO ({len(digests)} different weights/log digests)"))
    print("cpu = user + system seconds of train.py and its children (other jobs on the machine inflate them "
          "less than the wall); digest = latest.pt's tensors / log.csv without its clock columns")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
