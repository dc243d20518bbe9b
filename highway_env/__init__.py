"""highway_env: the board game Highway (Cabannes, 1998) for reinforcement-learning research.

PettingZoo AEC env: ``from highway_env import highway_v0``; the rules: ``highway_env.core``.
Gymnasium single-agent env: ``gymnasium.make("highway_env/Highway-v0", play_as="A")``
(``highway_env.gym_env.HighwayGymEnv``).
"""

import gymnasium as _gymnasium

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

GYM_ENV_ID = "highway_env/Highway-v0"
if GYM_ENV_ID not in _gymnasium.registry:
    _gymnasium.register(id=GYM_ENV_ID, entry_point="highway_env.gym_env:HighwayGymEnv")

RUSH_HOUR_ENV_ID = "highway_env/RushHour-v0"
if RUSH_HOUR_ENV_ID not in _gymnasium.registry:
    _gymnasium.register(id=RUSH_HOUR_ENV_ID, entry_point="highway_env.rushhour.env:RushHourEnv")
