"""The Jumping solver's memo table is exact on the largest board (n = 7), whose keys need over 56 bits."""

from __future__ import annotations

import numpy as np

from highway_env.jumping import game, solver
from highway_env.jumping.perfect import Oracle

N = game.MAX_N
CELLS = N * N
TABLES = solver.symmetry_tables(N)


def _plain_key(state):
    return int(solver._state_key(N, *state, *TABLES, False))


def _states_whose_old_keys_agree_in_low_56_bits():
    """Two n = 7 states whose plain keys ``(occ * cells + last) * n + jump`` differ by exactly 2^56:
    an entry ``key << 8`` in an int64 would be the same for both, so the packing must keep them apart."""
    occ1 = (1 << CELLS) - 1 - (1 << 20)
    for last1 in range(CELLS - 1, -1, -1):
        for jump1 in range(1, N):
            k2 = ((occ1 * CELLS + last1) * N + jump1) - (1 << 56)
            occ2, rest = divmod(k2, CELLS * N)
            last2, jump2 = divmod(rest, N)
            if occ1 >> last1 & 1 and occ2 >> last2 & 1 and jump2 > 0:
                return (occ1, last1, jump1), (occ2, last2, jump2)
    raise AssertionError("no pair found")


def test_n7_states_get_their_own_entries_through_growth():
    s1, s2 = _states_whose_old_keys_agree_in_low_56_bits()
    rng = np.random.default_rng(0)
    states = {s1: 5, s2: -3, ((1 << CELLS) - 1, CELLS - 1, N - 1): -(CELLS - 1), (1, 0, 0): CELLS - 1}
    while len(states) < 300:  # random late states: most have the high squares filled
        occ = (1 << CELLS) - 1 - sum(1 << int(q) for q in rng.choice(CELLS, rng.integers(0, 20), replace=False))
        last = int(rng.choice([q for q in range(CELLS) if occ >> q & 1]))
        states[(occ, last, int(rng.integers(1, N)))] = int(rng.integers(-CELLS + 1, CELLS))
    table = solver.new_table(16)
    for i, (state, v) in enumerate(states.items()):
        assert solver._store(table, _plain_key(state), v) == 1, state  # a new entry for each state
        if 2 * (i + 1) >= len(table):
            table = solver._grow(table)
    assert np.count_nonzero(table) == len(states)
    for state, v in states.items():
        assert solver._lookup(table, _plain_key(state)) == v, state
        assert solver._store(table, _plain_key(state), v + 1) == 0  # a larger bound keeps the entry
    assert {solver._unpack(N, e)[:3] for e in table[table != 0].tolist()} == set(states)


def test_n7_late_position_values_and_memo_reuse():
    """Late n = 7 values match the plain-Python search, and asking again finds every state stored
    (no entry is lost, so nothing is searched twice)."""
    rng = np.random.default_rng(3)
    s = game.initial_state(N)
    while CELLS - s.ply > 12:
        moves = s.legal_moves()
        s, _ = s.apply(moves[rng.integers(len(moves))][0])
    assert not s.is_terminal() and s.occ >> (CELLS - 1) & 1  # plain keys of this subtree exceed 2^56
    oracle = Oracle(N)
    assert oracle.move_values(s) == solver.move_values(s)
    stored = int(oracle.stats[0])
    assert oracle.move_values(s) == solver.move_values(s) and oracle.stats[0] == stored > 1000


def test_a_search_stores_its_root_under_root_key_by_the_tables_own_growth_rule():
    """Oracle.future stored the searched state itself after _search, with a grow check of its own
    at another threshold; _search now stores it under ``root_key`` by the rule every state follows.
    From a 16-slot table: the root is found, every entry is counted, the table never passes 3/4."""
    n = 5
    rng = np.random.default_rng(1)
    s = game.initial_state(n)
    while n * n - s.ply > 11:
        moves = s.legal_moves()
        s, _ = s.apply(moves[rng.integers(len(moves))][0])
    tables = solver.symmetry_tables(n)
    key = int(solver._canon_key(n, s.occ, s.last, s.jump, *tables))
    sq, d = (np.array(c, dtype=np.int64) for c in zip(*s.legal_moves()))
    stats = np.zeros(3, np.int64)
    v, _, table = solver._search(n, *game.rays_array(n), sq, d, s.occ, s.jump, False, solver.new_table(16), 0,
                                 stats, *tables, True, key)
    assert solver._lookup(table, key) == v
    assert stats[0] == np.count_nonzero(table) <= solver._room(table) and len(table) > 16

    oracle = Oracle(n)
    oracle.table, oracle.stats[:] = solver.new_table(16), 0
    assert oracle.move_values(s) == solver.move_values(s)  # the plain-Python search's values
    assert oracle.stats[0] == np.count_nonzero(oracle.table) <= solver._room(oracle.table)
