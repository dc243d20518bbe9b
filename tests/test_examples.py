"""The recipes in ``examples/`` at tiny size: MaskablePPO self-play (extra ``sb3``), RLlib PPO with
action masking (extra ``rllib``), TorchRL collection (extra ``torchrl``), Tianshou DQN against random
(extra ``tianshou``) and PPO on the native vector env (extra ``torch``) each train or collect,
never play an illegal move, and end with a sane benchmark report; plus the glue in
``highway_env.integrations``.

A test whose extra is missing is skipped, except under CI=true, where that is a failure (CI installs
the extras and must really run these)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.utils.wrappers import BaseWrapper

from highway_env import highway_v0
from optional_parts import require_modules

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
EXTRAS = {"sb3": ("sb3_contrib", "stable_baselines3"), "rllib": ("ray.rllib",), "torchrl": ("torchrl", "tensordict"),
          "tianshou": ("tianshou",), "torch": ("torch",)}


def require(extra: str) -> None:
    """Skip when ``extra``'s libraries do not import; fail instead under CI=true."""
    require_modules(f"{extra} recipe", f"{extra} extra", EXTRAS[extra], f'pip install -e ".[{extra}]"')


def recipe(name: str):
    """The recipe module ``examples/NAME.py`` (importing it runs nothing)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


def test_a_missing_extra_fails_under_ci_and_skips_otherwise(monkeypatch):
    monkeypatch.setitem(EXTRAS, "sb3", ("no_such_module_for_this_test",))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but the sb3 recipe tests cannot run"):
        require("sb3")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="sb3 extra not installed"):
        require("sb3")


def assert_sane(summary: dict, games: int = 2) -> None:
    """A tiny benchmark of a barely trained policy: about random accuracy, every game played."""
    agent = next(iter(summary["agents"].values()))
    assert 0.15 <= agent["accuracy"]["rate"] <= 0.75
    assert agent["accuracy"]["n"] > 20  # critical positions graded
    for side in ("as_A_vs_perfect", "as_B_vs_perfect"):
        wdl = agent[side]
        assert wdl["win"] + wdl["draw"] + wdl["loss"] == games
    assert agent["as_B_vs_perfect"]["win"] == 0  # perfect A never loses
    assert summary["training"]["seconds"] > 0 and summary["training"]["steps"] > 0


# --- sb3-contrib MaskablePPO self-play

def random_positions(n: int, seed: int) -> np.ndarray:
    """(n, 16) boards reached by random legal moves, movers A and B alike."""
    from highway_env.core import random_board

    rng = np.random.default_rng(seed)
    return np.array([random_board(rng, int(rng.integers(0, 15))).cells for _ in range(n)], np.int8)


def test_sb3_selfplay_trains_one_shared_policy_and_grades_it(capsys, tmp_path):
    require("sb3")
    sb3 = recipe("sb3_maskable_ppo_selfplay")
    saved = tmp_path / "model.zip"
    model, report = sb3.main(["--tiny", "--no-progress", "--snapshot-every", "1", "--pool", "2",
                              "--save", str(saved)])
    training = report.summary["training"]
    assert model.num_timesteps == 128 and model._n_updates >= 1  # it trained
    assert training["games"] == 128 // 8  # 8 learner moves a game; an illegal move would have raised
    seats = [env.env.unwrapped.play_as for env in model.get_env().envs]
    assert sorted(seats) == ["A", "B"]  # one policy, both seats
    assert_sane(report.to_dict())
    assert "MaskablePPO self-play" in capsys.readouterr().out
    # the saved model is what evaluate("sb3:PATH") loads, and plays the same moves
    from highway_env.benchmark.policy import load_sb3, observations

    obs = observations(random_positions(40, seed=2), frame="player")
    masks = obs["action_mask"].astype(bool)
    loaded = load_sb3(str(saved))
    assert np.array_equal(loaded.predict(obs, action_masks=masks, deterministic=True)[0],
                          model.predict(obs, action_masks=masks, deterministic=True)[0])


def test_sb3_selfplay_opponent_is_the_learner_and_plays_legal_moves_for_both_seats():
    require("sb3")
    sb3 = recipe("sb3_maskable_ppo_selfplay")
    from highway_env.benchmark.policy import legal_masks
    from highway_env.core import Board

    args = sb3.build_parser().parse_args(["--tiny", "--no-progress", "--pool", "2", "--p-current", "0"])
    for key, value in sb3.TINY_TRAINING.items():
        setattr(args, key, value)
    model, _ = sb3.train(args, progress=False)
    pool = model.get_env().envs[0].env.pool
    assert pool.current is model.policy  # the opponent is the live policy ...
    assert pool.snapshots == []
    rng = np.random.default_rng(0)
    assert pool.pick(rng) is model.policy
    pool.snapshot()  # ... or a frozen copy of it
    frozen = pool.pick(rng)
    assert frozen is not model.policy
    for p, q in zip(frozen.parameters(), model.policy.parameters()):
        assert p is not q and np.array_equal(p.detach().numpy(), q.detach().numpy())
    boards = random_positions(60, seed=1)
    opponent = sb3.policy_opponent(model.policy)
    for cells in boards:
        mask = legal_masks(cells[None])[0]
        action = opponent(Board(tuple(int(v) for v in cells)), mask.astype(np.int8), rng)
        assert mask[action], (cells, action)  # absolute action, legal, whichever seat moves


# --- TorchRL PettingZooWrapper(use_mask=True)

def test_torchrl_env_follows_highway_v0_in_the_player_frame():
    require("torchrl")
    import torch

    from highway_env.integrations.torchrl import GROUP, make_env

    env = make_env(seed=0)
    ref = highway_v0.env(frame="player")
    ref.reset()
    td = env.reset()
    rng = np.random.default_rng(0)
    for ply in range(16):
        mover = ply % 2
        agent = ref.agent_selection
        obs = ref.observe(agent)
        group = td[GROUP]
        assert group["mask"].tolist() == [mover == 0, mover == 1]
        assert np.array_equal(group["observation", "observation"][mover].numpy(), obs["observation"])
        assert np.array_equal(group["action_mask"][mover].numpy(), obs["action_mask"].astype(bool))
        assert int(group["info", "ply"][mover]) == ply
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        td[GROUP, "action"] = torch.tensor([action, action])
        td = env.step(td)["next"]
        ref.step(action)
    assert bool(td["done"])
    margin = ref.infos["player_0"]["margin"]
    assert td[GROUP, "info", "margin"][0].tolist() == [margin, margin]
    assert td[GROUP, "reward"].flatten().tolist() == [ref.rewards["player_0"], ref.rewards["player_1"]]


def test_torchrl_still_needs_the_glue_for_the_env_unchanged():
    """TorchRL's PettingZooWrapper makes a tensor spec of each info entry at the first reset
    (torchrl/envs/libs/pettingzoo.py, 0.14.1): the nested ``bounds`` dict stops it there, and
    without it the ``winner`` string, then the results that appear only at the end (``min_a``,
    ``min_b``, ``margin``: no spec to write them into). When this test fails, TorchRL takes the env
    as it is: drop ``TensorInfos`` and say so in the README."""
    require("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    from highway_env.integrations.torchrl import GROUP

    def wrap(env):
        return PettingZooWrapper(env, use_mask=True, categorical_actions=True, group_map={GROUP: env.possible_agents})

    class Without(BaseWrapper):
        """The env's infos without some keys."""

        def __init__(self, env, *keys):
            super().__init__(env)
            self.keys = keys

        @property
        def infos(self):
            return {a: {k: v for k, v in info.items() if k not in self.keys} for a, info in self.env.infos.items()}

    with pytest.raises(RuntimeError, match="Could not infer dtype of dict"):
        wrap(highway_v0.env(frame="player"))
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        wrap(Without(highway_v0.env(frame="player"), "bounds"))
    env = wrap(Without(highway_v0.env(frame="player"), "bounds", "winner"))
    with pytest.raises(TypeError, match="'NoneType' object does not support item assignment"):
        env.rollout(16)  # the last move's infos hold min_a, min_b and margin


@pytest.mark.parametrize("frame", ["player", "absolute"])
def test_torchrl_env_passes_check_env_specs(frame):
    """TorchRL's own checker (torchrl.envs.utils.check_env_specs): a rollout matches the specs."""
    require("torchrl")
    from torchrl.envs.utils import check_env_specs

    from highway_env.integrations.torchrl import make_env

    check_env_specs(make_env(seed=0, frame=frame))


def test_torchrl_gym_wrapper_passes_check_env_specs_on_the_gymnasium_envs():
    """TorchRL's GymWrapper over each Gymnasium env we expose (the unmasked random rollout of
    check_env_specs needs HighwayGymEnv's illegal_action="lose")."""
    require("torchrl")
    from torchrl.envs.libs.gym import GymWrapper
    from torchrl.envs.utils import check_env_specs

    from highway_env.gym_env import HighwayGymEnv
    from highway_env.jumping.env import SolitaireEnv
    from highway_env.rushhour.env import RushHourEnv

    for env in (HighwayGymEnv(illegal_action="lose"), HighwayGymEnv(play_as="B", illegal_action="lose", frame="player"),
                RushHourEnv(level=1), SolitaireEnv(n=3)):
        check_env_specs(GymWrapper(env))


def test_torchrl_collects_with_the_masked_policy_and_grades_it(tmp_path):
    require("torchrl")
    trl = recipe("torchrl_collect")
    net, report = trl.main(["--tiny", "--no-progress", "--out", str(tmp_path)])
    training = report.summary["training"]
    assert training["games"] == 4 and training["steps"] == 64  # 2 batches of 2 whole games
    assert training["illegal"] == 0
    fresh, _ = trl.build_policy(256, 2)
    assert any(not np.array_equal(p.detach().numpy(), q.detach().numpy())  # it learned: weights moved
               for p, q in zip(net.parameters(), fresh.parameters()))
    assert_sane(json.loads((tmp_path / "summary.json").read_text()))


def test_torchrl_illegal_move_count_catches_an_unmasked_policy():
    require("torchrl")
    trl = recipe("torchrl_collect")
    import torch

    from highway_env.integrations.torchrl import GROUP, make_env

    env = make_env(seed=0)
    td = env.reset()
    td[GROUP, "action"] = torch.zeros(2, dtype=torch.int64)  # 1 in cell 0: legal once, then not
    first = env.step(td)
    assert trl.illegal_moves(first.unsqueeze(0)) == 0
    second = first["next"].clone()
    second[GROUP, "action"] = torch.zeros(2, dtype=torch.int64)
    assert trl.illegal_moves(second.unsqueeze(0)) == 1


# --- Tianshou DQN against random, Tianshou's PettingZooEnv on the env unchanged

def test_tianshou_dqn_trains_against_random_and_grades_it(tmp_path):
    require("tianshou")
    ts = recipe("tianshou_dqn_vs_random")
    import torch

    net, report = ts.main(["--tiny", "--no-progress", "--out", str(tmp_path)])
    training = json.loads((tmp_path / "summary.json").read_text())["training"]
    assert training == report.summary["training"]
    assert training["steps"] == 256 and training["learner_moves"] == 128 and training["epochs"] == 1
    assert training["games"] == 256 // 16 and training["illegal"] == 0  # whole games, every move legal
    torch.manual_seed(0)  # the recipe's seed: the same initial weights
    fresh, _ = ts.build_algorithm(recipe_common_args(ts, ["--tiny"]), ts.make_env())
    assert any(not torch.equal(p, q) for p, q in zip(net.parameters(), fresh.policy.model.parameters()))  # it learned
    assert_sane(json.loads((tmp_path / "summary.json").read_text()))


class Unmasked(BaseWrapper):
    """A Highway AEC env showing only the observation planes, no action mask: Tianshou's random
    policy then picks among all 256 actions, illegal ones too."""

    def observe(self, agent):
        return self.env.observe(agent)["observation"]

    def observation_space(self, agent):
        return self.env.observation_space(agent)["observation"]


def test_tianshou_game_counter_catches_games_an_illegal_move_ended():
    require("tianshou")
    ts = recipe("tianshou_dqn_vs_random")
    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv

    np.random.seed(0)
    counts = {}
    for name, make in (("masked", ts.make_env), ("unmasked", lambda: PettingZooEnv(Unmasked(highway_v0.env())))):
        env = make()
        random = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
        seats = MultiAgentOffPolicyAlgorithm(algorithms=[random, random], env=env)
        collector = ts.game_counter(Collector)(seats, DummyVectorEnv([make] * 2))
        collector.collect(n_episode=6, reset_before_collect=True)
        counts[name] = (collector.games, collector.illegal)
    assert counts["masked"] == (6, 0)
    assert counts["unmasked"] == (6, 6)  # 16 random moves are all legal with probability (16! / 16**16)**2


def test_tianshou_same_seed_same_network():
    require("tianshou")
    ts = recipe("tianshou_dqn_vs_random")
    import torch

    nets = [ts.train(recipe_common_args(ts, ["--tiny", "--seed", str(seed)]), progress=False)[0] for seed in (3, 3, 4)]
    same = [all(torch.equal(a, b) for a, b in zip(nets[0].parameters(), n.parameters())) for n in nets[1:]]
    assert same == [True, False]


# --- RLlib new API stack PPO

def test_rllib_env_renames_the_observation_for_the_masking_module():
    require("rllib")
    from highway_env.integrations.rllib import make_env

    env = make_env()
    obs, _ = env.reset(seed=0)
    ref = highway_v0.env(frame="player")
    ref.reset()
    rng = np.random.default_rng(0)
    for ply in range(16):
        (agent, o), = obs.items()
        assert agent == ref.agent_selection
        want = ref.observe(agent)
        assert set(o) == {"observations", "action_mask"} and o["observations"].dtype == np.float32
        assert np.array_equal(o["observations"], want["observation"].reshape(256))
        assert np.array_equal(o["action_mask"], want["action_mask"])
        assert env.observation_space[agent].contains(o)
        action = int(rng.choice(np.flatnonzero(want["action_mask"])))
        obs, rewards, terminated, _, _ = env.step({agent: action})
        ref.step(action)
    assert terminated["__all__"]
    assert rewards == {a: ref.rewards[a] for a in ("player_0", "player_1")}


def test_rllib_env_passes_rllibs_multi_agent_env_check():
    """RLlib's own checker for MultiAgentEnvs (ray.rllib.utils.pre_checks.env)."""
    require("rllib")
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    from highway_env.integrations.rllib import make_env

    check_multiagent_environments(make_env())


def test_rllib_glue_declares_one_observation_space_per_agent_consistently():
    """PettingZoo's AECEnv: ``observation_space(agent)`` returns ``observation_spaces[agent]``
    (pettingzoo/utils/env.py); the attribute used to be the wrapped env's int8 spaces."""
    require("rllib")
    from highway_env.integrations.rllib import RLlibObservations

    env = RLlibObservations(highway_v0.env(frame="player"))
    env.reset()
    for agent in env.possible_agents:
        space = env.observation_space(agent)
        assert env.observation_spaces[agent] is space
        assert space["observations"].dtype == np.float32 and space.contains(env.observe(agent))


def test_rllib_glue_gives_each_agent_an_observation_space_of_its_own():
    """One Dict object served both agents: seeding player_1's space reseeded player_0's."""
    require("rllib")
    from highway_env.integrations.rllib import RLlibObservations

    env = RLlibObservations(highway_v0.env(frame="player"))
    first, second = (env.observation_space(a) for a in env.possible_agents)
    first.seed(0)
    alone = first.sample()["observations"]
    first.seed(0)
    second.seed(1)
    assert np.array_equal(first.sample()["observations"], alone)


def test_rllib_ppo_trains_the_shared_masked_module_and_grades_it(tmp_path, capsys):
    require("rllib")
    rl = recipe("rllib_ppo_masked")
    import ray

    report = rl.main(["--tiny", "--no-progress", "--out", str(tmp_path)])
    assert not ray.is_initialized()  # its private Ray instance is shut down
    assert "RLlib PPO masked" in capsys.readouterr().out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary == report.to_dict()
    assert summary["training"]["iterations"] == 1 and summary["training"]["steps"] >= 64
    assert summary["training"]["games"] >= 4  # 16 moves a game, both seats in the same episode
    assert_sane(summary)


# --- PyTorch PPO on the native vector env (extra torch)

def test_vector_ppo_trains_one_policy_for_both_seats_by_self_play_and_grades_it(capsys):
    require("torch")
    ppo = recipe("vector_ppo_selfplay")
    net, report = ppo.main(["--tiny", "--no-progress", "--snapshot-every", "1", "--pool", "1"])
    training = report.summary["training"]
    assert training["updates"] == 2 and training["games"] >= 2 * 4  # both envs (seats) finished games
    assert_sane(report.to_dict())
    assert "vector-env PPO self-play" in capsys.readouterr().out


def test_vector_ppo_opponent_is_the_learner_or_its_snapshot_and_moves_legally():
    require("torch")
    import torch

    from highway_env.benchmark.policy import legal_masks
    from highway_env.highway.batch_rules import FRAME_ACTIONS_INV

    ppo = recipe("vector_ppo_selfplay")
    net = ppo.make_net(32, 1)
    pool = ppo.OpponentPool(net, size=2, p_current=0.0)
    pool.pick(np.random.default_rng(0))
    assert pool.playing is net  # no snapshot yet: the learner itself
    pool.snapshot()
    pool.pick(np.random.default_rng(0))
    assert pool.playing is pool.snapshots[0] and pool.playing is not net
    assert all(torch.equal(a, b) for a, b in zip(net.parameters(), pool.playing.parameters()))
    opponent = ppo.batched_opponent(pool, FRAME_ACTIONS_INV, torch.Generator().manual_seed(0))
    boards = random_positions(60, seed=4)
    boards = boards[(boards != 0).sum(axis=1) < 16]
    actions = opponent(boards, legal_masks(boards), None)
    assert legal_masks(boards)[np.arange(len(boards)), actions].all()  # absolute and legal, both movers


def test_vector_ppo_advantages_stop_at_each_games_end():
    ppo = recipe("vector_ppo_selfplay")
    rewards = np.array([[0.0], [1.0], [0.0], [0.0]])  # the game ends at t=1; t=2 is the autoreset row
    values = np.array([[0.5], [0.25], [9.0], [0.1]])
    dones = np.array([[0.0], [1.0], [0.0], [0.0]])
    adv = ppo.advantages(rewards, values, dones, last_values=np.array([0.3]), lam=1.0)
    assert adv[1, 0] == 1.0 - 0.25 and adv[0, 0] == 1.0 - 0.5  # the return is the game's result
    assert adv[3, 0] == 0.3 - 0.1  # bootstrapped past the rollout's end


def test_vector_ppo_same_seed_same_network():
    require("torch")
    import torch

    ppo = recipe("vector_ppo_selfplay")
    nets = []
    for seed in (3, 3, 4):
        args = recipe_common_args(ppo, ["--tiny", "--seed", str(seed), "--snapshot-every", "1", "--p-current", "0"])
        nets.append(ppo.train(args, progress=False)[0])
    same = [all(torch.equal(a, b) for a, b in zip(nets[0].parameters(), n.parameters())) for n in nets[1:]]
    assert same == [True, False]


def recipe_common_args(module, argv):
    """``module``'s parsed arguments, sizes filled as its main() fills them."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        import recipe_common
    finally:
        sys.path.remove(str(EXAMPLES))
    return recipe_common.parse_args(module.build_parser(), argv, module.TINY_TRAINING, module.FULL_TRAINING)
