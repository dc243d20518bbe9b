"""Training code written for PettingZoo's classic envs (connect_four, tictactoe), run on ours with only
the env line changed: what PettingZoo's own tutorials (``tutorials/`` in the PettingZoo repository)
and the libraries they use rely on. The libraries are not dependencies of the project: each test
checks the property a library needs, or reproduces the few lines of a tutorial's wrapper."""

from __future__ import annotations

import numpy as np
import pytest

from highway_env import blackpath_v0, highway_v0, jumping_v0
from highway_env.gym_env import HighwayGymEnv
from optional_parts import require_modules

AEC_ENVS = {
    "highway": highway_v0.env,
    "highway_player_frame": lambda: highway_v0.env(frame="player"),
    "blackpath": blackpath_v0.env,
    "jumping_3": lambda: jumping_v0.env(n=3),
    "jumping_4": lambda: jumping_v0.env(n=4),
}


def info_leaves(info: dict, prefix: str = ""):
    """(key, value) for every leaf of ``info``, nested keys joined with dots."""
    for key, value in info.items():
        if isinstance(value, dict):
            yield from info_leaves(value, f"{prefix}{key}.")
        else:
            yield prefix + key, value


def kind(value):
    """The numpy shape of ``value``; "null" for None or NaN, "ragged" where numpy makes no array."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "null"
    try:
        return np.shape(value)
    except ValueError:  # numpy >= 1.24 refuses a ragged nested list
        return "ragged"


def unstackable(games) -> dict[str, set]:
    """The info keys Tianshou could not stack and store, with what is wrong: several shapes, a
    null, or a key that appears after the first step of a game ("late") holding no number."""
    kinds: dict[str, set] = {}
    for infos in games:
        first = dict(info_leaves(infos[0]))
        for info in infos:
            for key, value in info_leaves(info):
                kinds.setdefault(key, set()).add(kind(value))
                if key not in first and not np.issubdtype(np.asarray(value).dtype, np.number):
                    kinds[key].add("late")
    return {key: k for key, k in kinds.items() if len(k) > 1 or k & {"null", "ragged"}}


def random_aec_games(make, games: int):
    """The infos ``last()`` gives in each of ``games`` random games, and the final boards."""
    env = make()
    infos, finals = [], []
    for game in range(games):
        env.reset(seed=game)
        rng = np.random.default_rng(game)
        infos.append([])
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            infos[-1].append(info)
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        finals.append(getattr(env.unwrapped, "board", None))
    return infos, finals


@pytest.mark.parametrize("name", list(AEC_ENVS))
def test_each_info_value_keeps_one_shape_from_game_to_game(name):
    """Tianshou's ``PettingZooEnv`` hands the infos to its ``Collector``, which stacks those of its
    vector envs into arrays and stores them in a replay buffer made with the shapes it saw first.
    Highway's infos carried every cheapest path (``a_paths``), a list whose length is the number of
    tied cheapest paths, and PettingZoo's Tianshou tutorial (``tutorials/Tianshou/2_training_agents.py``,
    Tianshou 0.5.0) and Tianshou's own tic-tac-toe example (2.0.1) stopped with "shape mismatch" after
    a few games. Tianshou 2.0.1 also checks the buffer with ``pandas.isnull`` and stops with
    "Encountered NaNs in buffer" at a None (highway's ``winner`` of a draw) and at a string key that
    appears only at the end of a game (the buffer fills its earlier rows with None; numbers it fills
    with 0). PettingZoo's classic envs keep their infos empty."""
    games, finals = random_aec_games(AEC_ENVS[name], games=40)
    assert unstackable(games) == {}
    if name.startswith("highway"):  # the games include boards with several cheapest paths
        assert any(len(b.outcome().a_paths) > 1 or len(b.outcome().b_paths) > 1 for b in finals)


@pytest.mark.parametrize("play_as", ["A", "B"])
def test_gymnasium_env_infos_keep_one_shape_too(play_as):
    """The single-agent env's infos are highway_v0's plus ``opponent_action`` (Tianshou stacks a
    Gymnasium env's infos the same way)."""
    env = HighwayGymEnv(play_as=play_as)
    games, tied = [], False
    for game in range(40):
        _, info = env.reset(seed=game)
        games.append([info])
        rng, done = np.random.default_rng(game), False
        while not done:
            _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            games[-1].append(info)
        out = env.board.outcome()
        tied |= len(out.a_paths) > 1 or len(out.b_paths) > 1
    assert unstackable(games) == {}
    assert tied


@pytest.mark.parametrize("play_as", ["A", "B"])
def test_gymnasium_env_infos_keep_one_shape_when_illegal_moves_lose(play_as):
    """With ``illegal_action="lose"`` the info of the move that loses says why (``illegal_reason``,
    a string); it appeared in that last info only, a string key Tianshou cannot stack (and
    SyncVectorEnv gave None for the other games). It is ``""`` in every info before."""
    import gymnasium

    env = HighwayGymEnv(play_as=play_as, illegal_action="lose")
    games = []
    for game in range(20):
        _, info = env.reset(seed=game)
        games.append([info])
        rng, done = np.random.default_rng(game), False
        while not done:
            mask = env.action_masks()
            lose = rng.random() < 0.2 and not mask.all()
            _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(~mask if lose else mask))))
            games[-1].append(info)
    assert any("illegal_action" in infos[-1] for infos in games)
    assert unstackable(games) == {}
    assert all(info["illegal_reason"] == "" for infos in games for info in infos if "illegal_action" not in info)
    envs = gymnasium.vector.SyncVectorEnv([lambda: HighwayGymEnv(play_as=play_as, illegal_action="lose")] * 2)
    obs, _ = envs.reset(seed=0, options={"board": [1] + [0] * 15})  # (A's opponent replies first)
    actions = [int(np.flatnonzero(obs["action_mask"][0])[0]), int(np.flatnonzero(obs["action_mask"][1] == 0)[0])]
    _, _, terminated, _, info = envs.step(np.array(actions))
    assert terminated.tolist() == [False, True] and info["_illegal_reason"].all()
    assert info["illegal_reason"][0] == "" and info["illegal_reason"][1].startswith("illegal action")


def test_sb3_action_mask_tutorial_wrapper_trains_maskable_ppo(tmp_path):
    """PettingZoo's ``tutorials/SB3/connect_four/sb3_connect_four_action_mask.py``: its
    ``SB3ActionMaskWrapper`` (a ``BaseWrapper`` that is also a ``gym.Env``) turns the AEC env into
    one self-play env for sb3-contrib's MaskablePPO. Its lines are reproduced here; the env comes
    from ``pettingzoo.make("aec", ...)`` as in the tutorial."""
    require_modules("Stable-Baselines3", "sb3 extra", ("sb3_contrib", "stable_baselines3"), 'pip install -e ".[sb3]"')
    import gymnasium as gym
    import pettingzoo
    import pettingzoo.utils
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    import highway_env  # noqa: F401  (registers highway_env/highway-v0 with PettingZoo >= 1.27)

    if not hasattr(pettingzoo, "make"):
        pytest.skip("pettingzoo.make needs PettingZoo >= 1.27")

    class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gym.Env):  # the tutorial's wrapper
        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
            self.action_space = super().action_space(self.possible_agents[0])
            return self.observe(self.agent_selection), {}

        def step(self, action):
            current_agent = self.agent_selection
            super().step(action)
            next_agent = self.agent_selection
            return (self.observe(next_agent), self._cumulative_rewards[current_agent],
                    self.terminations[current_agent], self.truncations[current_agent], self.infos[current_agent])

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self):
            return super().observe(self.agent_selection)["action_mask"]

    env = SB3ActionMaskWrapper(pettingzoo.make("aec", "highway_env/highway-v0"))
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(total_timesteps=32)
    model.save(tmp_path / f"{env.unwrapped.metadata.get('name')}")
    assert (tmp_path / "highway_v0.zip").exists()

    # the tutorial's evaluation: the trained model against a random player, legal moves only
    play = pettingzoo.make("aec", "highway_env/highway-v0")
    for game in range(3):
        play.reset(seed=game)
        play.action_space(play.possible_agents[0]).seed(game)
        for agent in play.agent_iter():
            obs, reward, termination, truncation, info = play.last()
            observation, action_mask = obs.values()
            if termination or truncation:
                assert info["ply"] == 16  # the game ran to its end: no illegal move
                break
            if agent == play.possible_agents[0]:
                act = play.action_space(agent).sample(action_mask)
            else:
                act = int(model.predict(observation, action_masks=action_mask, deterministic=True)[0])
            assert action_mask[act] == 1
            play.step(act)
