"""The native Gymnasium vector env (highway_env.gym_vector_env): the same steps as Gymnasium's
SyncVectorEnv over the single env, Gymnasium's NEXT_STEP autoreset, seeding, and bad input."""

import hashlib

import gymnasium as gym
import numpy as np
import pytest

import highway_env  # noqa: F401  (registers the ids)
from highway_env.core import Board, HighwayError, IllegalMoveError
from highway_env.gym_env import random_policy
from highway_env.gym_vector_env import HighwayVectorEnv
from optional_parts import require_modules

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


def assert_same_steps(kwargs, steps=60, illegal_share=0.0, options=None, num_envs=5, seed=1, reseed=None):
    """Steps the native env and SyncVectorEnv over HighwayGymEnv side by side with the same actions and
    asserts, game by game, the same observations, masks, rewards, ends, autoresets and infos; returns
    the number of games that ended. ``reseed``: (seed, reset_mask or None) of a reset halfway."""
    native = gym.make_vec(ENV_ID, num_envs=num_envs, **kwargs)
    sync = gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="sync", **kwargs)
    (obs, info), (obs_s, info_s) = native.reset(seed=seed, options=options), sync.reset(seed=seed, options=options)
    rng = np.random.default_rng(0)
    ends, lost = 0, np.zeros(num_envs, bool)
    for t in range(steps):
        if reseed is not None and t == steps // 2:
            again, mask = reseed
            options = None if mask is None else {"reset_mask": mask}
            obs, info = native.reset(seed=again, options=options)
            obs_s, info_s = sync.reset(seed=again, options=None if mask is None else {"reset_mask": mask.copy()})
            lost = np.zeros(num_envs, bool)
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(obs[key], obs_s[key])
        shown = info["_ply"]  # every game, but after a partial reset only those it started
        np.testing.assert_array_equal(shown, info_s["_ply"])
        np.testing.assert_array_equal(info["ply"][shown], info_s["ply"][shown])
        np.testing.assert_array_equal(native.action_masks(), np.array(sync.call("action_masks")))
        # (the single env repeats its last reply in the info of a game lost by an illegal action)
        np.testing.assert_array_equal(info["opponent_action"][shown & ~lost], info_s["opponent_action"][shown & ~lost])
        for key in ("min_a", "min_b", "margin"):
            assert (key in info) == (key in info_s)
            if key in info:
                np.testing.assert_array_equal(info[f"_{key}"], info_s[f"_{key}"])
                np.testing.assert_array_equal(info[key][info[f"_{key}"]], info_s[key][info_s[f"_{key}"]])
        actions = agent_actions(obs, rng, illegal_share)
        obs, *rest, info = native.step(actions)
        obs_s, *rest_s, info_s = sync.step(actions)
        for x, y in zip(rest, rest_s):  # rewards, terminations, truncations
            np.testing.assert_array_equal(x, y)
            assert x.dtype == y.dtype
        lost = info.get("_illegal_action", np.zeros(num_envs, bool))
        ends += int((rest[1] | rest[2]).sum())
    return ends


@pytest.mark.parametrize("play_as, frame, illegal", [("A", "absolute", "raise"), ("B", "player", "raise"),
                                                     ("A", "player", "lose"), ("B", "absolute", "lose")])
def test_the_same_steps_as_gymnasiums_sync_vector_env(play_as, frame, illegal):
    """Game by game the native env steps as SyncVectorEnv over HighwayGymEnv: observations, masks,
    rewards, ends, autoresets and infos, over several games each (a deterministic opponent, so both
    see the same replies)."""
    kwargs = dict(play_as=play_as, frame=frame, illegal_action=illegal, opponent=first_legal)
    assert assert_same_steps(kwargs, illegal_share=0.05 if illegal == "lose" else 0.0) >= 10
    # several whole games, and the autoresets after them


@pytest.mark.parametrize("kwargs, board, illegal_share", [
    ({"play_as": "B"}, "1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", 0.0),  # the opponent (A) to move at the start
    ({"play_as": "A"}, "1,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0", 0.0),
    ({"play_as": "B"}, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,0,0", 0.0),  # A replies, B plays the last move
    ({"play_as": "A", "illegal_action": "lose"}, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,0,0", 0.5),  # illegal last move
    ({"play_as": "B", "illegal_action": "lose", "frame": "player"}, "1,2,3,4,5,6,7,8,9,10,11,12,13,0,0,0", 0.5),
    ({"play_as": "A", "max_episode_steps": 3}, None, 0.0),  # make's TimeLimit: truncated after 3 steps
    ({"play_as": "B", "max_episode_steps": 1, "illegal_action": "lose"}, None, 0.3),
])
def test_the_same_steps_as_sync_from_a_position_at_the_end_and_with_a_time_limit(kwargs, board, illegal_share):
    options = {"board": board} if board else None
    assert assert_same_steps({**kwargs, "opponent": first_legal}, 25, illegal_share, options) >= 5


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


def trajectory_digest(seed: int, play_as: str, frame: str, episodes: int = 200, num_envs: int = 64) -> str:
    """sha256 (16 hex digits) of every step's observations, rewards, ends and opponent replies until
    ``episodes`` games ended, the agent playing a random legal move from its own generator."""
    envs = HighwayVectorEnv(num_envs, play_as=play_as, frame=frame)
    obs, info = envs.reset(seed=seed)
    digest, rng, ended = hashlib.sha256(info["opponent_action"].tobytes()), np.random.default_rng(seed + 1000), 0
    while ended < episodes:
        keys = np.where(obs["action_mask"] != 0, rng.random(obs["action_mask"].shape), -1.0)
        obs, rewards, term, trunc, info = envs.step(keys.argmax(axis=1))
        for x in (obs["observation"], obs["action_mask"], rewards, term, trunc, info["opponent_action"]):
            digest.update(x.tobytes())
        ended += int(term.sum())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("seed, play_as, frame, want", [(0, "A", "absolute", "7a8c21cf9a868c7d"),
                                                         (1, "B", "player", "3e7c4ca02373370e"),
                                                         (2, "A", "player", "215c594b85cdb770")])
def test_the_default_opponents_moves_stay_those_the_shipped_figures_were_measured_with(seed, play_as, frame, want):
    """The default opponent's games, pinned (the digests of the env at commit bf9cc19): a faster draw
    or step must keep every move, as the evaluation figures measured against it depend on them."""
    assert trajectory_digest(seed, play_as, frame) == want


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
    as_list = HighwayVectorEnv(3, play_as="B", opponent=lambda b, m, rng: m.argmax(axis=1).tolist(),
                               batched_opponent=True)  # a list of ints is an answer too
    assert as_list.reset(seed=0)[1]["opponent_action"].tolist() == [0, 0, 0]
    with_a_bool = HighwayVectorEnv(2, play_as="B", opponent=lambda b, m, rng: [0, True], batched_opponent=True)
    with pytest.raises(IllegalMoveError, match="game 1: the opponent policy returned True, not an action int"):
        with_a_bool.reset(seed=0)


@pytest.mark.parametrize("kwargs, match", [
    ({"num_envs": 0}, "num_envs must be in 1.."), ({"num_envs": 2.0}, "num_envs must be an integer"),
    ({"play_as": "C"}, "play_as"), ({"frame": "mine"}, "frame must be one of"),
    ({"illegal_action": "skip"}, "illegal_action"), ({"opponent": 3}, "opponent must be a callable"),
    ({"render_mode": "rgb"}, r"unknown render_mode 'rgb'; expected None or one of \['human', 'ansi', 'rgb_array'\]"),
])
def test_bad_settings_name_the_value(kwargs, match):
    with pytest.raises(HighwayError, match=match):
        HighwayVectorEnv(**{"num_envs": 2, **kwargs})


@pytest.mark.parametrize("actions, match", [
    (np.array([0]), r"shape \(2,\), got shape \(1,\)"), (np.array([0.0, 1.0]), "integers, got dtype float64"),
    (np.array([0, 256]), "game 1: action 256 outside 0..255"),
    (np.array([-1, 0]), "game 0: action -1 outside 0..255"), (np.array(3), r"shape \(2,\), got shape \(\)"),
    ([1, True], "game 1: actions must be integers, got the bool True"),
    (np.array([2**64 - 1, 0], np.uint64), "game 0: action 18446744073709551615"),
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


def test_an_interrupt_after_the_default_opponents_draw_leaves_its_generator_as_it_was(monkeypatch):
    """Whole or nothing for the default random opponent too: an interrupt (Ctrl-C) that lands after
    its draw for the batch, while the step finishes, leaves np_random where it was, so the step
    retried gives the games of an undisturbed run."""
    envs, twin = HighwayVectorEnv(4, play_as="B"), HighwayVectorEnv(4, play_as="B")
    (obs, _), _ = envs.reset(seed=5), twin.reset(seed=5)
    actions = agent_actions(obs, np.random.default_rng(0))
    state = envs.np_random.bit_generator.state
    final_paths = HighwayVectorEnv._final_paths

    def interrupted(self, games):
        monkeypatch.setattr(HighwayVectorEnv, "_final_paths", final_paths)  # once
        raise KeyboardInterrupt

    monkeypatch.setattr(HighwayVectorEnv, "_final_paths", interrupted)
    with pytest.raises(KeyboardInterrupt):
        envs.step(actions)
    assert envs.np_random.bit_generator.state == state
    (obs, *rest), (obs_t, *rest_t) = envs.step(actions), twin.step(actions)
    np.testing.assert_array_equal(obs["observation"], obs_t["observation"])
    np.testing.assert_array_equal(rest[3]["opponent_action"], rest_t[3]["opponent_action"])


def test_an_opponent_that_fails_in_one_game_leaves_every_game_as_it_was():
    """A per-game opponent raising in the third game of a step (after replying in two): every game,
    the counters and np_random as before the step, and the env then steps as a twin that never failed."""
    calls = {"left": None}

    def opponent(board, mask, rng):
        rng.random()  # moves the generator before failing
        if calls["left"] is not None:
            calls["left"] -= 1
            if calls["left"] < 0:
                raise RuntimeError("the opponent failed")
        return int(rng.choice(np.flatnonzero(mask)))  # the twin's replies only if each generator is restored

    envs, twin = HighwayVectorEnv(4, opponent=opponent), HighwayVectorEnv(4, opponent=opponent)
    (obs, _), _ = envs.reset(seed=3), twin.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(2):
        actions = agent_actions(obs, rng)
        obs, *_ = envs.step(actions)
        twin.step(actions)
    boards, rng_state = envs.boards.copy(), envs.np_random.bit_generator.state
    game_states = [g.bit_generator.state for g in envs.get_attr("np_random")]  # each game's, drawn from
    actions = agent_actions(obs, rng)
    calls["left"] = 2
    with pytest.raises(RuntimeError, match="the opponent failed"):
        envs.step(actions)
    np.testing.assert_array_equal(envs.boards, boards)
    assert envs.np_random.bit_generator.state == rng_state
    assert [g.bit_generator.state for g in envs.get_attr("np_random")] == game_states
    calls["left"] = None
    for _ in range(30):  # then the same steps as the twin
        (obs, *rest), (obs_t, *rest_t) = envs.step(actions), twin.step(actions)
        np.testing.assert_array_equal(obs["observation"], obs_t["observation"])
        for x, y in zip(rest[:3], rest_t[:3]):
            np.testing.assert_array_equal(x, y)
        actions = agent_actions(obs, rng)


def test_a_failing_reset_keeps_the_games_and_a_bad_batched_reply_changes_nothing():
    def illegal_late(boards, masks, rng):
        rng.random()
        replies = masks.argmax(axis=1)
        replies[-1] = 0 if (boards[-1] != 0).sum() > 2 else replies[-1]  # cell 0 holds 1 by then: illegal
        return replies

    envs = HighwayVectorEnv(3, play_as="B", opponent=illegal_late, batched_opponent=True)
    obs, _ = envs.reset(seed=0)
    obs, *_ = envs.step(agent_actions(obs, np.random.default_rng(1)))
    boards, rng_state, masks = envs.boards.copy(), envs.np_random.bit_generator.state, envs.action_masks()
    with pytest.raises(IllegalMoveError, match="game 2: the opponent policy"):
        envs.step(agent_actions(obs, np.random.default_rng(2)))
    np.testing.assert_array_equal(envs.boards, boards)
    assert envs.np_random.bit_generator.state == rng_state
    np.testing.assert_array_equal(envs.action_masks(), masks)
    with pytest.raises(IllegalMoveError, match="game 2: the opponent policy"):  # B: the opponent opens
        envs.reset(seed=5, options={"board": "1,2,3,4,0,0,0,0,0,0,0,0,0,0,0,0"})
    np.testing.assert_array_equal(envs.boards, boards)
    assert envs.np_random.bit_generator.state == rng_state


def test_reset_mask_starts_only_those_games_and_episode_statistics_stay_right():
    """options['reset_mask'] (SyncVectorEnv's partial reset) restarts the games it names only, and
    Gymnasium's RecordEpisodeStatistics counts every episode's return and length right, across
    NEXT_STEP autoresets (the same as over SyncVectorEnv) and a partial reset (counted here: SyncVectorEnv
    pops the mask from the options, so the wrapper over it restarts every game's count)."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    kwargs = dict(num_envs=4, play_as="B", opponent=first_legal, illegal_action="lose")
    native = RecordEpisodeStatistics(gym.make_vec(ENV_ID, **kwargs))
    sync = RecordEpisodeStatistics(gym.make_vec(ENV_ID, vectorization_mode="sync", **kwargs))
    (obs, _), _ = native.reset(seed=0), sync.reset(seed=0)
    rng = np.random.default_rng(0)
    returns, lengths, restart, episodes = np.zeros(4), np.zeros(4, int), np.zeros(4, bool), []
    for t in range(40):
        actions = agent_actions(obs, rng, 0.1)
        obs, rewards, term, trunc, info = native.step(actions)
        returns[restart], lengths[restart] = 0, 0
        returns[~restart] += rewards[~restart]
        lengths[~restart] += 1
        restart = term | trunc
        assert ("episode" in info) == restart.any()
        if restart.any():
            assert info["_episode"].tolist() == restart.tolist()
            np.testing.assert_array_equal(info["episode"]["r"][restart], returns[restart])
            np.testing.assert_array_equal(info["episode"]["l"][restart], lengths[restart])
            episodes += list(zip(returns[restart], lengths[restart]))
        if t < 20:
            *_, info_s = sync.step(actions)
            for key in ("r", "l"):
                np.testing.assert_array_equal(info.get("episode", {}).get(key), info_s.get("episode", {}).get(key))
        if t == 20:  # restart games 1 and 3 only
            boards = native.unwrapped.boards.copy()
            mask = np.array([False, True, False, True])
            obs, info = native.reset(options={"reset_mask": mask})
            np.testing.assert_array_equal(native.unwrapped.boards[~mask], boards[~mask])
            assert (info["ply"][mask] == 1).all() and info["_ply"].tolist() == mask.tolist()
            returns[mask], lengths[mask], restart[mask] = 0, 0, False
    assert len(episodes) >= 8 and len({length for _, length in episodes}) > 1
    assert [(float(r), int(n)) for r, n in zip(native.return_queue, native.length_queue)] == \
        [(float(r), int(n)) for r, n in episodes]


def test_disabled_autoreset_waits_for_a_reset_mask():
    envs = gym.make_vec(ENV_ID, num_envs=2, opponent=first_legal, autoreset_mode="Disabled")
    assert envs.autoreset_mode == envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.DISABLED
    assert HighwayVectorEnv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP  # not shared
    envs.reset(seed=0, options={"board": "1,2,3,4,5,6,7,8,9,10,11,12,13,14,0,0"})
    obs, rewards, term, trunc, info = envs.step(np.flatnonzero(envs.action_masks()[0])[[0, 0]])
    assert term.all()
    with pytest.raises(HighwayError, match="game 0 has ended: with autoreset_mode DISABLED reset it"):
        envs.step(np.array([0, 0]))
    obs, info = envs.reset(options={"reset_mask": np.array([True, False])})
    assert obs["action_mask"][0].all() and not obs["action_mask"][1].any()
    with pytest.raises(HighwayError, match="game 1 has ended"):
        envs.step(np.array([0, 0]))
    envs.reset(options={"reset_mask": np.array([False, True])})
    obs, rewards, term, trunc, info = envs.step(np.array([0, 0]))
    assert not term.any() and (info["ply"] == 2).all()


def test_torchrl_drives_it_with_autoreset_disabled():
    """TorchRL's GymWrapper takes Gymnasium vector envs whose autoreset mode is DISABLED (it resets the
    ended games itself with options['reset_mask']): whole games, rewards at their ends."""
    require_modules("TorchRL", "torchrl extra", ("torchrl",), 'pip install -e ".[torchrl]"')
    import torch
    from torchrl.envs.libs.gym import GymWrapper

    envs = gym.make_vec(ENV_ID, num_envs=3, play_as="B", autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    env = GymWrapper(envs, categorical_action_encoding=True)
    assert env.batch_size == torch.Size([3])

    def first_legal_policy(td):
        td["action"] = td["action_mask"].to(torch.int64).argmax(dim=-1)
        return td

    env.set_seed(0)
    td = env.rollout(24, first_legal_policy, break_when_any_done=False)
    done = td["next", "done"].squeeze(-1)
    assert (done.sum(dim=1) == 3).all() and done[:, 7::8].all()  # B plays 8 moves a game
    rewards = td["next", "reward"].squeeze(-1)
    assert set(rewards[done].tolist()) <= {-1.0, 0.0, 1.0} and (rewards[~done] == 0).all()
    assert (td["observation"][:, 8].sum(dim=(-1, -2, -3)) == 1).all()  # a fresh game: A's opening move only


@pytest.mark.parametrize("kwargs, match", [
    ({"autoreset_mode": "SameStep"}, "autoreset_mode must be AutoresetMode.NEXT_STEP or AutoresetMode.DISABLED"),
    ({"autoreset_mode": "never"}, "got 'never'"), ({"max_episode_steps": 0}, "max_episode_steps must be None, -1"),
    ({"max_episode_steps": 2.5}, "max_episode_steps must be an integer"),
])
def test_bad_vector_settings_name_the_value(kwargs, match):
    with pytest.raises(HighwayError, match=match):
        gym.make_vec(ENV_ID, num_envs=2, **kwargs)


def test_make_vec_takes_gymnasium_make_settings():
    envs = gym.make_vec(ENV_ID, num_envs=2, max_episode_steps=-1, disable_env_checker=True)
    assert envs.max_episode_steps is None and envs.spec.kwargs["disable_env_checker"] is True


@pytest.mark.parametrize("options, match", [
    ({"reset_mask": [True, False]}, r"bool array of shape \(2,\)"),
    ({"reset_mask": np.zeros(2, bool)}, "names no game"),
    ({"reset_mask": np.ones(3, bool)}, r"shape \(2,\)"),
])
def test_a_bad_reset_mask_is_named(options, match):
    envs = HighwayVectorEnv(2)
    envs.reset(seed=0)
    with pytest.raises(HighwayError, match=match):
        envs.reset(options=options)
    with pytest.raises(HighwayError, match="once before"):
        HighwayVectorEnv(2).reset(options={"reset_mask": np.ones(2, bool)})


def test_what_a_step_returns_is_fresh_and_in_the_spaces():
    """Observations, rewards, ends and infos are new arrays that later steps leave alone (learners
    keep them in rollout buffers), observation_space.contains holds every step, and actions come as
    arrays of any integer dtype or lists."""
    envs = gym.make_vec(ENV_ID, num_envs=4, play_as="B", illegal_action="lose", max_episode_steps=6)
    obs, info = envs.reset(seed=0)
    rng, kept = np.random.default_rng(0), []
    for t in range(30):
        assert envs.observation_space.contains(obs)
        actions = agent_actions(obs, rng, 0.1)
        actions = [actions.astype(np.int16), actions.astype(np.uint8), actions.tolist()][t % 3]
        out = envs.step(actions)
        kept.append((out, [np.copy(x) for x in out[1:4]], {k: v.copy() for k, v in out[0].items()},
                     {k: v.copy() for k, v in out[4].items()}))
        obs = out[0]
    for (obs, rewards, term, trunc, info), copies, obs_copy, info_copy in kept:
        for x, y in zip((rewards, term, trunc), copies):
            np.testing.assert_array_equal(x, y)
        for key in obs_copy:
            np.testing.assert_array_equal(obs[key], obs_copy[key])
        for key in info_copy:
            np.testing.assert_array_equal(info[key], info_copy[key])


def test_disabled_autoreset_steps_as_sync_with_the_same_reset_masks():
    """autoreset_mode DISABLED against SyncVectorEnv(autoreset_mode=DISABLED): the same steps, and the
    same games after each partial reset of the games that ended or were truncated."""
    kwargs = dict(num_envs=4, play_as="B", opponent=first_legal, illegal_action="lose", max_episode_steps=6)
    disabled = gym.vector.AutoresetMode.DISABLED
    native = gym.make_vec(ENV_ID, autoreset_mode=disabled, **kwargs)
    sync = gym.make_vec(ENV_ID, vectorization_mode="sync", vector_kwargs={"autoreset_mode": disabled}, **kwargs)
    (obs, _), (obs_s, _) = native.reset(seed=0), sync.reset(seed=0)
    rng, resets = np.random.default_rng(0), 0
    for _ in range(40):
        actions = agent_actions(obs, rng, 0.05)
        (obs, *rest), (obs_s, *rest_s) = native.step(actions), sync.step(actions)
        for x, y in [(obs[k], obs_s[k]) for k in obs] + list(zip(rest[:3], rest_s[:3])):
            np.testing.assert_array_equal(x, y)
        ended = rest[1] | rest[2]
        if ended.any():
            resets += int(ended.sum())
            obs, _ = native.reset(options={"reset_mask": ended})
            obs_s, _ = sync.reset(options={"reset_mask": ended.copy()})  # (Sync pops the mask from the options)
            for key in obs:
                np.testing.assert_array_equal(obs[key], obs_s[key])
    assert resets >= 10


def test_the_illegal_action_info_keeps_minus_one_whatever_the_actions_dtype():
    """uint8 actions: the info is int64, the action where a game was lost and -1 elsewhere (numpy's
    where() read -1 as 255 in the actions' dtype)."""
    envs = HighwayVectorEnv(2, illegal_action="lose")
    obs, _ = envs.reset(seed=0, options={"board": "1,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0"})
    actions = np.array([np.flatnonzero(obs["action_mask"][0])[0], 0], np.uint8)  # 0: number 1, on the board
    info = envs.step(actions)[4]
    assert info["illegal_action"].dtype == np.int64 and info["illegal_action"].tolist() == [-1, 0]


@pytest.mark.parametrize("seed, reseed", [
    (5, None), ([3, 1, 4, 1, 5], None), ((2**70, 0, 9, 7, 7), None), ([5, 6, 7, 8, 9], None),
    (0, ([None, 8, None, 6, None], None)),  # None: that game's generator goes on, as in sync
    (2, (11, np.array([False, True, True, False, True]))),  # a partial reset seeds the games it starts
    (4, ([1, 2, 3, 4, 5], np.array([True, False, False, False, True]))),
])
def test_seeds_give_every_game_the_games_of_sync(seed, reseed):
    """reset(seed=...) as SyncVectorEnv's: an int (game i gets seed + i), a list of one int or None per
    game, with reset_mask too. A per-game opponent policy draws from its game's own generator, seeded
    as the single env's np_random, so a random one plays the same games as over SyncVectorEnv."""
    kwargs = dict(play_as="B", opponent=random_policy, illegal_action="lose")
    assert assert_same_steps(kwargs, 40, 0.05, seed=seed, reseed=reseed) >= 8


def test_the_default_opponent_takes_seed_lists_and_an_int_is_its_list():
    """The default (vectorised) opponent draws for the whole batch from the env's np_random: the int s
    and the list s, s+1, ... (what SyncVectorEnv makes of s) give the same games; another list of ints
    seeds it from all of them (np_random_seed -1: not one int); a list with a None leaves it as it is."""
    def replies(seed, envs=None):
        envs = envs or HighwayVectorEnv(6, play_as="B")
        obs, info = envs.reset(seed=seed)
        out, rng = [info["opponent_action"]], np.random.default_rng(0)
        for _ in range(20):
            obs, *_, info = envs.step(agent_actions(obs, rng))
            out.append(info["opponent_action"])
        return np.array(out), envs

    by_int, envs = replies(7)
    assert envs.np_random_seed == 7
    np.testing.assert_array_equal(replies(list(range(7, 13)))[0], by_int)
    listed, envs = replies([7, 8, 9, 10, 11, 0])
    assert envs.np_random_seed == -1 and (listed != by_int).any()
    again, twin = replies([7, 8, 9, 10, 11, 0])
    np.testing.assert_array_equal(again, listed)
    np.testing.assert_array_equal(replies([None, 1, 2, 3, 4, 5], envs)[0], replies(None, twin)[0])  # not reseeded


@pytest.mark.parametrize("seed, match", [
    ([1, 2], r"a list needs one seed per game \(3\), got 2: \[1, 2\]"),
    ([1, 2, -3], r"seed\[2\] must be None or a non-negative int, got -3"),
    ((1, 2.0, 3), r"seed\[1\] must be None or a non-negative int, got 2.0"),
    ([1, True, 3], r"seed\[1\] must be None or a non-negative int, got True"),
    (-1, "seed must be a non-negative int, got -1"), ("7", "seed must be None, an int or a list"),
    (np.zeros((3, 1), int), "seed must be None, an int or a list"),
    ([1, [2], 3], r"seed\[1\] must be None or a non-negative int, got \[2\]"),  # numpy: ragged
])
def test_a_bad_seed_is_named_and_changes_nothing(seed, match):
    envs = HighwayVectorEnv(3, opponent=random_policy)
    envs.reset(seed=0)
    boards, state = envs.boards.copy(), envs.np_random.bit_generator.state
    with pytest.raises(HighwayError, match=match):
        envs.reset(seed=seed)
    np.testing.assert_array_equal(envs.boards, boards)
    assert envs.np_random.bit_generator.state == state


#: the single env's info keys the native env leaves out (they cost more than the step)
LEFT_OUT = {"bounds", "winner", "illegal_reason"}


def assert_same_structure(ours, theirs, path="") -> None:
    """``ours`` equal to ``theirs``: arrays, numbers, lists and tuples item by item, dicts key by key
    but for LEFT_OUT; "t", an episode's wall time, is not compared."""
    if isinstance(ours, dict):
        assert isinstance(theirs, dict), path
        missing = sorted(set(theirs) - set(ours) - LEFT_OUT - {f"_{k}" for k in LEFT_OUT})
        assert not missing, (f"{path}: SyncVectorEnv of the single env has {missing}, the native vector env not: "
                             "give HighwayVectorEnv._infos the key (and its '_' mask) or, if it costs more than "
                             "the step, add it to LEFT_OUT here and to gym_vector_env.py's docstring")
        for key in ours:
            if key in ("t", "_t") or key.startswith("_"):
                continue
            if f"_{key}" in ours:  # Gymnasium's info masks: the values where the mask is set
                shown = ours[f"_{key}"]
                np.testing.assert_array_equal(shown, theirs[f"_{key}"], err_msg=f"{path}/_{key}")
                if not isinstance(ours[key], dict):
                    np.testing.assert_array_equal(ours[key][shown], theirs[key][shown], err_msg=f"{path}/{key}")
                    continue
            assert_same_structure(ours[key], theirs[key], f"{path}/{key}")
    elif isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs), path
        for k, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_structure(a, b, f"{path}/{k}")
    else:
        np.testing.assert_array_equal(ours, theirs, err_msg=path)


def flat_planes(obs):
    return obs["observation"].reshape(len(obs["observation"]), -1).astype(np.float32)


VECTOR_WRAPPERS = {  # Gymnasium's vector wrappers a user would put around this env
    "RecordEpisodeStatistics": lambda e: gym.wrappers.vector.RecordEpisodeStatistics(e),
    "DictInfoToList": lambda e: gym.wrappers.vector.DictInfoToList(e),
    "ClipReward": lambda e: gym.wrappers.vector.ClipReward(e, -0.5, 0.5),
    "TransformReward": lambda e: gym.wrappers.vector.TransformReward(e, lambda r: 2 * r - 1),
    "NormalizeReward": lambda e: gym.wrappers.vector.NormalizeReward(e),
    "FlattenObservation": lambda e: gym.wrappers.vector.FlattenObservation(e),
    "FilterObservation": lambda e: gym.wrappers.vector.FilterObservation(e, ["observation"]),
    "TransformObservation": lambda e: gym.wrappers.vector.TransformObservation(
        e, flat_planes, gym.spaces.Box(0, 1, (e.num_envs, 256), np.float32), gym.spaces.Box(0, 1, (256,), np.float32)),
    "VectorizeTransformObservation": lambda e: gym.wrappers.vector.VectorizeTransformObservation(
        e, gym.wrappers.FlattenObservation),
    "NormalizeObservation": lambda e: gym.wrappers.vector.NormalizeObservation(
        gym.wrappers.vector.DtypeObservation(gym.wrappers.vector.FlattenObservation(e), np.float32)),
    "TransformAction": lambda e: gym.wrappers.vector.TransformAction(e, lambda a: a, e.action_space),
    "stacked": lambda e: gym.wrappers.vector.DictInfoToList(gym.wrappers.vector.ClipReward(
        gym.wrappers.vector.RecordEpisodeStatistics(e), 0.0, 1.0)),
}


@pytest.mark.parametrize("name", list(VECTOR_WRAPPERS))
def test_gymnasiums_vector_wrappers_work_as_over_sync(name):
    """Each of Gymnasium's vector wrappers that fits the space gives over the native env what it gives
    over SyncVectorEnv: observations, rewards, ends and infos, through autoresets."""
    kwargs = dict(num_envs=3, play_as="B", opponent=first_legal, illegal_action="lose")
    native = VECTOR_WRAPPERS[name](gym.make_vec(ENV_ID, **kwargs))
    sync = VECTOR_WRAPPERS[name](gym.make_vec(ENV_ID, vectorization_mode="sync", **kwargs))
    assert native.observation_space == sync.observation_space and native.action_space == sync.action_space
    out, out_s = native.reset(seed=0), sync.reset(seed=0)
    rng, ends = np.random.default_rng(0), 0
    for _ in range(30):
        assert_same_structure(out, out_s)
        actions = agent_actions({"action_mask": native.unwrapped.action_masks()}, rng, 0.1)
        out, out_s = native.step(actions), sync.step(actions)
        ends += int((out[2] | out[3]).sum())
    assert ends >= 5


@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
def test_render_gives_each_games_frame_as_sync(render_mode):
    """render() in the single env's frame modes: one frame per game, those SyncVectorEnv gives, also
    of games that ended and games an autoreset started."""
    kwargs = dict(num_envs=3, opponent=first_legal, render_mode=render_mode)
    native, sync = gym.make_vec(ENV_ID, **kwargs), gym.make_vec(ENV_ID, vectorization_mode="sync", **kwargs)
    assert native.render_mode == sync.render_mode == render_mode
    board = "1,2,3,4,5,6,7,8,9,10,11,12,13,0,0,0"  # A to move: 2 more steps end the games
    native.reset(seed=0, options={"board": board}), sync.reset(seed=0, options={"board": board})
    for _ in range(3):
        frames, frames_s = native.render(), sync.render()
        assert isinstance(frames, tuple) and len(frames) == 3
        assert_same_structure(frames, frames_s)
        actions = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in native.action_masks()])
        native.step(actions), sync.step(actions)


def test_human_render_prints_every_game_as_sync(capsys):
    """render_mode "human" prints each game's board after a reset and a step, as the single envs in
    SyncVectorEnv do (render() itself prints them and gives Nones); no mode: Nones, as sync."""
    printed = []
    for mode in ("vector_entry_point", "sync"):
        envs = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode=mode, opponent=first_legal, render_mode="human")
        envs.reset(seed=0)
        envs.step(np.array([5, 17]))
        assert envs.render() == (None, None)
        envs.reset(options={"reset_mask": np.array([False, True])})
        printed.append(capsys.readouterr().out)
        unset = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode=mode)
        with pytest.raises((gym.error.ResetNeeded, HighwayError), match="before"):
            unset.render()
        unset.reset(seed=0)
        with pytest.warns(UserWarning, match="without specifying any render mode"):
            assert unset.render() == (None, None)
    assert printed[0] == printed[1] and printed[0].count("ply") == 7


def test_the_vector_env_attributes_are_those_of_sync():
    """metadata (render modes, fps, autoreset mode), spec, the single and batched spaces, repr,
    unwrapped and close() twice as SyncVectorEnv's; np_random and np_random_seed as VectorEnv's."""
    native = gym.make_vec(ENV_ID, num_envs=3, play_as="B")
    sync = gym.make_vec(ENV_ID, num_envs=3, play_as="B", vectorization_mode="sync")
    assert native.metadata == sync.metadata and "render_fps" in native.metadata
    assert native.spec.id == sync.spec.id == ENV_ID and native.spec.kwargs["play_as"] == "B"
    for name in ("single_observation_space", "single_action_space", "observation_space", "action_space"):
        assert getattr(native, name) == getattr(sync, name)
    assert repr(native) == repr(sync).replace("SyncVectorEnv", "HighwayVectorEnv")
    assert native.unwrapped is native
    native.reset(seed=9)
    assert native.np_random_seed == 9 and isinstance(native.np_random, np.random.Generator)
    native.close()
    native.close()
    assert native.closed


def test_call_get_attr_and_set_attr_as_sync():
    """call / get_attr (one value per game) and set_attr of the shared settings as SyncVectorEnv's;
    an attribute a game does not have is an AttributeError naming it, as there."""
    kwargs = dict(num_envs=3, play_as="B", opponent=random_policy, frame="player")
    native = gym.make_vec(ENV_ID, **kwargs)
    sync = gym.make_vec(ENV_ID, vectorization_mode="sync", **kwargs)
    (obs, info), _ = native.reset(seed=[4, 0, 4]), sync.reset(seed=[4, 0, 4])
    assert info["opponent_action"][0] == info["opponent_action"][2]  # the same seed, the same opening
    actions = agent_actions(obs, np.random.default_rng(0))
    native.step(actions), sync.step(actions)
    for name in ("action_masks", "board", "np_random_seed", "play_as", "frame", "illegal_action",
                 "render_mode", "observation_space", "action_space"):
        assert_same_structure(native.get_attr(name), sync.get_attr(name))
        assert len(native.get_attr(name)) == 3
    assert native.get_attr("np_random_seed") == (4, 0, 4)
    assert_same_structure(native.call("action_masks"), sync.call("action_masks"))
    native.set_attr("opponent", first_legal), sync.set_attr("opponent", first_legal)
    native.set_attr("illegal_action", ["lose"] * 3), sync.set_attr("illegal_action", ["lose"] * 3)
    obs, *_ = native.step(actions := agent_actions(obs, np.random.default_rng(1)))
    obs_s, *_ = sync.step(actions)
    assert_same_structure(obs, obs_s)
    assert native.opponent is first_legal and native.illegal_action == "lose"
    for envs in (native, sync):
        with pytest.raises(AttributeError, match="no_such"):
            envs.get_attr("no_such")
    with pytest.raises(HighwayError, match="the games share one illegal_action, but game 1 got 'raise'"):
        native.set_attr("illegal_action", ["lose", "raise", "lose"])
    with pytest.raises(HighwayError, match=r"one value per game \(3\), got 2"):
        native.set_attr("opponent", [first_legal, first_legal])
    with pytest.raises(HighwayError, match="illegal_action must be 'raise' or 'lose', got 'skip'"):
        native.set_attr("illegal_action", "skip")
    with pytest.raises(AttributeError, match="'play_as' cannot be set"):
        native.set_attr("play_as", "A")
