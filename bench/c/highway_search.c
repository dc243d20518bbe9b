/* A line-by-line C port of highway_env/solver/kernel.py's _search, for bench/bench_numba_vs_c.py.
 *
 * Same algorithm as the numba kernel: fail-soft alpha-beta on the final margin minB - minA; per-path
 * static bounds; the pair bound as a pure cut-off test; move generation with dead-cell pruning,
 * static-bound pruning and the same ordering keys (A: 256 lo + hi, B: -(lo + 2 hi)) tried by lazy
 * selection sort; enhanced transposition cut-offs above ETC_MIN_EMPTY; exact leaves at 0..3 empty cells; a transposition table of 2**tt_bits two-slot
 * buckets (struct of arrays, as in numba) keyed on the canonical position under the four symmetries,
 * the same bucket hash and the same replacement (slot 0 keeps the bigger subtree, slot 1 the newest).
 * The node-limit check is kept (with no limit) so both do the same work per node. Integers are
 * int64_t like the numba arrays; build with -DHW_NARROW to use int32_t instead.
 *
 *     gcc -O3 -march=native -shared -fPIC highway_search.c -o highway_search.so
 *
 * Not part of the package: it exists only to measure numba against C on the same algorithm.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef HW_NARROW
typedef int32_t I;
#else
typedef int64_t I;
#endif

#define INF 1000
#define TT_MIN_EMPTY 4
#define ETC_MIN_EMPTY 7
#define ABORT_CHECK_MASK 4095

/* kernel.PATHS: rows 0..19 A-paths, 20..39 B-paths (checked against numba by the benchmark). */
static const int PATHS[40][7] = {
    {0,1,2,3,7,11,15}, {0,1,2,6,7,11,15}, {0,1,2,6,10,11,15}, {0,1,2,6,10,14,15},
    {0,1,5,6,7,11,15}, {0,1,5,6,10,11,15}, {0,1,5,6,10,14,15}, {0,1,5,9,10,11,15},
    {0,1,5,9,10,14,15}, {0,1,5,9,13,14,15}, {0,4,5,6,7,11,15}, {0,4,5,6,10,11,15},
    {0,4,5,6,10,14,15}, {0,4,5,9,10,11,15}, {0,4,5,9,10,14,15}, {0,4,5,9,13,14,15},
    {0,4,8,9,10,11,15}, {0,4,8,9,10,14,15}, {0,4,8,9,13,14,15}, {0,4,8,12,13,14,15},
    {12,8,4,0,1,2,3}, {12,8,4,5,1,2,3}, {12,8,4,5,6,2,3}, {12,8,4,5,6,7,3},
    {12,8,9,5,1,2,3}, {12,8,9,5,6,2,3}, {12,8,9,5,6,7,3}, {12,8,9,10,6,2,3},
    {12,8,9,10,6,7,3}, {12,8,9,10,11,7,3}, {12,13,9,5,1,2,3}, {12,13,9,5,6,2,3},
    {12,13,9,5,6,7,3}, {12,13,9,10,6,2,3}, {12,13,9,10,6,7,3}, {12,13,9,10,11,7,3},
    {12,13,14,10,6,2,3}, {12,13,14,10,6,7,3}, {12,13,14,10,11,7,3}, {12,13,14,15,11,7,3},
};
/* kernel.SYM_INV: transformed[j] = cells[SYM_INV[s][j]] (identity, half turn, transpose, anti). */
static const int SYM_INV[4][16] = {
    {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15},
    {15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0},
    {0,4,8,12,1,5,9,13,2,6,10,14,3,7,11,15},
    {15,11,7,3,14,10,6,2,13,9,5,1,12,8,4,0},
};

static I PATH_MASK[40];
static I CELL_NPATHS[16];
static I CELL_PATHS[16][40];
static I SHARED[20][20];
static int tables_ready = 0;

static void init_tables(void) {
    if (tables_ready) return;
    memset(CELL_NPATHS, 0, sizeof CELL_NPATHS);
    for (int p = 0; p < 40; p++) {
        I m = 0;
        for (int i = 0; i < 7; i++) {
            int c = PATHS[p][i];
            m |= (I)1 << c;
            CELL_PATHS[c][CELL_NPATHS[c]++] = p;
        }
        PATH_MASK[p] = m;
    }
    for (int q = 0; q < 20; q++)
        for (int p = 0; p < 20; p++) SHARED[q][p] = PATH_MASK[q] & PATH_MASK[20 + p];
    tables_ready = 1;
}

/* ------------------------------------------------------------------ the context (new_context) */

static I cells[16];
static I sums[40];
static I emp[40];
static I mv_num[17][256];
static I mv_cell[17][256];
static I mv_key[17][256];
static I pref[17][4][17];
static uint64_t *tt_k1 = NULL, *tt_k2 = NULL;
static int16_t *tt_lo = NULL, *tt_hi = NULL;
static int8_t *tt_empty = NULL;
static int64_t tt_size = 0; /* slots = 2 * buckets */
static int cur_tt_bits = -1;
static int64_t st_nodes, st_aborted, st_node_limit, st_tt_hits, st_tt_stores;

void hw_tt_free(void) {
    free(tt_k1); free(tt_k2); free(tt_lo); free(tt_hi); free(tt_empty);
    tt_k1 = tt_k2 = NULL; tt_lo = tt_hi = NULL; tt_empty = NULL;
    tt_size = 0; cur_tt_bits = -1;
}

void hw_tt_clear(void) {
    if (tt_empty) memset(tt_empty, 0xFF, (size_t)tt_size); /* -1 = free slot */
}

int hw_tt_alloc(int tt_bits) {
    init_tables();
    if (tt_bits == cur_tt_bits) return 0;
    hw_tt_free();
    int64_t size = (int64_t)2 << tt_bits;
    tt_k1 = calloc((size_t)size, sizeof *tt_k1);
    tt_k2 = calloc((size_t)size, sizeof *tt_k2);
    tt_lo = calloc((size_t)size, sizeof *tt_lo);
    tt_hi = calloc((size_t)size, sizeof *tt_hi);
    tt_empty = malloc((size_t)size);
    if (!tt_k1 || !tt_k2 || !tt_lo || !tt_hi || !tt_empty) { hw_tt_free(); return -1; }
    tt_size = size;
    cur_tt_bits = tt_bits;
    hw_tt_clear();
    return 0;
}

/* For the benchmark's check that the tables equal the numba kernel's. */
void hw_tables(long long *paths_out /* 40*7 */, long long *sym_inv_out /* 4*16 */) {
    for (int p = 0; p < 40; p++) for (int i = 0; i < 7; i++) paths_out[p * 7 + i] = PATHS[p][i];
    for (int s = 0; s < 4; s++) for (int j = 0; j < 16; j++) sym_inv_out[s * 16 + j] = SYM_INV[s][j];
}

/* ------------------------------------------------------------------ small pieces */

static inline void prefix_tables(I unused, I *small, I *large) {
    small[0] = 0;
    I k = 0, s = 0;
    for (I n = 1; n < 17; n++)
        if ((unused >> (n - 1)) & 1) { k++; s += n; small[k] = s; }
    large[0] = 0;
    k = 0; s = 0;
    for (I n = 16; n > 0; n--)
        if ((unused >> (n - 1)) & 1) { k++; s += n; large[k] = s; }
}

static inline void side_minima(int first, int last, I bit, I number, const I *small, const I *large,
                               I *out_lo, I *out_hi) {
    I min_lo = INF, min_hi = INF;
    for (int p = first; p < last; p++) {
        I s = sums[p], e = emp[p];
        if (PATH_MASK[p] & bit) { s += number; e -= 1; }
        I lo = s + small[e], hi = s + large[e];
        if (lo < min_lo) min_lo = lo;
        if (hi < min_hi) min_hi = hi;
    }
    *out_lo = min_lo;
    *out_hi = min_hi;
}

static inline I popcount16(I x) {
    x = x - ((x >> 1) & 0x5555);
    x = (x & 0x3333) + ((x >> 2) & 0x3333);
    x = (x + (x >> 4)) & 0x0F0F;
    return (x + (x >> 8)) & 0x1F;
}

static void simple_bounds(const I *small, const I *large, I *lo, I *hi) {
    I lo_a, hi_a, lo_b, hi_b;
    side_minima(0, 20, 0, 0, small, large, &lo_a, &hi_a);
    side_minima(20, 40, 0, 0, small, large, &lo_b, &hi_b);
    *lo = lo_b - hi_a;
    *hi = hi_b - lo_a;
}

static I pair_upper(I empty_mask, const I *small, const I *large, I cap) {
    I hi = cap;
    for (int p = 0; p < 20; p++) {
        I sb = sums[20 + p], eb = emp[20 + p];
        I mx = -INF;
        for (int q = 0; q < 20; q++) {
            I s = popcount16(empty_mask & SHARED[q][p]);
            I ub = sb - sums[q] + large[eb - s] - small[emp[q] - s];
            if (ub > mx) {
                mx = ub;
                if (mx >= hi) break;
            }
        }
        if (mx < hi) hi = mx;
    }
    return hi;
}

static I pair_lower(I empty_mask, const I *small, const I *large, I floor_) {
    I lo = floor_;
    for (int q = 0; q < 20; q++) {
        I sa = sums[q], ea = emp[q];
        I mn = INF;
        for (int p = 0; p < 20; p++) {
            I s = popcount16(empty_mask & SHARED[q][p]);
            I lb = sums[20 + p] - sa + small[emp[20 + p] - s] - large[ea - s];
            if (lb < mn) {
                mn = lb;
                if (mn <= lo) break;
            }
        }
        if (mn > lo) lo = mn;
    }
    return lo;
}

static inline void place(I number, I cell) {
    cells[cell] = number;
    for (I i = 0; i < CELL_NPATHS[cell]; i++) {
        I p = CELL_PATHS[cell][i];
        sums[p] += number;
        emp[p] -= 1;
    }
}

static inline void unplace(I number, I cell) {
    cells[cell] = 0;
    for (I i = 0; i < CELL_NPATHS[cell]; i++) {
        I p = CELL_PATHS[cell][i];
        sums[p] -= number;
        emp[p] += 1;
    }
}

static I final_margin(void) {
    I min_a = INF;
    for (int q = 0; q < 20; q++) if (sums[q] < min_a) min_a = sums[q];
    I min_b = INF;
    for (int p = 20; p < 40; p++) if (sums[p] < min_b) min_b = sums[p];
    return min_b - min_a;
}

static void canonical_key(uint64_t *out1, uint64_t *out2) {
    uint64_t best1 = 0xFFFFFFFFFFFFFFFFull, best2 = 0xFFFFFFFFFFFFFFFFull;
    I t[16];
    for (int s = 0; s < 4; s++) {
        for (int j = 0; j < 16; j++) t[j] = cells[SYM_INV[s][j]];
        uint64_t k1 = 0;
        for (int j = 0; j < 12; j++) k1 = (k1 << 5) | (uint64_t)t[j];
        uint64_t k2 = 0;
        for (int j = 12; j < 16; j++) k2 = (k2 << 5) | (uint64_t)t[j];
        if (k1 < best1 || (k1 == best1 && k2 < best2)) { best1 = k1; best2 = k2; }
    }
    *out1 = best1;
    *out2 = best2;
}

static inline int64_t bucket(uint64_t k1, uint64_t k2) {
    uint64_t nbuckets = (uint64_t)(tt_size / 2);
    uint64_t h = (k1 * 0x9E3779B97F4A7C15ull) ^ (k2 * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 29;
    return 2 * (int64_t)(h & (nbuckets - 1));
}

static int64_t tt_probe(uint64_t k1, uint64_t k2) {
    int64_t base = bucket(k1, k2);
    for (int64_t i = base; i < base + 2; i++)
        if (tt_empty[i] >= 0 && tt_k1[i] == k1 && tt_k2[i] == k2) return i;
    return -1;
}

static void tt_store(uint64_t k1, uint64_t k2, I n_empty, I lo, I hi) {
    int64_t base = bucket(k1, k2);
    for (int64_t i = base; i < base + 2; i++) {
        if (tt_empty[i] >= 0 && tt_k1[i] == k1 && tt_k2[i] == k2) {
            if (lo > tt_lo[i]) tt_lo[i] = (int16_t)lo;
            if (hi < tt_hi[i]) tt_hi[i] = (int16_t)hi;
            return;
        }
    }
    int64_t i = n_empty >= tt_empty[base] ? base : base + 1;
    if (i == base && tt_empty[base] >= 0) {
        tt_k1[base + 1] = tt_k1[base];
        tt_k2[base + 1] = tt_k2[base];
        tt_lo[base + 1] = tt_lo[base];
        tt_hi[base + 1] = tt_hi[base];
        tt_empty[base + 1] = tt_empty[base];
    }
    tt_k1[i] = k1;
    tt_k2[i] = k2;
    tt_lo[i] = (int16_t)lo;
    tt_hi[i] = (int16_t)hi;
    tt_empty[i] = (int8_t)n_empty;
}

/* ------------------------------------------------------------------ the search */

static I two_empty(I unused, I empty_mask) {
    I x = -1, y = -1;
    for (I n = 1; n < 17; n++)
        if ((unused >> (n - 1)) & 1) { if (x < 0) x = n; else y = n; }
    I c1 = -1, c2 = -1;
    for (I c = 0; c < 16; c++)
        if ((empty_mask >> c) & 1) { if (c1 < 0) c1 = c; else c2 = c; }
    place(x, c1); place(y, c2);
    I v1 = final_margin();
    unplace(x, c1); unplace(y, c2);
    place(x, c2); place(y, c1);
    I v2 = final_margin();
    unplace(x, c2); unplace(y, c1);
    return v1 > v2 ? v1 : v2;
}

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define MIN2(a, b) ((a) < (b) ? (a) : (b))

static I three_empty(I unused, I empty_mask) {
    I nums[3], cs[3];
    int k = 0;
    for (I n = 1; n < 17; n++) if ((unused >> (n - 1)) & 1) nums[k++] = n;
    k = 0;
    for (I c = 0; c < 16; c++) if ((empty_mask >> c) & 1) cs[k++] = c;
    I final[3][3][3];
    memset(final, 0, sizeof final);
    for (int i = 0; i < 3; i++) {
        place(nums[i], cs[0]);
        for (int j = 0; j < 3; j++) {
            if (j == i) continue;
            int l = 3 - i - j;
            place(nums[j], cs[1]);
            place(nums[l], cs[2]);
            final[i][j][l] = final_margin();
            unplace(nums[l], cs[2]);
            unplace(nums[j], cs[1]);
        }
        unplace(nums[i], cs[0]);
    }
    I best = INF;
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, l = (i + 2) % 3;
        I v0 = MAX2(final[i][j][l], final[i][l][j]);
        I v1 = MAX2(final[j][i][l], final[l][i][j]);
        I v2 = MAX2(final[j][l][i], final[l][j][i]);
        best = MIN2(best, MIN2(v0, MIN2(v1, v2)));
    }
    return best;
}

/* Returns the move count; *best_out as in kernel._generate_moves. */
static I generate_moves(int a_to_move, I unused, I empty_mask, const I *small, const I *large,
                        I *small2, I *large2, I *out_num, I *out_cell, I *out_key,
                        I alpha, I beta, int prune, I *best_out) {
    I dummy, min_hi_a, min_hi_b;
    side_minima(0, 20, 0, 0, small, large, &dummy, &min_hi_a);
    side_minima(20, 40, 0, 0, small, large, &dummy, &min_hi_b);
    I live = 0;
    for (int q = 0; q < 20; q++) if (sums[q] + small[emp[q]] <= min_hi_a) live |= PATH_MASK[q];
    for (int p = 20; p < 40; p++) if (sums[p] + small[emp[p]] <= min_hi_b) live |= PATH_MASK[p];

    I cand = empty_mask;
    I dead = cand & ~live;
    if (prune && dead != 0) {
        I keep = dead & (-dead);
        cand &= ~(dead ^ keep);
    }

    I best = a_to_move ? -INF : INF;
    I count = 0;
    for (I n = 1; n < 17; n++) {
        if (!((unused >> (n - 1)) & 1)) continue;
        prefix_tables(unused & ~((I)1 << (n - 1)), small2, large2);
        for (I c = 0; c < 16; c++) {
            if (!((cand >> c) & 1)) continue;
            I bit = (I)1 << c;
            I lo_a, hi_a, lo_b, hi_b;
            side_minima(0, 20, bit, n, small2, large2, &lo_a, &hi_a);
            side_minima(20, 40, bit, n, small2, large2, &lo_b, &hi_b);
            I child_lo = lo_b - hi_a;
            I child_hi = hi_b - lo_a;
            if (prune) {
                if (a_to_move) {
                    if (child_lo >= beta) { *best_out = child_lo; return 0; }
                    if (child_hi <= alpha) {
                        if (child_hi > best) best = child_hi;
                        continue;
                    }
                } else {
                    if (child_hi <= alpha) { *best_out = child_hi; return 0; }
                    if (child_lo >= beta) {
                        if (child_lo < best) best = child_lo;
                        continue;
                    }
                }
            }
            I key = a_to_move ? 256 * child_lo + child_hi : -(child_lo + 2 * child_hi);
            out_num[count] = n;
            out_cell[count] = c;
            out_key[count] = key;
            count++;
        }
    }
    *best_out = best;
    return count;
}

static I search(I alpha, I beta, I n_empty, I unused, I empty_mask, int use_pair, int use_tt) {
    st_nodes++;
    if (n_empty <= 3) {
        if (n_empty == 3) return three_empty(unused, empty_mask);
        if (n_empty == 2) return two_empty(unused, empty_mask);
        if (n_empty == 0) return final_margin();
        I number = 0;
        for (I n = 0; n < 16; n++) if ((unused >> n) & 1) number = n + 1;
        I cell = 0;
        for (I c = 0; c < 16; c++) if ((empty_mask >> c) & 1) cell = c;
        place(number, cell);
        I v = final_margin();
        unplace(number, cell);
        return v;
    }
    if (st_nodes >= st_node_limit) st_aborted = 1;
    else if ((st_nodes & ABORT_CHECK_MASK) == 0 || n_empty >= 10) {
        /* the numba kernel looks at its deadline here; no deadline in this port */
    }
    if (st_aborted) return 0;

    I depth = n_empty;
    I *small = pref[depth][0];
    I *large = pref[depth][1];
    prefix_tables(unused, small, large);
    I lo, hi;
    simple_bounds(small, large, &lo, &hi);
    if (lo >= beta) return lo;
    if (hi <= alpha || lo == hi) return hi;
    if (use_pair) {
        I cut = pair_upper(empty_mask, small, large, MIN2(hi, alpha + 1));
        if (cut <= alpha) return cut;
        cut = pair_lower(empty_mask, small, large, MAX2(lo, beta - 1));
        if (cut >= beta) return cut;
    }

    uint64_t k1 = 0, k2 = 0;
    int with_tt = use_tt && n_empty >= TT_MIN_EMPTY;
    if (with_tt) {
        canonical_key(&k1, &k2);
        int64_t slot = tt_probe(k1, k2);
        if (slot >= 0) {
            st_tt_hits++;
            if (tt_lo[slot] > lo) lo = tt_lo[slot];
            if (tt_hi[slot] < hi) hi = tt_hi[slot];
            if (lo >= beta || lo == hi) return lo;
            if (hi <= alpha) return hi;
        }
    }

    int a_to_move = (n_empty & 1) == 0;
    I best;
    I *mn = mv_num[depth], *mc = mv_cell[depth], *mk = mv_key[depth];
    I nmoves = generate_moves(a_to_move, unused, empty_mask, small, large, pref[depth][2], pref[depth][3],
                              mn, mc, mk, alpha, beta, 1, &best);
    int decided = a_to_move ? best >= beta : best <= alpha;
    if (with_tt && !decided && n_empty > ETC_MIN_EMPTY) { /* kernel._etc */
        for (I i = 0; i < nmoves; i++) {
            cells[mc[i]] = mn[i];
            uint64_t c1, c2;
            canonical_key(&c1, &c2);
            cells[mc[i]] = 0;
            int64_t slot = tt_probe(c1, c2);
            if (slot < 0) continue;
            if (a_to_move && tt_lo[slot] >= beta) { best = MAX2(best, (I)tt_lo[slot]); decided = 1; break; }
            if (!a_to_move && tt_hi[slot] <= alpha) { best = MIN2(best, (I)tt_hi[slot]); decided = 1; break; }
        }
    }
    for (I i = 0; i < nmoves; i++) {
        if (decided) break;
        I bi = i;
        for (I j = i + 1; j < nmoves; j++)
            if (mk[j] > mk[bi]) bi = j;
        if (bi != i) {
            I x;
            x = mk[i]; mk[i] = mk[bi]; mk[bi] = x;
            x = mn[i]; mn[i] = mn[bi]; mn[bi] = x;
            x = mc[i]; mc[i] = mc[bi]; mc[bi] = x;
        }
        I number = mn[i], cell = mc[i];
        place(number, cell);
        I v;
        if (a_to_move)
            v = search(MAX2(alpha, best), beta, n_empty - 1, unused & ~((I)1 << (number - 1)),
                       empty_mask & ~((I)1 << cell), use_pair, use_tt);
        else
            v = search(alpha, MIN2(beta, best), n_empty - 1, unused & ~((I)1 << (number - 1)),
                       empty_mask & ~((I)1 << cell), use_pair, use_tt);
        unplace(number, cell);
        if (st_aborted) return 0;
        if (a_to_move) {
            if (v > best) { best = v; decided = best >= beta || best >= hi; }
        } else {
            if (v < best) { best = v; decided = best <= alpha || best <= lo; }
        }
    }
    if (best < lo) best = lo;
    if (best > hi) best = hi;
    if (with_tt) {
        if (best <= alpha) tt_store(k1, k2, n_empty, lo, best);
        else if (best >= beta) tt_store(k1, k2, n_empty, best, hi);
        else tt_store(k1, k2, n_empty, best, best);
        st_tt_stores++;
    }
    return best;
}

/* kernel.search_board + run_search (no time or node limit). board: 16 ints, 0 = empty.
 * The table (2**tt_bits buckets) is allocated on first use or when tt_bits changes and is NOT cleared
 * between calls, as in numba; call hw_tt_clear() for a cold table. Returns the value; *nodes = nodes. */
long long search_board(const int *board, int alpha, int beta, int use_pair, int use_tt, int tt_bits,
                       long long *nodes) {
    if (hw_tt_alloc(tt_bits) != 0) { if (nodes) *nodes = -1; return 0; }
    I unused = (1 << 16) - 1, empty_mask = 0, n_empty = 0;
    for (int c = 0; c < 16; c++) cells[c] = 0;
    for (int p = 0; p < 40; p++) { sums[p] = 0; emp[p] = 7; }
    for (int c = 0; c < 16; c++) {
        I v = board[c];
        if (v == 0) { empty_mask |= (I)1 << c; n_empty++; }
        else { unused &= ~((I)1 << (v - 1)); place(v, c); }
    }
    st_nodes = 0; st_aborted = 0; st_tt_hits = 0; st_tt_stores = 0;
    st_node_limit = INT64_MAX;
    I v = search(alpha, beta, n_empty, unused, empty_mask, use_pair, use_tt);
    if (nodes) *nodes = st_nodes;
    return (long long)v;
}
