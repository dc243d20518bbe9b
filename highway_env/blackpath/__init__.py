"""The Black Path Game (Larry Black, 1960): rules (``game``), exact solver (``solver``), PettingZoo
AEC env (``env``; ``from highway_env import blackpath_v0``) and a CLI (``python -m highway_env.blackpath``)."""

from highway_env.blackpath.game import BlackPathError, IllegalMoveError, State, new_game, replay  # noqa: F401
