"""The single-agent Gymnasium env ``HighwayGymEnv`` / ``highway_env/Highway-v0``."""

from __future__ import annotations

import json
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import highway_env  # noqa: F401  (registers the env)
from highway_env import core
from highway_env.core import QUARTER_TURN, Board, HighwayError, IllegalMoveError, encode_action
from highway_env.gym_env import HighwayGymEnv, random_policy
from highway_env.render import A_COLOUR
from boards import one_hot

ENV_ID = "highway_env/Highway-v0"

# what check_env says about any env reached through make(); not a problem of ours
_BENIGN = ("is different from the unwrapped version", "Not able to test alternative render modes")


def checked(env):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    return [str(w.message) for w in caught if not any(b in str(w.message) for b in _BENIGN)]


def test_check_env_unwrapped_and_make(capsys):
    assert checked(HighwayGymEnv()) == []
    assert checked(gymnasium.make(ENV_ID).unwrapped) == []
    assert checked(gymnasium.make(ENV_ID)) == []
    # check_env steps with unmasked random actions: as B (the opponent has moved already) use "lose"
    assert checked(gymnasium.make(ENV_ID, play_as="B", illegal_action="lose").unwrapped) == []


def test_make_registration_and_kwargs():
    env = gymnasium.make(ENV_ID, play_as="B")
    assert env.spec.id == ENV_ID
    assert isinstance(env.unwrapped, HighwayGymEnv) and env.unwrapped.play_as == "B"
    obs, info = env.reset(seed=0)
    assert env.unwrapped.board.ply == 1  # A, the opponent, has moved
    assert env.action_space.n == 256
    assert env.observation_space.contains(obs)
    with pytest.raises(HighwayError):
        HighwayGymEnv(play_as="C")
    with pytest.raises(HighwayError):
        HighwayGymEnv(illegal_action="ignore")
    with pytest.raises(HighwayError):
        HighwayGymEnv(opponent=3)
    assert HighwayGymEnv(play_as=1).play_as == "B" and HighwayGymEnv(play_as="player_0").play_as == "A"


@pytest.mark.parametrize("play_as", ["A", "B"])
def test_random_episodes(play_as):
    me = "AB".index(play_as)
    env = HighwayGymEnv(play_as=play_as)
    rng = np.random.default_rng(2)
    seen = set()
    for seed in range(25):
        obs, info = env.reset(seed=seed)
        steps, terminated, reward = 0, False, 0.0
        while not terminated:
            board = env.board
            assert board.to_move == me and info["ply"] == board.ply
            frame = board if me == 0 else board.transform(QUARTER_TURN)
            np.testing.assert_array_equal(obs["observation"], one_hot(frame))
            np.testing.assert_array_equal(obs["action_mask"], board.legal_mask())
            np.testing.assert_array_equal(env.action_masks(), board.legal_mask().astype(bool))
            assert env.action_masks().dtype == bool and env.action_masks().shape == (256,)
            assert reward == 0.0
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, reward, terminated, truncated, info = env.step(action)
            assert env.board.cells[action % 16] == action // 16 + 1
            assert truncated is False
            steps += 1
        assert steps == 8
        board = env.board
        assert board.is_terminal()
        out = board.outcome()
        assert reward == float(out.value if me == 0 else -out.value)
        assert isinstance(reward, float)
        assert info["min_a"] == out.min_a and info["min_b"] == out.min_b and info["winner"] == (out.winner or "")
        assert set(info) == {"ply", "bounds", "min_a", "min_b", "margin", "winner", "opponent_action"}, (
            "the info keys changed: a new key needs the vector env and the docs too (CONTRIBUTING.md, 'A new info key for the Highway envs')")
        json.dumps(info)
        assert not env.action_masks().any() and obs["action_mask"].sum() == 0
        seen.add(reward)
        with pytest.raises(HighwayError, match="reset"):
            env.step(0)
    assert {1.0, -1.0} <= seen


def test_custom_opponent_gets_board_mask_and_rng():
    calls = []

    def first_legal(board, mask, rng):
        calls.append((board, mask.copy(), rng))
        assert isinstance(board, Board) and mask.shape == (256,)
        np.testing.assert_array_equal(mask, board.legal_mask())
        return int(np.flatnonzero(mask)[0])

    env = HighwayGymEnv(play_as="B", opponent=first_legal)
    obs, info = env.reset(seed=3)
    assert env.board.cells[0] == 1  # first legal action: number 1 in cell 0
    assert info["opponent_action"] == 0
    assert calls[0][2] is env.np_random
    obs, reward, terminated, truncated, info = env.step(encode_action(16, 15))
    assert env.board.cells[1] == 2  # number 2 in the first empty cell
    assert info["opponent_action"] == encode_action(2, 1)
    assert len(calls) == 2 and calls[1][0].cells[15] == 16


def test_illegal_opponent_raises():
    env = HighwayGymEnv(play_as="A", opponent=lambda board, mask, rng: 0)  # 1 at cell 0, always
    env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="opponent.*illegal action 0"):
        env.step(encode_action(2, 0))  # now cell 0 is taken: the opponent's reply is illegal


def test_illegal_agent_action_raises_and_changes_nothing():
    env = HighwayGymEnv()
    env.reset(seed=0)
    env.step(encode_action(5, 0))
    before = env.board
    with pytest.raises(IllegalMoveError, match=r"action 64 \(5 at cell 0\).*cell 0 already holds 5"):
        env.step(encode_action(5, 0))
    with pytest.raises(IllegalMoveError, match="number 5 is already on the board"):
        env.step(encode_action(5, 9))
    assert env.board == before
    for bad in (256, -3):
        with pytest.raises(HighwayError):
            env.step(bad)
    legal = int(np.flatnonzero(env.action_masks())[0])
    env.step(legal)  # the episode goes on
    assert env.board.ply == before.ply + 2


def test_illegal_action_lose_mode():
    env = HighwayGymEnv(illegal_action="lose")
    env.reset(seed=0)
    env.step(encode_action(5, 0))
    obs, reward, terminated, truncated, info = env.step(encode_action(6, 0))
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] == encode_action(6, 0)
    assert not env.action_masks().any()
    with pytest.raises(HighwayError):
        env.step(encode_action(7, 3))


def test_same_seed_same_episode():
    def trajectory(seed, play_as):
        env = HighwayGymEnv(play_as=play_as)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(99)  # the agent's own choices are fixed
        terminated = False
        while not terminated:
            obs, reward, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        return env.board.cells

    for play_as in ("A", "B"):
        assert trajectory(7, play_as) == trajectory(7, play_as)
        assert len({trajectory(s, play_as) for s in range(4)}) > 1  # the seed drives the opponent
    # gymnasium.make, reset(seed) twice on one env
    env = gymnasium.make(ENV_ID, play_as="B")
    first = env.reset(seed=5)[0]["observation"]
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    again = env.reset(seed=5)[0]["observation"]
    np.testing.assert_array_equal(first, again)


def test_reset_with_board_option():
    env = HighwayGymEnv(play_as="B")
    obs, info = env.reset(seed=0, options={"board": "3,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0"})
    assert env.board.cells[0] == 3 and env.board.ply == 1 and info["opponent_action"] == -1
    obs, info = env.reset(seed=0, options={"board": "3,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,9"})
    assert env.board.ply == 3 and env.board.to_move == 1  # the opponent (A) moved first
    np.testing.assert_array_equal(obs["observation"], one_hot(env.board.transform(QUARTER_TURN)))
    last_one = Board(tuple(range(1, 16)) + (0,))  # 15 filled: B plays the last move
    env_a = HighwayGymEnv(play_as="A")
    with pytest.raises(HighwayError, match="no move"):
        env_a.reset(options={"board": last_one.to_string()})
    with pytest.raises(HighwayError, match="full"):
        env_a.reset(options={"board": ",".join(map(str, range(1, 17)))})
    env.reset(options={"board": last_one})
    obs, reward, terminated, truncated, info = env.step(encode_action(16, 15))
    assert terminated and reward == 1.0 and info["margin"] == -9  # the numbers in order: B wins


def test_rendering():
    env = HighwayGymEnv(render_mode="rgb_array")
    env.reset(seed=1)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    terminated = False
    while not terminated:
        _, _, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    final = env.render()
    red = np.all(final == np.array(A_COLOUR, np.uint8), axis=-1).sum()
    assert red > np.all(img == np.array(A_COLOUR, np.uint8), axis=-1).sum() + 300  # the A path
    text_env = HighwayGymEnv(render_mode="ansi")
    text_env.reset(seed=1)
    assert "player_0 (A) to move" in text_env.render()
    quiet = HighwayGymEnv()
    quiet.reset(seed=1)
    with pytest.warns(UserWarning, match="render"):
        assert quiet.render() is None


def test_random_policy_plays_legal_moves():
    rng = np.random.default_rng(0)
    board = core.random_board(rng, 9)
    for _ in range(20):
        assert board.is_legal(random_policy(board, board.legal_mask(), rng))


def test_random_policy_draws_as_rng_choice():
    """The default opponent's moves from a seed are those of rng.choice over the legal actions (its
    draw, made without choice's overhead), and it leaves the generator in the same state."""
    mine, ref = np.random.default_rng(5), np.random.default_rng(5)
    for filled in range(16):
        board = core.random_board(np.random.default_rng(filled), filled)
        mask = board.legal_mask()
        for _ in range(5):
            assert random_policy(board, mask, mine) == int(ref.choice(np.flatnonzero(mask)))
    assert mine.bit_generator.state == ref.bit_generator.state


def test_sync_vector_env_stacks_the_infos_of_games_with_and_without_a_reply():
    """opponent_action was None where the opponent made no reply (an illegal move lost, the agent's
    last move) and an int elsewhere: SyncVectorEnv stacked the first game's int and then failed on
    another game's None (TypeError in gymnasium.vector.VectorEnv._add_info)."""
    envs = gymnasium.make_vec("highway_env/Highway-v0", num_envs=2, vectorization_mode="sync",
                              illegal_action="lose")
    obs, _ = envs.reset(seed=0, options={"board": "1,2,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0"})
    legal = int(np.flatnonzero(obs["action_mask"][0])[0])
    illegal = int(np.flatnonzero(obs["action_mask"][1] == 0)[0])
    obs, rewards, term, trunc, info = envs.step(np.array([legal, illegal]))  # game 1 lost: no reply
    assert term.tolist() == [False, True] and info["opponent_action"][1] == -1 and info["opponent_action"][0] >= 0


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_goes_on_from_the_same_position(how):
    """A deepcopy or an unpickled copy of the env, taken mid-game, plays on exactly as the original
    (same position, same opponent generator), and they stay independent. The AEC engine inside is
    EzPickle (a fresh env when copied alone); before, the copy's engine was fresh and its first
    step raised AttributeError."""
    import copy
    import pickle

    env = HighwayGymEnv(play_as="B", render_mode="ansi")
    env.reset(seed=4)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    assert twin.board == env.board and twin.render() == env.render()
    rng = np.random.default_rng(0)
    terminated = False
    while not terminated:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        obs2, reward2, terminated2, truncated2, info2 = twin.step(action)
        assert twin.board == env.board and info2 == info
        assert (reward2, terminated2, truncated2) == (reward, terminated, truncated)
        np.testing.assert_array_equal(obs2["observation"], obs["observation"])
        np.testing.assert_array_equal(obs2["action_mask"], obs["action_mask"])
        np.testing.assert_array_equal(twin.action_masks(), env.action_masks())
    again = copy.deepcopy(twin) if how == "deepcopy" else pickle.loads(pickle.dumps(twin))
    again.reset(seed=5)
    assert twin.board.ply == 16 and again.board.ply == 1  # independent of each other


def test_an_illegal_move_that_loses_reports_no_opponent_reply():
    """The opponent does not reply to a move that lost the game: opponent_action is -1 there, as
    the native vector env reports it; it was the reply to the agent's move before."""
    env = HighwayGymEnv(play_as="A", illegal_action="lose")
    env.reset(seed=0)
    _, _, _, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert info["opponent_action"] >= 0
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert (reward, terminated, info["opponent_action"]) == (-1.0, True, -1)
