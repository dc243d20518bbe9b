"""Highway for TorchRL (extra ``torchrl``): ``PettingZooWrapper(use_mask=True)`` over ``highway_v0``.

TorchRL turns every info entry into a fixed-shape tensor spec taken from the first reset, so the
env's infos (a nested ``bounds`` dict, the ``winner`` string, and results that appear only at the
end) stop it with ``RuntimeError: Could not infer dtype of dict``. :class:`TensorInfos` keeps
what fits a tensor: ``ply`` and ``margin`` (the ``[lo, hi]`` bounds of the margin, exact on the
full board).

    from highway_env.integrations.torchrl import make_env
    env = make_env(seed=0)  # one group "players" holding player_0 and player_1, player frame
"""

from __future__ import annotations

from pettingzoo.utils.wrappers import BaseWrapper

from highway_env import highway_v0
from highway_env.extras import require

#: the one group of the TorchRL env: both seats, so one shared policy acts for whichever moves
GROUP = "players"


class TensorInfos(BaseWrapper):
    """A Highway AEC env whose infos are ``{"ply": int, "margin": [lo, hi]}`` (ints) for every agent.
    Plain lists, not arrays: PettingZoo's api_test compares ``last()``'s info with ``infos[agent]``
    (a dict holding arrays cannot be compared); TorchRL makes the same float32 (2,) spec of either."""

    @property
    def infos(self):
        return {agent: {"ply": int(info["ply"]), "margin": [int(v) for v in info["bounds"]["margin"]]}
                for agent, info in self.env.infos.items()}


def make_env(seed: int | None = None, frame: str = "player", **kwargs):
    """``PettingZooWrapper(TensorInfos(highway_v0.env(frame=frame)), use_mask=True)`` with both
    agents in the group :data:`GROUP`; ``kwargs`` go to ``PettingZooWrapper``."""
    require("torchrl", "torchrl", "highway_env.integrations.torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    return PettingZooWrapper(TensorInfos(highway_v0.env(frame=frame)), use_mask=True, categorical_actions=True,
                             group_map={GROUP: list(highway_v0.raw_env().possible_agents)}, seed=seed, **kwargs)
