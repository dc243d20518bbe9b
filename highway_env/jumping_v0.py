"""Jumping Farther & Farther as a PettingZoo AEC env, version 0:
``from highway_env import jumping_v0; env = jumping_v0.env(n=4)``.

See ``highway_env.jumping.env`` for the observation, action, reward and info conventions; the
solitaire Gymnasium env is ``jumping_v0.SolitaireEnv``.
"""

from highway_env.jumping.env import SolitaireEnv, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env", "SolitaireEnv"]
