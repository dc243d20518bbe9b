"""The opponent: an agent built from a spec string by ``agents.make_agent``.

Specs as everywhere in the project (``random``, ``greedy``, ``mcts:N``, ``az:PATH[:SIMS]``,
``perfect[:TIEBREAK]``), with one convenience: ``az:agents/pretrained/highway_az.pt`` (or plain
``az``) means the checkpoint shipped inside the installed package, wherever the server runs from.

The searching agents (perfect player, MCTS, AlphaZero) run in a process of their own
(:class:`AgentProcess`): the perfect player's solver holds the GIL for the whole of a search (its
longest think times: the README's Benchmarks, ``bench/bench_perfect.py --as-opponent``), which would
freeze every thread of the web server meanwhile, and a search in a process can be
stopped when its game is replaced, deleted or dropped (a thread cannot be). Random and greedy are
instant and run in the server.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from highway_env.extras import is_installed, torch_installed

#: The spec that names the shipped AlphaZero checkpoint (relative to a source checkout).
SHIPPED_AZ = "agents/pretrained/highway_az.pt"
#: Other names of it in an ``az`` spec (``az``, ``az:pretrained``, ``az:shipped``).
SHIPPED_ALIASES = ("", "pretrained", "shipped")

#: What the page offers (the page also takes a checkpoint path and the MCTS simulation count).
PRESETS = (
    {"spec": "perfect:hardest", "label": "Perfect player, hardest tie-break"},
    {"spec": "perfect:margin", "label": "Perfect player, best-margin tie-break"},
    {"spec": "perfect:random", "label": "Perfect player, random tie-break"},
    {"spec": f"az:{SHIPPED_AZ}", "label": "AlphaZero, shipped checkpoint"},
    {"spec": "mcts:200", "label": "MCTS (random rollouts), 200 simulations"},
    {"spec": "greedy", "label": "Greedy (one ply)"},
    {"spec": "random", "label": "Random"},
)

MAX_SPEC_LENGTH = 1000


def offered_presets(checkpoints=()) -> list[dict]:
    """:data:`PRESETS`, less the AlphaZero one where PyTorch is not installed (it could not start),
    and one for each of ``checkpoints`` (those given with ``--checkpoint``)."""
    return [*(p for p in PRESETS if torch_installed() or not p["spec"].startswith("az:")),
            *({"spec": f"az:{p}", "label": f"AlphaZero, {Path(p).name}"} for p in checkpoints)]


class OpponentSpecError(ValueError):
    """A spec that names no usable Highway agent; the message names the spec."""


def resolve_spec(spec: str) -> str:
    """The spec with the shipped checkpoint's path made absolute (the server may run anywhere)."""
    name, _, rest = spec.partition(":")
    if name != "az":
        return spec
    from agents.registry import split_az_args

    path, sims = split_az_args(rest)
    if path in SHIPPED_ALIASES or (not os.path.exists(path) and Path(path).as_posix().endswith(SHIPPED_AZ)):
        import agents

        path = str(agents.PRETRAINED)
    return ":".join(["az", path, *([sims] if sims else [])])


#: Agent kinds that get their own process (see above). A new kind that searches belongs here, with
#: a cap on its size in ``limits.py`` (tests/test_hostile_server.py checks every kind is placed).
ISOLATED_KINDS = ("perfect", "mcts", "az")
#: How long a new agent process may take to start (imports, the opening book, the solver tables).
START_TIMEOUT = 120.0


def is_engine(spec) -> bool:
    """Whether ``spec``'s agent runs in a process of its own (these count against the server's
    ``max_engines``)."""
    return isinstance(spec, str) and spec.strip().partition(":")[0] in ISOLATED_KINDS


def build_opponent(spec, seed: int | None = None, isolate: bool | None = None):
    """An agent for ``spec`` that plays Highway; raises OpponentSpecError naming the spec.
    ``isolate``: run it in an :class:`AgentProcess` (default: for :data:`ISOLATED_KINDS`)."""
    if not isinstance(spec, str) or not spec.strip():
        raise OpponentSpecError(f"opponent must be a non-empty agent spec string, got {spec!r}")
    if len(spec) > MAX_SPEC_LENGTH:
        raise OpponentSpecError(f"opponent spec is {len(spec)} characters long (at most {MAX_SPEC_LENGTH})")
    spec = spec.strip()
    if isolate is None:
        isolate = is_engine(spec)
    if isolate:
        return AgentProcess(spec, seed)
    from agents import CheckpointError, make_agent
    from agents.registry import spec_prefix

    resolved = resolve_spec(spec)
    try:
        agent = make_agent(resolved, seed=seed)
    except (ValueError, CheckpointError, OSError) as e:
        # named as the page wrote it: the resolved spec may hold the shipped checkpoint's path here
        detail = str(e).removeprefix(f"{spec_prefix(resolved)}: ")
        raise OpponentSpecError(f"bad opponent spec {spec!r}: {detail}") from e
    game = getattr(agent, "game", None)
    if getattr(game, "name", "highway") != "highway":
        raise OpponentSpecError(f"opponent spec {spec!r} plays {game.name!r}, not Highway")
    return agent


class AgentProcess:
    """An agent in a child process (``python -m highway_env.play.agent_worker SPEC SEED``), with the
    agent interface the session uses (``act``) and ``close``. JSON lines over its stdin/stdout. A
    process that dies (killed, out of memory) is started again once for the request that finds it
    gone, so its game goes on; ``restarts`` counts them."""

    def __init__(self, spec: str, seed: int | None = None):
        self.spec = spec
        self.seed = seed
        self.restarts = 0
        self._lock = threading.Lock()  # one request at a time
        self._life = threading.Lock()  # guards replacing and closing the process
        self._closed = False
        self._process, self._lines = self._launch()

    def _launch(self) -> tuple[subprocess.Popen, queue.Queue]:
        import highway_env

        env = dict(os.environ)
        root = str(Path(highway_env.__file__).resolve().parent.parent)
        # a checkout: the child imports this very copy; never an installed copy's site-packages, which on
        # PYTHONPATH would come before the child's standard library (and could shadow it with a backport)
        if not is_installed(root):
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        process = subprocess.Popen(
            [sys.executable, "-m", "highway_env.play.agent_worker", self.spec,
             "" if self.seed is None else str(self.seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        lines: queue.Queue = queue.Queue()  # one per process: a dead one's last words stay in its own
        threading.Thread(target=self._read, args=(process, lines), name=f"agent-reader {self.spec}",
                         daemon=True).start()
        try:
            reply = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            reply = {"error": f"opponent {self.spec!r} did not start within {START_TIMEOUT:g} s"}
        if "ready" not in reply:
            _stop(process)
            raise OpponentSpecError(reply.get("error", f"opponent {self.spec!r} failed to start"))
        return process, lines

    def _read(self, process: subprocess.Popen, lines: queue.Queue) -> None:
        for line in process.stdout:
            try:
                lines.put(json.loads(line))
            except ValueError:
                continue  # not ours (a library printing to stdout)
        lines.put({"ended": True})

    def act(self, board) -> int:
        with self._lock:
            reply = self._ask(board)
            if reply is None:  # the process is gone (killed, out of memory): a new one, once
                self._replace()
                reply = self._ask(board)
            if reply is None:
                raise RuntimeError(f"the process of opponent {self.spec!r} ended again after a restart "
                                   f"(exit code {self._process.poll()}); start a new game or choose another "
                                   "opponent")
        if "action" not in reply:
            raise RuntimeError(reply.get("error", "no answer"))
        return int(reply["action"])

    def _ask(self, board) -> dict | None:
        """The process's reply to one request; None if it is gone, before or during the request."""
        try:
            self._process.stdin.write(json.dumps({"cells": list(board.cells)}) + "\n")
            self._process.stdin.flush()
        except (OSError, ValueError):
            return None
        reply = self._lines.get()
        return None if "ended" in reply else reply

    def _replace(self) -> None:
        with self._life:
            if self._closed:  # closed while searching (its game replaced or deleted): not restarted
                raise RuntimeError(f"opponent {self.spec!r} was stopped")
        process, lines = self._launch()  # seconds: outside the lock, so close() never waits for it
        with self._life:
            if self._closed:
                _stop(process)
                raise RuntimeError(f"opponent {self.spec!r} was stopped")
            old, self._process, self._lines = self._process, process, lines
            self.restarts += 1
        _stop(old)

    def close(self) -> None:
        with self._life:
            self._closed = True
            process = self._process
        _stop(process)

    def __del__(self):
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            process.terminate()


def _stop(process: subprocess.Popen) -> None:
    """End an agent process (SIGTERM, then SIGKILL after 5 s) and close its pipes."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
    for f in (process.stdin, process.stdout):
        try:
            f.close()
        except OSError:
            pass
