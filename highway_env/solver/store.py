"""A persistent store of solved positions: bounds on the exact margin, in an embedded SQLite file.

Key: the canonical board string (:func:`canonical_key`), shared by the four symmetric images of a
position. Value: bounds ``(lo, hi)`` on the exact margin minB - minA under perfect play; "A can
force margin >= t" gives ``lo >= t``, its negation ``hi <= t - 1`` (:func:`value_from_bounds`
turns bounds into a game value). Writes are merged in SQL (the intersection of old and new), so
several processes may share one file (WAL mode, a busy timeout, writes buffered and committed
``batch_size`` at a time); bounds that do not intersect raise :class:`StoreConflictError`.

Each row records the :data:`SOLVER_VERSION` that wrote it and a checksum
of (key, lo, hi, version): a row from another solver version or with a wrong checksum (an edit, damage)
is ignored on reading and replaced on the next write. An unreadable file raises
:class:`StoreCorruptError` naming it, or with ``reset_if_corrupt=True`` is moved aside.

    >>> store = PositionStore(":memory:")
    >>> from highway_env.core import parse_board
    >>> b = parse_board("6,8,3,0,5,11,10,0,15,0,13,12,1,7,4,0")
    >>> store.put(b, 1, 99); store.put(b, -5, 7)
    >>> store.get(b)
    (1, 7)
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shlex
import sqlite3
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Iterable, Sequence

from highway_env.core import CELLS, Board, HighwayError, canonical_cells

#: The version of the solver's results: bump it whenever a change could alter what the search
#: returns, so that stores ignore the entries an older solver wrote.
SOLVER_VERSION = 1
#: Bounds meaning "nothing known" (the solver's infinity; real margins are far inside).
UNKNOWN_LO, UNKNOWN_HI = -1000, 1000

FORMAT_NAME = "highway-solved-positions"
FORMAT_VERSION = 2  # 2: rows carry the solver version and a checksum (version 1 files are upgraded)

class StoreError(HighwayError):
    """A problem with a position store (the message names the file)."""


class StoreCorruptError(StoreError):
    """The store file is not a readable position store."""


class StoreConflictError(StoreError):
    """New bounds for a position contradict the stored ones."""


class StoreLockedError(StoreError):
    """Another process held the store's lock past the busy timeout: the file is fine, never moved aside."""


#: SQLite's primary result codes for a lock held elsewhere (an extended code keeps them in its low byte)
_LOCK_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


# ----------------------------------------------------------------------------- keys and bounds

def canonical_key(board: Board | Sequence[int]) -> str:
    """The store/book key of a position: its canonical board string (:func:`core.canonical_cells`,
    the one symmetry reduction)."""
    cells = board.cells if isinstance(board, Board) else board
    return ",".join(map(str, canonical_cells(cells)[0]))


def key_ply(key: str) -> int:
    """The ply (numbers placed) of the position a :func:`canonical_key` names."""
    return CELLS - key.split(",").count("0")


def value_from_bounds(lo: int, hi: int) -> int | None:
    """+1 / 0 / -1 if the bounds settle the game value, else None."""
    if lo >= 1:
        return 1
    if hi <= -1:
        return -1
    if lo >= 0 and hi <= 0:
        return 0
    return None


def bounds_from_value(value: int) -> tuple[int, int]:
    """The bounds a bare game value gives."""
    return {1: (1, UNKNOWN_HI), 0: (0, 0), -1: (UNKNOWN_LO, -1)}[value]


def intersect(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a[0], b[0]), min(a[1], b[1])


def default_store_path() -> Path:
    """``$HIGHWAY_ENV_CACHE`` if set (a file path), else ``~/.cache/highway_env/solved.sqlite``."""
    env = os.environ.get("HIGHWAY_ENV_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "highway_env" / "solved.sqlite"


def entry_checksum(key: str, lo: int, hi: int, solver: int) -> int:
    """Checksum of one stored entry (a signed 64-bit integer, as SQLite stores it)."""
    digest = hashlib.blake2b(f"{key}|{lo}|{hi}|{solver}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def entry_status(key: str, lo, hi, solver, checksum) -> str:
    """'ok', 'version' (written by another solver version) or 'checksum' (edited or damaged)."""
    if solver != SOLVER_VERSION:
        return "version"
    if not isinstance(lo, int) or not isinstance(hi, int) or checksum != entry_checksum(key, lo, hi, solver):
        return "checksum"
    return "ok"


# ----------------------------------------------------------------------------- the store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS positions (
    key TEXT PRIMARY KEY,
    lo INTEGER NOT NULL,
    hi INTEGER NOT NULL,
    solver INTEGER NOT NULL DEFAULT 0,
    checksum INTEGER NOT NULL DEFAULT 0,
    CHECK (lo <= hi)
) WITHOUT ROWID;
"""

# A stored row is merged only if it is valid (this solver version, checksum right); an invalid one is
# replaced. SET expressions see the old row, so the new bounds are spelled out again for the checksum.
_VALID = "(solver = excluded.solver AND checksum = entry_checksum(key, lo, hi, solver))"
_NEW_LO = f"CASE WHEN {_VALID} THEN max(lo, excluded.lo) ELSE excluded.lo END"
_NEW_HI = f"CASE WHEN {_VALID} THEN min(hi, excluded.hi) ELSE excluded.hi END"
_UPSERT = f"""
INSERT INTO positions (key, lo, hi, solver, checksum) VALUES (?, ?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET lo = {_NEW_LO}, hi = {_NEW_HI}, solver = excluded.solver,
    checksum = entry_checksum(key, {_NEW_LO}, {_NEW_HI}, excluded.solver)
"""
_SELECT = "SELECT key, lo, hi, solver, checksum FROM positions"
#: most rows get_key remembers for put_key (the memory a long run that reads much and writes little holds)
_READ_MEMORY = 20_000


def _flush_at_exit(ref):
    store = ref()
    if store is not None:
        try:
            store.close()
        except Exception as e:  # noqa: BLE001 - the interpreter exits: say what was not written, raise nothing
            print(f"warning: position store {store.path!r}: the bounds buffered at exit were not all written: {e}",
                  file=sys.stderr)


class PositionStore:
    """Bounds on exact margins of solved positions, keyed by canonical board, in SQLite.

    ``path``: a file path, ``":memory:"`` (a private in-memory store, for tests) or None for
    :func:`default_store_path`. ``batch_size``: buffered positions per write transaction.
    ``reset_if_corrupt``: move an unreadable file aside and start fresh instead of raising.
    ``readonly``: open an existing file for reading only (``put`` raises).

    One object per process (after a fork the child reopens its own connection and drops the
    parent's unflushed writes); it may be used from several threads (a lock serialises access).
    """

    def __init__(self, path: str | os.PathLike | None = None, *, batch_size: int = 2000,
                 reset_if_corrupt: bool = False, readonly: bool = False, timeout: float = 60.0):
        self.path = str(default_store_path() if path is None else path)
        self.batch_size = int(batch_size)
        self.readonly = readonly
        self.timeout = timeout
        self._lock = threading.RLock()
        self._pending: dict[str, tuple[int, int]] = {}
        self._last_read: dict[str, tuple[int, int] | None] = {}  # valid stored bounds get_key saw since the last flush
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self.read_status: dict[str, int] = {}  # rows read so far, by entry_status: how many were trusted or ignored
        try:
            self._open()
        except StoreCorruptError:
            if not reset_if_corrupt or self.readonly or self.path == ":memory:":
                raise
            self._close_conn()
            aside = f"{self.path}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}"
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                if os.path.exists(self.path + suffix):
                    os.replace(self.path + suffix, aside + suffix)
            self.moved_aside = aside
            self._open()
        ref = weakref.ref(self)
        self._atexit = lambda: _flush_at_exit(ref)
        atexit.register(self._atexit)

    # -- opening
    def _corrupt(self, exc: BaseException) -> StoreError:
        """The error for a failed SQLite call: a lock held past the timeout is not damage (deleting
        or moving the file aside, as for damage, would lose a good store another process is using)."""
        if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in _LOCK_CODES:
            return StoreLockedError(
                f"position store {self.path!r} is locked by another process ({exc}; waited {self.timeout:g} s): "
                "wait for it to finish, or stop it (a process stopped with its write open holds the lock), "
                "then try again; the file is not damaged, keep it")
        return StoreCorruptError(
            f"position store {self.path!r} is unreadable ({type(exc).__name__}: {exc}); delete or move the "
            f"file, or open it with PositionStore(..., reset_if_corrupt=True) to start a fresh one")

    def _open(self) -> None:
        if not self.path.strip():  # sqlite takes '' as a throwaway temporary database
            raise StoreError(f"position store path {self.path!r} is empty; give a file path")
        memory = self.path == ":memory:"
        if not memory and os.path.isdir(self.path):
            raise StoreError(f"position store path {self.path!r} is a directory; give a file path such as "
                             f"{os.path.join(self.path, 'solved.sqlite')!r} (HIGHWAY_ENV_CACHE or --store)")
        if not memory:
            if self.readonly and not os.path.exists(self.path):
                raise StoreError(f"position store {self.path!r} does not exist (opened read-only)")
            if not self.readonly:
                try:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise StoreError(f"cannot create the folder of position store {self.path!r}: {e}") from None
        read_only_uri = self.readonly and not memory
        target = Path(self.path).resolve().as_uri() + "?mode=ro" if read_only_uri else self.path
        try:
            conn = sqlite3.connect(target, uri=read_only_uri, timeout=self.timeout, check_same_thread=False,
                                   isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open position store {self.path!r}: {e}") from e
        self._conn = conn
        conn.create_function("entry_checksum", 4, entry_checksum, deterministic=True)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            if not memory and not self.readonly:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise StoreError(f"position store {self.path!r}: cannot switch to WAL mode (got {mode})")
                conn.execute("PRAGMA synchronous = NORMAL")
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and not {"meta", "positions"} <= tables:
                raise StoreCorruptError(
                    f"{self.path!r} is an SQLite file but not a position store (tables: {sorted(tables)}); "
                    f"use another path, or reset_if_corrupt=True to move it aside")
            if not tables:
                if self.readonly:
                    raise StoreCorruptError(f"position store {self.path!r} is empty (no tables)")
                conn.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT_NAME,))
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (str(FORMAT_VERSION),))
                conn.execute("COMMIT")
            meta = dict(conn.execute("SELECT name, value FROM meta"))
            if meta.get("format") != FORMAT_NAME:
                raise StoreCorruptError(f"{self.path!r} is not a position store (format {meta.get('format')!r})")
            if meta.get("version") == "1" and not self.readonly:  # add the integrity columns
                conn.execute("BEGIN IMMEDIATE")
                if "solver" not in {r[1] for r in conn.execute("PRAGMA table_info(positions)")}:
                    conn.execute("ALTER TABLE positions ADD COLUMN solver INTEGER NOT NULL DEFAULT 0")
                    conn.execute("ALTER TABLE positions ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0")
                conn.execute("UPDATE meta SET value = ? WHERE name = 'version'", (str(FORMAT_VERSION),))
                conn.execute("COMMIT")
                meta["version"] = str(FORMAT_VERSION)
            if meta.get("version") != str(FORMAT_VERSION):
                raise StoreError(f"position store {self.path!r} has format version {meta.get('version')!r}; "
                                 f"this code reads version {FORMAT_VERSION}")
            conn.execute(_SELECT + " LIMIT 1").fetchall()
        except StoreError:
            raise
        except sqlite3.DatabaseError as e:
            raise self._corrupt(e) from e

    def _close_conn(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if os.getpid() != self._pid:  # forked: the parent's connection must not be used here
            self._conn = None
            self._pending, self._last_read = {}, {}
            self._pid = os.getpid()
            self._open()
        if self._conn is None:
            raise StoreError(f"position store {self.path!r} is closed")
        return self._conn

    # -- reads
    def _row_check(self, key: str, lo, hi, solver, checksum) -> tuple[int, int] | None:
        """The bounds of a stored row, or None for a row to ignore (other version, bad checksum)."""
        status = entry_status(key, lo, hi, solver, checksum)
        self.read_status[status] = self.read_status.get(status, 0) + 1
        return (lo, hi) if status == "ok" else None

    def get_key(self, key: str) -> tuple[int, int] | None:
        with self._lock:
            conn = self._connection()  # first: a forked store forgets its parent's buffered and read rows
            try:
                row = conn.execute(_SELECT + " WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError as e:
                raise self._corrupt(e) from e
            stored = None if row is None else self._row_check(*row)
            if len(self._last_read) >= _READ_MEMORY:
                self._last_read.clear()
            self._last_read[key] = stored  # what put_key checks new bounds against, without reading the row again
            return intersect(stored, self._pending.get(key))

    def get(self, board: Board | Sequence[int]) -> tuple[int, int] | None:
        """Stored bounds ``(lo, hi)`` of the position (any symmetric image), or None."""
        return self.get_key(canonical_key(board))

    def value(self, board) -> int | None:
        b = self.get(board)
        return None if b is None else value_from_bounds(*b)

    def __len__(self) -> int:
        with self._lock:
            self.flush()
            try:
                return self._connection().execute(
                    "SELECT count(*) FROM positions WHERE solver = ? AND checksum = entry_checksum(key, lo, hi, solver)",
                    (SOLVER_VERSION,)).fetchone()[0]
            except sqlite3.DatabaseError as e:
                raise self._corrupt(e) from e

    def rows(self) -> list[tuple[str, int, int, int, int]]:
        """Every stored row as (key, lo, hi, solver version, checksum), valid or not (flushes first)."""
        with self._lock:
            self.flush()
            try:
                return self._connection().execute(_SELECT).fetchall()
            except sqlite3.DatabaseError as e:
                raise self._corrupt(e) from e

    def items(self) -> Iterable[tuple[str, tuple[int, int]]]:
        """Every valid (key, (lo, hi)) stored (flushes first); invalid rows are left out."""
        for row in self.rows():
            bounds = self._row_check(*row)
            if bounds is not None:
                yield row[0], bounds

    # -- writes
    def put_key(self, key: str, lo: int, hi: int) -> None:
        """Merge bounds into the key's entry (buffered). Bounds contradicting the entry raise
        :class:`StoreConflictError` here: the entry as :meth:`get_key` last read it since the last
        flush (not read again), else as the file holds it now; one contradicting what another process
        wrote since is reported by :meth:`flush`. Reading the row again here would not catch every
        such write (another process may write between this call and the flush; only the flush's
        transaction sees the file as it is written) and would cost a query per put, the ~26% more
        queries that ``bench/bench_store.py`` measured before the row read by get_key was reused."""
        lo, hi = int(lo), int(hi)
        if lo > hi:
            raise StoreConflictError(f"position store {self.path!r}: empty bounds ({lo}, {hi}) for {key!r}")
        if self.readonly:
            raise StoreError(f"position store {self.path!r} is read-only")
        with self._lock:
            conn = self._connection()
            old = self._pending.get(key)
            if old is None and key in self._last_read:  # first write of this key in the batch, just read by get_key
                old = self._last_read.pop(key)
            elif old is None:  # ... not read since the last flush: check against the file now
                try:
                    old = self._stored(conn, key)
                except sqlite3.DatabaseError as e:
                    raise self._corrupt(e) from e
            new = intersect(old, (lo, hi))
            if new[0] > new[1]:
                raise self._conflict([(key, (lo, hi), old)], "")
            self._pending[key] = new
            if len(self._pending) >= self.batch_size:
                self.flush()

    def put(self, board: Board | Sequence[int], lo: int, hi: int) -> None:
        """Merge bounds ``lo <= margin <= hi`` into the position's entry (buffered)."""
        self.put_key(canonical_key(board), lo, hi)

    def flush(self) -> None:
        """Write the buffered bounds in one transaction. Entries that contradict the stored bounds
        are dropped (the rest is written) and reported by a :class:`StoreConflictError`."""
        with self._lock:
            if not self._pending:
                return
            conn = self._connection()
            rows = [(k, lo, hi, SOLVER_VERSION, entry_checksum(k, lo, hi, SOLVER_VERSION))
                    for k, (lo, hi) in self._pending.items()]
            conflicts = []
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.executemany(_UPSERT, rows)
                except sqlite3.IntegrityError:
                    # rare: find the rows that contradict, write the others
                    conn.execute("ROLLBACK")
                    conn.execute("BEGIN IMMEDIATE")
                    good = []
                    for key, lo, hi, solver, checksum in rows:
                        old = self._stored(conn, key)
                        if old is not None and max(lo, old[0]) > min(hi, old[1]):
                            conflicts.append((key, (lo, hi), old))
                        else:
                            good.append((key, lo, hi, solver, checksum))
                    conn.executemany(_UPSERT, good)
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise self._corrupt(e) from e
            self._pending.clear()
            self._last_read.clear()  # the rows written now differ from those read
            if conflicts:
                raise self._conflict(conflicts, ", written there by another writer since this one read them; "
                                                "these new bounds were not written, the rest were")

    def _conflict(self, conflicts: list, context: str) -> StoreConflictError:
        """The error for new bounds that contradict the stored ones: each key with both bounds (the
        first three), and what to do. Margins are exact, so two bounds that do not intersect mean a
        wrong solver result or a damaged entry: one of the two writers cannot be trusted."""
        detail = "; ".join(f"position {k!r}: new {tuple(new)}, held {tuple(old)}" for k, new, old in conflicts[:3])
        more = f" and {len(conflicts) - 3} more" if len(conflicts) > 3 else ""
        return StoreConflictError(
            f"position store {self.path!r}: new bounds (lo, hi) on the margin contradict those it holds{context} "
            f"({detail}{more}); the held bounds are kept. Both cannot be right: check the store with "
            f"'python -m highway_env.solver store verify --path {shlex.quote(self.path)}'; if it reports a mismatch, delete "
            "the file (a cache: the solver fills it again), else the new bounds are the wrong ones (report the "
            "position with the command that found them)")

    @staticmethod
    def _stored(conn, key: str):
        """Valid stored bounds of ``key`` or None (no row, or one to ignore)."""
        row = conn.execute(_SELECT + " WHERE key = ?", (key,)).fetchone()
        return None if row is None or entry_status(*row) != "ok" else tuple(row[1:3])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and os.getpid() == self._pid:
                try:
                    self.flush()
                finally:
                    self._close_conn()
            atexit.unregister(self._atexit)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"PositionStore({self.path!r})"


def open_store(store) -> PositionStore | None:
    """``PositionStore`` / path / True (default path) / None|False (no store) -> a store or None."""
    if store is None or store is False:
        return None
    if store is True:
        return PositionStore()
    if isinstance(store, PositionStore):
        return store
    return PositionStore(store)
