"""The native Gymnasium vector env (highway_env.gym_vector_env): the same steps as Gymnasium's
SyncVectorEnv over the single env, Gymnasium's NEXT_STEP autoreset, seeding, and bad input."""

import gymnasium as gym
import numpy as np
import pytest

import highway_env  # noqa: F401  (registers the ids)
from highway_env.core import Board, HighwayError, IllegalMoveError
from highway_env.gym_vector_env import HighwayVectorEnv

ENV_ID = "highway_env/Highway-v0"


def first_legal(board, mask, rng):
    return int(np.flatnonzero(mask)[0])


def agent_actions(obs, rng, illegal_share=0.0):
    """A random legal action per game (0 where the mask is empty), now and then an illegal one."""
    out = []
    for mask in obs["action_mask"].astype(bool):
        legal = np.flatnonzero(mask)
        if len(legal) and rng.random() < illegal_share and (~mask).any():
            out.append(int(rng.choice(np.flatnonzero(~mask))))
        else:
            out.append(int(rng.choice(legal)) if len(legal) else 0)
    return np.array(out)


def test_make_vec_builds_it_and_sync_still_builds_the_single_envs():
    envs = gym.make_vec(ENV_ID, num_envs=3, play_as="B")
    assert isinstance(envs, HighwayVectorEnv) and envs.num_envs == 3 and envs.play_as == "B"
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert type(gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync")).__name__ == "SyncVectorEnv"


@pytest.mark.parametrize("play_as, frame, illegal", [("A", "absolute", "raise"), ("B", "player", "raise"),
                                                     ("A", "player", "lose"), ("B", "absolute", "lose")])
def test_the_same_steps_as_gymnasiums_sync_vector_env(play_as, frame, illegal):
    """Game by game the native env steps as SyncVectorEnv over HighwayGymEnv: observations, masks,
    rewards, ends, autoresets and infos, over several games each (a deterministic opponent, so both
    see the same replies)."""
    kwargs = dict(play_as=play_as, frame=frame, illegal_action=illegal, opponent=first_legal)
    native = gym.make_vec(ENV_ID, num_envs=5, **kwargs)
    sync = gym.make_vec(ENV_ID, num_envs=5, vectorization_mode="sync", **kwargs)
    (obs, info), (obs_s, info_s) = native.reset(seed=1), sync.reset(seed=1)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(60):
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(obs[key], obs_s[key])
        np.testing.assert_array_equal(info["ply"], info_s["ply"])
        for key in ("min_a", "min_b", "margin"):
            assert (key in info) == (key in info_s)
            if key in info:
                np.testing.assert_array_equal(info[f"_{key}"], info_s[f"_{key}"])
                np.testing.assert_array_equal(info[key][info[f"_{key}"]], info_s[key][info_s[f"_{key}"]])
        actions = agent_actions(obs, rng, 0.05 if illegal == "lose" else 0.0)
        obs, *rest, info = native.step(actions)
        obs_s, *rest_s, info_s = sync.step(actions)
        for x, y in zip(rest, rest_s):  # rewards, terminations, truncations
            np.testing.assert_array_equal(x, y)
        ends += int(rest[1].sum())
    assert ends >= 10  # several whole games, and the autoresets after them


def test_same_seed_same_games_and_the_default_opponent_plays_every_legal_move():
    def run(seed):
        envs = HighwayVectorEnv(16, play_as="B")
        obs, info = envs.reset(seed=seed)
        replies, rewards = [info["opponent_action"].copy()], []
        rng = np.random.default_rng(3)
        for _ in range(40):
            obs, r, term, trunc, info = envs.step(agent_actions(obs, rng))
            replies.append(info["opponent_action"].copy())
            rewards.append(r)
        return np.array(replies), np.array(rewards)

    r1, w1 = run(7)
    r2, w2 = run(7)
    r3, _ = run(8)
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(w1, w2)
    assert (r1 != r3).any()
    first = r1[0]  # B plays second: the opponent (A) opened every game with a uniformly random move
    assert (first >= 0).all() and len(set(first.tolist())) > 8


def test_next_step_autoreset_ignores_the_action_and_starts_again():
    envs = HighwayVectorEnv(2, opponent=first_legal)
    envs.reset(seed=0, options={"board": "1,2,3,4,5,6,7,8,9,10,11,12,13,14,0,0"})  # A to move, 2 cells left
    obs, rewards, term, trunc, info = envs.step(np.flatnonzero(envs.action_masks()[0])[[0, 0]])
    assert term.all() and not trunc.any() and (obs["action_mask"] == 0).all() and (info["ply"] == 16).all()
    assert info["_margin"].all() and set(rewards.tolist()) <= {-1.0, 0.0, 1.0}
    b = Board(tuple(int(v) for v in envs.boards[0]))
    assert rewards[0] == b.outcome().value and info["margin"][0] == b.outcome().margin
    obs, rewards, term, trunc, info = envs.step(np.array([255, 255]))  # ignored: the games start again
    assert (rewards == 0).all() and not term.any() and (info["ply"] == 0).all()
    assert obs["action_mask"].sum(axis=1).tolist() == [256, 256] and not obs["observation"].any()


def test_an_illegal_action_names_the_game_and_changes_nothing():
    envs = HighwayVectorEnv(3, frame="player", play_as="B")
    obs, _ = envs.reset(seed=0)
    before = envs.boards.copy()
    actions = agent_actions(obs, np.random.default_rng(0))
    actions[2] = int(np.flatnonzero(obs["action_mask"][2] == 0)[0])
    with pytest.raises(IllegalMoveError, match=rf"^game 2: the agent's action \({actions[2]} in the player frame\)"):
        envs.step(actions)
    np.testing.assert_array_equal(envs.boards, before)


def test_lose_ends_only_the_offending_game():
    envs = HighwayVectorEnv(3, illegal_action="lose")
    obs, _ = envs.reset(seed=0, options={"board": "1,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0"})
    actions = agent_actions(obs, np.random.default_rng(0))
    actions[1] = int(np.flatnonzero(obs["action_mask"][1] == 0)[0])
    obs, rewards, term, trunc, info = envs.step(actions)
    assert term.tolist() == [False, True, False] and rewards.tolist() == [0.0, -1.0, 0.0]
    assert info["_illegal_action"].tolist() == [False, True, False] and info["illegal_action"][1] == actions[1]


def test_a_batched_opponent_is_asked_once_for_the_whole_batch():
    calls = []

    def batched(boards, masks, rng):
        calls.append(len(boards))
        return masks.argmax(axis=1)

    envs = HighwayVectorEnv(64, play_as="B", opponent=batched, batched_opponent=True)
    obs, info = envs.reset(seed=0)
    assert calls == [64] and (info["opponent_action"] == 0 * 16 + 0).all()  # number 1 in cell 0
    envs.step(agent_actions(obs, np.random.default_rng(0)))
    assert calls == [64, 64]


@pytest.mark.parametrize("kwargs, match", [
    ({"num_envs": 0}, "num_envs must be in 1.."), ({"num_envs": 2.0}, "num_envs must be an integer"),
    ({"play_as": "C"}, "play_as"), ({"frame": "mine"}, "frame must be one of"),
    ({"illegal_action": "skip"}, "illegal_action"), ({"opponent": 3}, "opponent must be a callable"),
    ({"render_mode": "human"}, "does not render"),
])
def test_bad_settings_name_the_value(kwargs, match):
    with pytest.raises(HighwayError, match=match):
        HighwayVectorEnv(**{"num_envs": 2, **kwargs})


@pytest.mark.parametrize("actions, match", [
    (np.array([0]), r"shape \(2,\), got shape \(1,\)"), (np.array([0.0, 1.0]), "integers, got dtype float64"),
    (np.array([0, 256]), "game 1: action 256 outside 0..255"),
])
def test_bad_actions_name_the_value(actions, match):
    envs = HighwayVectorEnv(2)
    envs.reset(seed=0)
    with pytest.raises(HighwayError, match=match):
        envs.step(actions)


def test_a_bad_opponent_reply_names_the_game():
    envs = HighwayVectorEnv(2, play_as="B", opponent=lambda board, mask, rng: 3.0)
    with pytest.raises(IllegalMoveError, match=r"game 0: the opponent policy returned 3.0, not an action int"):
        envs.reset(seed=0)
    envs = HighwayVectorEnv(2, play_as="B", opponent=lambda board, mask, rng: 500)
    with pytest.raises(IllegalMoveError, match=r"game 0: the opponent policy returned an action outside 0..255"):
        envs.reset(seed=0)
    envs = HighwayVectorEnv(2, play_as="B", opponent=lambda boards, masks, rng: np.array([0, 10**30], object),
                            batched_opponent=True)
    with pytest.raises(IllegalMoveError, match=r"game 1: the opponent policy returned an action outside 0..255"):
        envs.reset(seed=0)
    envs = HighwayVectorEnv(2, play_as="B", opponent=lambda boards, masks, rng: np.array([0, 0]),
                            batched_opponent=True)
    envs.reset(seed=0)
    with pytest.raises(IllegalMoveError, match=r"game 0: the opponent policy.s action: illegal action 0 \(1 at cell 0\): cell 0 already holds 1"):
        envs.step(np.flatnonzero(envs.action_masks()[0])[[0, 0]])


def test_step_before_reset_and_a_board_without_a_move_are_refused():
    with pytest.raises(HighwayError, match="reset"):
        HighwayVectorEnv(2).step(np.array([0, 0]))
    with pytest.raises(HighwayError, match="no move"):  # B to move on the last cell: the opponent's
        HighwayVectorEnv(2, play_as="A").reset(options={"board": "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,0"})
