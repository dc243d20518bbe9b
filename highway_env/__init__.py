"""highway_env: the board game Highway (Cabannes, 1998) for reinforcement-learning research.

PettingZoo AEC env: ``from highway_env import highway_v0``; the rules: ``highway_env.core``.
"""

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
