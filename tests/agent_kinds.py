"""The agent kinds the package registers, as a fresh interpreter sees them: tests register kinds of
their own in this process (``register_agent("first_legal_test", ...)``), which must not count."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def builtin_agent_kinds() -> tuple[str, ...]:
    """``agents.registry.agent_kinds()`` in a fresh process started from this checkout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", "import json; from agents.registry import agent_kinds; "
                        "print(json.dumps(agent_kinds()))"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return tuple(json.loads(r.stdout))
