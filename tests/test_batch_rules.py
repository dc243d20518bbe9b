"""The stateless batched rules kernel (highway_env.highway.batch_rules) against the plain rules in core,
on thousands of random positions of every ply."""

import numpy as np
import pytest

from highway_env import core
from highway_env.highway import batch_rules as br

N = 3000


@pytest.fixture(scope="module")
def positions():
    rng = np.random.default_rng(15)
    boards = [core.random_board(rng, int(k)) for k in rng.integers(0, 17, N)]
    boards += [core.Board(), core.random_board(rng, 16)]  # both ends for sure
    return boards, np.array([b.cells for b in boards], dtype=np.int8)


def _frame(board: core.Board) -> core.Board:
    """The board as the side to move sees it (core's quarter turn for B)."""
    return board.transform(core.QUARTER_TURN) if board.to_move == 1 and not board.is_terminal() else board


def test_frame_maps_are_cores_quarter_turn():
    assert br.PLAYER_FRAME[0].tolist() == list(range(core.CELLS))
    assert br.PLAYER_FRAME[1].tolist() == list(core.QUARTER_TURN)
    assert br.PLAYER_FRAME_INV[1].tolist() == list(core.inverse_perm(core.QUARTER_TURN))
    for a in range(core.NUM_ACTIONS):
        assert br.FRAME_ACTIONS[0, a] == a
        assert br.FRAME_ACTIONS[1, a] == core.transform_action(a, core.QUARTER_TURN)
        assert br.FRAME_ACTIONS_INV[1, br.FRAME_ACTIONS[1, a]] == a
    with pytest.raises(ValueError):
        br.FRAME_ACTIONS[1, 0] = 0  # compiled in as constants: read-only


def test_path_table_is_cores():
    assert br.PATHS.tolist() == [list(p) for p in core.A_PATHS + core.B_PATHS]
    assert br.ON_PATH.sum(axis=1).tolist() == [core.PATH_LEN] * 40
    for p, cells in enumerate(br.PATHS):
        assert set(np.flatnonzero(br.ON_PATH[p])) == set(cells.tolist())


def test_legal_masks_in_both_frames(positions):
    boards, cells = positions
    board_frame = np.empty((len(cells), core.NUM_ACTIONS), np.bool_)
    mover_frame = np.empty_like(board_frame)
    br.legal_masks(cells, False, board_frame)
    br.legal_masks(cells, True, mover_frame)
    for b, m, mv in zip(boards, board_frame, mover_frame):
        assert np.array_equal(m, b.legal_mask().astype(bool)), f"legal_masks(player_view=False) is not core's on {b}"
        assert np.array_equal(mv, _frame(b).legal_mask().astype(bool)), (
            f"legal_masks(player_view=True) is not core's legal mask in the mover's frame (PLAYER_FRAME) on {b}")


def test_apply_matches_core_and_names_the_first_illegal(positions):
    boards, cells = positions
    rng = np.random.default_rng(1)
    live = [i for i, b in enumerate(boards) if not b.is_terminal()]
    actions = np.array([rng.choice(boards[i].legal_actions()) for i in live], dtype=np.int64)
    out = np.empty((len(live), core.CELLS), np.int8)
    assert br.apply_actions(cells[live], actions, out) == -1
    for i, a, row in zip(live, actions, out):
        assert tuple(row.tolist()) == boards[i].apply(int(a)).cells
    # every illegal action is caught: an occupied cell, a used number, out of range
    for i in rng.choice(live, 200):
        b = boards[i]
        bad = [a for a in range(-1, core.NUM_ACTIONS + 1) if not (0 <= a < 256 and b.is_legal(a))]
        a = bad[rng.integers(len(bad))]
        batch = np.stack([cells[live[0]], cells[i]])
        acts = np.array([actions[0], a], dtype=np.int64)
        assert br.apply_actions(batch, acts, np.empty_like(batch)) == 1


def test_is_legal_is_cores_on_every_action(positions):
    boards, cells = positions
    for g in range(0, len(cells), 15):
        for a in range(-2, core.NUM_ACTIONS + 2):
            want = 0 <= a < core.NUM_ACTIONS and boards[g].is_legal(a)
            assert br.is_legal(cells, g, a) == want, (boards[g].cells, a)


def test_are_legal_is_is_legal_per_game(positions):
    _, cells = positions
    rng = np.random.default_rng(4)
    for actions in (rng.integers(0, core.NUM_ACTIONS, len(cells)), br.random_legal(br.masks(cells), rng)):
        actions = np.maximum(actions, 0)  # a full board has no legal move: 0 there
        got = np.empty(len(cells), np.bool_)
        br.are_legal(cells, actions, got)
        assert got.tolist() == [br.is_legal(cells, g, a) for g, a in enumerate(actions)]
        assert got.any() and not got.all()


def _kth_true(masks: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """The k-th legal action per row, k = floor(draw * count), in plain numpy; -1 in a row with none."""
    counts = masks.sum(axis=1)
    k = (draws * counts).astype(np.int64)
    return np.where(counts > 0, (np.cumsum(masks, axis=1) <= k[:, None]).sum(axis=1), -1)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8])
def test_random_legal_is_the_kth_legal_move_from_one_draw_per_row(dtype):
    rng = np.random.default_rng(11)
    masks = rng.random((4000, core.NUM_ACTIONS)) < rng.choice([0.0, 0.005, 0.1, 0.7, 1.0], (4000, 1))
    twin = np.random.default_rng(12)
    want = _kth_true(masks, twin.random(len(masks)))
    got = br.random_legal(masks.astype(dtype), np.random.default_rng(12))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64 and (got == -1).any() and masks[got >= 0, got[got >= 0]].all()
    assert br.random_legal(masks[:0], twin).shape == (0,)
    odd = masks[:, :37]  # rows of other games' widths: blocks of 16 and a tail
    np.testing.assert_array_equal(br.random_legal(odd, np.random.default_rng(3)),
                                  _kth_true(odd, np.random.default_rng(3).random(len(odd))))
    uniform = np.bincount(br.random_legal(np.ones((64000, 4), np.bool_), rng), minlength=4)
    assert (abs(uniform - 16000) < 600).all(), uniform


def _one_hot(board: core.Board) -> np.ndarray:
    want = np.zeros((core.CELLS, core.NUMBERS), np.int8)
    for cell, v in enumerate(board.cells):
        if v:
            want[cell, v - 1] = 1
    return want.reshape(br.PLANES_SHAPE)


def test_observe_planes_is_one_hot_in_the_movers_frame(positions):
    boards, cells = positions
    out = np.zeros((len(cells), core.CELLS, core.NUMBERS), np.int8)
    br.observe_planes(cells, out)
    for b, o in zip(boards, out):
        assert np.array_equal(o, _one_hot(_frame(b)).reshape(core.CELLS, core.NUMBERS))


@pytest.mark.parametrize("seat", [0, 1])
def test_planes_of_a_seat_are_one_hot_in_that_players_frame(positions, seat):
    """The seat's frame whoever moves, full boards too: what every env shows its observer."""
    boards, cells = positions
    full = core.random_board(np.random.default_rng(5), core.CELLS)
    boards, cells = boards + [full], np.vstack([cells, np.asarray([full.cells], np.int8)])
    got = br.planes(cells, seat)
    assert got.shape == (len(cells), *br.PLANES_SHAPE) and got.dtype == br.PLANES_DTYPE
    for b, o in zip(boards, got):
        assert np.array_equal(o, _one_hot(b.transform(core.QUARTER_TURN) if seat else b))
    one = np.zeros(br.PLANES_SHAPE, np.float32)  # one board's (4, 4, 16), another dtype (OpenSpiel's)
    br.observe_planes(cells[-2:-1], one, seat)
    assert np.array_equal(one, got[-2])


def test_min_paths_of_full_boards(positions):
    rng = np.random.default_rng(2)
    full = [core.random_board(rng, 16) for _ in range(N)]
    cells = np.array([b.cells for b in full] + [positions[1][0]], dtype=np.int8)  # + a partial one
    min_a = np.full(len(cells), -1, np.int64)
    min_b = np.full(len(cells), -1, np.int64)
    br.final_min_paths(cells, min_a, min_b)
    for b, ma, mb in zip(full, min_a, min_b):
        o = b.outcome()
        assert (ma, mb) == (o.min_a, o.min_b)
        assert br.min_paths(np.array(b.cells, np.int8)) == (o.min_a, o.min_b)
    assert (min_a[-1], min_b[-1]) == (0, 0)  # not full: no result


def test_bounds_and_per_path_ranges(positions):
    boards, cells = positions
    out = np.empty((len(cells), 4), np.int64)
    br.bounds(cells, out)
    small = np.zeros(18, np.int64)
    large = np.zeros(18, np.int64)
    placed, free, lo, hi = (np.zeros(40, np.int64) for _ in range(4))
    for k, (b, row) in enumerate(zip(boards, out)):
        want = b.bounds()
        assert tuple(row.tolist()) == want.min_a + want.min_b, (
            f"bounds (min_a lo, hi, min_b lo, hi) {tuple(row.tolist())} are not core.Board.bounds' on {b} "
            "(batch_rules.path_ranges reduces PATHS: rows < NUM_A_PATHS are A's)")
        assert (row[2] - row[1], row[3] - row[0]) == want.margin
        if k % 10 == 0:  # the per-path reduction behind them
            used = br.unused_prefix_sums(cells[k], small, large)
            assert [n for n in range(1, 17) if not used[n]] == b.unused_numbers()
            br.path_ranges(cells[k], small, large, placed, free, lo, hi)
            ra, rb = b.path_ranges()
            assert list(zip(lo.tolist(), hi.tolist())) == ra + rb
            paths = core.A_PATHS + core.B_PATHS
            assert free.tolist() == [sum(b.cells[c] == 0 for c in p) for p in paths]
            assert placed.tolist() == [sum(b.cells[c] for c in p) for p in paths]


def test_filled_counts_moves(positions):
    boards, cells = positions
    assert [br.filled(row) for row in cells[:500]] == [b.ply for b in boards[:500]]
