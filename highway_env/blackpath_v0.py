"""The Black Path Game as a PettingZoo AEC env, version 0:
``from highway_env import blackpath_v0; env = blackpath_v0.env()``.

See ``highway_env.blackpath.env`` for the observation, action, reward and info conventions.
"""

from highway_env.blackpath.env import env, raw_env, to_rgb  # noqa: F401

__all__ = ["env", "raw_env"]
