"""The exact solver against brute force: values, margins, null windows, move values, limits."""

import numpy as np
import pytest

from highway_env.core import Board, HighwayError, parse_board, random_board
from highway_env.solver import Solver
from highway_env.solver import kernel
from highway_env.solver.reference import reference_margin, reference_move_values


def sign(x):
    return (x > 0) - (x < 0)


@pytest.fixture(scope="module")
def solver():
    return Solver(tt_bits=16)


def test_compiled_brute_force_matches_python_reference():
    rng = np.random.default_rng(10)
    for _ in range(150):
        board = random_board(rng, 16 - int(rng.integers(0, 4)))
        assert kernel.brute_force_margin(np.array(board.cells)) == reference_margin(board), (
            f"kernel.brute_force_margin is not reference.py's on {board.to_string()}: the kernel's own path "
            "tables (PATH_MASK, CELL_PATHS), _place / _unplace or _final_margin")


# six empty cells take ~10 s (150 positions): slow, beside seven, to keep the default suite near 5 minutes
@pytest.mark.parametrize("empty", [1, 2, 3, 4, 5, pytest.param(6, marks=pytest.mark.slow)])
def test_value_and_margin_match_brute_force(solver, empty):
    rng = np.random.default_rng(100 + empty)
    count = 400 if empty <= 5 else 150
    for i in range(count):
        board = random_board(rng, 16 - empty)
        truth = kernel.brute_force_margin(np.array(board.cells))
        if i % 2:
            solver.clear()  # half with a cold table, half with a warm one
        result = solver.solve(board, margin=True)
        where = {2: "its _two_empty endgame", 3: "its _three_empty endgame"}.get(
            empty, "its search: bounds (_simple_bounds, _pair_upper / _pair_lower), live-path pruning in _generate_moves")
        assert result.margin == truth, (f"solver margin {result.margin}, brute force {truth} on {board.to_string()} "
                                        f"({empty} empty cells; kernel.py: {where})")
        assert result.value == sign(truth), board.to_string()
        assert solver.solve(board).value == sign(truth)


@pytest.mark.slow
def test_value_and_margin_match_brute_force_seven_empty():
    solver = Solver(tt_bits=18)
    rng = np.random.default_rng(7)
    for _ in range(1000):
        board = random_board(rng, 9)
        truth = kernel.brute_force_margin(np.array(board.cells))
        assert solver.solve(board, margin=True).margin == truth, board.to_string()


def test_null_windows_consistent_with_margin(solver):
    rng = np.random.default_rng(11)
    for _ in range(100):
        board = random_board(rng, 16 - int(rng.integers(1, 7)))
        margin = solver.solve(board, margin=True).margin
        for threshold in range(margin - 3, margin + 4):
            assert solver.at_least(board, threshold) == (margin >= threshold)


@pytest.mark.parametrize("pair, tt", [(False, False), (True, False), (False, True)])
def test_techniques_switched_off_agree(pair, tt):
    plain = Solver(tt_bits=12, use_pair_bounds=pair, use_tt=tt)
    rng = np.random.default_rng(12)
    for _ in range(100):
        board = random_board(rng, 16 - int(rng.integers(1, 7)))
        assert plain.solve(board, margin=True).margin == kernel.brute_force_margin(np.array(board.cells))


def test_move_values_and_best_move_match_reference(solver):
    rng = np.random.default_rng(13)
    for _ in range(40):
        board = random_board(rng, 16 - int(rng.integers(1, 5)))
        truth = reference_move_values(board)
        result = solver.solve(board, margin=True, moves=True)
        assert {m.action: m.margin for m in result.moves} == truth
        assert {m.action: m.value for m in result.moves} == {a: sign(v) for a, v in truth.items()}
        pick = max if board.to_move == 0 else min
        assert result.margin == pick(truth.values())
        assert truth[result.best] == result.margin
        # without --moves the best move keeps the value
        quick = solver.solve(board)
        assert sign(truth[quick.best]) == quick.value


def test_full_board_has_result_and_no_best(solver):
    board = parse_board("6,8,3,2,5,11,10,14,15,9,13,12,1,7,4,16")
    result = solver.solve(board, margin=True)
    assert (result.value, result.margin, result.best) == (-1, -14, None)


def test_limits_return_unknown_cleanly():
    solver = Solver(tt_bits=16)
    result = solver.solve(Board(), node_limit=5000)
    assert result.value is None and not result.complete and result.to_dict()["status"] == "unknown"
    result = solver.solve(Board(), time_limit=0.2)
    assert result.value is None and result.seconds < 5
    assert solver.at_least(Board(), 1, node_limit=5000) is None
    # the table stays sound after an aborted search
    board = random_board(np.random.default_rng(3), 11)
    assert solver.solve(board, margin=True).margin == kernel.brute_force_margin(np.array(board.cells))
    with pytest.raises(HighwayError, match="time_limit must be positive, got -1"):
        solver.solve(board, time_limit=-1)
    with pytest.raises(HighwayError, match="node_limit must be positive, got 0"):
        solver.solve(board, node_limit=0)


def test_solver_results_invariant_under_symmetries(solver):
    rng = np.random.default_rng(14)
    from highway_env.core import SYMMETRIES
    for _ in range(30):
        board = random_board(rng, 10)
        margin = solver.solve(board, margin=True).margin
        for perm in SYMMETRIES.values():
            assert solver.solve(board.transform(perm), margin=True).margin == margin


def test_enhanced_transposition_cutoffs_agree_with_a_search_without_table():
    """The cut-offs from children already in the table (8+ empty cells) change no result."""
    with_table = Solver(tt_bits=14)
    without = Solver(tt_bits=10, use_tt=False)
    rng = np.random.default_rng(13)
    cuts = 0
    for _ in range(12):
        board = random_board(rng, 16 - int(rng.integers(8, 10)))
        for threshold in (-2, 1, 3):
            assert with_table.at_least(board, threshold) == without.at_least(board, threshold), board.to_string()
            cuts += int(with_table._ctx["stats"][kernel.S_ETC_CUTS])
    assert cuts > 0  # the cut-off was exercised
