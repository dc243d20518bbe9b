"""Building and inspecting the opening book (:mod:`highway_env.solver.opening_book` reads it).

The file format is described in :mod:`highway_env.solver.opening_book`.

Building (some runs take minutes to hours; ``--help`` explains each flag)::

    # from the proof's outputs (instant): plies 0-2 along every winning first move, ply 1 values
    python -m highway_env.solver.book build --certificate proof/certificate.json \
        --first-moves proof/first_moves.json --out base.json.gz
    # the shipped book adds every ply-3 position after A's winning / drawing first moves and the
    # perfect B's reply (644 positions, ~17 min wall in 2 processes)
    python -m highway_env.solver.book build --merge-into base.json.gz --ply 1 --after-replies 0 \
        --shard 0/2 --store s0.sqlite --out ext0.json.gz      # and --shard 1/2 ... ext1.json.gz
    python -m highway_env.solver.book merge ext0.json.gz ext1.json.gz --out highway_env/data/book.json.gz
    # or by solving (long; shard over processes, then merge)
    python -m highway_env.solver.book build --ply 1 --shard 0/8 --certificate proof/certificate.json --out part0.json.gz
    python -m highway_env.solver.book merge part*.json.gz --out highway_env/data/book.json.gz
    python -m highway_env.solver.book info highway_env/data/book.json.gz
    # the margin book, A's moves keeping margin >= 2 (instant)
    python -m highway_env.solver.book build --certificate proof/certificate_margin2.json \
        --out highway_env/data/book_margin2.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from typing import Iterable, Sequence

from highway_env.cli_args import OneLineErrorParser, number, positive_float, tt_bits_arg
from highway_env.core import CELLS, Board, HighwayError, parse_board, transform_action
from highway_env.shipped import check_output
from highway_env.solver import opening_book
from highway_env.solver.opening_book import (DEFAULT_BOOK_PATH, FORMAT_NAME, FORMAT_VERSION,  # noqa: F401
                                             BookEntry, BookError, load_book)
from highway_env.solver.store import (UNKNOWN_HI, UNKNOWN_LO, PositionStore, bounds_from_value, canonical_cells,
                                      canonical_key, intersect, key_ply)


class BookBuilder(opening_book.Book):
    """An opening book being built: the reader's (:class:`~highway_env.solver.opening_book.Book`)
    lookups, and entries added, merged and saved."""

    def add(self, board_or_key, lo: int = UNKNOWN_LO, hi: int = UNKNOWN_HI, moves: Iterable[int] = (),
            all_moves: bool = False) -> BookEntry:
        """Merge bounds and moves into the entry of a position. ``moves`` are in the frame of
        ``board_or_key`` when it is a Board (they are mapped to the canonical frame), else canonical.
        Bounds are clamped to the position's static bounds (so 'unknown' becomes finite)."""
        if isinstance(board_or_key, Board):
            canon, perm = canonical_cells(board_or_key.cells)
            key = ",".join(map(str, canon))
            moves = [transform_action(a, perm) for a in moves]
        else:
            key = board_or_key
        static_lo, static_hi = parse_board(key).bounds().margin
        lo, hi = max(lo, static_lo), min(hi, static_hi)
        old = self.entries.get(key)
        if old is not None:
            lo, hi = intersect((old.lo, old.hi), (lo, hi))
        if lo > hi:
            raise BookError(f"book: contradictory bounds for {key}: {(old.lo, old.hi) if old else None} and new")
        entry = BookEntry(lo, hi, sorted(set((old.moves if old else []) + list(moves))),
                          all_moves or (old.all_moves if old else False))
        self.entries[key] = entry
        return entry

    def merge(self, other: opening_book.Book) -> "BookBuilder":
        for key, e in other.entries.items():
            self.add(key, e.lo, e.hi, e.moves, e.all_moves)
        return self

    def to_json(self) -> dict:
        positions = {}
        for k in sorted(self.entries, key=lambda k: (key_ply(k), k)):
            e = self.entries[k]
            positions[k] = {"bounds": [e.lo, e.hi]}
            if e.moves:
                positions[k]["moves"] = sorted(set(e.moves))
            if e.all_moves:
                positions[k]["all_moves"] = True
        return {"format": FORMAT_NAME, "version": FORMAT_VERSION, "meta": self.meta, "positions": positions}

    def save(self, path: str | Path) -> None:
        from highway_env.atomic_files import atomic_write_bytes

        data = json.dumps(self.to_json(), separators=(",", ":")).encode()
        atomic_write_bytes(path, gzip.compress(data, mtime=0))

    def summary(self) -> dict:
        by_ply: dict[int, dict] = {}
        for key, e in self.entries.items():
            row = by_ply.setdefault(key_ply(key), {"positions": 0, "won_a": 0, "draw": 0, "won_b": 0, "unknown": 0,
                                                "with_moves": 0})
            row["positions"] += 1
            row[{1: "won_a", 0: "draw", -1: "won_b", None: "unknown"}[e.value]] += 1
            row["with_moves"] += bool(e.moves)
        return {"path": self.path, "positions": len(self), "meta": self.meta, "by_ply": dict(sorted(by_ply.items()))}


#: ``Book`` from this module builds books (the reader is :class:`highway_env.solver.opening_book.Book`).
Book = BookBuilder


# ----------------------------------------------------------------------------- from the proof

def _read_json(path: Path, what: str):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise BookError(f"{what} {str(path)!r} is unreadable ({type(e).__name__}: {e})") from e


def book_from_certificate(path: str | Path, book: BookBuilder | None = None) -> BookBuilder:
    """Book entries from a proof certificate (``proof/certificate.json``, see ``solver.prove``) with
    threshold t (``threshold``, 1 if absent: "A wins"), from its ``root`` (default the empty board):

    - the root: margin >= t, recommended move A's proven first move;
    - the position after that move: margin >= t (for t >= 1 B is lost: any move keeps the value, so
      no moves are listed);
    - for each B reply listed (it stands for its symmetric images: they share the canonical key):
      margin >= t and, for t >= 1, A's answer ``a_answer`` as the recommended move.

    Every reply must be proven (``holds`` true, or ``value`` 1 in the older format) with an answer,
    else BookError. For t <= 0 only the bounds are entered (keeping "margin >= t" need not keep the
    value, so the answers are not value-keeping moves for certain).
    """
    path = Path(path)
    cert = _read_json(path, "certificate")
    book = BookBuilder(meta={}) if book is None else book
    try:
        t = int(cert.get("threshold", 1))
        root = parse_board(cert["root"]) if cert.get("root") else Board()
        first = int(cert["first_move"]["action"])
        if root.to_move != 0 or not root.is_legal(first):
            raise BookError(f"certificate {str(path)!r}: first move {first} is not a legal move of A at the root")
        after = root.apply(first)
        with_moves = t >= 1
        book.add(root, t, UNKNOWN_HI, [first] if with_moves else [])
        book.add(after, t, UNKNOWN_HI)
        for row in cert["replies"]:
            reply = int(row["action"])
            proven = row["holds"] is True if "holds" in row else row.get("value") == 1
            if not proven or not row.get("a_answer"):
                raise BookError(f"certificate {str(path)!r}: reply {reply} is not proven (row {row})")
            pos = after.apply(reply)
            answer = int(row["a_answer"]["action"])
            if not pos.is_legal(answer):
                raise BookError(f"certificate {str(path)!r}: answer {answer} to reply {reply} is illegal")
            book.add(pos, t, UNKNOWN_HI, [answer] if with_moves else [])
    except (KeyError, TypeError, ValueError, HighwayError) as e:
        if isinstance(e, BookError):
            raise
        raise BookError(f"certificate {str(path)!r} is malformed ({type(e).__name__}: {e})") from e
    book.meta.setdefault("sources", []).append({"certificate": str(path), "threshold": t, "first_move": first,
                                                 "replies": len(cert["replies"])})
    return book


def book_from_first_moves(path: str | Path, book: BookBuilder | None = None,
                          root: Board | None = None) -> BookBuilder:
    """Book entries from ``python -m highway_env.solver first-moves`` output (``proof/first_moves.json``:
    the value of each of A's first moves modulo symmetry, from ``root``, default the empty board):

    - each position after a first move: its value, and where B is not lost B's value-keeping reply
      (the reply that refuted "A wins", for a draw, or "A draws", for a B win);
    - for each first move that wins: every B reply listed in ``a_answers`` with A's winning answer;
    - the root: value +1 with the winning first moves if any wins; when the file is ``complete`` the
      root's value is the best first move's and its moves are all the first moves reaching it.
    """
    path = Path(path)
    doc = _read_json(path, "first-moves file")
    book = BookBuilder(meta={}) if book is None else book
    root = Board() if root is None else root
    try:
        entries = doc["moves"]
        complete = bool(doc.get("complete", False))
        values = {}
        for e in entries:
            first, value = int(e["action"]), int(e["value"])
            if value not in (1, 0, -1):
                raise BookError(f"first-moves file {str(path)!r}: bad value {value} for move {first}")
            after = root.apply(first)
            keep = []
            if value == 0:
                keep = [int(e["refuted_at_1_by"]["action"])]
            elif value == -1:
                keep = [int(e["refuted_at_0_by"]["action"])]
            book.add(after, *bounds_from_value(value), keep)
            if value == 1:
                for reply, answer in e.get("a_answers", {}).items():
                    pos = after.apply(int(reply))
                    if not pos.is_legal(int(answer)):
                        raise BookError(f"first-moves file {str(path)!r}: answer {answer} to {first}, {reply} is illegal")
                    book.add(pos, 1, UNKNOWN_HI, [int(answer)])
            values[first] = value
        if values:
            best = max(values.values())
            tops = [a for a, v in values.items() if v == best]
            if complete:
                book.add(root, *bounds_from_value(best), tops, all_moves=True)
            elif best == 1:
                book.add(root, 1, UNKNOWN_HI, tops)
    except (KeyError, TypeError, ValueError, HighwayError) as e:
        if isinstance(e, BookError):
            raise
        raise BookError(f"first-moves file {str(path)!r} is malformed ({type(e).__name__}: {e})") from e
    book.meta.setdefault("sources", []).append({"first_moves": str(path), "complete": complete,
                                                 "moves": len(values)})
    return book


def close_under_moves(book: BookBuilder) -> int:
    """Add the position after each recommended move with the value of the entry it leaves (a
    value-keeping move keeps the value), so a line played from the book stays known one ply further.
    Returns the number of entries added or tightened."""
    changed = 0
    for key, entry in list(book.entries.items()):
        value = entry.value
        if value is None or not entry.moves:
            continue
        board = parse_board(key)
        for action in entry.moves:
            child = board.apply(action)
            if 0 not in child.cells:
                continue
            before = book.entry(child)
            after = book.add(child, *bounds_from_value(value))
            changed += before is None or (before.lo, before.hi) != (after.lo, after.hi)
    return changed


def fix_lost_replies(book: BookBuilder, ply: int = 1) -> list[Board]:
    """Give every entry at ``ply`` whose side to move is lost (no moves listed: every move keeps the
    value) an explicit move: the first in the solver's order, the perfect player's default there.
    Returns the positions after each entry's first listed move (canonical entries), i.e. where the
    perfect player's opponent moves next along the book."""
    from highway_env.solver.oracle import ordered_actions

    out = []
    for key, entry in sorted(book.entries.items()):
        board = parse_board(key)
        if board.ply != ply or entry.value is None:
            continue
        if not entry.moves:
            book.add(key, entry.lo, entry.hi, [ordered_actions(board)[0]])
            entry = book.entries[key]
        out.append(board.apply(entry.moves[0]))
    return out


# ----------------------------------------------------------------------------- building by solving

def positions_at(ply: int, root: Board | None = None) -> list[Board]:
    """Canonical positions ``ply`` moves after ``root`` (default: the empty board), one per symmetry
    class, in a fixed order. From the empty board: 1, 96 and 7920 positions at plies 0, 1, 2."""
    root = Board() if root is None else root
    level = {canonical_key(root): root}
    for _ in range(ply):
        nxt: dict[str, Board] = {}
        for board in level.values():
            for a in board.legal_actions():
                child = board.apply(a)
                k = canonical_key(child)
                if k not in nxt:
                    nxt[k] = Board(canonical_cells(child.cells)[0])
        level = nxt
    return [level[k] for k in sorted(level)]


def build_book(*, plies: Sequence[int] = (), root: Board | None = None, certificate: str | None = None,
               first_moves: str | None = None,
               store: PositionStore | str | None = None, from_store_max_ply: int | None = None,
               moves: str = "one", shard: tuple[int, int] = (0, 1), time_limit: float | None = None,
               tt_bits: int = 22, book: BookBuilder | None = None, progress: bool = True,
               after_replies_min_value: int | None = None) -> BookBuilder:
    """Build a book.

    - ``certificate``: add the entries of :func:`book_from_certificate`.
    - ``first_moves``: add the entries of :func:`book_from_first_moves` (from ``root``).
    - ``plies``: solve every canonical position that many moves after ``root`` (default the empty
      board), split over ``shard = (i, n)`` (this run takes positions i, i+n, ...): its value, and
      the recommended moves per ``moves``: "one" the first value-keeping move in the solver's order,
      "keeping" every value-keeping move (``all_moves``; classifies every child, far costlier), "none" none. Where the side to move is lost
      no moves are listed (every move keeps the value). ``time_limit`` per position (seconds): a
      position not finished in time is left out (and counted in ``meta``).
    - ``after_replies_min_value``: instead of from ``root``, solve ``plies`` moves after each position
      the perfect player's book reply at ply 1 leads to, for the first moves of A of at least this
      value (0: the winning and drawing ones). The positions that follow are where an arbitrary A
      leaves the book against a perfect B, and cold solves there take up to a minute.
    - Always: every ply-1 entry where B is lost lists B's move explicitly (see
      :func:`fix_lost_replies`), and the position after every listed move gets the entry's value
      (:func:`close_under_moves`).
    - ``store``: solved bounds are read from and written to it (so an interrupted build resumes fast);
      with ``from_store_max_ply`` its positions of at most that ply are copied (bounds only).
    """
    from tqdm import tqdm

    from highway_env.solver.oracle import Deadline, Oracle

    if moves not in ("keeping", "one", "none"):
        raise BookError(f"moves must be keeping, one or none; got {moves!r}")
    book = BookBuilder(meta={}) if book is None else book
    start = time.monotonic()
    if certificate:
        book_from_certificate(certificate, book)
    if first_moves:
        book_from_first_moves(first_moves, book, root)
    st = store if isinstance(store, PositionStore) or store is None else PositionStore(store)
    if st is not None and from_store_max_ply is not None:
        copied = 0
        for key, (lo, hi) in st.items():
            if key_ply(key) <= from_store_max_ply:
                book.add(key, lo, hi)
                copied += 1
        book.meta.setdefault("sources", []).append({"store": st.path, "max_ply": from_store_max_ply,
                                                     "positions": copied})
    replies = fix_lost_replies(book, 1)
    close_under_moves(book)
    if plies:
        oracle = Oracle(book=book, store=st, tt_bits=tt_bits)  # positions already in the book are known
        i, n = shard
        if after_replies_min_value is None:
            roots = [root]
        else:
            roots = [b for b in replies if (book.value(b) is not None and book.value(b) >= after_replies_min_value)]
        unique: dict[str, Board] = {}
        for ply in plies:
            for r in roots:
                for b in positions_at(ply, r):
                    unique.setdefault(canonical_key(b), b)
        todo = list(unique.values())[i::n]
        skipped = 0
        bar = tqdm(todo, desc="book positions", unit="pos", disable=not progress, dynamic_ncols=True)
        for board in bar:
            bar.set_postfix(ply=board.ply)
            have = book.entry(board)
            if have is not None and have.value is not None and (
                    have.moves or moves == "none" or have.value == (1 if board.to_move == 1 else -1)):
                continue  # already settled (e.g. from the certificate)
            budget = Deadline(None if time_limit is None else time.monotonic() + time_limit)
            value = oracle.value(board.cells, budget)
            if value is None:
                skipped += 1
                continue
            lo, hi = oracle.known(board.cells)
            mover_lost = value == (1 if board.to_move == 1 else -1)
            keep: list[int] = []
            complete = False
            if moves != "none" and not mover_lost:
                found = oracle.keeping_moves(board, value, first_only=(moves == "one"), budget=budget)
                if found is None:
                    skipped += 1
                    continue
                keep, complete = found, moves == "keeping"
            book.add(board, lo, hi, keep, complete)
        close_under_moves(book)
        book.meta.setdefault("sources", []).append(
            {"solved_plies": list(plies), "root": None if root is None else root.to_string(),
             "after_replies_min_value": after_replies_min_value, "roots": len(roots),
             "shard": f"{i}/{n}", "positions": len(todo), "skipped_time_limit": skipped,
             "moves": moves, "time_limit": time_limit})
        if st is not None:
            st.flush()
    book.meta["built_seconds"] = round(book.meta.get("built_seconds", 0) + time.monotonic() - start, 1)
    return book


# ----------------------------------------------------------------------------- CLI

def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shard is I/N (e.g. 0/8), got {text!r}") from None
    if not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"shard I/N needs 0 <= I < N, got {text!r}")
    return i, n


def main(argv=None) -> int:
    parser = OneLineErrorParser(prog="python -m highway_env.solver.book",
                                     description="Build, merge and inspect the opening book (gzip JSON).")
    sub = parser.add_subparsers(dest="cmd", required=True)

    b = sub.add_parser("build", help="build a book from a proof certificate, a store and/or by solving",
                       description="Build a book. Sources are combined: --certificate and --first-moves (instant: "
                                   "the proof's results), --from-store (copy solved bounds), --ply (solve every "
                                   "canonical position at those plies; long).")
    b.add_argument("--out", required=True, help="book file to write (.json.gz); written atomically")
    b.add_argument("--certificate", help="proof certificate JSON (proof/certificate.json): adds the empty board "
                                         "with A's proven first move, the position after it, and every B reply "
                                         "with A's winning answer")
    b.add_argument("--first-moves", metavar="PATH",
                   help="output of 'python -m highway_env.solver first-moves' (proof/first_moves.json): adds the "
                        "value of every position after A's first move with B's value-keeping reply, A's winning "
                        "answers to every B reply after each winning first move, and the root")
    b.add_argument("--ply", type=number(int, 0, CELLS), action="append", default=[],
                   help="solve every canonical position this many moves after the root (repeatable). From the "
                        "empty board: ply 1 = 96 positions, ~0.5-1 min each on one core where B wins, longer where A "
                        "wins (a full proof); ply 2 = 7920 positions, seconds to minutes each. Positions the book "
                        "already settles (e.g. from --certificate) are skipped: give --certificate to every shard")
    b.add_argument("--root", help="start --ply from this board (16 comma-separated numbers) instead of the empty one")
    b.add_argument("--after-replies", type=int, choices=[-1, 0, 1], metavar="MIN_VALUE",
                   help="with --ply N: solve the positions N moves after each position the book's ply-1 reply "
                        "leads to, for A's first moves of value >= MIN_VALUE (1: winning, 0: also drawing, -1: all); "
                        "--ply 1 --after-replies 0 covers every ply-3 position a perfect B can face after a "
                        "non-losing first move (~1,000 positions, seconds to a minute each)")
    b.add_argument("--moves", choices=["keeping", "one", "none"], default="one",
                   help="recommended moves to list per solved position: 'one' (default): the first value-keeping "
                        "move in the solver's order; 'keeping': every value-keeping move (classifies every child: "
                        "~225 solves of the next ply per position, far costlier); 'none': bounds only. Positions "
                        "where the side to move is lost get no moves (every move keeps the value)")
    b.add_argument("--store", help="position store (SQLite) to read solved bounds from and write new ones to; "
                                   "makes an interrupted build resume fast")
    b.add_argument("--from-store", type=number(int, 0, CELLS), metavar="MAX_PLY",
                   help="copy the bounds of every store position with at most MAX_PLY filled cells (needs --store)")
    b.add_argument("--shard", type=_shard, default=(0, 1), metavar="I/N",
                   help="solve only positions I, I+N, I+2N, ... of the --ply list (run N processes, then merge; "
                        "default 0/1: all of them)")
    b.add_argument("--time-limit", type=positive_float, help="seconds per solved position; unfinished ones are left out")
    b.add_argument("--merge-into", help="start from this existing book and add to it")
    b.add_argument("--tt-bits", type=tt_bits_arg, default=22, help="solver transposition table size, 2**N buckets (default %(default)s: ~180 MB)")
    b.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")

    m = sub.add_parser("merge", help="merge books (intersecting bounds, uniting moves)",
                       description="Merge books, e.g. the shards of build --shard: the bounds of a position "
                                   "in several books are intersected and its recommended moves united.")
    m.add_argument("books", nargs="+", help="book files to merge")
    m.add_argument("--out", required=True, help="merged book to write")

    i = sub.add_parser("info", help="print a book's size by ply and its metadata as JSON",
                       description="Print a book's positions by ply (won by A, drawn, won by B, with moves) "
                                   "and the metadata of how it was built, as JSON.")
    i.add_argument("book", nargs="?", help="book file (default: the shipped one)")

    args = parser.parse_args(argv)
    try:
        if args.cmd in ("build", "merge"):  # the output is named: a shipped book may be replaced
            check_output(args.out, allowed=True)  # now, not after hours of solving
        if args.cmd == "build":
            if args.from_store is not None and not args.store:
                parser.error("--from-store needs --store")
            if not (args.certificate or args.first_moves or args.ply or args.from_store is not None):
                parser.error("nothing to build: give --certificate, --first-moves, --ply and/or --from-store")
            base = BookBuilder.load(args.merge_into) if args.merge_into else None
            book = build_book(plies=args.ply, root=parse_board(args.root) if args.root else None,
                              certificate=args.certificate, first_moves=args.first_moves, store=args.store, from_store_max_ply=args.from_store,
                              moves=args.moves, shard=args.shard, time_limit=args.time_limit, tt_bits=args.tt_bits,
                              book=base, progress=not args.no_progress, after_replies_min_value=args.after_replies)
            book.save(args.out)
            print(json.dumps(book.summary(), indent=1))
        elif args.cmd == "merge":
            book = BookBuilder(meta={"merged": args.books})
            for p in args.books:
                book.merge(BookBuilder.load(p))
            book.save(args.out)
            print(json.dumps(book.summary(), indent=1))
        else:
            print(json.dumps(BookBuilder.load(args.book).summary(), indent=1))
    except HighwayError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
