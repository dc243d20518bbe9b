"""Highway for OpenSpiel (extra ``openspiel``): importing this package registers the game with
pyspiel as ``python_highway`` (``pyspiel.load_game("python_highway")``) and gives the agents of
``agents/`` as OpenSpiel bots (:class:`AgentBot`, :func:`perfect_bot`); the other way round,
:class:`BotPolicy` is how ``highway_env.benchmark.evaluate`` grades an OpenSpiel bot.
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
from highway_env.openspiel.grading import BotPolicy  # noqa: E402, F401

register()

__all__ = ["GAME_NAME", "HighwayGame", "HighwayState", "HighwayObserver", "AgentBot", "perfect_bot",
           "BotPolicy", "register"]
