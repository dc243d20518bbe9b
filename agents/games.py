"""Games by name: ``get_game("highway")``, and the ``"module:attr"`` references games use to name
code imported on first use (their class here, their perfect player in ``Game.perfect_player``)."""

from __future__ import annotations

import importlib

from agents.game import Game

#: game name -> "module:Class" (imported on first use, so agents/ has no game code of its own)
GAMES: dict[str, str] = {"highway": "highway_env.az_game:HighwayGame",
                         "blackpath": "highway_env.blackpath.az_game:BlackPathGame",
                         "jumping": "highway_env.jumping.az_game:JumpingGame"}


def resolve(ref: str):
    """The object a ``"package.module:attr[.attr...]"`` reference names, importing the module."""
    module, _, attr = ref.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def get_game(name: str = "highway", config: dict | None = None) -> Game:
    """The game ``name``, built with the keyword options ``config`` (``Game.config()``)."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known: {sorted(GAMES)}")
    return resolve(GAMES[name])(**(config or {}))
