"""Labelling the positions of a set with exact values: by the solver (plies >= 4, margins from
``margin_min_ply``), from the first-moves table (ply 0), and from the opening book, its parent
bounds, or the solver (plies 1-3). A build tool of :mod:`.positions`: the reader is :mod:`.position_set`."""

from __future__ import annotations

import functools
import io
import json
import time
from pathlib import Path

import numpy as np

from highway_env.atomic_files import atomic_write_bytes
from highway_env.core import NUM_ACTIONS, Board
from highway_env.evaluation.position_set import ILLEGAL, UNKNOWN, PositionSet


def label_position(solver, cells, with_margin: bool) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(values (256,), margins (256,), value, margin) of one position by the exact solver."""
    board = Board(tuple(int(v) for v in cells))
    r = solver.solve(board, moves=True, margin=with_margin)
    values = np.full(NUM_ACTIONS, ILLEGAL, np.int8)
    margins = np.full(NUM_ACTIONS, ILLEGAL, np.int8)
    for m in r.moves:
        values[m.action] = m.value
        margins[m.action] = m.margin if with_margin else UNKNOWN
    return values, margins, int(r.value), int(r.margin) if with_margin else UNKNOWN


def empty_labels(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Uninitialised (values, margins, value, margin) of ``n`` positions, as :func:`label_position` fills them."""
    return (np.empty((n, NUM_ACTIONS), np.int8), np.empty((n, NUM_ACTIONS), np.int8), np.empty(n, np.int8),
            np.empty(n, np.int8))


@functools.cache
def worker_solver():
    """This process's solver (its transposition table is kept between tasks)."""
    from highway_env.solver import Solver

    return Solver()


def _label_chunk(args):
    """Worker: label one chunk, write it to ``path`` (npz), return its timing."""
    path, boards, margin_min_ply = args
    t0 = time.monotonic()
    n = len(boards)
    values, margins, value, margin = empty_labels(n)
    for i, cells in enumerate(boards):
        ply = int((cells != 0).sum())
        values[i], margins[i], value[i], margin[i] = label_position(worker_solver(), cells, ply >= margin_min_ply)
    seconds = time.monotonic() - t0
    buf = io.BytesIO()
    np.savez(buf, values=values, margins=margins, value=value, margin=margin, seconds=np.float64(seconds))
    atomic_write_bytes(path, buf.getvalue())
    return path, n, seconds


def check(ps: PositionSet, sample: int, seed: int = 0) -> int:
    """Re-solve ``sample`` random positions (plies >= 4) and count label mismatches."""
    from highway_env.solver import Solver

    s = Solver()
    rng = np.random.default_rng(seed)
    idx = np.flatnonzero(ps.ply >= 4)
    bad = 0
    for i in rng.choice(idx, size=min(sample, len(idx)), replace=False):
        with_m = bool((ps.margins[i] != ILLEGAL).any() and (ps.margins[i][ps.margins[i] != ILLEGAL] != UNKNOWN).all())
        v, m, val, mar = label_position(s, ps.boards[i], with_m)
        if not (np.array_equal(v, ps.values[i]) and val == ps.value[i] and (not with_m or np.array_equal(m, ps.margins[i]))):
            bad += 1
    return bad


# ----------------------------------------------------------------------------- ply 0

def load_first_moves(path) -> dict[int, int] | None:
    """action -> value of the 256 first moves from ``python -m highway_env.solver first-moves``'s output
    (``proof/first_moves.json``: rows ``{"action": a, "value": v, ...}`` of the first moves modulo
    symmetry, the others filled in from their representative); None if unreadable or incomplete."""
    from highway_env.core import SYMMETRIES, transform_action

    try:
        known = {int(r["action"]): int(r["value"]) for r in json.loads(Path(path).read_text())["moves"]
                 if r.get("value") is not None}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    out = {}
    for a in range(NUM_ACTIONS):
        for perm in SYMMETRIES.values():
            b = transform_action(a, perm)
            if b in known:
                out[a] = known[b]
                break
    return out if len(out) == NUM_ACTIONS else None


def root_row(first_moves: dict[int, int]) -> np.ndarray:
    """The empty board's move values (256,) from :func:`load_first_moves`."""
    row = np.full(NUM_ACTIONS, ILLEGAL, np.int8)
    row[list(first_moves)] = list(first_moves.values())
    return row


# ----------------------------------------------------------------------------- plies 1-3

def mover_lost(value: int | None, board: Board) -> bool:
    """Whether ``value`` (from the book's bounds, None if unknown) is a loss of the side to move."""
    return value is not None and value == (1 if board.to_move == 1 else -1)


def label_early(board: Board, oracle, deadline: float | None) -> np.ndarray | None:
    """Values (256,) of every move of an early position from the book (and its parent bounds), else
    the solver; None if a solve did not finish by ``deadline`` (time.monotonic())."""
    from highway_env.solver.oracle import Deadline
    from highway_env.solver.store import canonical_key, value_from_bounds

    budget = Deadline(deadline)
    values = np.full(NUM_ACTIONS, ILLEGAL, np.int8)
    value = value_from_bounds(*oracle.known(board.cells))
    lost = mover_lost(value, board)
    seen: dict[str, int] = {}
    for a in board.legal_actions():
        if lost:  # every move of a lost side keeps the value: nothing to solve
            values[a] = value
            continue
        child = board.apply(a)
        key = canonical_key(child)
        if key not in seen:
            v = oracle.value(child.cells, budget, key)
            if v is None:
                return None
            seen[key] = v
        values[a] = seen[key]
    return values


def early_candidates(book) -> list[Board]:
    """Canonical positions at plies 1-3 whose value the book gives, in a fixed order: the book's
    entries and, for the positions after the book's ply-1 replies, their children."""
    from highway_env.solver.book import positions_at
    from highway_env.solver.store import canonical_key, key_ply

    out: dict[str, Board] = {}
    for key, e in sorted(book.entries.items()):
        b = Board(tuple(int(v) for v in key.split(",")))
        if 1 <= b.ply <= 3 and e.value is not None:
            out.setdefault(key, b)
    for key, b in list(out.items()):
        if b.ply == 2:
            for c in positions_at(1, b):
                k = canonical_key(c)
                if k in book.entries and book.entries[k].value is not None:
                    out.setdefault(k, c)
    return [out[k] for k in sorted(out, key=lambda k: (key_ply(k), k))]
