"""The process an isolated opponent lives in (see :class:`highway_env.play.opponents.AgentProcess`):

    python -m highway_env.play.agent_worker SPEC SEED

reads ``{"cells": [16 ints]}`` lines on stdin and answers ``{"action": n}`` (or ``{"error": ...}``)
on stdout; the first line it writes is ``{"ready": true}`` or the error that stopped it.
"""

from __future__ import annotations

import json
import os
import sys

from highway_env.core import Board
from highway_env.play.opponents import OpponentSpecError, build_opponent


def main(spec: str, seed: str) -> int:
    """Answer until stdin closes: replies on the original stdout, what a library prints on stderr."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # even C code printing cannot garble the replies

    def send(message: dict) -> None:
        out.write(json.dumps(message) + "\n")

    try:
        agent = build_opponent(spec, int(seed) if seed else None, isolate=False)
        warm_up = getattr(getattr(agent, "player", agent), "warm_up", None)
        if warm_up is not None:
            warm_up()  # compile / load the solver now, not during the first move
    except Exception as e:  # noqa: BLE001  (every failure goes back to the server as text)
        send({"error": str(e) if isinstance(e, OpponentSpecError) else f"bad opponent spec {spec!r}: {e}"})
        return 1
    send({"ready": True})
    for line in sys.stdin:
        try:
            send({"action": int(agent.act(Board(tuple(json.loads(line)["cells"]))))})
        except Exception as e:  # noqa: BLE001
            send({"error": f"{type(e).__name__}: {e}"})
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
