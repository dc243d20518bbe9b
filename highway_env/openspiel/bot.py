"""The agents of ``agents/`` (the perfect player first) as OpenSpiel bots.

An :class:`agents.base.Agent` maps a Highway position to an absolute action, which is exactly an
OpenSpiel action of ``python_highway``, so the bot only hands it the state's board. The agents keep
no per-game memory (the perfect player's caches are keyed by position), so ``restart_at`` and
``inform_action`` have nothing to do.
"""

from __future__ import annotations

import pyspiel

from highway_env.core import HighwayError
from highway_env.openspiel.game import HighwayState


class AgentBot(pyspiel.Bot):
    """``step(state)`` plays ``agent.act(state.board)``; works on ``python_highway`` states."""

    def __init__(self, agent, player_id: int | None = None):
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self._player_id = player_id

    def player_id(self):
        return self._player_id

    def restart_at(self, state):
        pass

    def inform_action(self, state, player_id, action):
        pass

    def provides_policy(self):
        return False

    def step(self, state):
        if not isinstance(state, HighwayState):
            raise HighwayError(
                f"{type(self).__name__} plays python_highway states; got a state of "
                f"{state.get_game().get_type().short_name!r}")
        board = state.board
        if state.is_terminal():
            raise HighwayError(f"the game is over, there is no move to play:\n{board.to_grid()}")
        if self._player_id is not None and state.current_player() != self._player_id:
            raise HighwayError(
                f"bot of player {self._player_id} asked to move for player {state.current_player()}")
        return int(self.agent.act(board))


def perfect_bot(player_id: int | None = None, **kwargs) -> AgentBot:
    """The perfect player (:class:`highway_env.solver.player.PerfectPlayer`, keyword arguments
    passed on: tiebreak, seed, budget, ...) as an OpenSpiel bot: it never gives away the game value."""
    from highway_env.solver.player import PerfectPlayer

    return AgentBot(PerfectPlayer(**kwargs), player_id)
