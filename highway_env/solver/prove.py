"""Proof that A wins Highway from the empty board, with a certificate anyone can re-check.

The root is split into sub-problems: for a candidate first move of A, every reply of B modulo the
symmetries that fix the position after that move. Each sub-problem (a position with two numbers
placed, A to move) is one null-window search "can A force margin >= 1?", run in worker processes
(or as Ray tasks). The first candidate all of whose replies are won is A's winning first move; a
candidate with a reply that is not won is abandoned at once. Candidates come in the solver's own
move order, so nothing is told to it in advance.

The certificate (JSON) lists the winning first move and, for every B reply modulo symmetry, its
orbit size, value, nodes and seconds: re-solving any line re-checks that part of the proof.
"""

from __future__ import annotations

import json
import os
import platform
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from highway_env.core import SYMMETRIES, Board, decode_action, transform_action
from highway_env.io import atomic_write_text
from highway_env.solver import kernel


def distinct_moves(board: Board) -> list[tuple[int, int]]:
    """(representative action, orbit size) for the legal moves of ``board`` modulo the symmetries
    that fix it; representatives in the solver's move order."""
    stabiliser = [p for p in SYMMETRIES.values() if board.transform(p) == board]
    nums, cells = kernel.ordered_moves(np.asarray(board.cells, dtype=np.int64), board.to_move == 0)
    seen: dict[int, int] = {}
    order: list[int] = []
    for n, c in zip(nums, cells):
        action = (int(n) - 1) * 16 + int(c)
        orbit = {transform_action(action, p) for p in stabiliser}
        rep = min(orbit)
        if rep not in seen:
            seen[rep] = 0
            order.append(action)
            seen[action] = len(orbit)
    return [(a, seen[a]) for a in order]


# ----------------------------------------------------------------------------- worker side

_SOLVER = None


def _init_worker(tt_bits: int) -> None:
    global _SOLVER
    from highway_env.solver.solver import Solver

    _SOLVER = Solver(tt_bits=tt_bits)


def solve_task(cells: tuple[int, ...], threshold: int, tt_bits: int = 23) -> dict:
    """Can A force margin >= threshold from ``cells``? Runs in a worker; returns a JSON-able dict."""
    if _SOLVER is None:
        _init_worker(tt_bits)
    start = time.monotonic()
    value, nodes = _SOLVER.search_window(Board(tuple(cells)), threshold - 1, threshold)
    return {"holds": value >= threshold, "nodes": nodes, "seconds": time.monotonic() - start}


# ----------------------------------------------------------------------------- driver

@dataclass
class ProofConfig:
    workers: int = os.cpu_count() or 1
    tt_bits: int = 23
    ray_address: str | None = None
    first_move: int | None = None  # try only this first move (for re-checking a certificate)


class _LocalPool:
    def __init__(self, workers: int, tt_bits: int):
        self.pool = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(tt_bits,))
        self.tt_bits = tt_bits

    def submit(self, cells, threshold):
        return self.pool.submit(solve_task, cells, threshold, self.tt_bits)

    def wait_any(self, pending):
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        return [(f, f.result()) for f in done]

    def cancel(self, pending):
        for f in pending:
            f.cancel()

    def close(self, kill: bool = False):
        if kill:
            for proc in list(getattr(self.pool, "_processes", {}).values()):
                proc.terminate()
        self.pool.shutdown(wait=not kill, cancel_futures=True)


class _RayPool:
    def __init__(self, address: str, tt_bits: int):
        try:
            import ray
        except ImportError as exc:  # pragma: no cover - depends on the optional extra
            raise SystemExit("--ray-address needs Ray: pip install 'highway-boardgame[ray]'") from exc
        self.ray = ray
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        self.remote = ray.remote(solve_task)
        self.tt_bits = tt_bits

    def submit(self, cells, threshold):
        return self.remote.remote(cells, threshold, self.tt_bits)

    def wait_any(self, pending):
        done, _ = self.ray.wait(list(pending), num_returns=1)
        return [(ref, self.ray.get(ref)) for ref in done]

    def cancel(self, pending):
        for ref in pending:
            self.ray.cancel(ref, force=True)

    def close(self, kill: bool = False):
        pass


def prove(config: ProofConfig, progress: bool = True) -> dict:
    """Find A's winning first move and prove every B reply is won; return the certificate."""
    from tqdm import tqdm

    pool = _RayPool(config.ray_address, config.tt_bits) if config.ray_address else _LocalPool(
        config.workers, config.tt_bits)
    start = time.monotonic()
    root = Board()
    candidates = distinct_moves(root)
    if config.first_move is not None:
        candidates = [(a, n) for a, n in candidates if a == config.first_move] or [(config.first_move, 1)]
    tried = []
    certificate = None
    try:
        for first, _ in candidates:
            after = root.apply(first)
            replies = distinct_moves(after)
            number, cell = decode_action(first)
            bar = tqdm(total=len(replies), desc=f"A plays {number}@{cell}: B replies", unit="reply",
                       disable=not progress, dynamic_ncols=True)
            pending = {}
            for reply, orbit in replies:
                child = after.apply(reply)
                pending[pool.submit(child.cells, 1)] = (reply, orbit)
            rows, refuted = [], None
            while pending and refuted is None:
                for fut, res in pool.wait_any(pending):
                    reply, orbit = pending.pop(fut)
                    n, c = decode_action(reply)
                    rows.append({"number": n, "cell": c, "action": reply, "orbit": orbit,
                                 "value": 1 if res["holds"] else None, "nodes": res["nodes"],
                                 "seconds": round(res["seconds"], 3)})
                    bar.update(1)
                    bar.set_postfix(nodes=f"{sum(r['nodes'] for r in rows):.3g}")
                    if not res["holds"]:
                        refuted = rows[-1]
            bar.close()
            if refuted is not None:
                pool.cancel(pending)
                tried.append({"number": number, "cell": cell, "action": first, "refuted_by": refuted})
                # a pool busy with cancelled work would stall the next candidate
                if isinstance(pool, _LocalPool):
                    pool.close(kill=True)
                    pool = _LocalPool(config.workers, config.tt_bits)
                continue
            rows.sort(key=lambda r: r["action"])
            certificate = {
                "claim": "Player A wins Highway from the empty board with perfect play",
                "first_move": {"number": number, "cell": cell, "action": first},
                "replies": rows,
                "replies_distinct": len(rows),
                "replies_total": sum(r["orbit"] for r in rows),
                "abandoned_first_moves": tried,
                "nodes": sum(r["nodes"] for r in rows) + sum(t["refuted_by"]["nodes"] for t in tried),
                "wall_seconds": round(time.monotonic() - start, 1),
                "workers": config.workers if not config.ray_address else f"ray:{config.ray_address}",
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                            "platform": platform.platform()},
                "how_to_check": "each reply: python -m highway_env.solver solve '<board after both moves>'"
                                " --json gives value 1",
            }
            break
    finally:
        pool.close(kill=certificate is None)
    if certificate is None:
        raise RuntimeError("no first move of A was proven to win")
    return certificate


def write_certificate(certificate: dict, path: str) -> None:
    atomic_write_text(path, json.dumps(certificate, indent=1) + "\n")
