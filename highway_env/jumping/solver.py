"""Exact solvers for Jumping Farther & Farther.

* two-player: negamax on the score difference. ``value`` = player 1's score minus player 2's
  under optimal play by both (each maximising its own score minus the other's).
* solitaire: the maximum total score.

Both search the game tree depth first with a memo keyed on ``(occupancy, last square, last jump)``
(the side to move is the parity of the occupancy, so it is implied), taken at its smallest over
the 8 board symmetries (``_canon_key``): the game is invariant under them, so the 8 images of a
state share one entry (``bench/bench_jumping_solve.py``). The value stored is the *future* score
(difference) from that state: the score so far is not part of it. The memo is an open-addressing
hash table over reachable states only, grown by doubling inside the numba kernel. The first move
is restricted to one square per orbit of the symmetries.

Solitaire instead runs a bounded search by default (``_sol_rec``; ``exhaustive=True``: the plain
full-memo search). :func:`solve_reference`, in plain Python, cross-checks both in the tests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from highway_env.jumping.game import (MAX_N, check_n, initial_state, orbit_representatives, rays_array,
                                      symmetries, targets)

# A memo entry is ``key << 7 | (value + 64)``. The key (``_pack_key``) drops the last square's
# occupancy bit (always set), so key < 2^(cells - 1) * cells * n: for n = 7, 2^48 * 343 < 2^56.5,
# and the entry < 2^63.5 fits a uint64. A value is a score (difference) over the moves left, so
# |value| <= cells - 1 = 48 < 64 and value + 64 is in 1..127: no entry is 0 (empty).
_VALUE_BITS, _VALUE_OFFSET = np.uint64(7), 64
_VALUE_MASK = np.uint64((1 << 7) - 1)
_ABSENT = -128  # what _lookup returns for a key not in the table (no value is that low)
if not ((1 << (MAX_N**2 - 1)) * MAX_N**3 << 7 <= 1 << 64 and MAX_N**2 - 1 < _VALUE_OFFSET):
    raise AssertionError(f"Jumping memo entries cannot hold n = {MAX_N}: widen the uint64 packing")


@numba.njit(cache=True, inline="always")
def _hash(key, mask):
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(mask))


@numba.njit(cache=True)
def _lookup(table, key):
    """The value stored under ``key``, or _ABSENT."""
    mask = table.shape[0] - 1
    i = _hash(key, mask)
    ukey = np.uint64(key)
    while True:
        e = table[i]
        if e == np.uint64(0):
            return _ABSENT
        if (e >> _VALUE_BITS) == ukey:
            return np.int64(e & _VALUE_MASK) - _VALUE_OFFSET
        i = (i + 1) & mask


@numba.njit(cache=True)
def _store(table, key, v):
    """Insert ``key`` with ``v``, or keep the smaller of ``v`` and its value (the bounded search's
    upper bounds; the other callers store a key once). Returns 1 if a new entry was made."""
    mask = table.shape[0] - 1
    i = _hash(key, mask)
    ukey = np.uint64(key)
    entry = (ukey << _VALUE_BITS) | np.uint64(v + _VALUE_OFFSET)
    while True:
        e = table[i]
        if e == np.uint64(0):
            table[i] = entry
            return 1
        if (e >> _VALUE_BITS) == ukey:
            if v + _VALUE_OFFSET < np.int64(e & _VALUE_MASK):
                table[i] = entry
            return 0
        i = (i + 1) & mask


@numba.njit(cache=True, inline="always")
def _room(table):
    """How many entries the table takes before it is doubled: 3/4 of its slots, where linear
    probing still finds a key in a few probes (half full would double the peak memory)."""
    return table.shape[0] * 3 // 4


@numba.njit(cache=True)
def _grow(table):
    new = np.zeros(table.shape[0] * 2, dtype=np.uint64)
    for i in range(table.shape[0]):
        e = table[i]
        if e != np.uint64(0):
            _store(new, np.int64(e >> _VALUE_BITS), np.int64(e & _VALUE_MASK) - _VALUE_OFFSET)
    return new


def new_table(capacity: int) -> np.ndarray:
    """An empty memo table of at least ``capacity`` entries (a power of two, at least 16)."""
    return np.zeros(1 << max(4, int(capacity - 1).bit_length()), dtype=np.uint64)


@numba.njit(cache=True, inline="always")
def _pack_key(n, occ, last, jump):
    """The memo key of ``(occ, last, jump)``: ``occ`` without its bit ``last`` (always set), then the
    last square and the jump (< n): below 2^(n*n - 1) * n^3 (the bound above ``_VALUE_BITS``)."""
    low = occ & ((np.int64(1) << last) - 1)
    return ((((occ >> (last + 1)) << last) | low) * (n * n) + last) * n + jump


def _unpack(n: int, entry: int) -> tuple[int, int, int, int]:
    """(occ, last, jump, value) of a memo entry: the inverse of ``_store``'s packing."""
    key, value = divmod(int(entry), 1 << int(_VALUE_BITS))
    rest, jump = divmod(key, n)
    packed, last = divmod(rest, n * n)
    low = packed & ((1 << last) - 1)
    return ((packed >> last) << (last + 1)) | 1 << last | low, last, jump, value - _VALUE_OFFSET


def symmetry_tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """What ``_canon_key`` reads: ``tab[s, r, chunk]``, the occupancy image under symmetry ``s`` of
    row ``r``'s bits ``chunk``, and the square permutations (8, n*n)."""
    syms = symmetries(n)
    tab = np.zeros((8, n, 1 << n), dtype=np.int64)
    for s, perm in enumerate(syms):
        for r in range(n):
            for chunk in range(1 << n):
                tab[s, r, chunk] = sum(1 << perm[r * n + c] for c in range(n) if chunk >> c & 1)
    return tab, np.array(syms, dtype=np.int64)


@numba.njit(cache=True, inline="always")
def _canon_key(n, occ, last, jump, symtab, symperm):
    rmask = (np.int64(1) << n) - 1
    best = np.int64(-1)
    for s in range(8):
        o = np.int64(0)
        for r in range(n):
            o |= symtab[s, r, (occ >> (r * n)) & rmask]
        k = _pack_key(n, o, symperm[s, last], jump)
        if best < 0 or k < best:
            best = k
    return best


@numba.njit(cache=True, inline="always")
def _state_key(n, occ, last, jump, symtab, symperm, canonical):
    """The memo key of a state: its symmetry-canonical key, or the plain one."""
    if canonical:
        return _canon_key(n, occ, last, jump, symtab, symperm)
    return _pack_key(n, occ, last, jump)


@numba.njit(cache=True)
def _search(n, ray_sq, ray_len, roots, root_d, occ0, jump0, solitaire, table, max_states, stats, symtab, symperm,
            canonical, root_key=-1):
    """Depth-first search from the state ``(occ0, jump0)`` whose moves are ``roots`` with jump
    lengths ``root_d`` (the empty board: orbit representatives, lengths 0). Returns (value, best
    root index, table); every non-terminal state below the root is in the table, and the root too
    under ``root_key`` when one is given (the empty board has no key: it is never looked up).
    ``stats`` gets [states stored, nodes expanded, aborted]; ``stats[0]`` on entry counts the
    entries the table already holds (a table shared between searches), so it is grown in time.
    ``canonical``: key the memo on the symmetry-canonical state (``_canon_key``), so the 8 images
    of a state share one entry (a symmetry keeps the future score and score difference)."""
    cells = n * n
    depth = cells + 2
    occ_s = np.zeros(depth, dtype=np.int64)
    jump_s = np.zeros(depth, dtype=np.int64)
    key_s = np.zeros(depth, dtype=np.int64)
    best_s = np.zeros(depth, dtype=np.int64)
    gain_s = np.zeros(depth, dtype=np.int64)
    mv_n = np.zeros(depth, dtype=np.int64)
    mv_i = np.zeros(depth, dtype=np.int64)
    mv_t = np.zeros((depth, cells), dtype=np.int64)
    mv_d = np.zeros((depth, cells), dtype=np.int64)
    stored = stats[0]
    nodes = 1
    best_root = -1
    limit = _room(table)

    sp = 0
    occ_s[0] = occ0
    jump_s[0] = jump0
    mv_n[0] = roots.shape[0]
    for i in range(roots.shape[0]):
        mv_t[0, i] = roots[i]
        mv_d[0, i] = root_d[i]
    mv_i[0] = 0
    best_s[0] = -1000
    key_s[0] = root_key

    while True:
        if mv_i[sp] < mv_n[sp]:
            i = mv_i[sp]
            mv_i[sp] = i + 1
            t = mv_t[sp, i]
            d = mv_d[sp, i]
            gain_s[sp] = 1 if (jump_s[sp] > 0 and d > jump_s[sp]) else 0
            cocc = occ_s[sp] | (np.int64(1) << t)
            key = _state_key(n, cocc, t, d, symtab, symperm, canonical)
            got = _lookup(table, key)
            if got != _ABSENT:
                cv = got
            else:
                # generate the child's moves
                c = sp + 1
                k = 0
                for dd in range(8):
                    for s in range(ray_len[t, dd]):
                        q = ray_sq[t, dd, s]
                        if (cocc >> q) & 1 == 0:
                            mv_t[c, k] = q
                            mv_d[c, k] = s + 1
                            k += 1
                if k == 0:
                    cv = 0  # terminal: not stored
                else:
                    nodes += 1
                    sp = c
                    occ_s[sp] = cocc
                    jump_s[sp] = d
                    key_s[sp] = key
                    mv_n[sp] = k
                    mv_i[sp] = 0
                    best_s[sp] = -1000
                    continue
        else:
            v = best_s[sp]
            if key_s[sp] >= 0:  # every state but a root without a key
                if stored >= limit:
                    table = _grow(table)
                    limit = _room(table)
                _store(table, key_s[sp], v)
                stored += 1
            if sp == 0:
                stats[0] = stored
                stats[1] = nodes
                return v, best_root, table
            if max_states > 0 and stored >= max_states:
                stats[0] = stored
                stats[1] = nodes
                stats[2] = 1
                return 0, -1, table
            sp -= 1
            cv = v
        # combine the child's known value into the current node
        tot = gain_s[sp] + cv if solitaire else gain_s[sp] - cv
        if tot > best_s[sp]:
            best_s[sp] = tot
            if sp == 0:
                best_root = mv_i[sp] - 1


# ----------------------------------------------------------------------------- solitaire (bounded)
#
# Solitaire is solved by a fail-soft "can the future score reach >= need" search (MTD from above):
# ``need`` starts at a static upper bound of the root and drops to the best upper bound proved by
# the failed iteration, until an iteration succeeds. The memo stores *upper bounds* (proved by
# failures; valid for every later iteration) under the canonical key of the state: the minimum over
# the 8 board symmetries of ``(occupancy, last square)`` (the jump length is invariant). The static
# bound ``bound[e, j]`` is the most points ``e`` more jumps can make after a jump of length ``j``
# (lengths 1..n-1, a point per strict increase); at most ``e`` = number of empty squares moves remain.


def _static_bounds(n: int) -> np.ndarray:
    cells = n * n
    b = np.zeros((cells + 1, n), dtype=np.int64)
    for e in range(1, cells + 1):
        for j in range(n):
            b[e, j] = max([int(0 < j < d) + b[e - 1, d] for d in range(1, n)], default=0)
    return b


_FULL = -1000  # table full: unwind, grow, retry the iteration (the memo is kept)
_ABORT = -2000  # max_states reached


@numba.njit(cache=True)
def _sol_rec(n, occ, last, jump, key, need, empty, ray_sq, ray_len, bound, symtab, symperm, table, stats):
    """Future score >= need from the state with canonical key ``key``? Returns a value >= need
    (success) or an upper bound < need (failure), or _FULL / _ABORT. ``stats``: [states stored,
    nodes expanded, aborted, max_states, limit]."""
    if need <= 0:
        return 0
    stats[1] += 1
    ub = np.int64(-1)  # proved best over the children (fail-soft)
    for dd in range(8):
        for s in range(ray_len[last, dd]):
            q = ray_sq[last, dd, s]
            if (occ >> q) & 1:
                continue
            d = s + 1
            g = 1 if (jump > 0 and d > jump) else 0
            cneed = need - g
            cocc = occ | (np.int64(1) << q)
            cb = bound[empty - 1, d]
            if cb >= cneed and cneed > 0:
                ckey = _canon_key(n, cocc, q, d, symtab, symperm)
                got = _lookup(table, ckey)
                if got != _ABSENT and got < cb:
                    cb = got
                if cb >= cneed:
                    r = _sol_rec(n, cocc, q, d, ckey, cneed, empty - 1, ray_sq, ray_len, bound, symtab,
                                 symperm, table, stats)
                    if r <= _FULL:
                        return r
                    if r >= cneed:
                        return r + g
                    cb = r
            if cneed <= 0:
                return g  # the point of this move alone reaches need
            if g + cb > ub:
                ub = g + cb
    if ub < 0:
        ub = 0  # no move: terminal, future 0
    # failure: store the proved bound
    if stats[0] >= stats[4]:
        return _FULL
    stats[0] += _store(table, key, ub)
    if stats[3] > 0 and stats[0] >= stats[3]:
        stats[2] = 1
        return _ABORT
    return ub


class _Bounded:
    """The bounded solitaire search's tables and memo, shared by the iterations and the line."""

    def __init__(self, n: int, max_states: int = 0, max_table_bytes: int = 16 << 30):
        self.n = n
        self.ray_sq, self.ray_len = rays_array(n)
        self.bound = _static_bounds(n)
        self.symtab, self.symperm = symmetry_tables(n)
        self.table = new_table(1 << 16)
        self.stats = np.array([0, 0, 0, max_states, _room(self.table)], dtype=np.int64)
        self.max_table_bytes = max_table_bytes

    def reach(self, occ: int, last: int, jump: int, need: int, empty: int) -> int:
        """``_sol_rec`` from one state; a full memo table is doubled and the search retried."""
        occ, last = np.int64(occ), np.int64(last)
        key = _canon_key(self.n, occ, last, jump, self.symtab, self.symperm)
        while True:
            r = _sol_rec(self.n, occ, last, jump, key, need, empty, self.ray_sq, self.ray_len,
                         self.bound, self.symtab, self.symperm, self.table, self.stats)
            if r != _FULL:
                return r
            if self.table.nbytes * 2 > self.max_table_bytes:
                raise MemoryError(f"solitaire memo table would exceed {self.max_table_bytes} bytes "
                                  f"({int(self.stats[0])} states stored); raise max_table_bytes")
            self.table = _grow(self.table)
            self.stats[4] = _room(self.table)


def _solve_solitaire_bounded(search: _Bounded) -> tuple[int | None, int | None]:
    """(max score, best first square), or (None, None) when ``max_states`` was reached."""
    cells = search.n * search.n
    roots = orbit_representatives(search.n)
    # the first move scores nothing and its jump is 0: the root states are (1 << sq, sq, 0)
    need = int(max(search.bound[cells - 1, 0], 0))
    while True:
        ubs = []
        for sq in roots:
            r = search.reach(1 << sq, sq, 0, need, cells - 1)
            if r == _ABORT:
                return None, None
            if r >= need:
                return need, sq
            ubs.append(r)
        need = max(ubs)
        if need <= 0:  # every line ends at once (n <= 1) or no points possible
            return 0, roots[0]


@dataclass
class SolveResult:
    n: int
    solitaire: bool
    value: int | None  # None if aborted at max_states
    best_first_move: int | None  # a square (one of each symmetry orbit; its images are as good)
    states: int  # memo entries (non-terminal reachable states expanded)
    nodes: int
    seconds: float
    aborted: bool = False
    #: the value of each first square, one per symmetry orbit (the full search only; else None)
    first_move_values: dict[int, int] | None = None

    def to_dict(self) -> dict:
        n = self.n
        return {
            "value": self.value,
            "n": n,
            "mode": "solitaire" if self.solitaire else "two-player",
            "best_first_move": self.best_first_move,
            "best_first_move_rc": None if self.best_first_move is None else list(divmod(self.best_first_move, n)),
            "states": self.states,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 4),
            "aborted": self.aborted,
            "first_move_values": None if self.first_move_values is None else
            {str(sq): v for sq, v in self.first_move_values.items()},
        }


def full_search(n: int, solitaire: bool = False, max_states: int = 0, canonical: bool = True):
    """The plain full-memo search from the empty board: (value, best first square or None, memo
    table, stats [states stored, nodes expanded, aborted]). ``canonical``: the memo keyed on the
    symmetry-canonical state (up to 8x fewer entries); else on the state itself."""
    ray_sq, ray_len = rays_array(n)
    roots = np.array(orbit_representatives(n), dtype=np.int64)
    stats = np.zeros(3, dtype=np.int64)
    table = new_table(1 << 16)
    v, bi, table = _search(n, ray_sq, ray_len, roots, np.zeros_like(roots), 0, 0, bool(solitaire), table,
                           int(max_states), stats, *symmetry_tables(n), bool(canonical))
    return int(v), (None if bi < 0 else int(roots[bi])), table, stats


def solve(n: int = 4, solitaire: bool = False, max_states: int = 0, exhaustive: bool = False,
          max_table_bytes: int = 16 << 30) -> SolveResult:
    """Solve the game from the empty ``n x n`` board (see the module doc).

    Solitaire uses the bounded, symmetry-canonical search (``states`` = upper-bound memo entries)
    unless ``exhaustive`` (the plain full-memo search). ``max_table_bytes`` caps the bounded
    search's memo table (MemoryError beyond it)."""
    n = check_n(n)
    t0 = time.perf_counter()
    if solitaire and not exhaustive:
        search = _Bounded(n, int(max_states), max_table_bytes=max_table_bytes)
        v, best = _solve_solitaire_bounded(search)
        stats = search.stats
        firsts = None
    else:
        v, best, table, stats = full_search(n, solitaire, max_states)
        firsts = None if stats[2] else _first_move_values(n, solitaire, table)
    aborted = bool(stats[2])
    return SolveResult(n=n, solitaire=bool(solitaire), value=None if aborted else int(v),
                       best_first_move=None if aborted else best, states=int(stats[0]), nodes=int(stats[1]),
                       seconds=time.perf_counter() - t0, aborted=aborted, first_move_values=firsts)


def _first_move_values(n: int, solitaire: bool, table: np.ndarray) -> dict[int, int]:
    """{orbit representative: its value as first square}, read from a full search's memo (a state
    missing from the memo is terminal, future 0)."""
    symtab, symperm = symmetry_tables(n)

    def future(occ: int, last: int, jump: int) -> int:
        got = _lookup(table, _canon_key(n, occ, last, jump, symtab, symperm))
        return 0 if got == _ABSENT else int(got)

    values = move_values(initial_state(n), solitaire, future)
    return {sq: values[sq] for sq in orbit_representatives(n)}


def solitaire_line(n: int, max_table_bytes: int = 16 << 30) -> tuple[int, list[int]]:
    """(max solitaire score, a sequence of squares that scores it), by the bounded search; the line
    reuses its memo (the upper bounds stay valid), each move the first that keeps the score reachable."""
    n = check_n(n)
    search = _Bounded(n, max_table_bytes=max_table_bytes)
    value, first = _solve_solitaire_bounded(search)
    line, occ, last, jump, need = [first], 1 << first, first, 0, value
    while True:
        for q, d in targets(n, occ, last):
            g = int(0 < jump < d)
            if search.reach(occ | 1 << q, q, d, need - g, n * n - len(line) - 1) + g >= need:
                line.append(q)
                occ, last, jump, need = occ | 1 << q, q, d, need - g
                break
        else:
            return value, line


def _future_value(n: int, solitaire: bool, memo: dict):
    """value(occ, last, jump): the mover's exact future score (solitaire) or score difference from a
    state, memoised in ``memo`` (pure Python, all moves, no symmetry)."""

    def value(occ: int, last: int, jump: int) -> int:
        key = (occ, last, jump)
        if key not in memo:
            memo[key] = max(_values(targets(n, occ, last), occ, jump, solitaire, value).values(), default=0)
        return memo[key]

    return value


def solve_reference(n: int, solitaire: bool = False) -> tuple[int, dict]:
    """Pure-Python memoised solver (all first moves, no symmetry): (value, memo)."""
    memo: dict[tuple[int, int, int], int] = {}
    first = move_values(initial_state(n), solitaire, _future_value(check_n(n), solitaire, memo))
    return max(first.values()), memo


def move_values(state, solitaire: bool = False, future=None) -> dict[int, int]:
    """Exact value of each legal move from a ``game.State``: for the mover, points now plus the
    future (solitaire), or own minus opponent's future (two-player). ``future(occ, last, jump)``
    gives the future values (default: pure Python, small boards)."""
    value = future or _future_value(state.n, solitaire, {})
    return _values(state.legal_moves(), state.occ, state.jump, solitaire, value)


def _values(moves, occ: int, jump: int, solitaire: bool, future) -> dict[int, int]:
    """{square: the move's points plus (solitaire) or minus (two-player) ``future`` after it}."""
    out = {}
    for sq, d in moves:
        gain, c = int(0 < jump < d), future(occ | 1 << sq, sq, d)
        out[sq] = gain + c if solitaire else gain - c
    return out
