"""Proof that A wins Highway from the empty board, with a certificate anyone can re-check.

The root is split into sub-problems: for a candidate first move of A, every reply of B modulo the
symmetries that fix the position after that move. Each sub-problem (a position with two numbers
placed, A to move) is a null-window search "can A force margin >= 1?" run in worker processes (or
as Ray tasks); one that needs more than ``unit_nodes`` nodes is split further into units (see
``proof_units``), so no unit is a large share of the work and any number of workers stays busy. The
first candidate all of whose replies are won is A's winning first move; a candidate with a reply
that is not won is abandoned at once. Candidates come in the solver's own move order, so nothing is
told to it in advance (an earlier certificate may say which sub-problems are large: that only
decides where to split).

The certificate (JSON) lists the winning first move and, for every B reply modulo symmetry, its
orbit size, value, nodes, seconds and a winning answer of A, with the units it was split into:
re-solving any line re-checks that part of the proof. The shipped one is ``proof/certificate.json``.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import time
from dataclasses import dataclass, field

from highway_env.core import Board, HighwayError, decode_action
from highway_env.atomic_files import atomic_write_text
from highway_env.parent_watch import exit_with_parent
from highway_env.ray_tasks import NODE_WAIT_SECONDS, RayCluster, shipped_runtime_env
from highway_env.retrying_pool import RetryingPool, WorkerLostError  # noqa: F401  (raised from here)
from highway_env.solver.proof_units import Goal, UnitTree, distinct_moves, goal_row, predicted_wall
from highway_env.solver.solver import action_dict


# ----------------------------------------------------------------------------- worker side

_SOLVER = None


def _init_worker(tt_bits: int, parent_pid: int | None = None) -> None:
    global _SOLVER
    if parent_pid is not None:  # a local worker process (not a Ray task, not the tests' direct call)
        # Ctrl-C reaches the whole process group: the driver alone handles it, so workers print nothing
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        exit_with_parent(parent_pid)  # the search holds the interpreter: the kernel must kill it
    from highway_env.solver.solver import Solver

    _SOLVER = Solver(tt_bits=tt_bits)


def solve_task(cells: tuple[int, ...], threshold: int, tt_bits: int = 23, node_limit: int = 0) -> dict:
    """Can A force margin >= threshold from ``cells``? Runs in a worker; returns a JSON-able dict.
    With ``node_limit`` a search that needs more nodes stops there with ``holds`` None: the driver
    then splits the position into smaller units."""
    if _SOLVER is None:
        _init_worker(tt_bits)
    start = time.monotonic()
    board = Board(tuple(cells))
    value, nodes = _SOLVER.search_window(board, threshold - 1, threshold, node_limit or None)
    seconds = time.monotonic() - start
    if value is None:
        return {"holds": None, "nodes": nodes, "seconds": seconds, "answer": None}
    holds = value >= threshold
    # A's move that keeps it: cheap now that the table holds the proof
    answer = _SOLVER.keeping_move(board, threshold) if holds else None
    return {"holds": holds, "nodes": nodes, "seconds": seconds, "answer": answer}


# ----------------------------------------------------------------------------- driver

@dataclass
class ProofConfig:
    workers: int = os.cpu_count() or 1
    tt_bits: int = 23
    ray_address: str | None = None
    ray_runtime_env: dict | None = field(default_factory=dict)  # extra runtime_env (None: ship nothing)
    ray_no_cpu_timeout: float = NODE_WAIT_SECONDS  # seconds without a node that fits a unit before the proof stops
    ray_kept: str = ""  # what a run stopped by the loss of this machine's Ray node keeps, and how to go on
    first_move: int | None = None  # try only this first move (for re-checking a certificate)
    root: Board = field(default_factory=Board)  # the empty board; tests use small positions
    retries: int = 2  # times a unit is re-run after its worker died (killed, out of memory)
    unit_nodes: int = 400_000  # a unit needing more nodes is split (0: never split)
    estimates: dict = field(default_factory=dict)  # canonical Board -> nodes, from an earlier run


class NotProvenError(RuntimeError):
    """Every candidate first move was refuted: an answer about the position, not a failure."""


class _LocalPool(RetryingPool):
    """Worker processes for proof units (:class:`highway_env.retrying_pool.RetryingPool`: a worker
    killed mid-unit breaks the pool, which is rebuilt and the unfinished units run again)."""

    def __init__(self, workers: int, tt_bits: int, retries: int = 2):
        self.tt_bits = tt_bits
        super().__init__(workers, _init_worker, (tt_bits, os.getpid()), retries,
                         what=lambda args: f"solving {','.join(map(str, args[0]))}",
                         hint="out of memory? try fewer --workers or a smaller --tt-bits")

    def submit(self, cells, threshold, node_limit: int = 0):
        return super().submit(solve_task, tuple(cells), threshold, self.tt_bits, node_limit)


#: units given to Ray beyond its CPUs: an autoscaler adds nodes for the demand it sees waiting
RAY_QUEUE_MARGIN = 2


def table_bytes(tt_bits: int) -> int:
    """Memory of one worker's transposition table (two 21-byte entries a bucket)."""
    return 2 * (1 << tt_bits) * 21


class _RayPool:
    """Ray tasks (:class:`highway_env.ray_tasks.RayCluster`), each declaring one CPU and its
    worker's table as memory (so the scheduler does not pack more workers on a node than its memory
    holds), the packages shipped as training ships them; a task whose worker or node is lost is
    retried by Ray, and a cluster with no CPU node left stops the proof with an error, not a hang.

    Units never go to Ray faster than its CPUs take them (plus :data:`RAY_QUEUE_MARGIN` for an
    autoscaler to see demand); the rest wait here. So cancelling never calls ``ray.cancel``, whose
    race with a task's end aborts the driver in Ray 2.60 (ray-project/ray#54846): a unit still here
    is dropped, one on Ray runs on to its node limit and its result is ignored, as in the local pool."""

    def __init__(self, config: ProofConfig, cluster: RayCluster | None = None):
        self.cluster = cluster or RayCluster(
            config.ray_address, shipped_runtime_env(config.ray_runtime_env), noun="proof units",
            fallback="prove without --ray-address", log_to_driver=False, local_cpus=config.workers,
            no_cpu_timeout=config.ray_no_cpu_timeout, kept=config.ray_kept,
            less_memory="a smaller --tt-bits")
        self.remote = self.cluster.task(solve_task, memory=table_bytes(config.tt_bits) + (200 << 20),
                                        max_retries=config.retries)
        self.tt_bits = config.tt_bits
        self.units: dict = {}  # task -> its position, for messages
        self.waiting: dict = {}  # task -> (cells, threshold, node_limit), not given to Ray yet
        self.on_ray: dict = {}  # task -> its Ray object reference
        self.abandoned: list = []  # references of cancelled units still running on Ray
        self.next_id = 0

    def submit(self, cells, threshold, node_limit: int = 0):
        task = self.next_id
        self.next_id += 1
        self.units[task] = cells
        self.waiting[task] = (cells, threshold, node_limit)
        return task

    def _launch(self) -> None:
        cpus = int(self.cluster.ray.cluster_resources().get("CPU", 0))
        room = cpus + RAY_QUEUE_MARGIN - len(self.on_ray) - len(self.abandoned)
        for task in list(self.waiting)[:max(room, 0)]:
            cells, threshold, node_limit = self.waiting.pop(task)
            self.on_ray[task] = self.remote.remote(cells, threshold, self.tt_bits, node_limit)

    def wait_any(self, pending):
        """The finished units of ``pending``, after waiting for at least one unit to end (maybe a
        cancelled one, which frees its CPU: then the list may be empty)."""
        self._launch()
        mine = {self.on_ray[task]: task for task in pending if task in self.on_ray}
        done = self.cluster.wait([*mine, *self.abandoned])
        self.abandoned = [ref for ref in self.abandoned if ref not in done]
        finished = [mine[ref] for ref in done if ref in mine]
        return [(task, self.cluster.get(self.on_ray.pop(task), f"the unit {','.join(map(str, self.units.pop(task)))}"))
                for task in finished]

    def cancel(self, pending):
        for task in pending:
            self.units.pop(task, None)
            self.waiting.pop(task, None)
            if task in self.on_ray:
                self.abandoned.append(self.on_ray.pop(task))

    def close(self, kill: bool = False):
        self.cluster.close()


def _make_pool(config: ProofConfig):
    if config.ray_address:
        return _RayPool(config)
    return _LocalPool(config.workers, config.tt_bits, config.retries)


def check_first_move(pool, first: int, threshold: int, progress: bool, root: Board = Board(),
                     unit_nodes: int = 0, estimates: dict | None = None) -> tuple[list, dict | None, UnitTree]:
    """Can A force margin >= threshold after playing ``first``? Every B reply (modulo symmetry) is a
    goal, split into units of at most ``unit_nodes`` nodes; stops at the first reply that refutes
    it. Returns (rows, refuting row or None, the unit tree)."""
    from tqdm import tqdm

    number, cell = decode_action(first)
    tree = UnitTree(pool, threshold, unit_nodes, estimates)
    top = Goal(root)
    tree.try_answers(top, [first])
    bar = tqdm(total=len(top.children), desc=f"A plays {number}@{cell}, margin>={threshold}: B replies",
               unit="reply", disable=not progress, dynamic_ncols=True, leave=False)

    def on_goal(goal):
        bar.n = sum(1 for c in top.children if c.holds is not None)
        bar.set_postfix(nodes=f"{top.nodes:.3g}", units=len(tree.units), refresh=False)
        bar.refresh()

    tree.on_goal = on_goal
    try:
        tree.run_until(lambda: top.holds is not None)
    finally:
        bar.close()
    tree.top = top
    if top.holds:
        return sorted((goal_row(c) for c in top.children), key=lambda r: r["action"]), None, tree
    tree.cancel_all()
    # refuted: the rows decided before the refutation, the refuting one among them
    children = top.refuted[-1]["children"]
    rows = sorted((goal_row(c) for c in children if c.holds is not None), key=lambda r: r["action"])
    return rows, next(r for r in rows if r["action"] == top.refuted[-1]["by"]), tree


def prove(config: ProofConfig, progress: bool = True, threshold: int = 1) -> dict:
    """Find a first move of A after which every B reply leaves A able to force margin >= threshold
    (threshold 1: A wins); return the certificate."""
    if config.root.to_move != 0 or config.root.is_terminal():  # before any worker or Ray starts
        raise ValueError(f"the root must have A to move: {config.root.to_string()}")
    pool = _make_pool(config)
    start = time.monotonic()
    candidates = distinct_moves(config.root)
    if config.first_move is not None:
        candidates = [(a, n) for a, n in candidates if a == config.first_move] or [(config.first_move, 1)]
    tried = []
    certificate = None
    try:
        for first, _ in candidates:
            rows, refuted, tree = check_first_move(pool, first, threshold, progress, config.root,
                                                   config.unit_nodes, config.estimates)
            if refuted is not None:
                tried.append({**action_dict(first), "refuted_by": refuted})
                pool = _restart(pool, config)
                continue
            nodes = sum(r["nodes"] for r in rows) + sum(t["refuted_by"]["nodes"] for t in tried)
            unit_nodes, unit_seconds = zip(*tree.units)
            certificate = {
                "claim": ("Player A wins Highway from the empty board with perfect play" if threshold == 1
                          else f"Player A can force margin minB - minA >= {threshold} from the empty board"),
                "threshold": threshold,
                "root": config.root.to_string(),
                "first_move": action_dict(first),
                "replies": rows,
                "replies_distinct": len(rows),
                "replies_total": sum(r["orbit"] for r in rows),
                "abandoned_first_moves": tried,
                "nodes": nodes,
                "wall_seconds": round(time.monotonic() - start, 1),
                "workers": config.workers if not config.ray_address else f"ray:{config.ray_address}",
                "units": {"limit_nodes": config.unit_nodes, "count": len(unit_nodes),
                          "largest_nodes": max(unit_nodes), "largest_share": round(max(unit_nodes) / max(nodes, 1), 4),
                          "split_replies": sum(1 for r in rows if "split" in r),
                          "unit_seconds": round(sum(unit_seconds), 1),
                          "critical_path_seconds": round(tree.top.critical_seconds(), 1),
                          "predicted_wall_seconds_64_workers": round(
                              predicted_wall(unit_seconds, 64, tree.top.critical_seconds()), 1)},
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                            "platform": platform.platform()},
                "how_to_check": "each reply: python -m highway_env.solver solve '<board after both moves>'"
                                " --json --margin gives a margin >= the threshold",
            }
            break
    finally:
        pool.close(kill=certificate is None)
    if certificate is None:
        raise NotProvenError(f"no first move of A was proven to force margin >= {threshold}")
    return certificate


def _restart(pool, config):
    """A local pool still busy with cancelled work would stall the next question: replace it."""
    if isinstance(pool, _LocalPool):
        pool.close(kill=True)
        return _make_pool(config)
    return pool


def first_move_values(config: ProofConfig, out_path: str, progress: bool = True,
                      certificate: dict | None = None) -> dict:
    """The value of each of A's distinct first moves (modulo symmetry): A wins if every reply is won;
    else a draw if every reply still gives A margin >= 0; else B wins. Resumable: results already in
    ``out_path`` are kept and skipped, and the file is rewritten atomically after each move. The
    first move of a proof ``certificate`` (threshold 1, same root) is taken from it, not re-proven."""
    from tqdm import tqdm

    done: dict[int, dict] = {}
    if os.path.exists(out_path):
        try:
            with open(out_path, encoding="utf-8") as f:
                done = {m["action"]: m for m in json.load(f)["moves"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise HighwayError(f"cannot resume from {out_path!r} ({type(exc).__name__}: {exc}); it is not a "
                               f"first-moves results file: move it away to start afresh") from None
    # weakest first (reverse search order): their refutations are cheap, so results come early
    moves = distinct_moves(config.root)[::-1]
    if (certificate and certificate.get("threshold", 1) == 1
            and certificate.get("root", config.root.to_string()) == config.root.to_string()):
        first = certificate["first_move"]["action"]
        orbit = dict(moves).get(first)
        if orbit is not None and first not in done:
            done[first] = {**certificate["first_move"], "orbit": orbit, "value": 1, "from_certificate": True,
                           "a_answers": {str(r["action"]): r["a_answer"]["action"] for r in certificate["replies"]},
                           "nodes": certificate["nodes"], "seconds": certificate["wall_seconds"]}
    pool = _make_pool(config)
    bar = tqdm(total=len(moves), initial=sum(1 for a, _ in moves if a in done), desc="first moves",
               unit="move", disable=not progress, dynamic_ncols=True)
    try:
        for first, orbit in moves:
            if first in done:
                continue
            started = time.monotonic()
            entry = {**action_dict(first), "orbit": orbit}
            nodes = 0
            for threshold, value_if_holds in ((1, 1), (0, 0)):
                rows, refuted, _ = check_first_move(pool, first, threshold, progress, config.root,
                                                    config.unit_nodes)
                nodes += sum(r["nodes"] for r in rows)
                if refuted is None:
                    entry["value"] = value_if_holds
                    if threshold == 1:  # A's winning answer to each reply: the opening book's data
                        entry["a_answers"] = {str(r["action"]): r["a_answer"]["action"] for r in rows}
                    break
                pool = _restart(pool, config)
                entry[f"refuted_at_{threshold}_by"] = {k: refuted[k] for k in ("number", "cell", "action")}
            else:
                entry["value"] = -1
            entry["nodes"] = nodes
            entry["seconds"] = round(time.monotonic() - started, 1)
            done[first] = entry
            ordered = [done[a] for a, _ in moves if a in done]
            atomic_write_text(out_path, json.dumps({"complete": len(ordered) == len(moves), "moves": ordered},
                                                   indent=1) + "\n")
            bar.update(1)
            bar.set_postfix(last=f"{entry['number']}@{entry['cell']}={entry['value']:+d}")
    finally:
        bar.close()
        pool.close(kill=True)
    return {"complete": len(done) == len(moves), "moves": [done[a] for a, _ in moves if a in done]}


def write_certificate(certificate: dict, path: str) -> None:
    """The certificate as JSON, one line per B reply (a split reply's line holds its whole split)."""
    rows = ",\n  ".join(json.dumps(row, separators=(",", ":")) for row in certificate["replies"])
    text = json.dumps({**certificate, "replies": []}, indent=1).replace(
        '"replies": []', '"replies": [\n  ' + rows + '\n ]', 1)
    atomic_write_text(path, text + "\n")

