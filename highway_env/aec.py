"""What the three PettingZoo AEC envs (highway, blackpath, jumping) share: the classic wrappers and
the masked-observation spaces. Each env stays one readable file per game, as PettingZoo's classic
envs are; only this boilerplate lives here."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import wrappers


def classic_wrappers(raw):
    """The wrappers PettingZoo's classic envs apply in ``env()``: an illegal move ends the game with
    -1 for the offender, out-of-range actions assert, and the API order is enforced."""
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def masked_spaces(agents, observation: spaces.Box, num_actions: int) -> tuple[dict, dict]:
    """(action_spaces, observation_spaces) per agent: Discrete(num_actions) and the Dict of
    ``observation`` with an int8 ``action_mask`` over the actions."""
    action_spaces = {a: spaces.Discrete(num_actions) for a in agents}
    observation_spaces = {
        a: spaces.Dict({"observation": observation,
                        "action_mask": spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.int8)})
        for a in agents
    }
    return action_spaces, observation_spaces


class SpacesByAgent:
    """``observation_space(agent)`` / ``action_space(agent)`` from the per-agent dicts."""

    observation_spaces: dict
    action_spaces: dict

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]


def action_index(agent: str, action, num_actions: int, error: type[Exception]) -> int:
    """``action`` as an int in 0..num_actions-1, else ``error`` naming the agent and the bad value."""
    try:
        a = int(action)
    except (TypeError, ValueError) as e:
        raise error(f"{agent}: action must be an int in 0..{num_actions - 1}, got {action!r}") from e
    if not 0 <= a < num_actions:
        raise error(f"{agent}: action {action!r} out of range 0..{num_actions - 1}")
    return a
