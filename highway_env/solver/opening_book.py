"""The opening book: solved positions near the start, where the solver would take minutes.

File: gzip-compressed JSON, shipped read-only as ``highway_env/data/book.json.gz``::

    {"format": "highway-opening-book", "version": 1, "meta": {...},
     "positions": {"<canonical board string>": {"bounds": [lo, hi], "moves": [a, ...], "all_moves": false}}}

Keys are canonical board strings (``board.canonical().to_string()``), as in the position store;
``bounds`` are bounds on the exact margin minB - minA (value +1 <=> lo >= 1, -1 <=> hi <= -1,
0 <=> lo >= 0 and hi <= 0, see :func:`highway_env.solver.store.value_from_bounds`). ``moves`` are
recommended moves of the side to move in the *canonical* frame (actions ``(number-1)*16+cell``),
each keeping the position's value; ``all_moves`` says the list is every value-keeping move (up to
the symmetries fixing the position). An entry may have no moves: where the side to move is lost,
every move keeps the value. :meth:`Book.moves` maps the moves to the frame of the board asked about,
with their images under the symmetries that fix it.

Building and inspecting books: :mod:`highway_env.solver.book` (``python -m highway_env.solver.book``).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

from highway_env.core import SYMMETRIES, Board, HighwayError, inverse_perm, parse_board, transform_action
from highway_env.solver.store import canonical_cells, canonical_key, value_from_bounds

FORMAT_NAME = "highway-opening-book"
FORMAT_VERSION = 1
#: The shipped book.
DEFAULT_BOOK_PATH = Path(__file__).resolve().parent.parent / "data" / "book.json.gz"
#: The margin book: A's first move and its answer to every B reply from the margin-2 proof
#: (``proof/certificate_margin2.json``), each keeping the margin at 2 or more, the game's value; the
#: book above keeps the win only (1 or 2 in an A corner win, by 1 at most). The perfect player's
#: ``margin`` tie-break plays it first.
MARGIN_BOOK_PATH = DEFAULT_BOOK_PATH.with_name("book_margin2.json.gz")


class BookError(HighwayError):
    """A book file that cannot be read or contradicts itself (the message names the file)."""


@dataclass
class BookEntry:
    lo: int
    hi: int
    moves: list[int] = field(default_factory=list)  # canonical frame
    all_moves: bool = False

    @property
    def value(self) -> int | None:
        return value_from_bounds(self.lo, self.hi)


class Book:
    """A read-only opening book: canonical key -> :class:`BookEntry` (:class:`highway_env.solver.book.Book`
    adds the building methods)."""

    def __init__(self, entries: dict[str, BookEntry] | None = None, meta: dict | None = None,
                 path: str | None = None):
        self.entries = entries or {}
        self.meta = meta or {}
        self.path = path

    # -- lookups
    def __len__(self) -> int:
        return len(self.entries)

    def entry(self, board: Board) -> BookEntry | None:
        return self.entries.get(canonical_key(board))

    def bounds(self, key: str) -> tuple[int, int] | None:
        e = self.entries.get(key)
        return None if e is None else (e.lo, e.hi)

    def value(self, board) -> int | None:
        e = self.entry(board)
        return None if e is None else e.value

    def moves(self, board: Board) -> tuple[list[int], bool] | None:
        """(recommended actions in ``board``'s own frame, all_moves) or None if the book has none.
        The list is closed under the symmetries that fix ``board``."""
        canon, perm = canonical_cells(board.cells)
        e = self.entries.get(",".join(map(str, canon)))
        if e is None or not e.moves:
            return None
        back = inverse_perm(perm)  # canonical frame -> board frame
        stabiliser = [p for p in SYMMETRIES.values() if board.transform(p) == board]
        out = set()
        for a in e.moves:
            b = transform_action(a, back)
            for s in stabiliser:
                out.add(transform_action(b, s))
        legal = [a for a in sorted(out) if board.is_legal(a)]
        if len(legal) != len(out):
            raise BookError(f"book {self.path or '(in memory)'}: a move for {board.to_string()} is illegal")
        return legal, e.all_moves

    @classmethod
    def load(cls, path: str | Path | None = None) -> "Book":
        if path is not None and not str(path):  # Path('') is '.', and an error would name that
            raise BookError("opening book path '' is empty: give a book file")
        path = DEFAULT_BOOK_PATH if path is None else Path(path)
        if path.is_dir():
            raise BookError(f"opening book {str(path)!r} is a directory: give a book file")
        try:
            with gzip.open(path, "rb") as f:
                doc = json.loads(f.read())
        except FileNotFoundError:
            raise BookError(f"opening book {str(path)!r} not found") from None
        except (OSError, EOFError, ValueError) as e:
            raise BookError(f"opening book {str(path)!r} is unreadable ({type(e).__name__}: {e})") from e
        if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
            raise BookError(f"{str(path)!r} is not an opening book (format {doc.get('format') if isinstance(doc, dict) else None!r})")
        if doc.get("version") != FORMAT_VERSION:
            raise BookError(f"opening book {str(path)!r} has version {doc.get('version')!r}; this code reads {FORMAT_VERSION}")
        entries = {}
        try:
            for key, e in doc["positions"].items():
                board = parse_board(key)
                if canonical_key(board) != key:
                    raise BookError(f"opening book {str(path)!r}: key {key!r} is not canonical")
                lo, hi = (int(x) for x in e["bounds"])
                if lo > hi:
                    raise BookError(f"opening book {str(path)!r}: empty bounds for {key!r}")
                moves = [int(a) for a in e.get("moves", [])]
                for a in moves:
                    if not board.is_legal(a):
                        raise BookError(f"opening book {str(path)!r}: illegal move {a} for {key!r}")
                entries[key] = BookEntry(lo, hi, moves, bool(e.get("all_moves", False)))
        except (KeyError, TypeError, ValueError) as e:
            raise BookError(f"opening book {str(path)!r} is malformed ({type(e).__name__}: {e})") from e
        return cls(entries, doc.get("meta", {}), str(path))


_LOADED: dict[str, Book] = {}


def load_book(path: str | Path | None = None, *, cache: bool = True) -> Book:
    """The book at ``path`` (default: the shipped one), loaded once per process. A missing shipped
    book gives an empty Book (the player then solves everything itself)."""
    key = str(DEFAULT_BOOK_PATH if path is None else path)
    if cache and key in _LOADED:
        return _LOADED[key]
    book = Book(path=key) if path is None and not DEFAULT_BOOK_PATH.exists() else Book.load(path)
    if cache:
        _LOADED[key] = book
    return book
