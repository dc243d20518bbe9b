"""Run a benchmark's driver code in a checkout of the project (its packages first on the path) and
read back the one ``BENCH {json}`` line it prints: how bench_evaluate.py and bench_store.py time the
code under test and a baseline checkout in the same run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


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
