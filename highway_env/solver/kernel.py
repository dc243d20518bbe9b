"""The solver's compiled hot core (numba): alpha-beta on the final margin with sound bounds.

The value searched is the margin minB - minA of the full board, A maximising, B minimising.
``run_search(ctx, board, alpha, beta)`` searches one window with ``_search``, fail-soft alpha-beta;
a null window (t - 1, t) answers "can A force margin >= t?", which is how win/draw/loss is decided
cheaply (:class:`~highway_env.solver.solver.Solver` chooses the windows).

What makes it fast (each measured on this game):
- static bounds at every node: a path ends between placed + k smallest and placed + k largest unused
  numbers; the pair bound compares each A-path with each B-path where shared cells cancel, using
  margin = min_p max_q (B_p - A_q) = max_q min_p (B_p - A_q);
- move ordering by the child's static bounds (make each move, score it, try the best first): A by
  the margin the child guarantees, B by what A's best case allows;
- enhanced transposition cut-offs: before searching, every child is looked up in the table;
- fewer moves: cells that no longer lie on any live path (a path that can still be its side's
  cheapest) are all equivalent, so only one of them is tried;
- a transposition table keyed on the position made canonical under the four symmetries, storing lower
  and upper bounds so every window reuses it;
- per-path sums and empty counts kept incrementally.

Everything lives in flat arrays created by ``new_context`` so the recursion never allocates.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode

from highway_env.core import SYMMETRIES
from highway_env.highway.batch_rules import PATHS  # (40, 7): 0..19 A-paths, 20..39 B-paths

INF = 1000
TT_MIN_EMPTY = 4  # positions with fewer empty cells are cheaper to search than to look up
ETC_MIN_EMPTY = 7  # below this, probing every child costs more than the cut-offs it finds
ABORT_CHECK_MASK = 4095  # look at the clock every 4096 nodes (the node limit: at each)


@njit(cache=True)
def _now_us():
    """Monotonic microseconds; objmode (not a ctypes call) keeps the kernel cacheable."""
    with objmode(t="int64"):
        t = int(time.monotonic() * 1e6)
    return t

# ----------------------------------------------------------------------------- constant tables

PATH_MASK = np.array([sum(1 << int(c) for c in p) for p in PATHS], dtype=np.int64)
CELL_NPATHS = np.zeros(16, dtype=np.int64)
CELL_PATHS = np.zeros((16, 40), dtype=np.int64)
for _p, _cells in enumerate(PATHS):
    for _c in _cells:
        CELL_PATHS[_c, CELL_NPATHS[_c]] = _p
        CELL_NPATHS[_c] += 1
SHARED = np.array([[PATH_MASK[q] & PATH_MASK[20 + p] for p in range(20)] for q in range(20)], dtype=np.int64)
# Inverse permutations, so that transformed[j] = cells[SYM_INV[s, j]].
SYM_INV = np.array([[list(perm).index(j) for j in range(16)] for perm in SYMMETRIES.values()], dtype=np.int64)

# stats array slots
S_NODES, S_ABORTED, S_NODE_LIMIT, S_DEADLINE, S_ETC_CUTS = range(5)


def new_context(tt_bits: int = 22):
    """Work arrays for one search thread. The transposition table has 2**tt_bits two-slot buckets."""
    size = 1 << tt_bits
    return {
        "cells": np.zeros(16, np.int64),
        "sums": np.zeros(40, np.int64),
        "emp": np.zeros(40, np.int64),
        "mv_num": np.zeros((17, 256), np.int64),
        "mv_cell": np.zeros((17, 256), np.int64),
        "mv_key": np.zeros((17, 256), np.int64),
        "pref": np.zeros((17, 4, 17), np.int64),  # per depth: prefix sums of unused numbers
        "tt_k1": np.zeros(2 * size, np.uint64),
        "tt_k2": np.zeros(2 * size, np.uint64),
        "tt_lo": np.zeros(2 * size, np.int16),
        "tt_hi": np.zeros(2 * size, np.int16),
        "tt_empty": np.full(2 * size, -1, np.int8),  # -1 = free slot; else empty cells of the entry
        "stats": np.zeros(8, np.int64),
    }


# ----------------------------------------------------------------------------- small pieces

@njit(cache=True, inline="always")
def _prefix_tables(unused, small, large):
    """small[k] / large[k] = sum of the k smallest / largest unused numbers (bit n-1 = number n)."""
    small[0] = 0
    k = 0
    for n in range(1, 17):
        if (unused >> (n - 1)) & 1:
            k += 1
            small[k] = small[k - 1] + n
    for j in range(k + 1):  # the j largest: all of them but the k - j smallest
        large[j] = small[k] - small[k - j]


@njit(cache=True, inline="always")
def _side_minima(sums, emp, first, last, bit, number, small, large):
    """Over paths first..last-1: (least lo, least hi) of their final sums, with ``number`` placed in
    the cell ``bit`` (bit 0: nothing placed)."""
    min_lo = INF
    min_hi = INF
    for p in range(first, last):
        s = sums[p]
        e = emp[p]
        if PATH_MASK[p] & bit:
            s += number
            e -= 1
        lo = s + small[e]
        hi = s + large[e]
        if lo < min_lo:
            min_lo = lo
        if hi < min_hi:
            min_hi = hi
    return min_lo, min_hi


@njit(cache=True)
def _simple_bounds(sums, emp, small, large):
    """(lo, hi) of the final margin from per-path ranges."""
    min_lo_a, min_hi_a = _side_minima(sums, emp, 0, 20, 0, 0, small, large)
    min_lo_b, min_hi_b = _side_minima(sums, emp, 20, 40, 0, 0, small, large)
    return min_lo_b - min_hi_a, min_hi_b - min_lo_a


@njit(cache=True)
def _pair_upper(sums, emp, empty_mask, small, large, cap):
    """min over B-paths p of max over A-paths q of the largest B_p - A_q can still be; stops early
    once it cannot go below ``cap`` (the caller's current upper bound)."""
    hi = cap
    for p in range(20):
        sb = sums[20 + p]
        eb = emp[20 + p]
        mx = -INF
        for q in range(20):
            s = _popcount16(empty_mask & SHARED[q, p])
            ub = sb - sums[q] + large[eb - s] - small[emp[q] - s]
            if ub > mx:
                mx = ub
                if mx >= hi:
                    break
        if mx < hi:
            hi = mx
    return hi


@njit(cache=True)
def _pair_lower(sums, emp, empty_mask, small, large, floor):
    """max over A-paths q of min over B-paths p of the smallest B_p - A_q can still be."""
    lo = floor
    for q in range(20):
        sa = sums[q]
        ea = emp[q]
        mn = INF
        for p in range(20):
            s = _popcount16(empty_mask & SHARED[q, p])
            lb = sums[20 + p] - sa + small[emp[20 + p] - s] - large[ea - s]
            if lb < mn:
                mn = lb
                if mn <= lo:
                    break
        if mn > lo:
            lo = mn
    return lo


@njit(cache=True, inline="always")
def _popcount16(x):
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x + (x >> 8)) & 0x1F


@njit(cache=True, inline="always")
def _place(cells, sums, emp, number, cell):
    cells[cell] = number
    for i in range(CELL_NPATHS[cell]):
        p = CELL_PATHS[cell, i]
        sums[p] += number
        emp[p] -= 1


@njit(cache=True, inline="always")
def _unplace(cells, sums, emp, number, cell):
    cells[cell] = 0
    for i in range(CELL_NPATHS[cell]):
        p = CELL_PATHS[cell, i]
        sums[p] -= number
        emp[p] += 1


@njit(cache=True)
def _final_margin(sums):
    min_a = INF
    for q in range(20):
        if sums[q] < min_a:
            min_a = sums[q]
    min_b = INF
    for p in range(20, 40):
        if sums[p] < min_b:
            min_b = sums[p]
    return min_b - min_a


@njit(cache=True)
def canonical_key(cells):
    """(k1, k2): the position's key, least over the four symmetries. 5 bits a cell."""
    best1 = np.uint64(0xFFFFFFFFFFFFFFFF)
    best2 = np.uint64(0xFFFFFFFFFFFFFFFF)
    for s in range(4):  # the image's cells read in place (no scratch array: no allocation per call)
        k1 = np.uint64(0)
        for j in range(12):
            k1 = (k1 << np.uint64(5)) | np.uint64(cells[SYM_INV[s, j]])
        k2 = np.uint64(0)
        for j in range(12, 16):
            k2 = (k2 << np.uint64(5)) | np.uint64(cells[SYM_INV[s, j]])
        if k1 < best1 or (k1 == best1 and k2 < best2):
            best1 = k1
            best2 = k2
    return best1, best2


@njit(cache=True, inline="always")
def _bucket(k1, k2, nbuckets):
    h = (k1 * np.uint64(0x9E3779B97F4A7C15)) ^ (k2 * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(29)
    return 2 * np.int64(h & np.uint64(nbuckets - 1))


@njit(cache=True)
def _tt_probe(tt_k1, tt_k2, tt_empty, k1, k2):
    """Slot index of the key, or -1."""
    base = _bucket(k1, k2, tt_k1.shape[0] // 2)
    for i in range(base, base + 2):
        if tt_empty[i] >= 0 and tt_k1[i] == k1 and tt_k2[i] == k2:
            return i
    return -1


@njit(cache=True)
def _tt_store(tt_k1, tt_k2, tt_lo, tt_hi, tt_empty, k1, k2, n_empty, lo, hi):
    """Store bounds lo <= value <= hi; slot 0 of a bucket keeps the bigger subtree, slot 1 the newest."""
    base = _bucket(k1, k2, tt_k1.shape[0] // 2)
    for i in range(base, base + 2):
        if tt_empty[i] >= 0 and tt_k1[i] == k1 and tt_k2[i] == k2:
            if lo > tt_lo[i]:
                tt_lo[i] = lo
            if hi < tt_hi[i]:
                tt_hi[i] = hi
            return
    i = base if n_empty >= tt_empty[base] else base + 1
    if i == base and tt_empty[base] >= 0:
        # the displaced deep entry moves to the always-replace slot
        tt_k1[base + 1] = tt_k1[base]
        tt_k2[base + 1] = tt_k2[base]
        tt_lo[base + 1] = tt_lo[base]
        tt_hi[base + 1] = tt_hi[base]
        tt_empty[base + 1] = tt_empty[base]
    tt_k1[i] = k1
    tt_k2[i] = k2
    tt_lo[i] = lo
    tt_hi[i] = hi
    tt_empty[i] = n_empty


# ----------------------------------------------------------------------------- the search

@njit(cache=True, inline="always")
def _low_bits(mask):
    """The indices of the three lowest set bits of a 16-bit ``mask`` (-1 for each one it lacks)."""
    b0 = b1 = b2 = -1
    for i in range(16):
        if (mask >> i) & 1:
            if b0 < 0:
                b0 = i
            elif b1 < 0:
                b1 = i
            elif b2 < 0:
                b2 = i
    return b0, b1, b2


@njit(cache=True)
def _two_empty(unused, empty_mask, cells, sums, emp):
    """Exact margin with two empty cells, A to move: x and y into c1 and c2, two possible boards."""
    x, y, _ = _low_bits(unused)
    c1, c2, _ = _low_bits(empty_mask)
    v1, v2 = _both_fillings(cells, sums, emp, x + 1, y + 1, c1, c2)
    return max(v1, v2)


@njit(cache=True, inline="always")
def _both_fillings(cells, sums, emp, x, y, c1, c2):
    """The margins of the two ways to put the last numbers x and y into cells c1 and c2:
    (x@c1 y@c2, y@c1 x@c2)."""
    _place(cells, sums, emp, x, c1)
    _place(cells, sums, emp, y, c2)
    v1 = _final_margin(sums)
    _unplace(cells, sums, emp, y, c2)
    _unplace(cells, sums, emp, x, c1)
    _place(cells, sums, emp, y, c1)
    _place(cells, sums, emp, x, c2)
    v2 = _final_margin(sums)
    _unplace(cells, sums, emp, x, c2)
    _unplace(cells, sums, emp, y, c1)
    return v1, v2


@njit(cache=True, inline="always")
def _fill_rest(cells, sums, emp, first, second, third, c0, c1, c2):
    """Margins with ``first`` in c0 and the other two in (c1, c2) both ways: (second@c1 third@c2,
    third@c1 second@c2)."""
    _place(cells, sums, emp, first, c0)
    v1, v2 = _both_fillings(cells, sums, emp, second, third, c1, c2)
    _unplace(cells, sums, emp, first, c0)
    return v1, v2


@njit(cache=True)
def _three_empty(unused, empty_mask, cells, sums, emp):
    """Exact margin with three empty cells, B to move: the six ways to fill them, B choosing one
    number and cell, A then choosing between the two ways left. Scalars only: this runs at a large
    share of all nodes, and small arrays here cost a heap allocation each."""
    n0, n1, n2 = _low_bits(unused)
    n0, n1, n2 = n0 + 1, n1 + 1, n2 + 1
    c0, c1, c2 = _low_bits(empty_mask)
    # fIJL: margin with nI@c0, nJ@c1, nL@c2
    f012, f021 = _fill_rest(cells, sums, emp, n0, n1, n2, c0, c1, c2)
    f102, f120 = _fill_rest(cells, sums, emp, n1, n0, n2, c0, c1, c2)
    f201, f210 = _fill_rest(cells, sums, emp, n2, n0, n1, c0, c1, c2)
    # B puts one number in c0, c1 or c2; A then picks the better of the two fillings left
    b0 = min(max(f012, f021), max(f102, f201), max(f120, f210))  # B plays n0
    b1 = min(max(f102, f120), max(f012, f210), max(f021, f201))  # B plays n1
    b2 = min(max(f201, f210), max(f021, f120), max(f012, f102))  # B plays n2
    return min(b0, b1, b2)


@njit(cache=True)
def _search(alpha, beta, n_empty, unused, empty_mask, cells, sums, emp,
            mv_num, mv_cell, mv_key, pref, tt_k1, tt_k2, tt_lo, tt_hi, tt_empty, stats, use_pair, use_tt):
    """Fail-soft alpha-beta on the margin. Returns v with: v <= alpha => value <= v;
    v >= beta => value >= v; otherwise value == v. Sets stats[S_ABORTED] and returns 0 on a limit."""
    stats[S_NODES] += 1
    if n_empty <= 3:
        if n_empty == 3:
            return _three_empty(unused, empty_mask, cells, sums, emp)
        if n_empty == 2:
            return _two_empty(unused, empty_mask, cells, sums, emp)
        if n_empty == 0:
            return _final_margin(sums)
        # one number, one cell: the game is decided
        number = _low_bits(unused)[0] + 1
        cell = _low_bits(empty_mask)[0]
        _place(cells, sums, emp, number, cell)
        v = _final_margin(sums)
        _unplace(cells, sums, emp, number, cell)
        return v
    if stats[S_NODES] >= stats[S_NODE_LIMIT]:
        stats[S_ABORTED] = 1
    elif (stats[S_NODES] & ABORT_CHECK_MASK) == 0 or n_empty >= 10:  # high nodes are slow: check each
        if stats[S_DEADLINE] > 0 and _now_us() >= stats[S_DEADLINE]:
            stats[S_ABORTED] = 1
    if stats[S_ABORTED]:
        return 0

    depth = n_empty
    small = pref[depth, 0]
    large = pref[depth, 1]
    _prefix_tables(unused, small, large)
    lo, hi = _simple_bounds(sums, emp, small, large)
    if lo >= beta:
        return lo
    if hi <= alpha or lo == hi:
        return hi
    if use_pair:
        # Pure cut-off tests: each row stops as soon as it cannot bring a cut-off, which makes them
        # cheap; a result beyond the window is only a cap, not a bound, so it is not kept.
        cut = _pair_upper(sums, emp, empty_mask, small, large, min(hi, alpha + 1))
        if cut <= alpha:
            return cut
        cut = _pair_lower(sums, emp, empty_mask, small, large, max(lo, beta - 1))
        if cut >= beta:
            return cut

    k1 = np.uint64(0)
    k2 = np.uint64(0)
    with_tt = use_tt and n_empty >= TT_MIN_EMPTY
    if with_tt:
        k1, k2 = canonical_key(cells)
        slot = _tt_probe(tt_k1, tt_k2, tt_empty, k1, k2)
        if slot >= 0:
            if tt_lo[slot] > lo:
                lo = tt_lo[slot]
            if tt_hi[slot] < hi:
                hi = tt_hi[slot]
            if lo >= beta or lo == hi:
                return lo
            if hi <= alpha:
                return hi

    a_to_move = (n_empty & 1) == 0
    nmoves, best = _generate_moves(a_to_move, unused, empty_mask, sums, emp, small, large,
                                   pref[depth, 2], pref[depth, 3], mv_num[depth], mv_cell[depth],
                                   mv_key[depth], alpha, beta, True)
    decided = best >= beta if a_to_move else best <= alpha
    if with_tt and not decided and n_empty > ETC_MIN_EMPTY:
        best, decided = _etc(a_to_move, alpha, beta, best, nmoves, mv_num[depth], mv_cell[depth], cells,
                             tt_k1, tt_k2, tt_lo, tt_hi, tt_empty, stats)
    for i in range(nmoves):
        if decided:
            break
        # lazy selection sort: cut-offs usually come early
        bi = i
        for j in range(i + 1, nmoves):
            if mv_key[depth, j] > mv_key[depth, bi]:
                bi = j
        if bi != i:
            x = mv_key[depth, i]; mv_key[depth, i] = mv_key[depth, bi]; mv_key[depth, bi] = x
            x = mv_num[depth, i]; mv_num[depth, i] = mv_num[depth, bi]; mv_num[depth, bi] = x
            x = mv_cell[depth, i]; mv_cell[depth, i] = mv_cell[depth, bi]; mv_cell[depth, bi] = x
        number = mv_num[depth, i]
        cell = mv_cell[depth, i]
        _place(cells, sums, emp, number, cell)
        child_alpha = max(alpha, best) if a_to_move else alpha
        child_beta = beta if a_to_move else min(beta, best)
        v = _search(child_alpha, child_beta, n_empty - 1, unused & ~(1 << (number - 1)),
                    empty_mask & ~(1 << cell), cells, sums, emp, mv_num, mv_cell, mv_key, pref,
                    tt_k1, tt_k2, tt_lo, tt_hi, tt_empty, stats, use_pair, use_tt)
        _unplace(cells, sums, emp, number, cell)
        if stats[S_ABORTED]:
            return 0
        if a_to_move:
            if v > best:
                best = v
                decided = best >= beta or best >= hi
        else:
            if v < best:
                best = v
                decided = best <= alpha or best <= lo
    # the static bounds hold whatever the window: clamp into them
    best = min(max(best, lo), hi)
    if with_tt:  # a fail-low result is an upper bound, a fail-high one a lower bound
        _tt_store(tt_k1, tt_k2, tt_lo, tt_hi, tt_empty, k1, k2, n_empty,
                  best if best > alpha else lo, best if best < beta else hi)
    return best


@njit(cache=True)
def _etc(a_to_move, alpha, beta, best, nmoves, mv_num, mv_cell, cells, tt_k1, tt_k2, tt_lo, tt_hi, tt_empty,
         stats):
    """Enhanced transposition cut-off: a child the table already settles against the window decides
    the node with no search. Children are reached by many move orders (a position does not record
    who placed which number), so a sibling's subtree has often proven one. Returns (best, decided)."""
    for i in range(nmoves):
        cells[mv_cell[i]] = mv_num[i]
        k1, k2 = canonical_key(cells)
        cells[mv_cell[i]] = 0
        slot = _tt_probe(tt_k1, tt_k2, tt_empty, k1, k2)
        if slot < 0:
            continue
        if a_to_move and tt_lo[slot] >= beta:
            stats[S_ETC_CUTS] += 1
            return max(best, np.int64(tt_lo[slot])), True
        if not a_to_move and tt_hi[slot] <= alpha:
            stats[S_ETC_CUTS] += 1
            return min(best, np.int64(tt_hi[slot])), True
    return best, False


@njit(cache=True)
def _generate_moves(a_to_move, unused, empty_mask, sums, emp, small, large, small2, large2,
                    out_num, out_cell, out_key, alpha, beta, prune):
    """Fill the move buffers with (number, cell, ordering key); return (count, best).

    Key: from the child's static bounds, larger is better for the side to move.
    With ``prune``:
    - empty cells off every live path are all equivalent and only one is kept;
    - a child whose static bounds already settle it against the window is not listed: its bound
      goes into ``best`` instead (for A a child with hi <= alpha cannot help, one with lo >= beta
      is a cut-off at once; the mirror for B). ``best`` starts at -INF for A, +INF for B.
    """
    # live paths: those that can still be their side's cheapest
    _, min_hi_a = _side_minima(sums, emp, 0, 20, 0, 0, small, large)
    _, min_hi_b = _side_minima(sums, emp, 20, 40, 0, 0, small, large)
    live = 0
    for q in range(20):
        if sums[q] + small[emp[q]] <= min_hi_a:
            live |= PATH_MASK[q]
    for p in range(20, 40):
        if sums[p] + small[emp[p]] <= min_hi_b:
            live |= PATH_MASK[p]

    cand = empty_mask
    dead = cand & ~live
    if prune and dead != 0:
        keep = dead & (-dead)  # one dead cell stands for all of them
        cand &= ~(dead ^ keep)

    best = -INF if a_to_move else INF
    count = 0
    for n in range(1, 17):
        if not (unused >> (n - 1)) & 1:
            continue
        _prefix_tables(unused & ~(1 << (n - 1)), small2, large2)
        for c in range(16):
            if not (cand >> c) & 1:
                continue
            bit = 1 << c
            lo_a, hi_a = _side_minima(sums, emp, 0, 20, bit, n, small2, large2)
            lo_b, hi_b = _side_minima(sums, emp, 20, 40, bit, n, small2, large2)
            child_lo = lo_b - hi_a
            child_hi = hi_b - lo_a
            if prune:
                if a_to_move:
                    if child_lo >= beta:
                        return 0, child_lo
                    if child_hi <= alpha:
                        if child_hi > best:
                            best = child_hi
                        continue
                else:
                    if child_hi <= alpha:
                        return 0, child_hi
                    if child_lo >= beta:
                        if child_lo < best:
                            best = child_lo
                        continue
            # A tries first the child with the best guaranteed margin (its static lo, then hi):
            # the safest move leaves B the fewest replies that are not settled at once. B by
            # lo + 2 hi, looking first at what A's best case allows. Measured on the proof's
            # sub-problems: A by lo then hi takes 5-20x fewer nodes than by lo + hi.
            if a_to_move:
                key = 256 * child_lo + child_hi
            else:
                key = -(child_lo + 2 * child_hi)
            out_num[count] = n
            out_cell[count] = c
            out_key[count] = key
            count += 1
    return count, best


@njit(cache=True)
def _load(board, cells, sums, emp):
    """Set the incremental state from a board (int array of 16, 0 = empty)."""
    unused = (1 << 16) - 1
    empty_mask = 0
    n_empty = 0
    cells[:] = 0
    sums[:] = 0
    emp[:] = 7
    for c in range(16):
        v = board[c]
        if v == 0:
            empty_mask |= 1 << c
            n_empty += 1
        else:
            unused &= ~(1 << (v - 1))
            _place(cells, sums, emp, v, c)
    return n_empty, unused, empty_mask


@njit(cache=True)
def _fresh(board):
    """A new incremental state of a board: (cells, sums, emp, n_empty, unused, empty_mask)."""
    cells = np.zeros(16, np.int64)
    sums = np.zeros(40, np.int64)
    emp = np.zeros(40, np.int64)
    n_empty, unused, empty_mask = _load(board, cells, sums, emp)
    return cells, sums, emp, n_empty, unused, empty_mask


@njit(cache=True)
def search_board(board, alpha, beta, cells, sums, emp, mv_num, mv_cell, mv_key, pref,
                 tt_k1, tt_k2, tt_lo, tt_hi, tt_empty, stats, use_pair, use_tt):
    n_empty, unused, empty_mask = _load(board, cells, sums, emp)
    return _search(alpha, beta, n_empty, unused, empty_mask, cells, sums, emp, mv_num, mv_cell, mv_key, pref,
                   tt_k1, tt_k2, tt_lo, tt_hi, tt_empty, stats, use_pair, use_tt)


def run_search(ctx, board, alpha, beta, node_limit=0, seconds=0.0, use_pair=True, use_tt=True):
    """Search one window on a board (sequence of 16 ints). Returns (value, aborted, nodes).

    ``node_limit`` / ``seconds`` of 0 mean no limit; an aborted search returns value None.
    """
    stats = ctx["stats"]
    stats[:] = 0
    stats[S_NODE_LIMIT] = node_limit if node_limit > 0 else np.iinfo(np.int64).max
    stats[S_DEADLINE] = int(time.monotonic() * 1e6) + int(seconds * 1e6) if seconds > 0 else 0
    b = np.asarray(board, dtype=np.int64)
    v = search_board(b, alpha, beta, ctx["cells"], ctx["sums"], ctx["emp"], ctx["mv_num"], ctx["mv_cell"],
                     ctx["mv_key"], ctx["pref"], ctx["tt_k1"], ctx["tt_k2"], ctx["tt_lo"], ctx["tt_hi"], ctx["tt_empty"],
                     stats, use_pair, use_tt)
    aborted = bool(stats[S_ABORTED])
    return (None if aborted else int(v)), aborted, int(stats[S_NODES])


def clear_tt(ctx):
    ctx["tt_empty"][:] = -1


# ----------------------------------------------------------------------------- plain alpha-beta

@njit(cache=True)
def _plain(alpha, beta, n_empty, unused, empty_mask, cells, sums, emp, stats):
    """Textbook alpha-beta, no bounds, ordering or table: the baseline the benchmark compares with."""
    stats[S_NODES] += 1
    if n_empty == 0:
        return _final_margin(sums)
    a_to_move = (n_empty & 1) == 0
    best = -INF if a_to_move else INF
    for n in range(1, 17):
        if not (unused >> (n - 1)) & 1:
            continue
        for c in range(16):
            if not (empty_mask >> c) & 1:
                continue
            lo = max(alpha, best) if a_to_move else alpha
            hi = beta if a_to_move else min(beta, best)
            _place(cells, sums, emp, n, c)
            v = _plain(lo, hi, n_empty - 1, unused & ~(1 << (n - 1)), empty_mask & ~(1 << c),
                       cells, sums, emp, stats)
            _unplace(cells, sums, emp, n, c)
            best = max(best, v) if a_to_move else min(best, v)
            if best >= beta if a_to_move else best <= alpha:
                return best
    return best


@njit(cache=True)
def plain_alphabeta(board, alpha, beta, stats):
    cells, sums, emp, n_empty, unused, empty_mask = _fresh(board)
    return _plain(alpha, beta, n_empty, unused, empty_mask, cells, sums, emp, stats)


# Kept apart from _plain on purpose: the tests' brute force must share no pruning code with any
# search (and one recursive kernel compiled for both uses broke numba's on-disk cache).
@njit(cache=True)
def _minimax(n_empty, unused, empty_mask, cells, sums, emp):
    if n_empty == 0:
        return _final_margin(sums)
    a_to_move = (n_empty & 1) == 0
    best = -INF if a_to_move else INF
    for n in range(1, 17):
        if not (unused >> (n - 1)) & 1:
            continue
        for c in range(16):
            if not (empty_mask >> c) & 1:
                continue
            _place(cells, sums, emp, n, c)
            v = _minimax(n_empty - 1, unused & ~(1 << (n - 1)), empty_mask & ~(1 << c), cells, sums, emp)
            _unplace(cells, sums, emp, n, c)
            best = max(best, v) if a_to_move else min(best, v)
    return best


@njit(cache=True)
def brute_force_margin(board):
    """Full minimax with no pruning at all: the independent check for small positions."""
    cells, sums, emp, n_empty, unused, empty_mask = _fresh(board)
    return _minimax(n_empty, unused, empty_mask, cells, sums, emp)


@njit(cache=True)
def ordered_moves(board, to_move_is_a):
    """Every legal move of the board, best first for the side to move by the child's static bounds
    (the search's own ordering, without its pruning). Returns (numbers, cells)."""
    cells, sums, emp, n_empty, unused, empty_mask = _fresh(board)
    small = np.empty(17, np.int64)
    large = np.empty(17, np.int64)
    _prefix_tables(unused, small, large)
    nums = np.zeros(256, np.int64)
    cels = np.zeros(256, np.int64)
    keys = np.zeros(256, np.int64)
    count, _ = _generate_moves(to_move_is_a, unused, empty_mask, sums, emp, small, large,
                               np.empty(17, np.int64), np.empty(17, np.int64), nums, cels, keys, -INF, INF, False)
    order = np.argsort(-keys[:count], kind="mergesort")
    return nums[:count][order], cels[:count][order]
