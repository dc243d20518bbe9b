"""Re-check a position store: re-solve a random sample of its entries and compare.

Every stored entry is bounds ``lo <= margin <= hi``; each finite bound is one null-window question
("can A force margin >= lo?", "... >= hi + 1?") for the solver. Rows written by another solver
version or with a wrong checksum are counted, not re-solved (the store already ignores them).
"""

from __future__ import annotations

import random

from highway_env.core import Board
from highway_env.solver.store import UNKNOWN_HI, UNKNOWN_LO, PositionStore, entry_status


def verify_store(store: PositionStore, sample: int, seed: int = 0, tt_bits: int = 20,
                 time_limit: float | None = None) -> dict:
    """Re-solve up to ``sample`` random valid entries of ``store``. Returns counts (``rows``,
    ``checked``, ``unknown`` for entries whose search hit ``time_limit``, ``version``, ``checksum``)
    and ``mismatches``: a list of (key, stored bounds, the bound the solver refuted)."""
    from highway_env.solver.solver import Solver

    rows = store.rows()
    status = [entry_status(*row) for row in rows]
    valid = [row for row, s in zip(rows, status) if s == "ok"]
    picked = random.Random(seed).sample(valid, min(sample, len(valid)))
    solver = Solver(tt_bits=tt_bits)
    report = {"rows": len(rows), "checked": 0, "unknown": 0, "mismatches": [],
              "version": status.count("version"), "checksum": status.count("checksum")}
    for key, lo, hi, _, _ in picked:
        board = Board(tuple(int(v) for v in key.split(",")))
        questions = ([(lo, True)] if lo > UNKNOWN_LO else []) + ([(hi + 1, False)] if hi < UNKNOWN_HI else [])
        answers = [(threshold, expect, solver.at_least(board, threshold, time_limit=time_limit))
                   for threshold, expect in questions]
        if any(answer is None for _, _, answer in answers):
            report["unknown"] += 1
            continue
        report["checked"] += 1
        for threshold, expect, answer in answers:
            if answer != expect:
                refuted = f"margin >= {threshold}" if expect else f"margin <= {threshold - 1}"
                report["mismatches"].append({"key": key, "stored": [lo, hi], "refuted": refuted})
    return report
