"""highway_env: the board game Highway (Cabannes, 1998) for reinforcement-learning research.

PettingZoo AEC env: ``from highway_env import highway_v0``; the rules: ``highway_env.core``.
Gymnasium single-agent env: ``gymnasium.make("highway_env/Highway-v0", play_as="A")``
(``highway_env.gym_env.HighwayGymEnv``; ``"highway_env:highway_env/Highway-v0"`` needs no prior
import). PettingZoo registry (pettingzoo >= 1.27): ``pettingzoo.make("aec", "highway_env/highway-v0")``,
``"highway_env/blackpath-v0"``, ``"highway_env/jumping-v0"``.
"""

import gymnasium as _gymnasium

from highway_env import registration as _registration
from highway_env.registration import GYM_ENV_ID, RUSH_HOUR_ENV_ID  # noqa: F401

from highway_env.core import (  # noqa: F401
    A_PATHS,
    B_PATHS,
    NUM_ACTIONS,
    QUARTER_TURN,
    SYMMETRIES,
    Board,
    HighwayError,
    IllegalMoveError,
    Outcome,
    decode_action,
    encode_action,
    parse_board,
)

__version__ = "0.1.0"

# Gymnasium ids, and the three AEC envs in PettingZoo's registry where it has one (>= 1.27)
_registration.register_gymnasium(_gymnasium)
_registration.register_pettingzoo()
