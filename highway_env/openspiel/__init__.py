"""Highway for OpenSpiel (optional extra ``openspiel``): ``pip install -e ".[openspiel]"``.

Importing this package registers the game with pyspiel as ``python_highway``::

    import pyspiel
    import highway_env.openspiel  # registers "python_highway"
    game = pyspiel.load_game("python_highway")

and gives the agents of ``agents/`` as OpenSpiel bots (:class:`AgentBot`, :func:`perfect_bot`).
The rules are those of :mod:`highway_env.core`; see :mod:`highway_env.openspiel.game` for the
observation and action conventions (the same as ``highway_v0``'s default frame).
"""

from highway_env.extras import require

require("pyspiel", "openspiel", "highway_env.openspiel")

from highway_env.openspiel.game import (  # noqa: E402, F401
    GAME_NAME,
    HighwayGame,
    HighwayObserver,
    HighwayState,
    register,
)
from highway_env.openspiel.bot import AgentBot, perfect_bot  # noqa: E402, F401

register()

__all__ = ["GAME_NAME", "HighwayGame", "HighwayState", "HighwayObserver", "AgentBot", "perfect_bot",
           "register"]
