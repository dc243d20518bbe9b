"""Games by name: ``get_game("highway")``, and the ``"module:attr"`` references games use to name
code imported on first use (their class here, their perfect player in ``Game.perfect_player``)."""

from __future__ import annotations

import importlib
import inspect
import json

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


def game_options(name: str, text: str) -> dict:
    """The keyword options of game ``name`` from a JSON object (``--game-config '{"rows": 5}'``;
    ``''`` = the defaults), checked by building the game once: ValueError names an unknown key (and
    lists the known ones) or the value the game rejects."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known: {sorted(GAMES)}")
    text = (text or "").strip()
    if not text:
        return {}
    try:
        opts = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"game config {text!r} is not JSON ({e})") from None
    if not isinstance(opts, dict):
        raise ValueError(f"game config must be a JSON object such as '{{\"rows\": 5}}', got {text!r}")
    cls = resolve(GAMES[name])
    known = [k for k in inspect.signature(cls.__init__).parameters if k != "self"]
    unknown = sorted(set(opts) - set(known))
    if unknown:
        raise ValueError(f"game {name!r} has no option(s) {unknown} (in game config {text!r}); "
                         f"known: {known}")
    try:
        cls(**opts)
    except (TypeError, ValueError) as e:
        raise ValueError(f"game {name!r} rejects game config {text!r}: {e}") from None
    return opts
