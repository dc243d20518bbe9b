"""Randomized cross-checks of Highway's exact answers against the plain reference solver
(:mod:`highway_env.solver.reference`, memoised minimax straight from core's rules) on late
positions: the compiled solver's fail-soft windows, the perfect player's claims, the shipped
position sets' labels and the opening book's internal consistency. ``HIGHWAY_PROPS_SCALE=N``
multiplies the cases (see tests/test_props_highway.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from highway_env import core
from highway_env.solver.reference import reference_margin, reference_move_values

SCALE = int(os.environ.get("HIGHWAY_PROPS_SCALE", "1"))


def late_boards(n: int, seed: int, lo: int = 11):
    rng = np.random.default_rng(seed)
    return [core.random_board(rng, int(k)) for k in rng.integers(lo, 16, n * SCALE)], rng


@pytest.mark.parametrize("tt, pair", [(True, True), (False, False)])
def test_search_windows_are_fail_soft_bounds_on_the_exact_margin(tt, pair):
    from highway_env.solver import Solver

    solver = Solver(tt_bits=14, use_tt=tt, use_pair_bounds=pair)
    boards, rng = late_boards(60, seed=40)
    for b in boards:
        m = reference_margin(b)
        for _ in range(3):
            alpha = int(rng.integers(-40, 40))
            beta = alpha + int(rng.integers(1, 20))
            v, _ = solver.search_window(b, alpha, beta)
            # fail low: an upper bound; fail high: a lower bound; inside the window: exact
            assert (v <= alpha and m <= v) or (v >= beta and m >= v) or (alpha < v < beta and v == m), (
                b.to_string(), alpha, beta, v, m)
        t = int(rng.integers(-20, 20))
        assert solver.at_least(b, t) == (m >= t)
        keep = solver.keeping_move(b, t)
        assert (reference_margin(b.apply(keep)) >= t) == (m >= t)


def test_perfect_player_claims_hold_for_every_tiebreak():
    from highway_env.solver.player import TIEBREAKS, PerfectPlayer

    boards, _ = late_boards(12, seed=41, lo=11)
    for tiebreak in TIEBREAKS:
        player = PerfectPlayer(tiebreak=tiebreak, seed=0, progress=False)
        for b in boards:
            margins = reference_move_values(b)
            pick = max if b.to_move == 0 else min
            best = pick(margins.values())
            a = player.act(b)
            assert np.sign(margins[a]) == np.sign(best), (tiebreak, b.to_string(), a)
            if tiebreak == "margin" and player.last_info["exact"]:
                assert margins[a] == best == player.last_info["margin"], (b.to_string(), a)


@pytest.mark.parametrize("version, count", [(1, 40), (2, 8), pytest.param(1, None, marks=pytest.mark.slow),
                                            pytest.param(2, None, marks=pytest.mark.slow)])
def test_shipped_position_labels_match_the_reference(version, count):
    """A sample of the sets' late positions, or (slow, about a minute) every position of ply 11 on."""
    from highway_env.evaluation.position_set import DEFAULT_PATH, ILLEGAL, UNKNOWN, V2_PATH, load_positions

    ps = load_positions(DEFAULT_PATH if version == 1 else V2_PATH)
    late = np.flatnonzero(ps.ply >= (13 if version == 1 and count else 11))
    idx = np.random.default_rng(42).permutation(late)[:None if count is None else count * SCALE]
    assert len(idx)
    for i in idx:
        b = core.Board(tuple(int(v) for v in ps.boards[i]))
        ref = reference_move_values(b)
        legal = np.zeros(core.NUM_ACTIONS, bool)
        legal[list(ref)] = True
        assert (ps.values[i][~legal] == ILLEGAL).all()
        for a, m in ref.items():
            assert ps.values[i, a] == np.sign(m), (b.to_string(), a)
            assert ps.margins[i, a] in (UNKNOWN, m), (b.to_string(), a)
        best = max(ref.values()) if b.to_move == 0 else min(ref.values())
        assert ps.value[i] == np.sign(best) and ps.margin[i] in (UNKNOWN, best)


def test_opening_book_values_are_consistent_from_parent_to_child():
    """Where a book position's child is in the book too, it is never better for the mover than the
    position's value, and a child reached by one of the book's moves has exactly that value."""
    from highway_env.solver.opening_book import load_book
    from highway_env.solver.store import canonical_key

    book = load_book()
    pairs = 0
    for key, entry in book.entries.items():
        board, value = core.parse_board(key), entry.value
        if value is None:
            continue
        sign = 1 if board.to_move == 0 else -1
        for a in board.legal_actions():
            child = book.entries.get(canonical_key(board.apply(a)))
            if child is None or child.value is None:
                continue
            pairs += 1
            assert child.value * sign <= value * sign, (key, a)
            if a in entry.moves:
                assert child.value == value, (key, a)
    assert pairs > 1000
