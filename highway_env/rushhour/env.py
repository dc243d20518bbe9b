"""Rush Hour / "Traffic!" as a single-player Gymnasium env.

``gymnasium.make("highway_env/RushHour-v0", level=7)`` or ``RushHourEnv(board="AA...")``.

* Puzzle: ``level`` (1..40, the original cards = Traffic! levels) or ``board`` (36-char string, see
  :mod:`highway_env.rushhour.game`, or a ``Board``); neither: level 1. ``reset(options={"level": n})``
  or ``options={"board": ...}`` switches puzzle for that and the following episodes.
* Action: ``Discrete(208)``: ``(vehicle * 2 + direction) * 4 + (distance - 1)`` with ``vehicle`` =
  letter index (``A`` = 0 .. ``Z`` = 25), ``direction`` 0 = left/up, 1 = right/down, ``distance``
  1..4 (:func:`encode_action` / :func:`decode_action`). One action = one move.
* Observation: ``Dict`` with ``"observation"``, int8 (6, 6) grid of vehicle ids (0 empty, -1 wall,
  ``A`` = 1 .. ``Z`` = 26), and ``"action_mask"``, int8 (208,), 1 for legal actions (all zeros once
  solved). ``action_masks()`` returns it as a bool array (sb3-contrib ``MaskablePPO``); it is also
  in ``info["action_mask"]``.
* Reward: -1 per step (so the return is minus the number of moves; an optimal episode on card n
  returns minus its published move count). ``terminated`` when the target car reaches the exit;
  ``truncated`` after ``max_steps`` steps (default 200; None: never).
* Illegal action: with ``illegal_action="noop"`` (default) the board is unchanged, the step still
  costs -1 and ``info["illegal_action"]`` is True; with ``"raise"`` a ``RushHourError`` is raised.
* Info: ``action_mask``, ``moves`` (steps so far), ``solved``, ``illegal_action``, ``move`` (the
  move made, e.g. ``"B+2"``, or None), ``min_moves`` (published count for levels, else None).
* ``render_mode``: ``"ansi"`` (a string) or ``"human"`` (printed); None: ``render()`` warns and
  returns None (Gymnasium's convention).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from highway_env.aec import render_in_mode
from highway_env.core import HighwayError, integral
from highway_env.rushhour.game import LETTERS, SIZE, WALL, Board, Move, RushHourError, parse_board
from highway_env.rushhour.game import level as get_level

MAX_DISTANCE = SIZE - 2
NUM_VEHICLE_IDS = len(LETTERS)
NUM_ACTIONS = NUM_VEHICLE_IDS * 2 * MAX_DISTANCE
WALL_ID = -1


def encode_action(move: Move | tuple[str, int]) -> int:
    letter, delta = move
    if letter not in LETTERS or not 1 <= abs(delta) <= MAX_DISTANCE:
        raise RushHourError(f"move {move!r} cannot be encoded as an action")
    return (LETTERS.index(letter) * 2 + (delta > 0)) * MAX_DISTANCE + abs(delta) - 1


def decode_action(action: int) -> Move:
    """An integral action -> its Move; a float, bool or string raises RushHourError naming it."""
    try:
        a = integral(action, "action")
    except HighwayError as e:
        raise RushHourError(str(e)) from None
    if not 0 <= a < NUM_ACTIONS:
        raise RushHourError(f"action {action!r} out of range 0..{NUM_ACTIONS - 1}")
    vd, dist = divmod(a, MAX_DISTANCE)
    v, d = divmod(vd, 2)
    return Move(LETTERS[v], (dist + 1) if d else -(dist + 1))


# Board.grid's characters -> the observation's ids
_IDS = {"o": 0, WALL: WALL_ID} | {letter: i + 1 for i, letter in enumerate(LETTERS)}


def board_grid(board: Board) -> np.ndarray:
    return np.array([[_IDS[ch] for ch in row] for row in board.grid()], dtype=np.int8)


def action_mask(board: Board) -> np.ndarray:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if not board.is_solved():
        mask[[encode_action(m) for m in board.legal_moves()]] = 1
    return mask


class RushHourEnv(gym.Env):
    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(self, level: int | None = None, board: str | Board | None = None,
                 max_steps: int | None = 200, illegal_action: str = "noop",
                 render_mode: str | None = None):
        if illegal_action not in ("noop", "raise"):
            raise ValueError(f"illegal_action must be 'noop' or 'raise', not {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        if max_steps is not None and max_steps < 1:
            raise ValueError("max_steps must be >= 1 or None")
        self.max_steps = max_steps
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self._set_puzzle(level, board)
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gym.spaces.Dict({
            "observation": gym.spaces.Box(WALL_ID, NUM_VEHICLE_IDS, (SIZE, SIZE), np.int8),
            "action_mask": gym.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
        })
        self.board = self.start_board
        self.steps = 0
        self._mask = action_mask(self.board)

    def _set_puzzle(self, level: int | None, board: Any) -> None:
        if level is not None and board is not None:
            raise RushHourError("give either level or board, not both")
        if board is not None:
            self.start_board, self.min_moves, self.level = parse_board(board), None, None
        else:
            card = get_level(1 if level is None else level)
            self.start_board, self.min_moves, self.level = card.board, card.moves, card.number

    def action_masks(self) -> np.ndarray:
        return self._mask.astype(bool)

    def _obs(self) -> dict[str, np.ndarray]:
        return {"observation": board_grid(self.board), "action_mask": self._mask.copy()}

    def _info(self, move: Move | None = None, illegal: bool = False) -> dict[str, Any]:
        return {"action_mask": self._mask.copy(), "moves": self.steps,
                "solved": self.board.is_solved(), "illegal_action": illegal,
                "move": None if move is None else str(move), "min_moves": self.min_moves}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if options:
            unknown = set(options) - {"level", "board"}
            if unknown:
                raise ValueError(f"unknown reset option(s) {sorted(unknown)}")
            self._set_puzzle(options.get("level"), options.get("board"))
        self.board = self.start_board
        self.steps = 0
        self._mask = action_mask(self.board)
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        move = decode_action(action)
        a = int(action)  # integral: checked by decode_action
        illegal = not self._mask[a]
        if illegal:
            if self.illegal_action == "raise":
                raise RushHourError(f"illegal action {a} ({move}) on\n{self.board}")
        else:
            self.board = self.board.move(move)
            self._mask = action_mask(self.board)
        self.steps += 1
        terminated = self.board.is_solved()
        truncated = (not terminated and self.max_steps is not None
                     and self.steps >= self.max_steps)
        if self.render_mode == "human":
            self.render()
        return (self._obs(), -1.0, terminated, truncated,
                self._info(None if illegal else move, illegal))

    def render(self):
        """The board as text ("ansi"), printed with a blank line after it ("human"); without a
        render_mode nothing is rendered (a warning and None), as Gymnasium's ``Env.render`` says."""
        if self.render_mode == "human":
            print(str(self.board) + "\n")
            return None
        return render_in_mode(self.render_mode, lambda: str(self.board), None)
