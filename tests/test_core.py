"""The rules module: paths by brute force, properties on random games, text I/O and its errors."""

import itertools

import numpy as np
import pytest

from highway_env import core
from highway_env.core import (
    A_PATHS,
    B_PATHS,
    QUARTER_TURN,
    SYMMETRIES,
    Board,
    HighwayError,
    IllegalMoveError,
    decode_action,
    encode_action,
    parse_board,
)


def _adjacent(a, b):
    (r1, c1), (r2, c2) = divmod(a, 4), divmod(b, 4)
    return abs(r1 - r2) + abs(c1 - c2) == 1


def _brute_force_paths(start, end, allowed_steps):
    """Every sequence of 7 distinct side-adjacent cells from start to end using only allowed steps."""
    found = set()
    for cells in itertools.product(range(16), repeat=5):
        path = (start, *cells, end)
        ok = True
        for a, b in zip(path, path[1:]):
            (r1, c1), (r2, c2) = divmod(a, 4), divmod(b, 4)
            if not _adjacent(a, b) or (r2 - r1, c2 - c1) not in allowed_steps:
                ok = False
                break
        if ok:
            found.add(path)
    return found


def test_a_paths_match_brute_force():
    brute = _brute_force_paths(0, 15, {(0, 1), (1, 0)})
    assert len(brute) == 20
    assert set(A_PATHS) == brute


def test_b_paths_match_brute_force():
    brute = _brute_force_paths(12, 3, {(-1, 0), (0, 1)})
    assert len(brute) == 20
    assert set(B_PATHS) == brute


def test_action_encoding_round_trip_and_errors():
    for number in range(1, 17):
        for cell in range(16):
            a = encode_action(number, cell)
            assert a == (number - 1) * 16 + cell
            assert decode_action(a) == (number, cell)
    with pytest.raises(HighwayError, match="number 17"):
        encode_action(17, 0)
    with pytest.raises(HighwayError, match="cell 16"):
        encode_action(1, 16)
    with pytest.raises(HighwayError, match="action 256"):
        decode_action(256)
    with pytest.raises(HighwayError, match="action -1"):
        decode_action(-1)


def _play_random(rng, board=None):
    board = board or Board()
    history = [board]
    while not board.is_terminal():
        legal = board.legal_actions()
        board = board.apply(legal[rng.integers(len(legal))])
        history.append(board)
    return history


def test_random_games_mask_turns_and_length():
    rng = np.random.default_rng(1)
    for _ in range(200):
        history = _play_random(rng)
        assert len(history) == 17  # exactly 16 moves
        for ply, board in enumerate(history):
            assert board.ply == ply
            assert board.to_move == ply % 2
            mask = board.legal_mask()
            assert mask.dtype == np.int8 and mask.shape == (256,)
            legal = set(board.legal_actions())
            assert set(np.flatnonzero(mask)) == legal
            assert len(legal) == (16 - ply) ** 2
            for a in range(256):
                assert board.is_legal(a) == (a in legal)


def test_outcome_matches_definition():
    rng = np.random.default_rng(2)
    for _ in range(300):
        board = _play_random(rng)[-1]
        out = board.outcome()
        sums_a = [sum(board.cells[i] for i in p) for p in A_PATHS]
        sums_b = [sum(board.cells[i] for i in p) for p in B_PATHS]
        assert out.min_a == min(sums_a) and out.min_b == min(sums_b)
        assert out.margin == out.min_b - out.min_a
        assert out.value == int(np.sign(out.margin))
        assert out.winner == {1: "A", -1: "B", 0: None}[out.value]
        assert set(out.a_paths) == {p for p, s in zip(A_PATHS, sums_a) if s == out.min_a}
        assert set(out.b_paths) == {p for p, s in zip(B_PATHS, sums_b) if s == out.min_b}


def test_outcome_invariant_under_symmetries_and_quarter_turn_swaps_roles():
    rng = np.random.default_rng(3)
    for _ in range(300):
        board = _play_random(rng)[-1]
        out = board.outcome()
        for name, perm in SYMMETRIES.items():
            o2 = board.transform(perm).outcome()
            assert (o2.min_a, o2.min_b) == (out.min_a, out.min_b), name
        turned = board.transform(QUARTER_TURN).outcome()
        assert turned.min_a == out.min_b and turned.min_b == out.min_a
        assert turned.margin == -out.margin


def test_symmetries_form_a_group_and_canonical_is_invariant():
    perms = list(SYMMETRIES.values())
    for p in perms:
        for q in perms:
            composed = tuple(q[p[i]] for i in range(16))
            assert composed in perms
    rng = np.random.default_rng(4)
    for _ in range(100):
        board = core.random_board(rng, int(rng.integers(0, 17)))
        canon = board.canonical()
        for perm in perms:
            assert board.transform(perm).canonical() == canon


def test_canonical_cells_is_the_least_image_and_its_symmetry():
    """The one symmetry reduction (Board.canonical and the store's keys use it) against its definition:
    the least of the four images Board.transform makes, and the first symmetry giving it. Boards
    fixed by a symmetry (numbers only on its fixed cells) have ties."""
    rng = np.random.default_rng(6)
    perms = list(SYMMETRIES.values())
    boards = [core.random_board(rng, int(rng.integers(0, 17))) for _ in range(300)]
    for name in ("transpose", "anti_transpose"):
        fixed = [j for j, p in enumerate(SYMMETRIES[name]) if p == j]
        for k in range(len(fixed) + 1):
            cells = [0] * 16
            for j, v in zip(fixed[:k], rng.permutation(np.arange(1, 17))[:k]):
                cells[j] = int(v)
            boards.append(Board(tuple(cells)))
    for board in boards:
        images = [board.transform(p).cells for p in perms]
        canon, perm = core.canonical_cells(board.cells)
        assert canon == min(images) and perm == perms[images.index(min(images))]
        assert board.canonical().cells == canon


def test_bounds_contain_every_completion():
    rng = np.random.default_rng(5)
    for _ in range(100):
        board = core.random_board(rng, int(rng.integers(0, 16)))
        bounds = board.bounds()
        ra, rb = board.path_ranges()
        for _ in range(20):
            final = _play_random(rng, board)[-1]
            out = final.outcome()
            assert bounds.min_a[0] <= out.min_a <= bounds.min_a[1]
            assert bounds.min_b[0] <= out.min_b <= bounds.min_b[1]
            assert bounds.margin[0] <= out.margin <= bounds.margin[1]
            sums_a, sums_b = final.path_sums()
            assert all(lo <= s <= hi for (lo, hi), s in zip(ra, sums_a))
            assert all(lo <= s <= hi for (lo, hi), s in zip(rb, sums_b))
    full = _play_random(rng)[-1]
    assert full.bounds().margin == (full.outcome().margin,) * 2


def test_apply_rejects_illegal_moves_clearly():
    board = Board().apply(encode_action(5, 3))
    with pytest.raises(IllegalMoveError, match="cell 3 already holds 5"):
        board.apply(encode_action(6, 3))
    with pytest.raises(IllegalMoveError, match="number 5 is already on the board"):
        board.apply(encode_action(5, 4))
    with pytest.raises(HighwayError, match="outcome"):
        board.outcome()


def test_text_round_trips():
    rng = np.random.default_rng(6)
    for _ in range(50):
        board = core.random_board(rng, int(rng.integers(0, 17)))
        assert parse_board(board.to_string()) == board
        assert parse_board(board.to_grid()) == board
        assert Board.from_string(board.to_string()) == board
    assert parse_board(" 1, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 ").ply == 16
    assert parse_board("1 . . .\n. . . .\n. . . .\n. . . 0").ply == 1


@pytest.mark.parametrize(
    "text, message",
    [
        ("1,2,3", "expected 16 comma-separated numbers, got 3"),
        (",".join(["0"] * 17), "got 17"),
        ("", "empty board string"),
        ("1,1" + ",0" * 14, "number 1 appears twice, at cells 0 and 1"),
        ("17" + ",0" * 15, "cell 0 holds 17, out of range"),
        ("0,x" + ",0" * 14, "cell 1 is 'x', not a number"),
        ("0,-3" + ",0" * 14, "cell 1 is '-3', not a number"),
        ("0,2.5" + ",0" * 14, "cell 1 is '2.5', not a number"),
        ("1 2 3 4\n5 6 7 8\n9 10 11 12", "a grid board has 4 lines, got 3"),
        ("1 2 3\n5 6 7 8\n9 10 11 12\n13 14 15 16", "grid line 1 has 3 fields"),
    ],
)
def test_parse_errors_name_the_problem(text, message):
    with pytest.raises(HighwayError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_board(text)


def test_board_constructor_validates():
    with pytest.raises(HighwayError, match="16 cells"):
        Board((0,) * 15)
    with pytest.raises(HighwayError, match="appears twice"):
        Board((3, 3) + (0,) * 14)
    with pytest.raises(HighwayError, match="not an integer"):
        Board(("1",) + (0,) * 15)


@pytest.mark.parametrize("cells, match", [
    ((True,) + (0,) * 15, "not an integer"),
    ((1.0,) + (0,) * 15, "not an integer"),
    ((17,) + (0,) * 15, "out of range"),
    ((-1,) + (0,) * 15, "out of range"),
    ((0, 5) + (0,) * 13 + (5,), "appears twice"),
    ([0] * 16, "must be a tuple"),
    ((0,) * 17, "16 cells"),
])
def test_board_quick_check_lets_no_bad_board_through(cells, match):
    """Board's quick check of plain-int tuples must leave every bad board to the full one."""
    with pytest.raises(HighwayError, match=match):
        Board(cells)


def test_board_accepts_what_it_accepted():
    for cells in [(0,) * 16, tuple(range(1, 17)), (np.int8(3),) + (0,) * 15, (0, 16, 1) + (0,) * 13]:
        assert Board(cells).cells == cells


def test_path_sums_against_their_definition():
    rng = np.random.default_rng(3)
    for filled in (0, 5, 16):
        c = core.random_board(rng, filled).cells
        assert Board(c).path_sums() == ([sum(c[i] for i in p) for p in A_PATHS],
                                        [sum(c[i] for i in p) for p in B_PATHS])
