"""Highway for RLlib's new API stack (extra ``rllib``): a multi-agent env and a masked policy.

RLlib's PPO has no default encoder for Highway's ``{"observation", "action_mask"}`` Dict, and its
action-masking RLModule (``ActionMaskingTorchRLModule`` in ``ray.rllib.examples``) expects float
``{"observations", "action_mask"}``: :func:`make_env` is ``highway_v0.env(frame="player")`` (so one
shared module plays both seats) with those observations, through RLlib's ``PettingZooEnv``.

    from ray.tune.registry import register_env
    from highway_env.integrations.rllib import ENV_NAME, make_env, masked_module_spec, shared_policy
    register_env(ENV_NAME, make_env)
    config = PPOConfig().environment(ENV_NAME).multi_agent(**shared_policy()) \\
        .rl_module(rl_module_spec=masked_module_spec([256, 256]))

:func:`batched_policy` turns the trained module into a policy for
``highway_env.benchmark.evaluate(policy, frame="player", batched=True)``.
"""

from __future__ import annotations

import math

from highway_env.extras import require

require("ray.rllib", "rllib", "highway_env.integrations.rllib")

import gymnasium as gym
import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from highway_env import highway_v0
from highway_env.core import NUM_ACTIONS

ENV_NAME = "highway_env_rllib"
#: the id of the one module both seats share
SHARED = "shared"
OBS_SIZE = math.prod(highway_v0.PLANES_SHAPE)  # the number planes, flattened


class RLlibObservations(BaseWrapper):
    """A Highway AEC env whose observations are ``{"observations", "action_mask"}`` float32 vectors."""

    def __init__(self, env):
        super().__init__(env)
        # the attribute too (AECEnv.observation_space reads it): else the wrapped env's int8 spaces;
        # one space per agent, as the env's own (a space holds its generator)
        self.observation_spaces = {agent: self._space() for agent in env.possible_agents}

    @staticmethod
    def _space() -> gym.spaces.Dict:
        return gym.spaces.Dict({"observations": gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                                "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32)})

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def observe(self, agent):
        obs = super().observe(agent)
        return {"observations": obs["observation"].reshape(OBS_SIZE).astype(np.float32),
                "action_mask": obs["action_mask"].astype(np.float32)}


def make_env(config: dict | None = None) -> PettingZooEnv:
    """The env for ``register_env``: ``highway_v0.env(frame="player")``, renamed for RLlib. ``config``
    is RLlib's env config (unused: the player frame is what a shared module needs)."""
    return PettingZooEnv(RLlibObservations(highway_v0.env(frame="player")))


def shared_policy() -> dict:
    """``PPOConfig.multi_agent(**shared_policy())``: both seats act with the module :data:`SHARED`."""
    return {"policies": {SHARED}, "policy_mapping_fn": lambda agent_id, episode, **kwargs: SHARED}


def masked_module_spec(hiddens=(256, 256)) -> MultiRLModuleSpec:
    """The shared action-masking PPO module (MLP ``hiddens``), for ``PPOConfig.rl_module``."""
    spec = RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": list(hiddens), "fcnet_activation": "relu",
                                      "head_fcnet_hiddens": [], "vf_share_layers": False})
    return MultiRLModuleSpec(rl_module_specs={SHARED: spec})


def batched_policy(module):
    """A batched greedy policy (highest masked logit) from the trained module, for
    ``evaluate(policy, frame="player", batched=True)``."""
    import torch

    def policy(obs):
        x = {"observations": torch.as_tensor(obs["observation"].reshape(-1, OBS_SIZE), dtype=torch.float32),
             "action_mask": torch.as_tensor(obs["action_mask"], dtype=torch.float32)}
        with torch.no_grad():
            out = module.forward_inference({Columns.OBS: x})
        return out[Columns.ACTION_DIST_INPUTS].argmax(dim=1).numpy()

    policy.__name__ = "rllib_ppo"
    return policy
