"""Drawing and solver-labelling the held-out position set (its reader: :mod:`.position_set`).

``build`` plays games from the empty board with four kinds of players and takes every position as
a candidate: ``random`` (uniform legal moves), ``mcts`` (``mcts:64``, 10 % random moves), ``az``
(the shipped AlphaZero policy, argmax, 15 % random moves) and ``perfect`` (the AlphaZero policy with
30 % random moves up to ply 6, then the solver's move with 20 % random moves; fewer games).
Candidates are deduplicated modulo symmetry; per ply up to ``--per-ply`` are taken, balanced across
the sources, and each is labelled by the exact solver (every move's value; margins from
``margin_min_ply``). It covers plies 4-15, and ply 0 when ``--first-moves`` is complete.

``add-early`` fills plies 0-3, where one position needs ~200 solves of the next ply: ply 0 from the
first-moves table, plies 1-3 from the opening book (its positions and the children of the positions
after its ply-1 replies), labelled from the book, its parent bounds, or the solver (a few per ply).

Set v2 (``build --strong``, ``meta["version"]`` 2): the same format drawn from strong play
(STRONG_SOURCES: the shipped AlphaZero with search against itself and against the perfect player,
10 % random moves), plies 5-11, without v1's positions: a harder yardstick, never used in training.

Commands (``--help`` explains each flag)::

    python -m highway_env.evaluation.positions build --workers 2          # regenerate (resumable)
    python -m highway_env.evaluation.positions build --strong --workers 2 # set v2 (resumable)
    python -m highway_env.evaluation.positions add-early                  # then plies 0-3 (~45 min)
    python -m highway_env.evaluation.positions info [FILE]
    python -m highway_env.evaluation.positions check [FILE] --sample 50   # re-solve a sample
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from highway_env.atomic_files import atomic_write_bytes
from highway_env.cli_args import positive_int
from highway_env.core import CELLS, NUM_ACTIONS, Board, HighwayError
from highway_env.evaluation.position_set import (DEFAULT_PATH, ILLEGAL, UNKNOWN, V2_PATH, VERSION,  # noqa: F401
                                                  PositionSet, PositionSetError, load_positions, save_positions)
from highway_env.evaluation.tasks import pool_worker_init
from highway_env.shipped import refuse_shipped

SOURCES = ("random", "mcts", "az", "perfect")

#: Positions per ply (plies 4..15) of the shipped set; chosen so that the labelling fits ~30 min on
#: 2 busy cores (measured wall cost per played position on the shared machine: ply 3 ~10 min,
#: ply 4 ~1 min, ply 6 ~2 s, ply 8 ~0.1 s, later plies milliseconds; margins add ~3-5x). Plies 2-3
#: are left out for cost.
DEFAULT_PER_PLY = {4: 6, 5: 40, 6: 300, 7: 800, 8: 2500, 9: 2800, 10: 3000, 11: 3000, 12: 3200,
                   13: 2600, 14: 1500, 15: 400}
DEFAULT_MARGIN_MIN_PLY = 9
#: The noisy-perfect games use the solver from this ply on (before: the AlphaZero policy + noise).
PERFECT_SOLVER_FROM = 7

#: Set v2 (``build --strong``): positions from strong play, where v1's critical positions are easier
#: than the ones a strong opponent creates. The shipped AlphaZero with search against itself
#: (``az_self``) and against the perfect player (``az_perfect``, each side in half the games), every
#: move replaced by a random one with probability STRONG_NOISE so that lines diverge.
STRONG_SOURCES = ("az_self", "az_perfect")
STRONG_PER_PLY = {5: 20, 6: 200, 7: 400, 8: 500, 9: 500, 10: 500, 11: 500}
STRONG_NOISE = 0.1
STRONG_SIMULATIONS = 100


# ----------------------------------------------------------------------------- labelling

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


_SOLVER = None


def _solver():
    """This worker's solver (its transposition table is kept between tasks)."""
    global _SOLVER
    if _SOLVER is None:
        from highway_env.solver import Solver

        _SOLVER = Solver()
    return _SOLVER


def _label_chunk(args):
    """Worker: label one chunk, write it to ``path`` (npz), return its timing."""
    path, boards, margin_min_ply = args
    t0 = time.monotonic()
    n = len(boards)
    values = np.empty((n, NUM_ACTIONS), np.int8)
    margins = np.empty((n, NUM_ACTIONS), np.int8)
    value = np.empty(n, np.int8)
    margin = np.empty(n, np.int8)
    for i, cells in enumerate(boards):
        ply = int((cells != 0).sum())
        values[i], margins[i], value[i], margin[i] = label_position(_solver(), cells, ply >= margin_min_ply)
    seconds = time.monotonic() - t0
    buf = io.BytesIO()
    np.savez(buf, values=values, margins=margins, value=value, margin=margin, seconds=np.float64(seconds))
    atomic_write_bytes(path, buf.getvalue())
    return path, n, seconds


# ----------------------------------------------------------------------------- drawing positions

def _eps_mix(actions, states, game, rng, eps):
    from agents.game import sample_legal

    rand = sample_legal(game.legal_masks(states), rng)
    flip = rng.random(len(states)) < eps
    return np.where(flip, rand, actions)


def _play(game, n, policy, rng) -> np.ndarray:
    """(n, 17, 16) every position of n games (ply 0..16) with ``policy(states, plies, rng)``."""
    states = game.initial_states(n)
    hist = [states.copy()]
    for ply in range(CELLS):
        states = game.apply(states, policy(states, ply, rng))
        hist.append(states.copy())
    return np.stack(hist, axis=1)


def _perfect_games(args):
    """Worker: ``n`` noisy-perfect games (see the module docstring); returns (n, 17, 16)."""
    n, seed, solver_from = args
    import agents
    from agents.game import sample_legal
    from agents.registry import get_game

    game = get_game("highway")
    rng = np.random.default_rng(seed)
    az = agents.load_pretrained(simulations=0, seed=seed)

    def policy(states, ply, rng):
        if ply < solver_from:
            return _eps_mix(az.act_batch(states, rng), states, game, rng, 0.3)
        out = sample_legal(game.legal_masks(states), rng)
        for i in range(len(states)):
            if rng.random() >= 0.2:
                out[i] = _solver().solve(Board(tuple(int(v) for v in states[i]))).best
        return out

    return _play(game, n, policy, rng)


def _strong_games(args):
    """Worker: ``n`` games of the shipped AlphaZero (PUCT, ``sims`` simulations) against ``opponent``
    ("az": itself; "perfect": the perfect player, on B in even games, on A in odd ones), each move
    random with probability STRONG_NOISE; returns (n, 17, 16)."""
    n, seed, opponent, sims = args
    import agents
    from agents.registry import get_game, make_agent

    game = get_game("highway")
    rng = np.random.default_rng(seed)
    az = agents.load_pretrained(simulations=sims, seed=seed)
    opp = az if opponent == "az" else make_agent("perfect:random", game, seed=seed)
    az_seat = np.arange(n) % 2  # az is A in even games

    def policy(states, ply, rng):
        out = np.empty(len(states), np.int64)
        for who, rows in ((az, az_seat == ply % 2), (opp, az_seat != ply % 2)):
            if rows.any():
                out[rows] = who.act_batch(states[rows], rng)
        return _eps_mix(out, states, game, rng, STRONG_NOISE)

    return _play(game, n, policy, rng)


def draw_strong_candidates(games_per_source: int, seed: int, pool=None, progress=True) -> dict[str, np.ndarray]:
    """source -> (games, 17, 16) positions of the strong-play games of set v2 (STRONG_SOURCES)."""
    from tqdm import tqdm

    chunk = 25
    mapper = pool.imap if pool is not None else map
    out = {}
    for name, opponent in zip(STRONG_SOURCES, ("az", "perfect")):
        jobs = [(min(chunk, games_per_source - i), [seed, len(out), i], opponent, STRONG_SIMULATIONS)
                for i in range(0, games_per_source, chunk)]
        out[name] = np.concatenate(list(tqdm(mapper(_strong_games, jobs), total=len(jobs),
                                             desc=f"{name} games", disable=not progress)))
    return out


def draw_candidates(games_per_source: int, seed: int, pool=None, progress=True, perfect_games: int | None = None) -> dict[str, np.ndarray]:
    """source -> (games, 17, 16) positions of the games played by that source."""
    import agents
    from agents.registry import get_game, make_agent

    game = get_game("highway")
    out = {}
    rng = np.random.default_rng([seed, 0])
    from agents.game import sample_legal

    out["random"] = _play(game, games_per_source, lambda s, p, r: sample_legal(game.legal_masks(s), r), rng)
    rng = np.random.default_rng([seed, 1])
    mcts = make_agent("mcts:64", game, seed=seed)
    out["mcts"] = _play(game, games_per_source, lambda s, p, r: _eps_mix(mcts.act_batch(s, r), s, game, r, 0.1), rng)
    rng = np.random.default_rng([seed, 2])
    az = agents.load_pretrained(simulations=0, seed=seed)
    out["az"] = _play(game, games_per_source, lambda s, p, r: _eps_mix(az.act_batch(s, r), s, game, r, 0.15), rng)
    chunk = 25
    ng = games_per_source if perfect_games is None else perfect_games
    jobs = [(min(chunk, ng - i), seed * 100_003 + i, PERFECT_SOLVER_FROM) for i in range(0, ng, chunk)]
    mapper = pool.imap if pool is not None else map
    from tqdm import tqdm

    parts = list(tqdm(mapper(_perfect_games, jobs), total=len(jobs), desc="perfect-with-noise games",
                      disable=not progress))
    out["perfect"] = np.concatenate(parts)
    return out


def canonical_array(boards: np.ndarray) -> np.ndarray:
    """(N, 16) -> (N, 16) each board's canonical representative (the position key's cells)."""
    from highway_env.solver.store import canonical_cells

    return np.array([canonical_cells(b)[0] for b in np.asarray(boards)], np.int8).reshape(-1, CELLS)


def select(candidates: dict[str, np.ndarray], per_ply: dict[int, int], seed: int, sources=SOURCES,
           exclude=()):
    """Deduplicate modulo symmetry and pick up to per_ply[p] positions per ply, balanced across sources,
    none of the canonical boards in ``exclude`` (bytes). Returns (boards, ply, source) sorted by ply."""
    rng = np.random.default_rng([seed, 9])
    seen = set(exclude)
    pools: dict[int, dict[int, list]] = {p: {s: [] for s in range(len(sources))} for p in per_ply}
    for s, name in enumerate(sources):
        games = candidates[name]
        for p in per_ply:
            canon = canonical_array(games[:, p])
            order = rng.permutation(len(canon))
            for i in order:
                pools[p][s].append(canon[i])
    boards, plies, picked_from = [], [], []
    for p in sorted(per_ply):
        want = per_ply[p]
        lists = pools[p]
        pos = {s: 0 for s in lists}
        got = 0
        while got < want and any(pos[s] < len(lists[s]) for s in lists):
            for s in lists:
                while pos[s] < len(lists[s]):
                    b = lists[s][pos[s]]
                    pos[s] += 1
                    key = b.tobytes()
                    if key not in seen:
                        seen.add(key)
                        boards.append(b)
                        plies.append(p)
                        picked_from.append(s)
                        got += 1
                        break
                if got >= want:
                    break
    return np.array(boards, np.int8).reshape(-1, CELLS), np.array(plies, np.int8), np.array(picked_from, np.int8)


# ----------------------------------------------------------------------------- first moves (ply 0)

def load_first_moves(path) -> dict[int, int] | None:
    """action -> value of the 256 first moves from ``proof/first_moves.json`` if it is complete.

    Accepted shapes: ``{"moves": [{"action": a, "value": v}, ...]}``, ``[{"action":..}, ...]``, or
    ``{"<action>": v}``; entries may use ``number``/``cell`` instead of ``action``. Symmetric first
    moves are filled in from their canonical representative. Returns None if incomplete."""
    from highway_env.core import SYMMETRIES, transform_action

    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    rows = doc.get("moves", doc) if isinstance(doc, dict) else doc
    known: dict[int, int] = {}
    try:
        if isinstance(rows, dict):
            for k, v in rows.items():
                known[int(k)] = int(v["value"] if isinstance(v, dict) else v)
        else:
            for r in rows:
                a = r["action"] if "action" in r else (int(r["number"]) - 1) * CELLS + int(r["cell"])
                if r.get("value") is None:
                    continue
                known[int(a)] = int(r["value"])
    except (KeyError, TypeError, ValueError):
        return None
    out = {}
    for a in range(NUM_ACTIONS):
        for perm in SYMMETRIES.values():
            b = transform_action(a, perm)
            if b in known:
                out[a] = known[b]
                break
    return out if len(out) == NUM_ACTIONS else None


# ----------------------------------------------------------------------------- build

def build(out: Path, work: Path, per_ply: dict[int, int], games_per_source: int, seed: int, workers: int,
          margin_min_ply: int, chunk: int, first_moves: str | None, progress: bool = True,
          perfect_games: int | None = None, strong: bool = False) -> PositionSet:
    """Draw, select and label a set: v1 (the four sources of the module docstring) or, with
    ``strong``, v2 (STRONG_SOURCES; no position of v1, no ply 0)."""
    sources = STRONG_SOURCES if strong else SOURCES
    import multiprocessing as mp

    from tqdm import tqdm

    work.mkdir(parents=True, exist_ok=True)
    t_start = time.monotonic()
    ctx = mp.get_context("spawn")
    pool = ctx.Pool(workers, initializer=pool_worker_init) if workers > 1 else None
    try:
        sel_path = work / "selection.npz"
        if sel_path.exists():
            with np.load(sel_path) as z:
                boards, plies, source = z["boards"], z["ply"], z["source"]
                draw_seconds = float(z["seconds"])
        else:
            t0 = time.monotonic()
            if strong:
                cands = draw_strong_candidates(games_per_source, seed, pool, progress)
                boards, plies, source = select(cands, per_ply, seed, sources,
                                               exclude={b.tobytes() for b in load_positions().boards})
            else:
                cands = draw_candidates(games_per_source, seed, pool, progress, perfect_games)
                boards, plies, source = select(cands, per_ply, seed)
            draw_seconds = time.monotonic() - t0
            buf = io.BytesIO()
            np.savez(buf, boards=boards, ply=plies, source=source, seconds=np.float64(draw_seconds))
            atomic_write_bytes(sel_path, buf.getvalue())
        # chunks: small at early plies (slow to label), so the bar moves and resuming loses little
        jobs = []
        i = 0
        while i < len(boards):
            p = int(plies[i])
            size = 1 if p <= 4 else (5 if p <= 5 else (20 if p <= 7 else chunk))
            j = i
            while j < len(boards) and j - i < size and plies[j] == p:
                j += 1
            jobs.append((str(work / f"chunk_{i:06d}_{j:06d}.npz"), boards[i:j], margin_min_ply))
            i = j
        todo = [jb for jb in jobs if not Path(jb[0]).exists()]
        # longest first: the slow early-ply chunks start at once
        todo.sort(key=lambda jb: int((jb[1][0] != 0).sum()))
        bar = tqdm(total=len(boards), initial=len(boards) - sum(len(jb[1]) for jb in todo),
                   desc="labelling positions", disable=not progress, unit="pos")
        mapper = pool.imap_unordered if pool is not None else map
        for _, n, _ in mapper(_label_chunk, todo):
            bar.update(n)
        bar.close()
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    n = len(boards)
    values = np.empty((n, NUM_ACTIONS), np.int8)
    margins = np.empty((n, NUM_ACTIONS), np.int8)
    value = np.empty(n, np.int8)
    margin = np.empty(n, np.int8)
    label_seconds: dict[int, float] = {}
    for path, bs, _ in jobs:
        i, j = (int(x) for x in Path(path).stem.split("_")[1:])
        with np.load(path) as z:
            values[i:j], margins[i:j], value[i:j], margin[i:j] = z["values"], z["margins"], z["value"], z["margin"]
            p = int(plies[i])
            label_seconds[p] = label_seconds.get(p, 0.0) + float(z["seconds"])
    ps = PositionSet(boards, plies, values, margins, value, margin, source, sources, {})
    fm = load_first_moves(first_moves) if first_moves and not strong else None
    if fm is not None:
        ps = _joined(ps, _values_only([Board()], [_root_row(fm)], 0, sources), sources, {})
    ps.meta = {
        "format": "highway-position-set", "version": 2 if strong else VERSION, "seed": seed, "games_per_source": games_per_source, "perfect_games": perfect_games,
        "per_ply_target": {str(k): v for k, v in sorted(per_ply.items())}, "margin_min_ply": margin_min_ply,
        "first_moves": first_moves if fm is not None else None,
        "ply0": "included (from first_moves)" if fm is not None else
                "left out: no complete proof/first_moves.json; ply 1 left out (2-filled solve per move)",
        "counts": {str(k): v for k, v in ps.counts().items()},
        "label_cpu_seconds_by_ply": {str(k): round(v, 1) for k, v in sorted(label_seconds.items())},
        "draw_seconds": round(draw_seconds, 1), "build_wall_seconds_last_run": round(time.monotonic() - t_start, 1),
        "workers": workers, "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "how": "see highway_env/evaluation/positions.py docstring",
    }
    save_positions(out, ps)
    return ps


def _root_row(first_moves: dict[int, int]) -> np.ndarray:
    """The empty board's move values (256,) from :func:`load_first_moves`."""
    row = np.full(NUM_ACTIONS, ILLEGAL, np.int8)
    for a, v in first_moves.items():
        row[a] = v
    return row


def _values_only(boards: list, values: list, source: int, sources) -> PositionSet:
    """Positions labelled with their moves' values alone (no margins); the value is the mover's best."""
    boards = np.array([b.cells for b in boards], np.int8).reshape(-1, CELLS)
    values = np.array(values, np.int8).reshape(-1, NUM_ACTIONS)
    legal = values != ILLEGAL
    plies = (boards != 0).sum(axis=1).astype(np.int8)
    best, worst = np.where(legal, values, -9).max(axis=1), np.where(legal, values, 9).min(axis=1)
    n = len(boards)
    return PositionSet(boards, plies, values, np.where(legal, UNKNOWN, ILLEGAL).astype(np.int8),
                       np.where(plies % 2 == 0, best, worst).astype(np.int8), np.full(n, UNKNOWN, np.int8),
                       np.full(n, source, np.int8), sources, {})


def _joined(first: PositionSet, second: PositionSet, sources, meta: dict) -> PositionSet:
    """The positions of both sets, ordered by ply (stable)."""
    fields = ("boards", "ply", "values", "margins", "value", "margin", "source")
    both = PositionSet(*(np.concatenate([getattr(first, f), getattr(second, f)]) for f in fields),
                       sources, meta)
    return both.subset(np.lexsort((np.arange(len(both)), both.ply)))


# ----------------------------------------------------------------------------- early plies (0-3)

EARLY_PLIES = (0, 1, 2, 3)
BOOK_SOURCE = "book"


def label_early(board: Board, oracle, deadline: float | None) -> np.ndarray | None:
    """Values (256,) of every move of an early position from the book (and its parent bounds), else
    the solver; None if a solve did not finish by ``deadline`` (time.monotonic())."""
    from highway_env.solver.oracle import Deadline
    from highway_env.solver.store import canonical_key, value_from_bounds

    budget = Deadline(deadline)
    values = np.full(NUM_ACTIONS, ILLEGAL, np.int8)
    value = value_from_bounds(*oracle.known(board.cells))
    mover_lost = value is not None and value == (1 if board.to_move == 1 else -1)
    seen: dict[str, int] = {}
    for a in board.legal_actions():
        if mover_lost:  # every move of a lost side keeps the value: nothing to solve
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
    from highway_env.solver.store import canonical_key

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
    return [out[k] for k in sorted(out, key=lambda k: (16 - k.split(",").count("0"), k))]


def add_early(ps: PositionSet, book, first_moves: str | None, solve_per_ply: dict[int, int], time_limit: float,
              seed: int = 0, progress: bool = True) -> PositionSet:
    """``ps`` with its plies 0-3 replaced by: ply 0 from the first-moves table, and book positions at
    plies 1-3 labelled by :func:`label_early`. A position whose moves need the solver (its side to
    move is not lost and the book does not give its children) costs ~169-196 solves of the next ply,
    so at most ``solve_per_ply[ply]`` of those are taken per ply (seeded choice), each within
    ``time_limit`` seconds (left out if it does not finish)."""
    from tqdm import tqdm

    from highway_env.solver.oracle import Oracle
    from highway_env.solver.store import value_from_bounds

    keep = ~np.isin(ps.ply, EARLY_PLIES)
    sources = tuple(ps.sources) if BOOK_SOURCE in ps.sources else tuple(ps.sources) + (BOOK_SOURCE,)
    rows = []
    fm = load_first_moves(first_moves) if first_moves else None
    if fm is not None:
        rows.append((Board(), _root_row(fm)))
    oracle = Oracle(book=book)
    rng = np.random.default_rng(seed)
    cands = early_candidates(book)
    cheap, costly = [], {p: [] for p in EARLY_PLIES}
    for b in cands:
        value = value_from_bounds(*oracle.known(b.cells))
        lost = value is not None and value == (1 if b.to_move == 1 else -1)
        settled = lost or all(value_from_bounds(*oracle.known(b.apply(a).cells)) is not None
                              for a in b.legal_actions())
        (cheap if settled else costly[b.ply]).append(b)
    chosen = list(cheap)
    for p, bs in costly.items():
        n = min(solve_per_ply.get(p, 0), len(bs))
        chosen += [bs[i] for i in sorted(rng.choice(len(bs), size=n, replace=False))] if n else []
    skipped = 0
    t0 = time.monotonic()
    for b in tqdm(chosen, desc="labelling plies 1-3", unit="pos", disable=not progress):
        values = label_early(b, oracle, time.monotonic() + time_limit)
        if values is None:
            skipped += 1
            continue
        rows.append((b, values))
    early = _values_only([b for b, _ in rows], [v for _, v in rows], sources.index(BOOK_SOURCE), sources)
    both = _joined(early, ps.subset(np.flatnonzero(keep)), sources, dict(ps.meta))
    both.meta["early_plies"] = {
        "how": "ply 0 from the first-moves table; plies 1-3 from the opening book (its entries, and the "
               "children of the positions after its ply-1 replies), labelled from the book, its parent "
               "bounds, and the solver (python -m highway_env.evaluation.positions add-early)",
        "first_moves": first_moves if fm is not None else None, "solve_per_ply": {str(k): v for k, v in solve_per_ply.items()},
        "time_limit": time_limit, "skipped_time_limit": skipped, "seconds": round(time.monotonic() - t0, 1)}
    both.meta["counts"] = {str(k): v for k, v in both.counts().items()}
    return both


# ----------------------------------------------------------------------------- CLI

def _parse_per_ply(text: str) -> dict[int, int]:
    out = {}
    for part in text.split(","):
        try:
            p, n = part.split("=")
            p, n = int(p), int(n)
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad --per-ply entry {part!r}: expected PLY=COUNT") from None
        if not 0 <= p < CELLS or n < 0:
            raise argparse.ArgumentTypeError(f"bad --per-ply entry {part!r}: ply in 0..15, count >= 0")
        out[p] = n
    return out


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m highway_env.evaluation.positions", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="draw and label a position set (resumable)",
                       description="Draw positions from random / MCTS / AlphaZero / noisy-perfect games, "
                                   "deduplicate modulo symmetry, label each with the solver. Interrupt and "
                                   "rerun with the same --work to resume (labelled chunks are kept).")
    b.add_argument("--strong", action="store_true",
                   help="build set v2 from strong play (STRONG_SOURCES: the shipped AlphaZero with search "
                        "against itself and against the perfect player, 10%% random moves), without v1's "
                        "positions; changes the defaults of --out, --work, --per-ply, --games-per-source")
    b.add_argument("--out", help=f"output .npz (default: {DEFAULT_PATH}, with --strong {V2_PATH}; shipped "
                                 "files: replaced only with --force)")
    b.add_argument("--force", action="store_true", help="allow replacing the shipped default output")
    b.add_argument("--work", default=None,
                   help="work directory for the selection and labelled chunks; reuse it to resume "
                        "(default: build/positions-v1, with --strong build/positions-v2)")
    b.add_argument("--per-ply", type=_parse_per_ply, default=None,
                   help="positions per ply as PLY=COUNT,... (default: the shipped set's targets "
                        + ",".join(f"{k}={v}" for k, v in DEFAULT_PER_PLY.items()) + "; with --strong "
                        + ",".join(f"{k}={v}" for k, v in STRONG_PER_PLY.items()) + ")")
    b.add_argument("--games-per-source", type=positive_int, default=None,
                   help="games played by each source to draw candidates from (default: 1000, with --strong 400)")
    b.add_argument("--perfect-games", type=positive_int, default=400,
                   help="games of the (slower) noisy-perfect source (default: %(default)s)")
    b.add_argument("--seed", type=int, default=1, help="random seed of the drawing (default: %(default)s)")
    b.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                   help="worker processes (default: all cores, %(default)s)")
    b.add_argument("--margin-min-ply", type=int, default=DEFAULT_MARGIN_MIN_PLY,
                   help="label exact margins of every move from this ply on (default: %(default)s)")
    b.add_argument("--chunk", type=positive_int, default=200, help="positions per labelling task at plies >= 6 "
                                                          "(default: %(default)s)")
    b.add_argument("--first-moves", default="proof/first_moves.json",
                   help="values of the first moves; ply 0 is included only if this file is complete "
                        "(default: %(default)s)")
    b.add_argument("--no-progress", action="store_true", help="no progress bars")
    i = sub.add_parser("info", help="per-ply counts and metadata of a set")
    i.add_argument("file", nargs="?", default=str(DEFAULT_PATH))
    e = sub.add_parser("add-early", help="replace plies 0-3 of a set by the first moves and book positions",
                       description="Plies 0-3 cannot be drawn and labelled like the others (one position at "
                                   "ply 2 needs ~196 solves of minutes each). This takes ply 0 from the "
                                   "first-moves table and plies 1-3 from the opening book: its positions and "
                                   "the children of the positions after its ply-1 replies, labelled from the "
                                   "book where it settles them, else by the solver (a few per ply).")
    e.add_argument("file", nargs="?", help=f"set to extend in place (default: {DEFAULT_PATH}, a shipped file: "
                                           f"extended in place only with --force or --out elsewhere)")
    e.add_argument("--force", action="store_true", help="allow extending the shipped default set in place")
    e.add_argument("--book", default=None, help="opening book (default: the shipped one)")
    e.add_argument("--first-moves", default="proof/first_moves.json", help="complete first-moves table for ply 0 "
                                                                            "(default: %(default)s)")
    e.add_argument("--solve-per-ply", type=_parse_per_ply, default={1: 0, 2: 0, 3: 40},
                   help="per ply, how many positions the book does not settle to label by solving, as PLY=COUNT,... "
                        "(default: 3=40; ply 3 costs ~10-60 s each, ply 2 hours)")
    e.add_argument("--time-limit", type=float, default=300.0, help="seconds per solved position; slower ones are "
                                                                    "left out (default: %(default)s)")
    e.add_argument("--seed", type=int, default=0, help="seed of the choice of solved positions (default: %(default)s)")
    e.add_argument("--out", default=None, help="write here instead of in place")
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    c = sub.add_parser("check", help="re-solve a random sample and compare with the stored labels")
    c.add_argument("file", nargs="?", default=str(DEFAULT_PATH))
    c.add_argument("--sample", type=positive_int, default=50, help="positions to re-solve (default: %(default)s)")
    args = p.parse_args(argv)
    try:
        if args.cmd == "build":
            v2 = args.strong
            args.games_per_source = args.games_per_source or (400 if v2 else 1000)
            out = Path(args.out or (V2_PATH if v2 else DEFAULT_PATH))
            refuse_shipped(out, allowed=args.out is not None or args.force)
            ps = build(out, Path(args.work or f"build/positions-v{2 if v2 else 1}"),
                       args.per_ply or (STRONG_PER_PLY if v2 else DEFAULT_PER_PLY), args.games_per_source,
                       args.seed, args.workers, args.margin_min_ply, args.chunk, args.first_moves,
                       progress=not args.no_progress, perfect_games=args.perfect_games, strong=v2)
            print(json.dumps(ps.meta, indent=1))
        elif args.cmd == "add-early":
            from highway_env.solver.opening_book import load_book

            refuse_shipped(args.out or args.file or DEFAULT_PATH,
                           allowed=args.out is not None or args.file is not None or args.force)
            ps = add_early(load_positions(args.file or DEFAULT_PATH), load_book(args.book), args.first_moves, args.solve_per_ply,
                           args.time_limit, args.seed, progress=not args.no_progress)
            save_positions(args.out or args.file or DEFAULT_PATH, ps)
            print(json.dumps(ps.meta["counts"], indent=1))
        elif args.cmd == "info":
            ps = load_positions(args.file)
            print(json.dumps({"file": args.file, "positions": len(ps), "meta": ps.meta}, indent=1))
        else:
            ps = load_positions(args.file)
            bad = check(ps, args.sample)
            print(f"{bad} mismatches in {min(args.sample, len(ps))} re-solved positions")
            return 1 if bad else 0
    except HighwayError as e:  # PositionSetError, or a refused shipped output
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
