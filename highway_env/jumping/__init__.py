"""Jumping Farther & Farther (Leroy Quet): rules (``game``), exact solvers (``solver``), a PettingZoo
AEC env for two players and a Gymnasium env for solitaire (``env``); CLI: ``python -m highway_env.jumping``."""

from highway_env.jumping.game import IllegalMoveError, JumpingError, State, initial_state, play  # noqa: F401
