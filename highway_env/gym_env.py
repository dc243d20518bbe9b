"""Highway as a single-agent Gymnasium env: play A or B against a fixed opponent policy.

``gymnasium.make("highway_env/Highway-v0", play_as="B")`` or ``HighwayGymEnv(play_as="B")``.

* Opponent: any callable ``policy(board: core.Board, mask: np.ndarray, rng: np.random.Generator)
  -> int`` returning an absolute action; ``mask`` is the int8 (256,) legal-action mask and ``rng``
  the env's ``np_random`` (seeded by ``reset(seed=...)``, so seeded episodes are reproducible).
  The default, :func:`random_policy`, plays a uniformly random legal move. An illegal action from the
  opponent raises ``core.IllegalMoveError``.
* Observation: the same ``Dict`` as the AEC env ``highway_v0``: ``"observation"``, an int8
  (4, 4, 16) one-hot of the board in the agent's frame (as it is when playing A, turned a quarter
  clockwise, ``core.QUARTER_TURN``, when playing B, so that the agent's paths always run from the
  top-left to the bottom-right), and ``"action_mask"``, int8 (256,), 1 for the legal actions, in
  absolute coordinates (all zeros once the game is over). ``action_masks()`` returns the same mask
  as a bool array, as sb3-contrib's ``MaskablePPO`` expects.
* Action: ``Discrete(256)``, ``(number - 1) * 16 + cell`` on the real board (absolute frame; see
  ``highway_v0.from_player_frame`` to convert from the agent's frame). Only integral actions (int,
  numpy integer, 0-d integer array) are accepted: a float (even 2.0), bool or string raises
  ``core.HighwayError`` naming it, as does an integer out of range.
* ``frame``: ``"absolute"`` (the default, as above) or ``"player"``: the observation, the action
  mask (``"action_mask"`` and ``action_masks()``) and the actions are all in the agent's frame
  (for B the quarter turn ``core.QUARTER_TURN`` is applied to all three), as in
  ``highway_v0.env(frame="player")``, so one policy can play both seats. The opponent policy, the
  info (``opponent_action`` included), ``board`` and rendering stay absolute.
* Reward: +1 / -1 / 0 at the end of the game from the agent's side (win / loss / draw), else 0.
  Every game ends (``terminated``) after the 16th move; it is never truncated.
* Info: that of the AEC env (``ply``, ``bounds``; on the full board ``min_a``, ``min_b``, ``margin``,
  ``winner``, ``a_paths``, ``b_paths``), plus ``opponent_action`` (the opponent's last reply, or
  None), and ``illegal_action`` when the episode ended on one (see below).
* Illegal action from the agent: with ``illegal_action="raise"`` (the default) ``step`` raises
  ``core.IllegalMoveError`` naming the action, number and cell, and the state is unchanged; with
  ``illegal_action="lose"`` the episode ends at once with reward -1 (as PettingZoo's
  ``TerminateIllegalWrapper`` does), which suits learners that do not mask actions.
  Out-of-range actions always raise ``core.HighwayError``; stepping after the end raises too.
* ``reset(seed=None, options=None)``: ``options={"board": ...}`` starts from a position (string of
  16 comma-separated numbers, a ``core.Board`` or 16 ints); if the opponent is to move there, it
  moves first. A board on which the agent cannot move any more (full, or one empty cell with the
  opponent to move) is refused.
* Rendering: ``render_mode`` in ``"human"``, ``"ansi"``, ``"rgb_array"``, drawn by
  ``highway_env.render`` exactly as in the AEC env.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from highway_env.core import CELLS, Board, HighwayError, IllegalMoveError, action_str, integral
from highway_env.highway.highway import AGENTS, check_frame, raw_env
from highway_env.render import RENDER_MODES, render_board

Policy = Callable[[Board, np.ndarray, np.random.Generator], int]


def random_policy(board: Board, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action."""
    return int(rng.choice(np.flatnonzero(mask)))


def _side(play_as: Any) -> int:
    if isinstance(play_as, str):
        key = play_as.strip().upper()
        table = {"A": 0, "B": 1, "PLAYER_0": 0, "PLAYER_1": 1}
        if key in table:
            return table[key]
    elif play_as in (0, 1) and not isinstance(play_as, bool):
        return int(play_as)
    raise HighwayError(f"play_as must be 'A' or 'B' (or 0 / 1), got {play_as!r}")


class HighwayGymEnv(gym.Env):
    """Play one side of Highway against ``opponent``; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(
        self,
        play_as: str | int = "A",
        opponent: Policy | None = None,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        frame: str = "absolute",
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise HighwayError(
                f"unknown render_mode {render_mode!r}; expected None or one of {self.metadata['render_modes']}"
            )
        if illegal_action not in ("raise", "lose"):
            raise HighwayError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        if opponent is not None and not callable(opponent):
            raise HighwayError(f"opponent must be a callable policy(board, mask, rng) -> action, got {opponent!r}")
        self.render_mode = render_mode
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
        self._opponent_action: int | None = None

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
        info = dict(self._game.infos.get(self._agent, {}))
        info["opponent_action"] = self._opponent_action
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
            reason = ""
            try:
                board.apply(a)
            except HighwayError as e:
                reason = f": {e}"
            raise IllegalMoveError(f"the opponent policy returned an illegal action {action!r}{reason}")
        game.step(game.from_absolute(game.agent_selection, a))
        self._opponent_action = a

    # -- the API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        game_options = None
        if options and options.get("board") is not None:
            game_options = {"board": options["board"]}
        self._game.reset(seed=seed, options=game_options)
        self._opponent_action = None
        if self._game.agent_selection != self._agent:
            if self._game.board.ply == CELLS - 1:
                raise HighwayError(
                    "options['board'] leaves its last cell to the opponent: the agent has no move to play"
                )
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
            info = copy.deepcopy(self._info())
            info["illegal_action"] = int(action)
            info["illegal_reason"] = f"illegal action {int(action)} ({action_str(a)} on the real board)"
            return self._obs(), -1.0, True, False, info
        game.step(action)  # raises IllegalMoveError naming the action, number and cell
        self._opponent_action = None
        if not game.terminations[self._agent]:
            self._opponent_moves()
        terminated = bool(game.terminations[self._agent])
        reward = 0.0
        if terminated:
            self._over = True
            reward = float(game._cumulative_rewards[self._agent])
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, False, self._info()

    def render(self):
        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render method without specifying any render mode. "
                "Pass render_mode='ansi', 'rgb_array' or 'human' to the constructor."
            )
            return None
        return render_board(self._game.board, self.render_mode)

    def close(self):
        self._game.close()
