"""Run a benchmark's driver code in a checkout of the project (its packages first on the path) and
read back the one ``BENCH {json}`` line it prints: how bench_evaluate.py and bench_store.py time the
code under test and a baseline checkout in the same run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Driver code that times functions: ``setattr(module, name, timed(phase, fn))`` adds each call's
#: wall seconds to ``phases[phase]``.
PHASE_TIMER = r"""
import time
phases = {}
def timed(name, fn):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - t
    return wrapper
"""


def run_driver(tree: Path, driver: str, args: list[str], what: str, extra_env: dict | None = None) -> dict:
    """``python -c driver *args`` in ``tree``; its last ``BENCH`` line as a dict. SystemExit naming
    ``what`` and the checkout where it fails or prints no such line."""
    tree = Path(tree).resolve()  # the driver runs in it: a relative --baseline would be taken from there
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]),
               **(extra_env or {}))
    r = subprocess.run([sys.executable, "-c", driver, *args], cwd=tree, env=env, capture_output=True, text=True,
                       timeout=3600)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("BENCH ")]
    if r.returncode != 0 or not lines:
        raise SystemExit(f"{what} failed in {tree} (exit {r.returncode}): {r.stderr.strip()[-2000:]}")
    return json.loads(lines[-1][len("BENCH "):])


def alternate_rounds(baseline: Path | None, this: Path, rounds: int, run) -> dict[str, list[dict]]:
    """``run(tree)`` for the baseline checkout (if any) and this one in turn, ``rounds`` times, so
    the load of a shared machine hits both sides alike; ``{"baseline": [...], "this checkout": [...]}``."""
    sides = ([("baseline", baseline)] if baseline is not None else []) + [("this checkout", this)]
    runs: dict[str, list[dict]] = {name: [] for name, _ in sides}
    for _ in range(rounds):
        for name, tree in sides:
            runs[name].append(run(tree))
    return runs
