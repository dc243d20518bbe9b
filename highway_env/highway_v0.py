"""Highway as a PettingZoo AEC env, version 0: ``from highway_env import highway_v0; env = highway_v0.env()``.

See ``highway_env.highway.highway`` for the observation, action, reward and info conventions.
"""

from highway_env.highway.highway import (  # noqa: F401
    PLANES_SHAPE,
    cell_from_player_frame,
    cell_to_player_frame,
    env,
    from_player_frame,
    mask_to_player_frame,
    observation_space,
    raw_env,
    to_player_frame,
)

__all__ = ["env", "raw_env"]
