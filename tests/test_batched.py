"""The batched engine (highway_env.batched) against the plain-Python rules (highway_env.core)."""

import numpy as np
import pytest

from highway_env import core
from highway_env.batched import BatchedHighway
from highway_env.core import QUARTER_TURN, Board, HighwayError, IllegalMoveError
from highway_env.highway.batch_rules import FRAME_ACTIONS


def reference_observation(board: Board) -> np.ndarray:
    """(4, 4, 16) int8 one-hot planes of the board as the side to move sees it, straight from core."""
    view = board.transform(QUARTER_TURN) if (not board.is_terminal() and board.to_move == 1) else board
    obs = np.zeros((4, 4, 16), np.int8)
    for cell, v in enumerate(view.cells):
        if v:
            r, c = core.cell_rc(cell)
            obs[r, c, v - 1] = 1
    return obs


def results(r, g: int) -> tuple:
    """(min_a, min_b, margin, value) of game g from a StepResult or Outcomes."""
    return (int(r.min_a[g]), int(r.min_b[g]), int(r.margin[g]), int(r.value[g]))


def core_results(board: Board) -> tuple:
    o = board.outcome()
    return (o.min_a, o.min_b, o.margin, o.value)


def check_against_core(env: BatchedHighway, boards: list[Board]) -> None:
    assert env.to_boards() == boards
    np.testing.assert_array_equal(env.boards, np.array([b.cells for b in boards], dtype=np.int8))
    np.testing.assert_array_equal(env.ply, [b.ply for b in boards])
    np.testing.assert_array_equal(env.terminal, [b.is_terminal() for b in boards])
    live = ~env.terminal
    np.testing.assert_array_equal(env.to_play[live], [b.to_move for b in boards if not b.is_terminal()])
    mask = env.legal_mask()
    assert mask.shape == (len(boards), 256) and mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, np.array([b.legal_mask() for b in boards]).astype(bool))
    obs = env.observation()
    assert obs.shape == (len(boards), 4, 4, 16) and obs.dtype == np.int8
    np.testing.assert_array_equal(obs, np.array([reference_observation(b) for b in boards]))
    # the player-view mask is the mask of the player-view board
    view_mask = env.legal_mask(player_view=True)
    for g, b in enumerate(boards):
        vb = b.transform(QUARTER_TURN) if (not b.is_terminal() and b.to_move == 1) else b
        np.testing.assert_array_equal(view_mask[g], vb.legal_mask().astype(bool))
    out = env.outcomes()
    for g, b in enumerate(boards):
        assert out.terminal[g] == b.is_terminal()
        if b.is_terminal():
            assert results(out, g) == core_results(b)
        else:
            assert results(out, g) == (0, 0, 0, 0)


@pytest.mark.parametrize("parallel", [False, True])
def test_random_games_match_core(parallel):
    n = 48
    env = BatchedHighway(n, seed=123, parallel=parallel)
    boards = [Board()] * n
    for ply in range(16):
        check_against_core(env, boards)
        actions = env.random_actions()
        assert env.legal_mask()[np.arange(n), actions].all()
        res = env.step(actions)
        boards = [b.apply(int(a)) for b, a in zip(boards, actions)]
        if ply < 15:
            assert not res.done.any()
    assert res.done.all()
    for g, b in enumerate(boards):
        assert results(res, g) == core_results(b)
    check_against_core(env, boards)
    # terminal games ignore their actions, whatever they are
    before = env.boards.copy()
    res = env.step(np.full(n, 999))
    assert not res.done.any()
    np.testing.assert_array_equal(env.boards, before)
    np.testing.assert_array_equal(env.random_actions(), -1)


def test_loaded_positions_and_mixed_plies_match_core():
    rng = np.random.default_rng(7)
    boards = [core.random_board(rng, int(k)) for k in rng.integers(0, 17, size=60)]
    env = BatchedHighway.from_boards(boards, seed=5)
    for _ in range(17):
        check_against_core(env, boards)
        actions = env.random_actions()
        res = env.step(actions)
        for g, (b, a) in enumerate(zip(boards, actions)):
            if b.is_terminal():
                assert a == -1 and not res.done[g]
            else:
                boards[g] = b.apply(int(a))
                assert res.done[g] == boards[g].is_terminal()
    assert env.terminal.all()
    # set_boards into a subset, from an array, and board()/to_boards round trips
    new = [core.random_board(rng, 5), core.random_board(rng, 16)]
    env.set_boards(np.array([b.cells for b in new]), indices=[3, 10])
    boards[3], boards[10] = new
    check_against_core(env, boards)
    assert env.board(10) == new[1]


def test_outcomes_match_core_on_many_full_boards():
    rng = np.random.default_rng(11)
    boards = [core.random_board(rng, 16) for _ in range(3000)]
    # a few structured ones: rows in order, columns in order, and a draw-prone symmetric filling
    boards.append(Board(tuple(range(1, 17))))
    boards.append(Board(tuple(1 + 4 * (i % 4) + i // 4 for i in range(16))))
    boards.append(Board(tuple(16 - i for i in range(16))))
    out = BatchedHighway.from_boards(boards).outcomes()
    ref = np.array([(o.min_a, o.min_b, o.margin, o.value) for o in (b.outcome() for b in boards)])
    assert out.terminal.all()
    np.testing.assert_array_equal(np.stack([out.min_a, out.min_b, out.margin, out.value], 1), ref)
    assert set(np.unique(out.value)) == {-1, 0, 1}


def test_autoreset_reports_results_and_restarts():
    n = 32
    env = BatchedHighway(n, seed=3, autoreset=True)
    boards = [Board()] * n
    finished = 0
    for step in range(40):
        actions = env.random_actions()
        res = env.step(actions)
        for g, a in enumerate(actions):
            b = boards[g].apply(int(a))
            if b.is_terminal():
                assert res.done[g]
                assert results(res, g) == core_results(b)
                b = Board()
                finished += 1
            else:
                assert not res.done[g] and res.margin[g] == 0
            boards[g] = b
        if step % 8 == 0:
            check_against_core(env, boards)
        assert not env.terminal.any()
    assert finished == 2 * n


def test_illegal_actions_raise_naming_game_and_action_and_change_nothing():
    env = BatchedHighway(4, seed=0)
    env.set_boards([Board(), Board((5,) + (0,) * 15), Board((0,) * 15 + (9,)), Board()])
    before = env.boards.copy()
    ok = np.array([16, 17, 18, 19])  # 2 at cells 0..3: legal in all four

    def bad(game, action, match):
        acts = ok.copy()
        acts[game] = action
        with pytest.raises(HighwayError, match=match) as info:
            env.step(acts)
        np.testing.assert_array_equal(env.boards, before)  # atomic: nothing moved
        return info

    info = bad(1, 1 * 16 + 0, r"game 1: illegal action 16 \(2 at cell 0\): cell 0 already holds 5")
    assert isinstance(info.value, IllegalMoveError)
    bad(2, 8 * 16 + 3, r"game 2: illegal action 131 \(9 at cell 3\): number 9 is already on the board")
    bad(3, 256, r"game 3: action 256 out of range 0..255")
    bad(0, -1, r"game 0: action -1 out of range 0..255")
    with pytest.raises(HighwayError, match="expected 4 actions"):
        env.step(ok[:3])
    with pytest.raises(HighwayError, match="integers"):
        env.step(ok.astype(float))
    env.step(ok)
    assert env.ply.tolist() == [1, 2, 2, 1]
    with pytest.raises(HighwayError, match="board 1: number 3 appears twice"):
        env.set_boards([Board(), (3, 3) + (0,) * 14], indices=[0, 1])


def test_reset_subset():
    env = BatchedHighway(6, seed=1)
    for _ in range(5):
        env.step(env.random_actions())
    before = env.to_boards()
    env.reset(np.array([True, False, False, True, False, False]))
    env.reset([5])
    after = env.to_boards()
    for g in range(6):
        assert after[g] == (Board() if g in (0, 3, 5) else before[g])
    assert env.ply.tolist() == [0, 5, 5, 0, 5, 0]
    env.step(env.random_actions())  # reset games play on normally
    check_against_core(env, env.to_boards())
    with pytest.raises(HighwayError, match="out of range"):
        env.reset([6])
    with pytest.raises(HighwayError, match="shape"):
        env.reset(np.ones(5, bool))
    twin = env.copy()  # an independent copy: same future, own state
    np.testing.assert_array_equal(twin.random_actions(), env.random_actions())
    twin.reset()
    assert not twin.boards.any() and env.boards.any()
    env.reset()
    assert not env.boards.any() and not env.ply.any()
    with pytest.raises(ValueError):
        env.boards[0, 0] = 1  # the state views are read-only


def test_reproducible_with_seed():
    def play(seed, parallel=False, n=64, moves=40):
        env = BatchedHighway(n, seed=seed, autoreset=True, parallel=parallel)
        hist = []
        for _ in range(moves):
            a = env.random_actions()
            env.step(a)
            hist.append(a)
        return np.array(hist), env.boards.copy()

    a1, b1 = play(42)
    a2, b2 = play(42)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)
    a3, _ = play(42, parallel=True)
    np.testing.assert_array_equal(a1, a3)  # threads change nothing
    a4, _ = play(43)
    assert not np.array_equal(a1, a4)
    # an explicit generator, and reset(seed=...)
    env = BatchedHighway(8, seed=0)
    x = env.random_actions(np.random.default_rng(9))
    y = env.random_actions(np.random.default_rng(9))
    np.testing.assert_array_equal(x, y)
    env.reset(seed=42)
    env2 = BatchedHighway(8, seed=42)
    np.testing.assert_array_equal(env.random_actions(), env2.random_actions())


def test_random_actions_are_uniform_over_legal_moves():
    n = 20000
    env = BatchedHighway(n, seed=2)
    start = Board((1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3))  # 13 x 13 = 169 legal actions
    env.set_boards([start] * n)
    counts = np.bincount(env.random_actions(), minlength=256)
    legal = start.legal_mask().astype(bool)
    assert counts[~legal].sum() == 0
    expected = n / legal.sum()
    chi2 = ((counts[legal] - expected) ** 2 / expected).sum()
    assert chi2 < 168 + 6 * np.sqrt(2 * 168)  # mean 168, sd ~18


def test_player_view_actions_round_trip():
    env = BatchedHighway(16, seed=4)
    for _ in range(9):
        env.step(env.random_actions())
    assert (env.to_play == 1).all()
    a = env.random_actions()
    v = env.actions_to_player_view(a)
    np.testing.assert_array_equal(v, FRAME_ACTIONS[1][a])
    assert env.legal_mask(player_view=True)[np.arange(16), v].all()
    np.testing.assert_array_equal(env.actions_from_player_view(v), a)
    for g in range(16):  # same move as core sees it on the turned board
        b = env.board(g)
        assert b.apply(int(a[g])).transform(QUARTER_TURN) == b.transform(QUARTER_TURN).apply(int(v[g]))


def test_matches_the_pettingzoo_env_observations():
    from highway_env import highway_v0  # a core module (pettingzoo is a core dependency): no skip

    env = highway_v0.env()
    env.reset(seed=0)
    batched = BatchedHighway(1, seed=8)
    while not batched.terminal[0]:
        obs = env.observe(env.agent_selection)
        np.testing.assert_array_equal(obs["observation"], batched.observation()[0])
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), batched.legal_mask()[0])
        action = batched.random_actions()
        env.step(int(action[0]))
        batched.step(action)
    assert all(env.terminations.values())
    env.close()
