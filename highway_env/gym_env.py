"""Highway as a single-agent Gymnasium env: play A or B against a fixed opponent policy.

``gymnasium.make("highway_env/Highway-v0", play_as="B")`` or ``HighwayGymEnv(play_as="B")``.

* ``opponent``: ``policy(board: core.Board, mask: np.ndarray, rng) -> int``, an absolute action
  (``mask``: the int8 (256,) legal mask; ``rng``: the env's ``np_random``, seeded by ``reset(seed=...)``);
  default :func:`random_policy`. An illegal reply raises ``IllegalMoveError``.
* Observations, actions, ``frame`` and infos are ``highway_v0``'s (:mod:`highway_env.highway.highway`)
  for the agent's seat; the info adds ``opponent_action`` (its reply, absolute; -1 where it made none,
  an int always so that vector envs can stack it). ``action_masks()`` gives the mask as bools, as sb3-contrib's MaskablePPO wants.
* Reward +1 / -1 / 0 from the agent's side when the game ends (``terminated``, after the 16th move);
  never truncated.
* ``illegal_action="raise"`` (default) raises ``IllegalMoveError`` and changes nothing; ``"lose"``
  ends the episode with reward -1 (for learners that do not mask), the info giving the move
  (``illegal_action``, an int) and why it is illegal (``illegal_reason``; with ``"lose"`` that key is
  in every info, ``""`` until a move loses, since a key that appears only at the end must be a
  number for libraries that stack infos, as highway_v0's infos say). Out-of-range actions and
  stepping after the end always raise ``HighwayError``.
* ``reset(options={"board": ...})`` starts from a position (as ``highway_v0``), the opponent moving
  first if it is to move; a board that leaves the agent no move is refused.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from highway_env.aec import check_render_mode, render_in_mode
from highway_env.core import (CELLS, Board, HighwayError, IllegalMoveError, action_str, illegal_move_error,
                              integral)
from highway_env.highway.highway import AGENTS, check_frame, raw_env
from highway_env.render import RENDER_MODES

Policy = Callable[[Board, np.ndarray, np.random.Generator], int]


def random_policy(board: Board, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action. The draw is ``rng.choice(np.flatnonzero(mask))``'s (one
    ``rng.integers(n)``: the same actions from the same seed) without ``choice``'s overhead."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def _side(play_as: Any) -> int:
    if isinstance(play_as, str):
        key = play_as.strip().upper()
        table = {"A": 0, "B": 1, "PLAYER_0": 0, "PLAYER_1": 1}
        if key in table:
            return table[key]
    elif play_as in (0, 1) and not isinstance(play_as, bool):
        return int(play_as)
    raise HighwayError(f"play_as must be 'A' or 'B' (or 0 / 1), got {play_as!r}")


def check_seat_settings(play_as, opponent, illegal_action: str) -> None:
    """HighwayError naming a bad seat, opponent or illegal-action rule (the single and vector env's)."""
    _side(play_as)
    if illegal_action not in ("raise", "lose"):
        raise HighwayError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
    if opponent is not None and not callable(opponent):
        raise HighwayError(f"opponent must be a callable policy(board, mask, rng) -> action, got {opponent!r}")


class HighwayGymEnv(gym.Env):
    """Play one side of Highway against ``opponent``; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(self, play_as: str | int = "A", opponent: Policy | None = None,
                 render_mode: str | None = None, illegal_action: str = "raise", frame: str = "absolute"):
        self.render_mode = check_render_mode(render_mode, RENDER_MODES)
        check_seat_settings(play_as, opponent, illegal_action)
        self.play_as = "AB"[_side(play_as)]
        self.illegal_action = illegal_action
        self.opponent: Policy = opponent if opponent is not None else random_policy
        self._me = _side(play_as)
        self._agent = AGENTS[self._me]
        self.frame = check_frame(frame)
        self._game = raw_env(frame=frame)  # the rules engine; rendering is done here
        self.observation_space = self._game.observation_space(self._agent)
        self.action_space = self._game.action_space(self._agent)
        self._over = True
        self._opponent_action = -1

    # -- pickling and deepcopy: the copy goes on from the same position with the same generator
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_game"] = self._game._live_state()  # the AEC engine alone would pickle as a fresh env
        return state

    def __setstate__(self, state):
        state = dict(state)
        state["_game"] = raw_env._from_live_state(state["_game"])
        self.__dict__.update(state)

    # -- helpers
    @property
    def board(self) -> Board:
        """The current position (absolute frame)."""
        return self._game.board

    def action_masks(self) -> np.ndarray:
        """Bool (256,): the agent's legal actions now (all False once the game is over)."""
        if self._over:
            return np.zeros(self.action_space.n, dtype=bool)
        return self._game.action_mask(self._agent).astype(bool)

    def _obs(self) -> dict[str, np.ndarray]:
        return self._game.observe(self._agent)

    def _info(self) -> dict[str, Any]:
        info = {**self._game.infos.get(self._agent, {}), "opponent_action": self._opponent_action}
        if self.illegal_action == "lose":  # a string from the start, as ``winner``: see the module doc
            info["illegal_reason"] = ""
        return info

    def _opponent_moves(self) -> None:
        game = self._game
        board = game.board
        action = self.opponent(board, game._mask.copy(), self.np_random)
        try:
            a = integral(action, "action")
        except HighwayError:
            raise IllegalMoveError(f"the opponent policy returned {action!r}, not an action int") from None
        if not 0 <= a < game._mask.shape[0] or not game._mask[a]:
            raise IllegalMoveError(f"the opponent policy returned an illegal action {action!r}: "
                                   f"{illegal_move_error(board.cells, a)}")
        game.step(game.from_absolute(game.agent_selection, a))
        self._opponent_action = a

    # -- the API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        board = options.get("board") if options else None
        self._game.reset(seed=seed, options=None if board is None else {"board": board})
        self._opponent_action = -1
        if self._game.agent_selection != self._agent:
            if self._game.board.ply == CELLS - 1:
                raise HighwayError("options['board'] leaves its last cell to the opponent: "
                                   "the agent has no move to play")
            self._opponent_moves()
        self._over = False
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        if self._over:
            raise HighwayError("the episode is over; call reset() before step()")
        game = self._game
        a = game.to_absolute(self._agent, action)  # strict: only integral actions in range
        if not game._mask[a] and self.illegal_action == "lose":
            self._over = True
            self._opponent_action = -1  # no reply to a move that lost
            info = copy.deepcopy(self._info())
            info["illegal_action"] = int(action)
            info["illegal_reason"] = f"illegal action {int(action)} ({action_str(a)} on the real board)"
            return self._obs(), -1.0, True, False, info
        game.step(action)  # raises IllegalMoveError naming the action, number and cell
        self._opponent_action = -1
        if not game.terminations[self._agent]:
            self._opponent_moves()
        terminated = self._over = bool(game.terminations[self._agent])
        reward = float(game._cumulative_rewards[self._agent]) if terminated else 0.0
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, False, self._info()

    def render(self):
        return render_in_mode(self.render_mode, self._game._text, self._game._image)

    def close(self):
        self._game.close()
