"""Building the held-out position sets, v1 and v2 (the CLI; the reader is :mod:`.position_set`, the
drawing :mod:`.positions_draw`, the labelling :mod:`.positions_label`).

``build`` plays games from the empty board with four kinds of players (``SOURCES``: random, noisy
``mcts:64``, the shipped AlphaZero policy with noise, and a noisy perfect player) and takes every
position as a candidate; candidates are deduplicated modulo symmetry, up to ``--per-ply`` per ply
are taken, balanced across the sources, and each is labelled by the exact solver (every move's
value; margins from ``margin_min_ply``). It covers plies 4-15, and ply 0 when ``--first-moves`` is
complete. ``add-early`` fills plies 0-3 (one position there needs ~200 solves of the next ply) from
the first-moves table and the opening book. Set v2 (``build --strong``, ``meta["version"]`` 2) is
drawn the same way from strong play (``STRONG_SOURCES``), plies 5-11, without v1's positions: a
harder yardstick, never used in training.

Commands (``--help`` explains each flag)::

    python -m highway_env.evaluation.positions build --workers 2 --force          # regenerate (resumable)
    python -m highway_env.evaluation.positions build --strong --workers 2 --force # set v2 (resumable)
    python -m highway_env.evaluation.positions add-early --force                  # then plies 0-3 (~45 min)
    python -m highway_env.evaluation.positions info [FILE]
    python -m highway_env.evaluation.positions check [FILE] --sample 50           # re-solve a sample

The shipped sets are replaced only with ``--force`` (or written elsewhere with ``--out``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from highway_env.atomic_files import atomic_write_bytes, atomic_write_text
from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, path_arg, positive_float, positive_int
from highway_env.core import CELLS, NUM_ACTIONS, Board, HighwayError
from highway_env.evaluation.position_set import (ARRAYS, DEFAULT_PATH, ILLEGAL, UNKNOWN, V2_PATH,  # noqa: F401
                                                  VERSION, PositionSet, PositionSetError, load_positions,
                                                  save_positions)
from highway_env.evaluation.positions_draw import (SOURCES, STRONG_SOURCES, _play, _strong_games,  # noqa: F401
                                                   canonical_array, draw_candidates, draw_strong_candidates, select)
from highway_env.evaluation.positions_label import (_label_chunk, check, early_candidates, label_early,  # noqa: F401
                                                    empty_labels, label_position, load_first_moves, mover_lost,
                                                    root_row)
from highway_env.evaluation.tasks import pool_worker_init
from highway_env.retrying_pool import RetryingPool
from highway_env.shipped import check_output, note_missing_input

#: Positions per ply (plies 4..15) of the shipped set, so that the labelling fits ~30 min on 2 cores
#: (a position costs ~1 min at ply 4, ~2 s at ply 6, ~0.1 s at ply 8; margins add ~3-5x)
DEFAULT_PER_PLY = {4: 6, 5: 40, 6: 300, 7: 800, 8: 2500, 9: 2800, 10: 3000, 11: 3000, 12: 3200,
                   13: 2600, 14: 1500, 15: 400}
DEFAULT_MARGIN_MIN_PLY = 9
#: Set v2's positions per ply (``build --strong``)
STRONG_PER_PLY = {5: 20, 6: 200, 7: 400, 8: 500, 9: 500, 10: 500, 11: 500}


# ----------------------------------------------------------------------------- build

def _claim_work(work: Path, settings: dict) -> None:
    """Record in ``work`` the settings its selection and labels are made with, or check them: a
    folder reused with other settings (the default --work is one per set version, whatever the
    seed or sizes) would resume the other build and label the new set with its positions."""
    record = work / "build.json"
    if record.exists():
        try:
            held = json.loads(record.read_text())
        except (OSError, ValueError) as e:
            raise PositionSetError(f"work file {str(record)!r} is damaged ({type(e).__name__}); delete the "
                                   f"folder {str(work)!r} to start the build over") from None
        if held != settings:
            diff = ", ".join(f"{k} {held.get(k)!r} there, {v!r} here" for k, v in settings.items() if held.get(k) != v)
            raise PositionSetError(f"work folder {str(work)!r} holds a build with other settings ({diff}); give "
                                   "another --work, or delete the folder to start over")
        return
    if (work / "selection.npz").exists():
        print(f"note: work folder {work} is from a build that did not record its settings; resuming it "
              "unchecked", file=sys.stderr)
    atomic_write_text(record, json.dumps(settings, indent=1))


def _load_work_file(path: Path, what: str):
    """np.load of a work file, as a dict; PositionSetError naming it if it is damaged."""
    try:
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    except Exception as e:  # a truncated zip, not an npz: numpy raises many kinds
        raise PositionSetError(f"{what} {str(path)!r} is damaged ({type(e).__name__}); delete it and run the "
                               "build again (it is made again)") from None


def build(out: Path, work: Path, per_ply: dict[int, int], games_per_source: int, seed: int, workers: int,
          margin_min_ply: int, chunk: int, first_moves: str | None, progress: bool = True,
          perfect_games: int | None = None, strong: bool = False) -> PositionSet:
    """Draw, select and label a set: v1 (the four sources of the module docstring) or, with
    ``strong``, v2 (STRONG_SOURCES; no position of v1, no ply 0)."""
    sources = STRONG_SOURCES if strong else SOURCES
    import multiprocessing as mp

    from tqdm import tqdm

    work.mkdir(parents=True, exist_ok=True)
    _claim_work(work, {"strong": strong, "seed": seed, "per_ply": {str(k): v for k, v in sorted(per_ply.items())},
                       "games_per_source": games_per_source, "perfect_games": perfect_games,
                       "margin_min_ply": margin_min_ply, "chunk": chunk})
    t_start = time.monotonic()
    ctx = mp.get_context("spawn")
    # a RetryingPool, not multiprocessing.Pool, which waited for ever on a chunk whose worker was killed
    workers_pool = RetryingPool(workers, pool_worker_init, mp_context=ctx, what=lambda args: "on a chunk of the build",
                                hint="out of memory? try fewer --workers") if workers > 1 else contextlib.nullcontext()
    with workers_pool as pool:
        sel_path = work / "selection.npz"
        if sel_path.exists():
            z = _load_work_file(sel_path, "selection")
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
    values, margins, value, margin = empty_labels(len(boards))
    label_seconds: dict[int, float] = {}
    for path, bs, _ in jobs:
        i, j = (int(x) for x in Path(path).stem.split("_")[1:])
        z = _load_work_file(Path(path), "labelled chunk")
        values[i:j], margins[i:j], value[i:j], margin[i:j] = z["values"], z["margins"], z["value"], z["margin"]
        p = int(plies[i])
        label_seconds[p] = label_seconds.get(p, 0.0) + float(z["seconds"])
    ps = PositionSet(boards, plies, values, margins, value, margin, source, sources, {})
    fm = load_first_moves(first_moves) if first_moves and not strong else None
    if fm is not None:
        ps = _joined(ps, _values_only([Board()], [root_row(fm)], 0, sources), sources, {})
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
    both = PositionSet(*(np.concatenate([getattr(first, f), getattr(second, f)]) for f in ARRAYS),
                       sources, meta)
    return both.subset(np.lexsort((np.arange(len(both)), both.ply)))


# ----------------------------------------------------------------------------- early plies (0-3)

EARLY_PLIES = (0, 1, 2, 3)
BOOK_SOURCE = "book"


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
        rows.append((Board(), root_row(fm)))
    oracle = Oracle(book=book)
    rng = np.random.default_rng(seed)
    cands = early_candidates(book)
    cheap, costly = [], {p: [] for p in EARLY_PLIES}
    for b in cands:
        value = value_from_bounds(*oracle.known(b.cells))
        settled = mover_lost(value, b) or all(value_from_bounds(*oracle.known(b.apply(a).cells)) is not None
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


def _note_unused_first_moves(path) -> None:
    """One line on stderr when --first-moves cannot give ply 0: missing, or there but not a complete
    first-moves file (a folder, another JSON, a run cut short): the user learns why ply 0 is missing."""
    note_missing_input(path, "--first-moves", "the set leaves out ply 0")
    if path and os.path.exists(path) and load_first_moves(path) is None:
        print(f"note: --first-moves {path!r} is not a complete first-moves file (python -m highway_env.solver "
              "first-moves writes one): the set leaves out ply 0", file=sys.stderr)


def main(argv=None) -> int:
    p = OneLineErrorParser(prog="python -m highway_env.evaluation.positions", description=__doc__,
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
    b.add_argument("--work", default=None, type=path_arg(),
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
    b.add_argument("--seed", type=non_negative_int, default=1, help="random seed of the drawing (default: %(default)s)")
    b.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                   help="worker processes (default: all cores, %(default)s)")
    b.add_argument("--margin-min-ply", type=number(int, 0, CELLS), default=DEFAULT_MARGIN_MIN_PLY,
                   help="label exact margins of every move from this ply on (default: %(default)s)")
    b.add_argument("--chunk", type=positive_int, default=200, help="positions per labelling task at plies >= 6 "
                                                          "(default: %(default)s)")
    b.add_argument("--first-moves", default="proof/first_moves.json", type=path_arg(),
                   help="values of the first moves; ply 0 is included only if this file is complete "
                        "(default: %(default)s)")
    b.add_argument("--no-progress", action="store_true", help="no progress bars")
    i = sub.add_parser("info", help="per-ply counts and metadata of a set",
                       description="Print a position set's size, per-ply counts and build metadata as JSON.")
    i.add_argument("file", nargs="?", default=str(DEFAULT_PATH), help="position set .npz (default: set v1, %(default)s)")
    e = sub.add_parser("add-early", help="replace plies 0-3 of a set by the first moves and book positions",
                       description="Ply 0 from the first-moves table, plies 1-3 from the opening book, labelled "
                                   "from the book where it settles them, else by the solver (a few per ply).")
    e.add_argument("file", nargs="?", help=f"set to extend in place (default: {DEFAULT_PATH}, a shipped file: "
                                           f"extended in place only with --force or --out elsewhere)")
    e.add_argument("--force", action="store_true", help="allow extending the shipped default set in place")
    e.add_argument("--book", default=None, type=path_arg(), help="opening book (default: the shipped one)")
    e.add_argument("--first-moves", default="proof/first_moves.json", type=path_arg(), help="complete first-moves table for ply 0 "
                                                                            "(default: %(default)s)")
    e.add_argument("--solve-per-ply", type=_parse_per_ply, default={1: 0, 2: 0, 3: 40},
                   help="per ply, how many positions the book does not settle to label by solving, as PLY=COUNT,... "
                        "(default: 3=40; ply 3 costs ~10-60 s each, ply 2 hours)")
    e.add_argument("--time-limit", type=positive_float, default=300.0,
                   help="seconds per solved position; slower ones are left out (default: %(default)s)")
    e.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the choice of solved positions (default: %(default)s)")
    e.add_argument("--out", default=None, help="write here instead of in place")
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    c = sub.add_parser("check", help="re-solve a random sample and compare with the stored labels",
                       description="Re-solve a random sample of a set's positions at plies 4 and later with the "
                                   "solver and count those whose stored labels (value of the position and of "
                                   "every move, and the margins where stored) differ.")
    c.add_argument("file", nargs="?", default=str(DEFAULT_PATH), help="position set .npz (default: set v1, %(default)s)")
    c.add_argument("--sample", type=positive_int, default=50, help="positions to re-solve (default: %(default)s)")
    args = p.parse_args(argv)
    try:
        if args.cmd == "build":
            v2 = args.strong
            args.games_per_source = args.games_per_source or (400 if v2 else 1000)
            out = (V2_PATH if v2 else DEFAULT_PATH) if args.out is None else args.out  # '' refused as given
            check_output(out, allowed=args.out is not None or args.force)
            out = Path(out)
            if not v2:
                _note_unused_first_moves(args.first_moves)
            ps = build(out, Path(args.work or f"build/positions-v{2 if v2 else 1}"),
                       args.per_ply or (STRONG_PER_PLY if v2 else DEFAULT_PER_PLY), args.games_per_source,
                       args.seed, args.workers, args.margin_min_ply, args.chunk, args.first_moves,
                       progress=not args.no_progress, perfect_games=args.perfect_games, strong=v2)
            print(json.dumps(ps.meta, indent=1))
        elif args.cmd == "add-early":
            from highway_env.solver.opening_book import load_book

            out = next((p for p in (args.out, args.file) if p is not None), DEFAULT_PATH)  # '' refused as given
            check_output(out, allowed=args.out is not None or args.file is not None or args.force,
                         option="--out" if args.out is not None else "file")
            _note_unused_first_moves(args.first_moves)
            ps = add_early(load_positions(args.file), load_book(args.book), args.first_moves, args.solve_per_ply,
                           args.time_limit, args.seed, progress=not args.no_progress)
            save_positions(out, ps)
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
